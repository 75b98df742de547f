"""grep's text output (-l, -c, --vimgrep, and the matches grouped by chunk), written from the
answer's JSON form (the contract's dicts): both the CLI's fast path through a daemon and its full
path print through here, and neither builds records for it (an answer may hold 100,000 lines).
Imports nothing heavier than `text`: the fast path pays for none of the record classes."""

from __future__ import annotations

import sys

from ..text import for_terminal

TYPE_CHECKING = False  # typing is not imported at run time (the fast path's start)
if TYPE_CHECKING:
    from typing import Any


def grep_form(files_with_matches: bool, count: bool, vimgrep: bool) -> str:
    return "files" if files_with_matches else "count" if count else "vimgrep" if vimgrep else "grouped"


def write_grep(answer: dict[str, Any], form: str, explain: bool = False) -> None:
    """`form`: files (-l), count (-c), vimgrep, or grouped: each chunk's matches under a line
    naming it, context lines as `N-text`, as grep prints them. Written at once, not a print per
    line. The answer's note (more matches than shown) goes to stderr, but not with -l or -c,
    whose files count every match."""
    out = grep_lines(answer, form, explain)
    if out:
        sys.stdout.write("\n".join(out) + "\n")
    if answer.get("note") and form not in ("files", "count"):
        sys.stdout.flush()
        print(f"codesearch: {answer['note']}; raise --limit to see more", file=sys.stderr)


def grep_lines(answer: dict[str, Any], form: str, explain: bool = False) -> list[str]:
    if form == "files":
        return [_where(f) for f in answer["files"]]
    if form == "count":
        return [f"{_where(f)}:{f['count']}" for f in answer["files"]]
    if form == "vimgrep":
        return [f"{_where(m)}:{m['line']}:{m['column']}:{m['text']}" for m in answer["matches"]]
    out: list[str] = []
    group = None
    for m in answer["matches"]:
        chunk = m["chunk"]
        key = (m.get("repo"), m["path"], chunk["start_line"] if chunk else 0, chunk["qualified_name"] if chunk else "")
        if key != group:
            if group is not None:
                out.append("")
            group = key
            where = f"  {chunk['kind']} {for_terminal(chunk['qualified_name'])}" \
                if chunk and chunk["kind"] != "file" else ""
            why = f"  ({'; '.join(m['explain'])})" if explain and m.get("explain") else ""
            out.append(f"{_where(m)}{where}{why}")
        line, before = m["line"], m["before"]
        out.extend(f"{line - len(before) + offset}-{text}" for offset, text in enumerate(before))
        out.append(f"{line}:{m['text']}")
        out.extend(f"{line + offset}-{text}" for offset, text in enumerate(m["after"], start=1))
    return out


def _where(found: dict[str, Any]) -> str:
    """A path as printed: after its repository's name, in a workspace; escaped for a terminal."""
    repo = found.get("repo")
    return for_terminal(f"{repo}/{found['path']}" if repo else found["path"])
