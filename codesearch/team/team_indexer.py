"""A stateless indexer of one repository's branch into the team store: walk, hash, diff against
the store's live files, extract and embed what changed, write it under a new generation, switch
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
from functools import partial
from pathlib import Path

import numpy as np

from ..analysis.embed_text import embed_text_of
from ..analysis.rows import prepare_rows
from ..config import Settings
from ..faults import checkpoint
from ..indexing.vendored import FileEntry, vendored_folders
from ..ingest.extract import Extracted, SkipFile, extract_files, file_digest, read_source
from ..ingest.walker import RepoWalker, SourceFile
from .keyword_score import keyword_text
from .milvus_store import (
    CALLS,
    CHUNKS,
    DELETE_PATHS,
    FILES,
    MAX_NAME_BYTES,
    MAX_TEXT_BYTES,
    MilvusStore,
    RepoState,
    TeamStoreError,
    cut,
    literal,
    live_files,
    row_uid,
)

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
    chunks_written: int = 0
    vectors: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def summary(self) -> str:
        return (f"{self.repo}@{self.branch}: generation {self.generation}, {self.added} added, {self.modified} "
                f"changed, {self.deleted} deleted, {self.unchanged} unchanged; {self.chunks_written} chunks "
                f"written in {self.seconds:.1f}s")

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class TeamIndexer:
    """Writes one repository's branch into the store. `vectors`: where vectors come from (the
    embedder by default; the benchmark takes the local index's where their text hash matches)."""

    def __init__(self, store: MilvusStore, root: Path, repo: str, branch: str, settings: Settings,
                 vector_key: str, dimension: int, vectors: VectorSource, workers: int = 0):
        self.store = store
        self.root = Path(root).resolve()
        self.repo = repo
        self.branch = branch
        self.settings = settings
        self.vector_key = vector_key
        self.dimension = dimension
        self.vectors = vectors
        self.workers = workers

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
        live = live_files(self.store.file_rows(self.repo, self.branch, live_gen))
        if not state.cleaned:
            self._sweep(live)
        on_disk, digests = self._walk(report)
        changed = [f for f in on_disk if f.rel not in live or live[f.rel].hash != digests[f.rel]]
        gone = sorted(set(live) - {f.rel for f in on_disk})
        report.unchanged = len(on_disk) - len(changed)
        report.generation = live_gen
        if not changed and not gone:
            report.seconds = time.perf_counter() - started
            return report
        gen = report.generation = live_gen + 1
        state.writing_gen = gen
        self.store.put_state(state)
        written = self._write(changed, gen, digests, report)
        for rel in changed:
            report.added += rel.rel not in live
            report.modified += rel.rel in live
        tombstones = [{"uid": row_uid(self.repo, self.branch, p, gen), "repo": self.repo, "branch": self.branch,
                       "gen": gen, "path": p, "hash": "", "deleted": True} for p in gone]
        self.store.insert(FILES, tombstones)
        report.deleted = len(gone)
        self.store.flush()
        checkpoint("team-rows-written")
        now = {p: f.hash for p, f in live.items() if p not in gone}
        now.update(written)
        state.live_gen, state.writing_gen, state.cleaned = gen, 0, False
        state.embedder = self.vector_key
        state.vendored = sorted(vendored_folders(FileEntry(p, h) for p, h in now.items()))
        state.files = len(now)
        replaced_chunks, replaced_vectors = self._replaced(live, changed, gone)
        state.chunks = max(0, state.chunks + report.chunks_written - replaced_chunks)
        state.vectors = max(0, state.vectors + report.vectors - replaced_vectors)
        self.store.put_state(state)
        self.store.flush()
        checkpoint("team-switched")
        replaced = sorted({f.rel for f in changed if f.rel in live} | set(gone))
        self.store.delete_paths(self.repo, self.branch, replaced, gen)
        self.store.delete_where(FILES, f"{self.store.scope(self.repo, self.branch)} and gen == {gen} "
                                       "and deleted == true")
        state.cleaned = True
        self.store.put_state(state)
        self.store.flush()
        report.seconds = time.perf_counter() - started
        return report

    def _replaced(self, live, changed: list[SourceFile], gone: list[str]) -> tuple[int, int]:
        """(chunks, vectors) of the live generation that this run replaces (for the state record)."""
        paths = [f.rel for f in changed if f.rel in live] + gone
        chunks = vectors = 0
        for start in range(0, len(paths), DELETE_PATHS):
            some = ", ".join(map(literal, paths[start:start + DELETE_PATHS]))
            where = f"{self.store.scope(self.repo, self.branch)} and path in [{some}]"
            for row in self.store.rows(CHUNKS, where, ("gen", "path", "has_vector")):
                if live[row["path"]].gen == row["gen"]:
                    chunks += 1
                    vectors += bool(row["has_vector"])
        return chunks, vectors

    def _sweep(self, live) -> None:
        """Rows a run killed after its switch left behind: those of a path not at its live generation."""
        stale: dict[int, list[str]] = {}
        for name in (CHUNKS, CALLS, FILES):
            for row in self.store.rows(name, self.store.scope(self.repo, self.branch), ("path", "gen")):
                here = live.get(row["path"])
                if here is None or here.gen != row["gen"]:
                    stale.setdefault(row["gen"], []).append(row["path"])
        for gen, paths in stale.items():
            self.store.delete_paths(self.repo, self.branch, sorted(set(paths)), gen + 1)

    def _walk(self, report: TeamIndexReport) -> tuple[list[SourceFile], dict[str, str]]:
        """The files to index and their content hashes (every file is read: no state is kept here)."""
        files: list[SourceFile] = []
        digests: dict[str, str] = {}
        for entry in RepoWalker(self.root, self.settings).walk():
            if not isinstance(entry, SourceFile):
                report.skipped[entry.reason] = report.skipped.get(entry.reason, 0) + 1
                continue
            try:
                digests[entry.rel] = file_digest(read_source(entry.path, self.settings, walked=True))
            except SkipFile as skip:
                report.skipped[skip.reason] = report.skipped.get(skip.reason, 0) + 1
                continue
            files.append(entry)
        return files, digests

    def _write(self, changed: list[SourceFile], gen: int, digests: dict[str, str],
               report: TeamIndexReport) -> dict[str, str]:
        """Rows of the changed files under generation `gen`; path -> hash of those written."""
        written: dict[str, str] = {}
        jobs = [(f.rel, f.path, f.language) for f in changed]
        s = self.settings
        finish = partial(prepare_rows, self.vector_key, s.embed_body_lines, s.embed_words, s.embed_min_chars)
        batch: list[Extracted] = []
        for result in extract_files(jobs, self.settings, self.workers, finish=finish):
            if isinstance(result, SkipFile):
                report.skipped[result.reason] = report.skipped.get(result.reason, 0) + 1
                continue
            batch.append(result)
            if len(batch) >= WRITE_BATCH_FILES:
                self._write_batch(batch, gen, report, written)
                batch = []
        self._write_batch(batch, gen, report, written)
        return written

    def _write_batch(self, batch: list[Extracted], gen: int, report: TeamIndexReport,
                     written: dict[str, str]) -> None:
        if not batch:
            return
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
        calls = []
        for x in batch:
            imported = " ".join(text for _, _, _, text in x.imports)
            defined = set(x.defined_names)
            for n, (caller, path, callee, line, _hint, _ref) in enumerate(x.calls):
                how = "exact" if callee in defined else "import" if callee and callee in imported else "name-only"
                calls.append({"uid": row_uid(self.repo, self.branch, gen, path, n), "repo": self.repo,
                              "branch": self.branch, "gen": gen, "path": path, "caller_id": caller,
                              "callee": cut(callee, MAX_NAME_BYTES), "line": line, "resolution": how})
        self.store.insert(CALLS, calls)
        self.store.insert(FILES, [{"uid": row_uid(self.repo, self.branch, x.rel, gen), "repo": self.repo,
                                   "branch": self.branch, "gen": gen, "path": x.rel, "hash": x.digest,
                                   "deleted": False} for x in batch])
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
                "name_line": c.name_line, "name_column": c.name_column, "part": c.part,
                "content_hash": c.content_hash, "text": cut(c.text, MAX_TEXT_BYTES), "has_vector": has_vector,
                "keywords": keywords, "fingerprint": fingerprint, "content_class": content_class,
                "templates": cut(x.message_templates[j], MAX_TEXT_BYTES), "dense": vector}

