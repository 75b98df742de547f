"""Human and editor output: search results, index statistics, daemon status. Names and paths go
through `text.for_terminal` (JSON output keeps them as stored: its readers are programs)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..api.types import ImpactAnswer, RelatedResult, RelationsAnswer, SearchAnswer, Stats, Status
from ..text import for_terminal
from .color import LINE, MATCH, PATH, RESET, paint

if TYPE_CHECKING:
    from ..doctor import Report

BOLD, DIM, CYAN, YELLOW = "\033[1m", "\033[2m", "\033[36m", "\033[33m"


def _highlight(line: str, terms: list[str], color: bool) -> str:
    if not color or not terms:
        return line
    pattern = re.compile("|".join(re.escape(t) for t in terms if len(t) > 2), re.IGNORECASE)
    if not pattern.pattern:
        return line
    return pattern.sub(lambda m: f"{YELLOW}{m.group(0)}{RESET}", line)


def print_human(answer: SearchAnswer, color: bool, explain: bool = False) -> None:
    from ..analysis.tokens import query_terms
    terms = query_terms(answer.query)
    if not answer.results:
        print("no results")
    for i, r in enumerate(answer.results, start=1):
        loc = for_terminal(f"{f'[{r.repo}] ' if r.repo else ''}{r.path}:{r.start_line}-{r.end_line}")
        what = for_terminal(f"{r.kind} {r.qualified_name or r.name}")
        similar = f"  +{len(r.similar)} similar" if r.similar else ""
        if color:
            print(f"{BOLD}{i:>2}. {CYAN}{loc}{RESET}  {what}  {DIM}{r.score:.4f}{similar}{RESET}")
        else:
            print(f"{i:>2}. {loc}  {what}  {r.score:.4f}{similar}")
        for offset, line in enumerate(r.snippet.split("\n")):
            prefix = f"{r.snippet_line + offset:>6} | "
            print(f"{DIM if color else ''}{prefix}{RESET if color else ''}{_highlight(line, terms, color)}")
        if explain:
            ranks = ", ".join(f"{k} #{v}" if v else f"{k} -" for k, v in r.sources.items())
            print(f"        retrievers: {ranks}")
            if r.repo is not None:
                print(f"        repository: {r.repo} #{r.repo_rank} (0-based), fused {r.fused_score:.5f}, "
                      f"boosted {r.score:.5f}")
            for note in r.explain or ():
                print(f"        ranking: {note}")
            for s in r.similar or ():
                print(f"        similar: {for_terminal(f'{s.path}:{s.start_line}-{s.end_line}')}")
    extra = []
    if answer.partial:
        share = answer.embedded_share or 0
        extra.append(f"partial: {share:.0%} of chunks have vectors so far" if share < 1 else
                     "partial: answered without vectors")  # every vector is there: the note on stderr says why
    timing = answer.timing_ms.get("total")
    if timing is not None:
        extra.append(f"{timing:.0f} ms")
    if extra:
        print(f"{DIM if color else ''}({'; '.join(extra)}){RESET if color else ''}")


def print_vimgrep(answer: SearchAnswer) -> None:
    for r in answer.results:
        lines = r.snippet.split("\n")
        line, column, shown = r.snippet_line, 1, lines[0]
        if r.name_line and r.snippet_line <= r.name_line < r.snippet_line + len(lines):  # on the name itself
            line, column, shown = r.name_line, r.name_column or 1, lines[r.name_line - r.snippet_line]
        where = for_terminal(f"{r.repo}/{r.path}" if r.repo else r.path)
        print(f"{where}:{line}:{column}:{for_terminal(r.kind + ' ' + (r.qualified_name or r.name))}: {shown.strip()}")


def format_relations(answer: RelationsAnswer, roots: dict[str | None, Path], color: bool = False) -> str:
    """Each related definition, indented by its hops, and under a direct one its call sites as
    grep shows a match (`path:line: the line`), read from the file now. A line that no longer
    names the called name (the file changed, or is gone) is shown by its location alone.
    `roots`: each repository's root by its name in the answer (None for one repository).
    `color`: paths, line numbers and the called name in ripgrep's colours."""
    files: dict[tuple[str | None, str], list[str]] = {}
    out = []
    for r in answer.results:
        indent = "  " * (r.depth - 1)
        place = _place(f"{f'[{r.repo}] ' if r.repo else ''}{r.path}", r.start_line, color)
        out.append(f"{indent}{place}  {for_terminal(f'{r.kind} {r.qualified_name}')}")
        path, called = _site_file(answer, r), r.name if answer.direction == "callees" else _last_part(answer.name)
        word = re.compile(rf"(?<![\w$]){re.escape(called)}(?![\w$])")
        for line in r.sites or ():
            key = (r.repo, path)
            if key not in files:
                root = roots.get(r.repo)
                files[key] = _file_lines(root, path) if root is not None else []
            lines = files[key]
            text = lines[line - 1] if 0 < line <= len(lines) else ""
            where = _place(f"{f'[{r.repo}] ' if r.repo else ''}{path}", line, color)
            if word.search(text):
                shown = for_terminal(text.strip())
                where += ": " + (word.sub(lambda m: paint(m.group(0), MATCH), shown) if color else shown)
            out.append(f"{indent}  {where}")
    return "\n".join(out)


