"""grep's text output (-l, -c, --vimgrep, and the matches grouped by chunk), written from the
answer's JSON form (the contract's dicts): both the CLI's fast path through a daemon and its full
path print through here, and neither builds records for it (an answer may hold 100,000 lines).
Imports nothing heavier than `text`: the fast path pays for none of the record classes."""

from __future__ import annotations

import sys

from ..text import for_terminal
from .color import LINE, PATH, MatchPainter, paint, use_color

TYPE_CHECKING = False  # typing is not imported at run time (the fast path's start)
if TYPE_CHECKING:
    import argparse
    from typing import Any



def grep_form(files_with_matches: bool, count: bool, vimgrep: bool) -> str:
    return "files" if files_with_matches else "count" if count else "vimgrep" if vimgrep else "grouped"


def write_grep(answer: dict[str, Any], form: str, explain: bool = False, context: bool = False,
               color: MatchPainter | None = None) -> None:
    """`form`: files (-l), count (-c), vimgrep, or grouped: each chunk's matches under a line
    naming it, context lines as `N-text`, as grep prints them. Written at once, not a print per
    line. The answer's note (more matches than shown) goes to stderr, but not with -l or -c,
    whose files count every match."""
    out = grep_lines(answer, form, explain, context, color)
    if out:
        sys.stdout.write("\n".join(out) + "\n")
    if answer.get("note") and form not in ("files", "count"):
        sys.stdout.flush()
        print(f"codesearch: {answer['note']}; raise --limit to see more", file=sys.stderr)


def grep_lines(answer: dict[str, Any], form: str, explain: bool = False, context: bool = False,
               color: MatchPainter | None = None) -> list[str]:
    """The lines of `form`. `context`: context lines were asked for, so runs of lines that do not
    meet are parted by `--`, as ripgrep parts them; a line shared by two matches' contexts is
    printed once. `color`: ripgrep's colours (path, line number, match), painted by it."""
    def where(found: dict[str, Any]) -> str:
        return _where(found) if color is None else paint(_where(found), PATH)

    def number(n: int) -> str:
        return str(n) if color is None else paint(str(n), LINE)

    def show(text: str) -> str:
        return text if color is None else color(text)

    if form == "files":
        return [where(f) for f in answer["files"]]
    if form == "count":
        return [f"{where(f)}:{f['count']}" for f in answer["files"]]
    if form == "vimgrep":
        return [f"{where(m)}:{number(m['line'])}:{m['column']}:{show(m['text'])}" for m in answer["matches"]]
    out: list[str] = []
    group: tuple | None = None
    shown = 0  # the last line printed of this file, while its matches come in the file's order
    first_of_group, last_match = True, 0
    for m in answer["matches"]:
        chunk = m["chunk"]
        key = (m.get("repo"), m["path"], chunk["start_line"] if chunk else 0, chunk["qualified_name"] if chunk else "")
        if group is None or group[:2] != key[:2] or m["line"] <= last_match:
            shown = 0
        last_match = m["line"]
        if key != group:
            if group is not None:
                out.append("")
            group = key
            title = f"  {chunk['kind']} {for_terminal(chunk['qualified_name'])}" \
                if chunk and chunk["kind"] != "file" else ""
            why = f"  ({'; '.join(m['explain'])})" if explain and m.get("explain") else ""
            out.append(f"{where(m)}{title}{why}")
            first_of_group = True
        line, before = m["line"], m["before"]
        rows = [(line - len(before) + offset, "-", text) for offset, text in enumerate(before)]
        rows.append((line, ":", show(m["text"])))
        rows += [(line + offset, "-", text) for offset, text in enumerate(m["after"], start=1)]
        for n, mark, text in rows:
            if n <= shown:
                continue
            if context and shown and n > shown + 1 and not first_of_group:
                out.append("--")
            out.append(f"{number(n)}{mark}{text}")
            shown, first_of_group = n, False
    return out


def _where(found: dict[str, Any]) -> str:
    """A path as printed: after its repository's name, in a workspace; escaped for a terminal."""
    repo = found.get("repo")
    return for_terminal(f"{repo}/{found['path']}" if repo else found["path"])


def write_grep_answer(answer: dict[str, Any], args: argparse.Namespace) -> None:
    """The answer as the grep command's arguments ask: its form, context and colour."""
    color = MatchPainter(args.pattern, args.fixed_strings, args.word_regexp,
                         args.ignore_case and not args.case_sensitive) \
        if use_color(args.color, sys.stdout) else None
    context = bool(args.context or args.before_context or args.after_context)
    write_grep(answer, grep_form(args.files_with_matches, args.count, args.vimgrep), args.explain, context, color)
