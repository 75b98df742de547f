"""Callers and callees over a team store, from the edges the indexer resolved as the local index
does (store/graph_export.py): a resolved call names its target chunk, and answers with how it was
resolved (exact, import, type, dynamic, scip); a call resolution could only guess at is answered
by the name's definitions in its own branch, and one whose name the caller's repository does not
define by the name's definitions in the other repositories, both `name-only`, and only where no
resolved edge joins the same two chunks (as the local graph answers them)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..store.graph_export import GUESSED, UNRESOLVED
from ..store.graph_reads import GUESS_WEIGHT, MAX_CANDIDATES
from ..vocabulary import NON_DEFINITION_KINDS
from .milvus_store import EDGES, LiveFile, MilvusStore, RepoState, is_live, literal, live_scope, row_uid

MAX_CALL_SITES = 1000
# a chunk's row, how it is related, the call lines, weight, whether it calls itself (a target's own call)
Related = tuple[dict, str, tuple[int, ...], float, bool]


@dataclass(frozen=True)
class Found:
    """A chunk reached from the targets: its row, hops away, how the edge that reached it was
    resolved, the call lines of a first hop, the edge's weight."""

    row: dict
    depth: int
    how: str
    lines: tuple[int, ...]
    weight: float


def walk(reader: RelationReader, targets: list[dict], direction: str, depth: int) -> list[Found]:
    """Callers or callees of the targets, breadth first, as the local graph's `neighbours`: by
    hops, then heaviest edge first; a target that calls itself is among its own callers (and
    callees), a target that only calls another target is not."""
    found: list[Found] = []
    seen = {t["uid"] for t in targets}
    frontier = targets
    for level in range(1, depth + 1):
        step = reader.callers(frontier) if direction == "callers" else reader.callees(frontier)
        frontier = []
        for row, how, lines, weight, calls_itself in step:
            if row["uid"] in seen:
                if level == 1 and calls_itself:
                    found.append(Found(row, level, how, lines, weight))
                continue
            seen.add(row["uid"])
            frontier.append(row)
            found.append(Found(row, level, how, lines, weight))
        if not frontier:
            break
    return sorted(found, key=lambda f: (f.depth, -f.weight))