def format_impact(answer: ImpactAnswer, color: bool = False) -> str:
    """A line saying how many callers in how many files, then each file (nearest callers first)
    and under it each caller's place, its definition and how many hops away it is."""
    hops = "hop" if answer.depth == 1 else "hops"
    out = [f"{answer.callers} callers of {for_terminal(answer.name)} in {len(answer.files)} files, "
           f"up to {answer.depth} {hops} away"]
    for group in answer.files:
        where = f"{f'[{group.repo}] ' if group.repo else ''}{group.path}"
        out.append(paint(for_terminal(where), PATH) if color else for_terminal(where))
        for r in group.callers:
            away = f"{r.depth} hop{'' if r.depth == 1 else 's'}"
            out.append(f"  {_place(where, r.start_line, color)}  {for_terminal(f'{r.kind} {r.qualified_name}')}  "
                       f"({away})")
    return "\n".join(out)


def _place(path: str, line: int, color: bool) -> str:
    """`path:line`, escaped for a terminal, in ripgrep's colours when asked."""
    shown = for_terminal(path)
    return f"{paint(shown, PATH)}:{paint(str(line), LINE)}" if color else f"{shown}:{line}"


def _last_part(name: str) -> str:
    return re.split(r"\.|::", name)[-1]


def _site_file(answer: RelationsAnswer, related: RelatedResult) -> str:
    """The file a direct relation's call sites are in: the caller's; for callees, the target's
    (of several, the last in the callee's repository that starts at or before the first site)."""
    if answer.direction == "callers":
        return related.path
    mine = [t for t in answer.targets if t.repo == related.repo] or list(answer.targets)
    first = min(related.sites or (0,))
    before = [t for t in mine if t.start_line <= first] or mine
    return max(before, key=lambda t: t.start_line).path if before else related.path


def _file_lines(root: Path, rel: str) -> list[str]:
    """The file's lines as the index numbers them, read through the root's confinement; [] for
    a file that is gone or no longer inside the root."""
    from ..model import source_lines
    from ..paths import read_inside
    from ..search.source import MAX_READ_BYTES
    data = read_inside(root, rel, MAX_READ_BYTES)
    return source_lines(data.decode("utf-8", errors="replace")) if data is not None else []


