"""The service of a workspace: every method asked of each repository's own service, the answers
made one. Ranked lists (search, symbols, grep) are fused by the searcher's RRF with each
repository's boost, as `merge` defines it; relations resolve names in every repository.

A repository that cannot answer (missing, not indexed, locked, its daemon gone) is left out with
a note naming it; only when none can answer is the request an error.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TypeVar

from ..search.budget import fit_budget
from ..search.fusion import Fused, fuse
from ..search.merge import DEFAULT_K, FIRST_RANK
from ..search.present import impact_of
from ..wire import RequestError
from ..workspace import RepoSpec, Workspace
from .protocol import Service, ServiceUnavailable
from .types import (
    DefinitionAnswer,
    DefinitionRequest,
    EmbeddingProgress,
    GrepAnswer,
    GrepRequest,
    Health,
    ImpactAnswer,
    ImpactRequest,
    IndexAnswer,
    IndexRequest,
    Ok,
    ReadAnswer,
    ReadRequest,
    ReferencesAnswer,
    ReferencesRequest,
    RelatedResult,
    RelationsAnswer,
    RelationsRequest,
    SearchAnswer,
    SearchRequest,
    Stats,
    Status,
    SymbolsAnswer,
    SymbolsRequest,
    embedded_share,
)

A = TypeVar("A")
MAX_UNRESOLVED_NAMES = 50  # callees across repositories: names looked up in the others, at most


@dataclass
class Member:
    """One repository of the workspace: its service, or why it has none."""

    spec: RepoSpec
    service: Service | None = None
    problem: str | None = None


def open_members(workspace: Workspace, open_service: Callable[[RepoSpec], Service]) -> list[Member]:
    """Each repository's service; one that is missing or cannot be opened keeps its reason."""
    members = []
    for spec in workspace.repos:
        if not spec.root.is_dir():
            members.append(Member(spec, problem=f"{spec.root} is missing"))
            continue
        try:
            members.append(Member(spec, open_service(spec)))
        except RequestError:
            raise
        except Exception as exc:  # noqa: BLE001 - any reason is a note, not the end of the answer
            members.append(Member(spec, problem=_reason(exc)))
    return members


def _reason(exc: BaseException) -> str:
    return str(exc) or exc.__class__.__name__


