"""A catalog's graph as rows another store can keep: each file's edges by chunk id, resolved as
the local index resolved them (edges.py), with the call sites' lines, the calls resolution could
only guess at, and the calls it found nothing in this repository for (a name another repository
may define). The team indexer resolves a repository in a catalog of its own and copies these."""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from .call_results import may_reach
from .graph_reads import GUESS_WEIGHT
from .schema import BY_NAME, CALLS, EDGE_KINDS, RESOLUTIONS
from .sqlite import sqlite3

KIND_NAMES = {number: name for name, number in EDGE_KINDS.items()}
GUESSED = RESOLUTIONS[BY_NAME]  # a guessed call: answered by name, as the local graph answers it
UNRESOLVED = ""  # no definition of the name in the repository


class EdgeRow(NamedTuple):
    caller_id: str
    kind: str  # "calls" or "imports"
    target_id: str  # "" for a guessed or an unresolved call
    target_path: str
    weight: float
    how: str  # schema.RESOLUTIONS for a resolved call, GUESSED, UNRESOLVED; "" for an import
    callee: str  # the called name (the target's name for an import)
    lines: tuple[int, ...]  # where the caller calls it


def file_edges(db: sqlite3.Connection) -> dict[str, list[EdgeRow]]:
    """path -> the edges out of its chunks, in a stable order (the same tree gives the same rows)."""
    sites: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)  # (caller id, name) -> (line, hint)
    site_path: dict[str, str] = {}
    guessed: set[tuple[str, str]] = set()
    for path, caller, name, line, guess, hint in db.execute(
            "SELECT f.path, c.id, n.name, k.line, k.guess, COALESCE(k.hint, '') FROM calls k "
            "JOIN names n ON n.nid = k.nid JOIN chunks c ON c.rid = k.caller JOIN files f ON f.fid = c.fid"):
        sites[(caller, name)].append((line, hint))
        site_path[caller] = path
        if guess:
            guessed.add((caller, name))
    out: dict[str, list[EdgeRow]] = defaultdict(list)
    answered: set[tuple[str, str]] = set()
    for path, caller, kind, target, target_path, weight, how, target_name, name_line in db.execute(
            "SELECT f.path, c.id, e.kind, d.id, df.path, e.weight, e.how, d.name, COALESCE(d.name_line, 0) "
            "FROM edges e JOIN chunks c ON c.rid = e.src JOIN files f ON f.fid = c.fid "
            "JOIN chunks d ON d.rid = e.dst JOIN files df ON df.fid = d.fid"):
        calls = kind == CALLS
        lines = tuple(sorted({line for line, hint in sites.get((caller, target_name), ())
                              if may_reach(hint, path, target_path, name_line)})) if calls else ()
        if calls:
            answered.add((caller, target_name))
        out[path].append(EdgeRow(caller, KIND_NAMES[kind], target, target_path, float(weight),
                                 RESOLUTIONS[how] if calls else "", target_name, lines))
    for (caller, name), at in sites.items():
        if (caller, name) in answered:
            continue
        how, weight = (GUESSED, GUESS_WEIGHT) if (caller, name) in guessed else (UNRESOLVED, 0.0)
        out[site_path[caller]].append(EdgeRow(caller, "calls", "", "", weight, how, name,
                                              tuple(sorted({line for line, _ in at}))))
    return {path: sorted(rows) for path, rows in out.items()}
