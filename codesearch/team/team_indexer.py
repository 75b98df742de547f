"""A stateless indexer of one repository's branch into the team store: parse and resolve the
tree with the local indexer (repo_graph.py), write the files whose hash the store's live files do
not have and the edges of every file whose resolution changed, under a new generation, switch
the state record, then remove what the new generation replaced.

Nothing is kept between runs on the indexing machine (CI runs it on every push). The order of
work is what keeps search answering: rows of the new generation are invisible until the state
record names it (one upsert, last); a run killed before that leaves the previous generation
live, and the next run deletes what it had written; a run killed after it leaves replaced rows
behind, invisible, which the next run removes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..analysis.embed_text import embed_text_of
from ..config import Settings
from ..faults import checkpoint
from ..indexing.vendored import FileEntry, vendored_folders
from ..ingest.extract import Extracted
from ..ingest.walker import SourceFile
from .keyword_score import keyword_text
from .milvus_store import (
    CHUNKS,
    DELETE_PATHS,
    EDGES,
    FILES,
    MAX_LINES_TEXT,
    MAX_NAME_BYTES,
    MAX_TEXT_BYTES,
    LiveFile,
    MilvusStore,
    RepoState,
    TeamStoreError,
    cut,
    is_live,
    literal,
    live_files,
    row_uid,
)
from .repo_graph import RepoGraph, resolved_repository

WRITE_BATCH_FILES = 50
EMBED_BATCH = 256

# (embed hashes, texts) -> their vectors, one row each
VectorSource = Callable[[Sequence[str], Sequence[str]], np.ndarray]


@dataclass
class TeamIndexReport:
    repo: str
    branch: str
    generation: int = 0
    added: int = 0
    modified: int = 0
    deleted: int = 0
    unchanged: int = 0
    rewired: int = 0  # unchanged files whose calls resolve otherwise now: new edges, same chunks
    chunks_written: int = 0
    vectors: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def summary(self) -> str:
        return (f"{self.repo}@{self.branch}: generation {self.generation}, {self.added} added, {self.modified} "
                f"changed, {self.deleted} deleted, {self.unchanged} unchanged ({self.rewired} with new edges); "
                f"{self.chunks_written} chunks "
                f"written in {self.seconds:.1f}s")

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class TeamIndexer:
    """Writes one repository's branch into the store. `vectors`: where vectors come from (the
    embedder by default; the benchmark takes the local index's where their text hash matches)."""

    def __init__(self, store: MilvusStore, root: Path, repo: str, branch: str, settings: Settings,
                 vector_key: str, dimension: int, vectors: VectorSource):
        self.store = store
        self.root = Path(root).resolve()
        self.repo = repo
        self.branch = branch
        self.settings = settings
        self.vector_key = vector_key
        self.dimension = dimension
        self.vectors = vectors

    def run(self) -> TeamIndexReport:
        started = time.perf_counter()
        report = TeamIndexReport(self.repo, self.branch)
        self.store.ensure(self.dimension)
        state = self.store.state(self.repo, self.branch) or RepoState(self.repo, self.branch)
        if state.embedder and state.embedder != self.vector_key:
            raise TeamStoreError(f"{self.repo}@{self.branch} was indexed with {state.embedder}, not "
                                 f"{self.vector_key}: index it with the same embedder settings")
        live_gen = state.live_gen
        self.store.discard_generations_after(self.repo, self.branch, live_gen)
        if state.writing_gen:  # a killed run's, whose rows are gone now
            state.writing_gen = 0
            self.store.put_state(state)
        live = live_files(self.store.file_rows(self.repo, self.branch, live_gen))
        if not state.cleaned:
            self._sweep(live)
        gen = live_gen + 1
        written: dict[str, str] = {}  # path -> hash of the files whose chunks this run wrote
        batch: list[Extracted] = []

        def on_written(entry: SourceFile, extracted: Extracted) -> None:
            have = live.get(entry.rel)
            if have is None or have.hash != extracted.digest:
                batch.append(extracted)
                if len(batch) >= WRITE_BATCH_FILES:
                    self._write_batch(state, batch, gen, report, written)
                    batch.clear()

        with resolved_repository(self.root, self.settings, self.vector_key, self.dimension, on_written) as graph:
            checkpoint("team-parsed")
            self._write_batch(state, batch, gen, report, written)
            report.skipped = graph.skipped
            gone = sorted(set(live) - set(graph.hashes))
            rewired = sorted(p for p, f in live.items()
                             if p in graph.hashes and p not in written and f.edges_hash != graph.edges_hash(p))
            report.added = sum(1 for p in written if p not in live)
            report.modified = len(written) - report.added
            report.rewired = len(rewired)
            report.unchanged = len(graph.hashes) - len(written)
            if not written and not gone and not rewired:
                self.store.put_state(state)  # when the branch was last found up to date
                report.generation = live_gen
                report.seconds = time.perf_counter() - started
                return report
            report.generation = gen
            self._writing(state, gen)
            self._write_edges(graph, [*written, *rewired], gen)
            files = [self._file_row(p, written[p], gen, gen, graph.edges_hash(p)) for p in written]
            files += [self._file_row(p, live[p].hash, gen, live[p].gen, graph.edges_hash(p)) for p in rewired]
        files += [{**self._file_row(p, "", gen, gen, ""), "deleted": True} for p in gone]
        self.store.insert(FILES, files)
        report.deleted = len(gone)
        self.store.flush()
        checkpoint("team-rows-written")
        now = {p: f.hash for p, f in live.items() if p not in gone}
        now.update(written)
        state.live_gen, state.writing_gen, state.cleaned = gen, 0, False
        state.embedder = self.vector_key
        state.vendored = sorted(vendored_folders(FileEntry(p, h) for p, h in now.items()))
        state.files = len(now)
        replaced_chunks, replaced_vectors = self._replaced(live, [p for p in written if p in live] + gone)
        state.chunks = max(0, state.chunks + report.chunks_written - replaced_chunks)
        state.vectors = max(0, state.vectors + report.vectors - replaced_vectors)
        self.store.put_state(state)
        self.store.flush()
        checkpoint("team-switched")
        replaced = sorted({p for p in written if p in live} | set(gone))
        self.store.delete_paths(self.repo, self.branch, replaced, f"< {gen}")
        self.store.delete_paths(self.repo, self.branch, rewired, f"< {gen}", (EDGES, FILES))
        self.store.delete_where(FILES, f"{self.store.scope(self.repo, self.branch)} and gen == {gen} "
                                       "and deleted == true")
        state.cleaned = True
        self.store.put_state(state)
        self.store.flush()
        report.seconds = time.perf_counter() - started
        return report

    def _writing(self, state: RepoState, gen: int) -> None:
        """Mark the branch as being written (its answers say partial) from this run's first write
        on: a run that finds nothing to write never marks it."""
        if state.writing_gen != gen:
            state.writing_gen = gen
            self.store.put_state(state)

    def _file_row(self, path: str, digest: str, gen: int, content_gen: int, edges_hash: str) -> dict:
        return {"uid": row_uid(self.repo, self.branch, path, gen), "repo": self.repo, "branch": self.branch,
                "gen": gen, "path": path, "hash": digest, "deleted": False, "content_gen": content_gen,
                "edges_hash": edges_hash}

    def _write_edges(self, graph: RepoGraph, paths: list[str], gen: int) -> None:
        """The edges out of these files' chunks, under generation `gen`."""
        rows = []
        for path in paths:
            for n, e in enumerate(graph.edges.get(path, ())):
                rows.append({"uid": row_uid(self.repo, self.branch, gen, path, n), "repo": self.repo,
                             "branch": self.branch, "gen": gen, "path": path, "caller_id": e.caller_id,
                             "kind": e.kind, "target_id": e.target_id, "target_path": cut(e.target_path, 8000),
                             "weight": e.weight, "how": e.how, "callee": cut(e.callee, MAX_NAME_BYTES),
                             "lines": cut(",".join(map(str, e.lines)), MAX_LINES_TEXT)})
        self.store.insert(EDGES, rows)

    def _replaced(self, live: dict[str, LiveFile], paths: list[str]) -> tuple[int, int]:
        """(chunks, vectors) of the live generation that this run replaces (for the state record)."""
        chunks = vectors = 0
        for start in range(0, len(paths), DELETE_PATHS):
            some = ", ".join(map(literal, paths[start:start + DELETE_PATHS]))
            where = f"{self.store.scope(self.repo, self.branch)} and path in [{some}]"
            for row in self.store.rows(CHUNKS, where, ("gen", "path", "has_vector")):
                if is_live(row, live):
                    chunks += 1
                    vectors += bool(row["has_vector"])
        return chunks, vectors

    def _sweep(self, live: dict[str, LiveFile]) -> None:
        """Rows a run killed after its switch left behind: those of a path not at its live
        generation (its chunks', or its edges' and file rows')."""
        for name in (CHUNKS, EDGES, FILES):
            stale: dict[int, set[str]] = {}
            for row in self.store.rows(name, self.store.scope(self.repo, self.branch), ("path", "gen")):
                if not is_live(row, live, name):
                    stale.setdefault(row["gen"], set()).add(row["path"])
            for gen, paths in stale.items():
                self.store.delete_paths(self.repo, self.branch, sorted(paths), f"== {gen}", (name,))

    def _write_batch(self, state: RepoState, batch: list[Extracted], gen: int, report: TeamIndexReport,
                     written: dict[str, str]) -> None:
        """The chunk rows of these files under generation `gen` (their file rows come with their edges)."""
        if not batch:
            return
        self._writing(state, gen)
        chunks = [(x, j) for x in batch for j in range(len(x.chunks))]
        hashes = [x.embed_hashes[x.chunks[j].id] if x.embed_hashes else None for x, j in chunks]
        s = self.settings
        wanted = [i for i, h in enumerate(hashes) if h is not None]
        vectors: dict[int, list[float]] = {}
        for start in range(0, len(wanted), EMBED_BATCH):
            some = wanted[start:start + EMBED_BATCH]
            made = self.vectors([hashes[i] for i in some],  # type: ignore[misc]
                                [embed_text_of(chunks[i][0].chunks[chunks[i][1]], s.embed_body_lines,
                                               s.embed_words) for i in some])
            for i, vector in zip(some, made):
                vectors[i] = [float(v) for v in vector]
        report.vectors += len(vectors)
        blank = [1.0] + [0.0] * (self.dimension - 1)  # Milvus wants a vector in every row; never searched
        rows = [self._chunk_row(x, j, gen, vectors.get(i, blank), i in vectors) for i, (x, j) in enumerate(chunks)]
        self.store.insert(CHUNKS, rows)
        report.chunks_written += len(rows)
        written.update((x.rel, x.digest) for x in batch)

    def _chunk_row(self, x: Extracted, j: int, gen: int, vector: list[float], has_vector: bool) -> dict:
        """The row of the file's `j`th chunk."""
        c = x.chunks[j]
        assert x.keyword_columns is not None and x.traits is not None and x.message_templates is not None, \
            "extracted without prepare_rows"
        keywords = keyword_text(x.keyword_columns[j])
        fingerprint, content_class = x.traits[j]
        return {"uid": row_uid(self.repo, self.branch, gen, c.id), "repo": self.repo, "branch": self.branch,
                "gen": gen, "chunk_id": c.id, "parent_id": c.parent_id or "", "path": x.rel, "language": c.language,
                "kind": c.kind, "name": cut(c.name, MAX_NAME_BYTES),
                "qualified_name": cut(c.qualified_name, MAX_NAME_BYTES), "signature": cut(c.signature, 8000),
                "docstring": cut(c.docstring, 8000), "start_line": c.start_line, "end_line": c.end_line,
                "name_line": c.name_line, "name_column": c.name_column, "part": c.part, "ordinal": j,
                "content_hash": c.content_hash, "text": cut(c.text, MAX_TEXT_BYTES), "has_vector": has_vector,
                "keywords": keywords, "fingerprint": fingerprint, "content_class": content_class,
                "templates": cut(x.message_templates[j], MAX_TEXT_BYTES), "dense": vector}