class RelationReader:
    """One relations request's reads: the branches it covers and their live file maps."""

    def __init__(self, store: MilvusStore, states: list[RepoState], live: Callable[[RepoState], dict[str, LiveFile]]):
        self.store = store
        self.states = states
        self.maps = {(s.repo, s.branch): live(s) for s in states}

    def _branch(self, row: dict) -> dict[str, LiveFile] | None:
        """The live file map of the row's branch (None: a branch not covered)."""
        return self.maps.get((row["repo"], row["branch"]))

    def _chunk_uid(self, row: dict, path: str, chunk_id: str) -> str | None:
        """The row key of the live chunk `chunk_id` of file `path` in the row's branch."""
        found = (self._branch(row) or {}).get(path)
        return None if found is None else row_uid(row["repo"], row["branch"], found.gen, chunk_id)

    def _edges(self, expression: str) -> list[dict]:
        where = f"{live_scope(self.states)} and kind == \"calls\" and ({expression})"
        return [e for e in self.store.edges_where(where, MAX_CALL_SITES)
                if is_live(e, self._branch(e), EDGES)]

    def callers(self, targets: list[dict]) -> list[Related]:
        """The live chunks that call a target: by a resolved edge into it, then those whose call of
        its name was a guess (in its branch) or names nothing in their own repository (in another)."""
        if not targets or not self.states:
            return []
        ids = sorted({t["chunk_id"] for t in targets})
        by_branch = {(t["repo"], t["branch"]) for t in targets}
        wanted = {(t["repo"], t["branch"], t["chunk_id"], t["path"]): t["name"] for t in targets}
        found: dict[str, tuple[str, float, list[int]]] = {}
        loops: set[str] = set()  # the targets among them that call themselves
        for e in self._edges(f"target_id in [{', '.join(map(literal, ids))}]"):
            hit = (e["repo"], e["branch"], e["target_id"], e["target_path"]) in wanted
            uid = self._chunk_uid(e, e["path"], e["caller_id"]) if hit else None
            if uid is not None:
                found.setdefault(uid, (e["how"], e["weight"], []))[2].extend(_lines(e))
                if (e["path"], e["caller_id"]) == (e["target_path"], e["target_id"]):
                    loops.add(uid)
        names = sorted({t["name"] for t in targets if t["name"]})
        if names:
            for e in self._edges(f"target_id == \"\" and callee in [{', '.join(map(literal, names))}]"):
                own = (e["repo"], e["branch"]) in by_branch
                guessed_here = own and e["how"] == GUESSED
                elsewhere = e["how"] == UNRESOLVED and not any(e["repo"] == repo for repo, _ in by_branch)
                uid = self._chunk_uid(e, e["path"], e["caller_id"]) if guessed_here or elsewhere else None
                if uid is None:
                    continue
                if uid not in found or found[uid][0] == GUESSED:
                    found.setdefault(uid, (GUESSED, GUESS_WEIGHT, []))[2].extend(_lines(e))
                if guessed_here and wanted.get((e["repo"], e["branch"], e["caller_id"], e["path"])) == e["callee"]:
                    loops.add(uid)  # a target's guess at its own name
        return self._ordered(found, loops)

    def callees(self, targets: list[dict]) -> list[Related]:
        """What the targets call: the chunks their resolved edges name, then, by name, the
        definitions of what they guessed at (in their branch, the first MAX_CANDIDATES in the
        local candidate order) or of names their repository does not define (in the others)."""
        if not targets:
            return []
        ids = sorted({t["chunk_id"] for t in targets})
        wanted = {(t["repo"], t["branch"], t["path"], t["chunk_id"]) for t in targets}
        edges = [e for e in self._edges(f"caller_id in [{', '.join(map(literal, ids))}]")
                 if (e["repo"], e["branch"], e["path"], e["caller_id"]) in wanted]
        found: dict[str, tuple[str, float, list[int]]] = {}
        loops: set[str] = set()  # the targets among them that call themselves
        for e in edges:
            if e["target_id"]:
                uid = self._chunk_uid(e, e["target_path"], e["target_id"])
                if uid is not None:
                    found.setdefault(uid, (e["how"], e["weight"], []))[2].extend(_lines(e))
                    if (e["path"], e["caller_id"]) == (e["target_path"], e["target_id"]):
                        loops.add(uid)
        by_name = [e for e in edges if not e["target_id"]]
        defined = self._definitions_of({e["callee"] for e in by_name})
        for e in by_name:
            if e["how"] == GUESSED:
                candidates = [d for d in defined.get(e["callee"], ())
                              if (d["repo"], d["branch"]) == (e["repo"], e["branch"])][:MAX_CANDIDATES]
            else:
                candidates = [d for d in defined.get(e["callee"], ()) if d["repo"] != e["repo"]]
            for d in candidates:
                if d["uid"] not in found:
                    found[d["uid"]] = (GUESSED, GUESS_WEIGHT / max(1, len(candidates)), _lines(e))
                if (d["repo"], d["branch"], d["path"], d["chunk_id"]) == (e["repo"], e["branch"], e["path"],
                                                                          e["caller_id"]):
                    loops.add(d["uid"])  # a guess at its own name
        return self._ordered(found, loops)

    def _ordered(self, found: dict[str, tuple[str, float, list[int]]], loops: set[str]) -> list[Related]:
        """The chunks found, heaviest first, then in file and line order (as the local graph
        orders a node's neighbours: by weight, then by their place in the catalog)."""
        rows = self.store.chunks_by_uid(list(found))
        order = sorted((u for u in found if u in rows),
                       key=lambda u: (-found[u][1], rows[u]["repo"], rows[u]["path"], rows[u]["start_line"]))
        return [(rows[u], found[u][0], tuple(sorted(set(found[u][2]))), found[u][1], u in loops) for u in order]

    def _definitions_of(self, names: Iterable[str]) -> dict[str, list[dict]]:
        """The live definitions of these names, by name, each name's in the local candidate order
        (path, qualified name, id)."""
        names = sorted(set(names))
        if not names or not self.states:
            return {}
        kinds = ", ".join(literal(k) for k in sorted(NON_DEFINITION_KINDS))
        where = (f"{live_scope(self.states)} and kind not in [{kinds}] and part == 1 and "
                 f"name in [{', '.join(map(literal, names))}]")
        out: dict[str, list[dict]] = defaultdict(list)
        for row in self.store.chunks_where(where, MAX_CALL_SITES * len(names)):
            if is_live(row, self._branch(row)):
                out[row["name"]].append(row)
        for rows in out.values():
            rows.sort(key=lambda r: (r["repo"], r["branch"], r["path"], r["qualified_name"] or r["name"],
                                     r["chunk_id"]))
        return out


def _lines(edge: dict) -> list[int]:
    return [int(n) for n in edge["lines"].split(",") if n]
