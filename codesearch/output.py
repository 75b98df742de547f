"""Human and editor output for search results."""

from __future__ import annotations

import re
from pathlib import Path

BOLD, DIM, CYAN, YELLOW, RESET = "\033[1m", "\033[2m", "\033[36m", "\033[33m", "\033[0m"


def _highlight(line: str, terms: list[str], color: bool) -> str:
    if not color or not terms:
        return line
    pattern = re.compile("|".join(re.escape(t) for t in terms if len(t) > 2), re.IGNORECASE)
    if not pattern.pattern:
        return line
    return pattern.sub(lambda m: f"{YELLOW}{m.group(0)}{RESET}", line)


def print_human(answer: dict, color: bool, explain: bool = False) -> None:
    from .tokens import query_terms
    terms = query_terms(answer["query"])
    results = answer["results"]
    if not results:
        print("no results")
    for i, r in enumerate(results, start=1):
        loc = f"{r['path']}:{r['start_line']}-{r['end_line']}"
        what = f"{r['kind']} {r.get('qualified_name') or r['name']}"
        if color:
            print(f"{BOLD}{i:>2}. {CYAN}{loc}{RESET}  {what}  {DIM}{r['score']:.4f}{RESET}")
        else:
            print(f"{i:>2}. {loc}  {what}  {r['score']:.4f}")
        line_no = r.get("snippet_line", r["start_line"])
        for offset, line in enumerate(r["snippet"].split("\n")):
            prefix = f"{line_no + offset:>6} | "
            print(f"{DIM if color else ''}{prefix}{RESET if color else ''}{_highlight(line, terms, color)}")
        if explain:
            ranks = ", ".join(f"{k} #{v}" if v else f"{k} -" for k, v in r["sources"].items())
            print(f"        retrievers: {ranks}")
            for note in r.get("explain", []):
                print(f"        ranking: {note}")
    extra = []
    if answer.get("partial"):
        extra.append(f"partial: {answer['embedded_share']:.0%} of chunks have vectors so far")
    timing = answer.get("timing_ms", {}).get("total")
    if timing is not None:
        extra.append(f"{timing:.0f} ms")
    if extra:
        print(f"{DIM if color else ''}({'; '.join(extra)}){RESET if color else ''}")


def print_vimgrep(answer: dict, root: Path) -> None:
    for r in answer["results"]:
        line = r.get("snippet_line", r["start_line"])
        first = (r["snippet"].splitlines() or [""])[0].strip()
        print(f"{r['path']}:{line}:1:{r['kind']} {r.get('qualified_name') or r['name']}: {first}")