def format_stats(stats: Stats) -> str:
    when = (time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stats.last_index_time))
            if stats.last_index_time else "never")
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(stats.skipped.items())) or "none"
    languages = ", ".join(f"{k} {v}" for k, v in stats.languages.items()) or "none"
    lines = [
        f"index:     {for_terminal(stats.index_dir)} ({stats.index_bytes / 1e6:.1f} MB, "
        f"source {stats.source_bytes / 1e6:.1f} MB)",
        f"files:     {stats.files}   ({languages})",
        f"chunks:    {stats.chunks}   vectors: {stats.vectors}   edges: {stats.edges}",
        f"skipped:   {skipped}",
        f"model:     {stats.model}",
        f"indexed:   {when}" + (f" in {stats.last_index_seconds:.1f}s" if stats.last_index_seconds else ""),
    ]
    if stats.scip_path:
        lines.append(f"scip:      {for_terminal(stats.scip_path)}: " + (
            f"not used ({for_terminal(stats.scip_problem)})" if stats.scip_problem else
            f"call edges of {stats.scip_files} files" + (f", {stats.scip_stale_files} changed since (resolved by name)"
                                                         if stats.scip_stale_files else "")))
    return "\n".join(lines)


def _embedding_pace(s: Status) -> str:
    """Rate and ETA only while vectors are being made: a stale rate would promise a false ETA."""
    emb = s.embedding
    if not s.model_ready:
        return "waiting for the embedding model to load"
    if not emb.active or not emb.rate_per_second:
        return "not embedding right now"
    eta = emb.eta_seconds or 0.0
    return f"{emb.rate_per_second:g}/s, ETA {'<1s' if eta < 1 else _duration(eta)}"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def format_status(s: Status) -> str:
    last = s.last_reindex or {}
    emb = s.embedding
    lines = [f"pid {s.pid}, up {s.uptime_seconds:.0f}s, watching {for_terminal(s.root)} ({s.watcher})",
             f"files {s.files}, chunks {s.chunks}, vectors {s.vectors}, edges {s.edges}",
             f"pending changes {s.pending_changes}"]
    if s.write_error:
        lines.append(f"not indexed yet: {for_terminal(s.write_error)}")
    if last:
        lines.append(f"last reindex {time.strftime('%H:%M:%S', time.localtime(last['at']))} "
                     f"in {last['seconds'] * 1000:.0f} ms")
    if emb.chunks_without_vectors:
        lines.append(f"embedding: {emb.chunks_without_vectors} chunks left, {_embedding_pace(s)}")
    for event in s.indexing or ():
        total = f"/{event['total']}" if event.get("total") is not None else ""
        lines.append(f"indexing: {event['done']}{total} {event['unit']} ({event['stage']})")
    if s.idle_stop_minutes is not None:
        lines.append(f"started on demand: stops after {s.idle_stop_minutes:g} idle minutes")
    if s.dormant:
        lines.append("dormant: model and caches given back while quiet; the next request wakes it")
    if s.watcher_note:
        lines.append(s.watcher_note)
    return "\n".join(lines)


def format_daemons(daemons: list[dict[str, Any]]) -> str:
    if not daemons:
        return "no codesearch daemon is running"
    lines = []
    for d in daemons:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(d["started"]))
        how = f"on demand, stops after {d['idle_minutes']:g} idle minutes" if d.get("auto") else "started by hand"
        how += "; dormant" if d.get("dormant") else ""
        lines.append(f"pid {d['pid']}  {for_terminal(d['root'])}  (since {started}; {how})")
    return "\n".join(lines)


DOCTOR_MARKS = {"ok": ("ok  ", "\033[32m"), "note": ("note", YELLOW), "fail": ("FAIL", "\033[31m")}


def format_doctor(report: Report, color: bool) -> str:
    """One line a check, its fix indented below it; the verdict last."""
    lines = []
    for check in report.checks:
        mark, tint = DOCTOR_MARKS[check.status]
        shown = f"{tint}{mark}{RESET}" if color else mark
        lines.append(f"{shown}  {check.area:<10} {for_terminal(check.detail)}")
        if check.fix and check.status != "ok":
            lines.append(f"      {'':<10} -> {for_terminal(check.fix)}")
    failed = sum(c.status == "fail" for c in report.checks)
    verdict = "1 problem needs action" if failed == 1 else f"{failed} problems need action"
    lines.append(verdict if failed else "healthy")
    return "\n".join(lines)