class WorkspaceService:
    """The API's Service over several repositories' services (in process, or their daemons)."""

    def __init__(self, workspace: Workspace, members: list[Member], k: float = DEFAULT_K,
                 on_shutdown: Callable[[], Ok] | None = None, describe: str | None = None):
        self.workspace = workspace
        self.members = members
        self.k = k
        self.boosts = workspace.boosts
        self._on_shutdown = on_shutdown
        self.describe = describe or "workspace of " + ", ".join(r.name for r in workspace.repos)

    # --- fan-out ----------------------------------------------------------------------------
    def _each(self, ask: Callable[[Service], A], only: str | None = None) -> tuple[list[tuple[str, A]], list[str]]:
        """(name, answer) of every repository that answered, and a note for each that did not.
        A bad request is bad for all of them: it is raised, not noted."""
        answers: list[tuple[str, A]] = []
        problems: list[str] = []
        for member in self.members:
            name = member.spec.name
            if only is not None and name != only:
                continue
            if member.service is None:
                problems.append(f"{name}: {member.problem}")
                continue
            try:
                answers.append((name, ask(member.service)))
            except RequestError:
                raise
            except Exception as exc:  # noqa: BLE001 - noted; the others still answer
                problems.append(f"{name}: {_reason(exc)}")
        if not answers:
            if only is not None and not problems:
                known = ", ".join(m.spec.name for m in self.members)
                raise RequestError(f"no repository named {only!r} in the workspace; known: {known}")
            raise ServiceUnavailable("no repository of the workspace could answer: " + "; ".join(problems))
        return answers, problems

    def _note(self, problems: list[str], *more: str | None) -> str | None:
        lines = [f"left out {p}" for p in problems] + [m for m in more if m]
        return "; ".join(lines) or None

    def _fuse(self, lists: dict[str, list[tuple[str, int]]]) -> list[Fused[tuple[str, int]]]:
        """The repositories' ranked lists (keys: repository and position) as one, boosted."""
        return fuse(lists, boosts=self.boosts, k=self.k, first_rank=FIRST_RANK)

    # --- search -----------------------------------------------------------------------------
    def search(self, request: SearchRequest) -> SearchAnswer:
        started = time.perf_counter()
        each = replace(request, max_tokens=None)  # the budget is the whole answer's
        answers, problems = self._each(lambda s: s.search(each))
        timing: dict[str, float] = {}
        for name, answer in answers:
            timing[f"repo:{name}"] = answer.timing_ms.get("total", 0.0)
        by_name = dict(answers)
        fused = self._fuse({name: [(name, i) for i in range(len(a.results))] for name, a in answers})
        results = []
        for entry in fused[:request.limit]:
            name, position = entry.item
            result = by_name[name].results[position]
            results.append(replace(result, repo=name, repo_rank=position, fused_score=entry.fused,
                                   score=entry.score))
        shares = [a.embedded_share for _, a in answers if a.embedded_share is not None]
        notes = None
        if request.explain:
            notes = {f"{name}:{key}": value for name, a in answers for key, value in (a.notes or {}).items()}
        timing["total"] = round((time.perf_counter() - started) * 1000, 2)
        merged = SearchAnswer(
            query=answers[0][1].query, mode=request.mode, results=tuple(results), timing_ms=timing,
            partial=True if any(a.partial for _, a in answers) else None,
            embedded_share=min(shares) if shares else None, notes=notes or None,
            note=self._note(problems, *(f"{name}: {a.note}" for name, a in answers if a.note)),
            truncated=True if request.truncated else None)
        return fit_budget(merged, request.max_tokens)

    def symbols(self, request: SymbolsRequest) -> SymbolsAnswer:
        started = time.perf_counter()
        answers, _ = self._each(lambda s: s.symbols(request))
        by_name = dict(answers)
        fused = self._fuse({name: [(name, i) for i in range(len(a.symbols))] for name, a in answers})
        found = [replace(by_name[n].symbols[i], repo=n) for n, i in (f.item for f in fused)]
        found.sort(key=lambda d: _name_tier(d.name, request.query.strip()))  # stable: fused order within a tier
        return SymbolsAnswer(query=request.query, symbols=tuple(found[:request.limit]), timing_ms=_total(started))

    def grep_json(self, request: GrepRequest) -> Iterable[bytes]:
        return (json.dumps(self.grep(request).to_dict(), ensure_ascii=False).encode(),)

    def grep(self, request: GrepRequest) -> GrepAnswer:
        started = time.perf_counter()
        answers, problems = self._each(lambda s: s.grep(request))
        by_name = dict(answers)
        if request.sort == "path":
            order = [(n, i) for n, a in answers for i in range(len(a.matches))]
        else:
            order = [f.item for f in self._fuse({n: [(n, i) for i in range(len(a.matches))] for n, a in answers})]
        matches = tuple(replace(by_name[n].matches[i], repo=n) for n, i in order[:request.limit])
        first: dict[tuple[str, str], int] = {}
        for place, (n, i) in enumerate(order):
            first.setdefault((n, by_name[n].matches[i].path), place)
        files = tuple(sorted((replace(f, repo=n) for n, a in answers for f in a.files),  # in the matches' order
                             key=lambda f: first.get((f.repo or "", f.path), len(order))))
        total = sum(a.total for _, a in answers)
        return GrepAnswer(pattern=request.pattern, matches=matches, files=files, total=total,
                          truncated=any(a.truncated for _, a in answers) or len(order) > request.limit,
                          timing_ms=_total(started),
                          note=self._note(problems, *(f"{n}: {a.note}" for n, a in answers if a.note)))

    # --- names and relations ----------------------------------------------------------------
    def relations(self, request: RelationsRequest) -> RelationsAnswer:
        """Each repository's relations of the name; where it is defined in one repository, the
        calls to it in the others count too (callers), and the names it calls that its own
        repository does not define are looked up in the others (callees)."""
        started = time.perf_counter()
        across = replace(request, across=True)
        answers, problems = self._each(lambda s: s.relations(across))
        defined = any(a.targets for _, a in answers)
        targets = tuple(replace(t, repo=n) for n, a in answers for t in a.targets)
        results: list[RelatedResult] = []
        for name, answer in answers:
            if answer.targets or (defined and request.direction == "callers"):
                results += [replace(r, repo=name) for r in answer.results]
        if request.direction == "callees":
            results += self._callees_elsewhere(answers)
        results.sort(key=lambda r: r.depth)  # stable: each repository's order within a hop
        notes = [f"{n}: {a.note}" for n, a in answers if a.note and (a.targets or not defined)]
        if not defined:
            notes = [f"no definition named {request.name!r} in any repository of the workspace"] + notes[:1]
        return RelationsAnswer(name=request.name or (answers[0][1].name), direction=request.direction,
                               targets=targets, results=tuple(results), timing_ms=_total(started),
                               note=self._note(problems, *notes))

    def _callees_elsewhere(self, answers: list[tuple[str, RelationsAnswer]]) -> list[RelatedResult]:
        """The definitions, in the other repositories, of names the targets call that their own
        repository does not define."""
        found: list[RelatedResult] = []
        for name, answer in answers:
            for called in (answer.unresolved or ())[:MAX_UNRESOLVED_NAMES]:
                for member in self.members:
                    if member.spec.name == name or member.service is None:
                        continue
                    try:
                        definitions = member.service.definitions(DefinitionRequest(name=called, limit=5))
                    except Exception:  # noqa: BLE001 - that repository's own note comes from the first call
                        continue
                    found += [RelatedResult(
                        path=d.path, start_line=d.start_line, end_line=d.end_line, kind=d.kind, name=d.name,
                        qualified_name=d.qualified_name, language=d.language, score=0.0, depth=1,
                        snippet=d.signature, snippet_line=d.start_line, id=d.id, name_line=d.name_line,
                        name_column=d.name_column, repo=member.spec.name) for d in definitions.definitions]
        return found

    def impact(self, request: ImpactRequest) -> ImpactAnswer:
        return impact_of(self.relations(replace(request, direction="callers")), request.depth)

    def definitions(self, request: DefinitionRequest) -> DefinitionAnswer:
        started = time.perf_counter()
        answers, problems = self._each(lambda s: s.definitions(request))
        found = tuple(replace(d, repo=n) for n, a in answers for d in a.definitions)[:request.limit]
        note = None if found else next((a.note for _, a in answers if a.note), None)
        return DefinitionAnswer(name=request.name, definitions=found, timing_ms=_total(started),
                                note=self._note(problems, note))

    def references(self, request: ReferencesRequest) -> ReferencesAnswer:
        started = time.perf_counter()
        answers, _ = self._each(lambda s: s.references(request))
        refs = tuple(replace(r, repo=n) for n, a in answers for r in a.references)[:request.limit]
        return ReferencesAnswer(name=request.name, references=refs, timing_ms=_total(started))

    # --- files and the indexes --------------------------------------------------------------
    def read(self, request: ReadRequest) -> ReadAnswer:
        """A path needs its repository's name (`repo`) unless the workspace has one; an id is
        looked for in each repository."""
        if request.repo is None and request.path is not None and len(self.members) > 1:
            raise RequestError("in a workspace, say which repository the path is in: give repo")
        each = replace(request, repo=None)
        answers, _ = self._each(lambda s: s.read(each), only=request.repo)
        return answers[0][1]

    def index(self, request: IndexRequest) -> IndexAnswer:
        if request.paths is not None and request.repo is None and len(self.members) > 1:
            raise RequestError("in a workspace, paths belong to one repository: give repo")
        each = replace(request, repo=None)
        answers, problems = self._each(lambda s: s.index(each), only=request.repo)
        reports = [a for _, a in answers]
        total = {f: sum(getattr(a, f) for a in reports)
                 for f in ("added", "modified", "deleted", "renamed", "unchanged", "chunks_written",
                           "vectors_embedded", "vectors_from_cache", "vectors_deleted", "vectors_reconciled")}
        skipped: dict[str, int] = {}
        for a in reports:
            for reason, count in (a.skipped or {}).items():
                skipped[reason] = skipped.get(reason, 0) + count
        return IndexAnswer(ok=all(a.ok for a in reports) and not problems, skipped=skipped,
                           seconds=round(max(a.seconds for a in reports), 3),
                           rebuilt="; ".join(f"{n}: {a.rebuilt}" for n, a in answers if a.rebuilt),
                           vectors_repaired="; ".join(f"{n}: {a.vectors_repaired}" for n, a in answers
                                                      if a.vectors_repaired),
                           verified=all(a.verified for a in reports),
                           note=self._note(problems, *(f"{n}: {a.note}" for n, a in answers if a.note)), **total)

    def stats(self) -> Stats:
        answers, problems = self._each(lambda s: s.stats())
        stats = [a for _, a in answers]
        return Stats(files=sum(s.files for s in stats), chunks=sum(s.chunks for s in stats),
                     vectors=sum(s.vectors for s in stats), edges=sum(s.edges for s in stats),
                     skipped=_summed(s.skipped for s in stats), languages=_summed(s.languages for s in stats),
                     chunks_without_vectors=sum(s.chunks_without_vectors for s in stats),
                     index_bytes=sum(s.index_bytes for s in stats), source_bytes=sum(s.source_bytes for s in stats),
                     index_dir=", ".join(f"{n}={s.index_dir}" for n, s in answers),
                     root=", ".join(f"{n}={s.root}" for n, s in answers), model=stats[0].model,
                     last_index_time=max((s.last_index_time for s in stats if s.last_index_time), default=None),
                     last_index_seconds=max((s.last_index_seconds for s in stats if s.last_index_seconds),
                                            default=None),
                     vector_store_error="; ".join(f"left out {p}" for p in problems) or None)

    # --- the daemon -------------------------------------------------------------------------
    def status(self) -> Status:
        answers, problems = self._each(lambda s: s.status())
        all_ = [a for _, a in answers]
        left = sum(s.embedding.chunks_without_vectors for s in all_)
        rate = sum(s.embedding.rate_per_second for s in all_)
        eta = round(left / rate, 1) if rate and left else (None if left else 0.0)
        vectors = sum(s.vectors for s in all_)
        return Status(
            pid=all_[0].pid, root=self.describe, uptime_seconds=max(s.uptime_seconds for s in all_),
            ready=all(s.ready for s in all_), model_ready=all(s.model_ready for s in all_),
            files=sum(s.files for s in all_), chunks=sum(s.chunks for s in all_), vectors=vectors,
            edges=sum(s.edges for s in all_),
            skipped=_summed(s.skipped for s in all_), pending_changes=sum(s.pending_changes for s in all_),
            last_reindex=max((s.last_reindex for s in all_ if s.last_reindex), key=lambda r: r.get("at", 0),
                             default=None),
            reindex_count=sum(s.reindex_count for s in all_),
            embedding=EmbeddingProgress(chunks_without_vectors=left, rate_per_second=round(rate, 1),
                                        eta_seconds=eta),
            watcher=",".join(sorted({s.watcher for s in all_ if s.watcher})) or None,
            watcher_note="; ".join([f"{n}: {s.watcher_note}" for n, s in answers if s.watcher_note]
                                   + [f"left out {p}" for p in problems]),
            embedded_share=embedded_share(vectors, left), stale=any(s.stale for s in all_))

    def health(self) -> Health:
        answers, _ = self._each(lambda s: s.health())
        first = answers[0][1]
        return Health(ok=True, pid=first.pid, ready=all(h.ready for _, h in answers), root=self.describe,
                      http=first.http)

    def shutdown(self) -> Ok:
        if self._on_shutdown is not None:
            return self._on_shutdown()
        answers, _ = self._each(lambda s: s.shutdown())
        return answers[0][1]

    def close(self) -> None:
        for member in self.members:
            closer = getattr(member.service, "close", None)
            if closer is not None:
                closer()

    def names(self) -> Iterator[str]:
        return (m.spec.name for m in self.members)


def _name_tier(name: str, query: str) -> int:
    """As each repository orders its symbols: the exact name, the name in another case, names
    that start with the query, names that contain it, then the rest (from the hybrid ranking)."""
    low, q = name.lower(), query.lower()
    return 0 if name == query else 1 if low == q else 2 if low.startswith(q) else 3 if q in low else 4


def _total(started: float) -> dict[str, float]:
    return {"total": round((time.perf_counter() - started) * 1000, 2)}


def _summed(dicts) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in dicts:
        for key, count in (d or {}).items():
            out[key] = out.get(key, 0) + count
    return out
