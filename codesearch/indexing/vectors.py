"""The vectors of one index: its Chroma store, opened only after a probe and remembered as
damaged once it fails, and kept in step with the catalog (check, repair, sync, verify).

What the model embeds is made again from the files, since the catalog keeps no chunk text
(docs/benchmarks.md, "Index size"): a chunk's embedding text comes from extracting its file once
more, a few milliseconds a file against about a hundred to embed its chunks. A file that changed
since it was indexed no longer gives the chunk, or gives it another embed hash: such rows are
left to the reindex that the change brings (`stale`), never embedded from text the catalog does
not describe.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

import numpy as np

from ..analysis.embed_text import embed_text_of, text_hash
from ..config import Settings
from ..embedding.base import Embedder
from ..faults import checkpoint
from ..ingest.extract import SkipFile, extract_bytes
from ..paths import read_inside
from ..store import chroma
from ..store.catalog import Catalog
from ..store.chroma import ProbeResult, VectorStoreError
from ..store.space import OutOfSpace, full_disk_line, says_disk_full, space_errors
from ..store.vector_tables import VectorRow
from .events import Parts, ProgressSink, StageCounter, no_progress

if TYPE_CHECKING:
    from ..store.chroma import VectorStore

DAMAGED_NOTE = "vectors.damaged"  # written when a process saw the vector store fail
PROBE_JOIN_SECONDS = 30.0  # closing waits this long for a background probe of the vector store
EMBED_BATCH = 256  # chunks per encode call (progress granularity); the model batches inside
CACHE_KEPT_AT_LEAST = 50_000  # cached vectors a pruning keeps, however few chunks need them


class IndexParts(Protocol):
    """What the vectors need of their index (indexing/index.py's Index)."""

    root: Path
    settings: Settings
    dir: Path
    catalog: Catalog
    vectors: IndexVectors

    @property
    def embedder(self) -> Embedder: ...

    @property
    def vector_key(self) -> str: ...

    @property
    def collection_name(self) -> str: ...

    def vector_dimension(self) -> int: ...


class VectorTally(Protocol):
    """What a run counts of its vectors (indexing/indexer.py's IndexReport)."""

    vectors_embedded: int
    vectors_from_cache: int
    vectors_deleted: int
    vectors_repaired: str
    vectors_reconciled: int
    embedded_ids: list[str]
    stale_paths: set[str]


@dataclass
class EmbedTexts:
    texts: dict[str, str] = field(default_factory=dict)  # chunk id -> what the model embeds
    stale: set[str] = field(default_factory=set)  # paths whose file no longer matches the catalog


def embed_texts(root: Path, settings: Settings, vector_key: str, rows: list[VectorRow]) -> EmbedTexts:
    """The embedding texts of `rows` (grouped by file, each file extracted once)."""
    out = EmbedTexts()
    by_path: dict[str, list[VectorRow]] = {}
    for row in rows:
        by_path.setdefault(row.path, []).append(row)
    for rel, group in by_path.items():
        data = read_inside(root, rel, settings.max_file_bytes + 1)
        result = extract_bytes(rel, data, group[0].language, settings) if data is not None else None
        if result is None or isinstance(result, SkipFile):
            out.stale.add(rel)
            continue
        chunks = {c.id: c for c in result.chunks}
        for row in group:
            chunk = chunks.get(row.id)
            text = embed_text_of(chunk, settings.embed_body_lines, settings.embed_words) if chunk is not None else None
            if text is None or text_hash(vector_key, text) != row.embed_hash:
                out.stale.add(rel)
                continue
            out.texts[row.id] = text
    return out


class IndexVectors:
    """The vector store of one index and what is known of its state. Views of one index (the
    daemon's writer, embedder and readers) share one store: `shared`, the view that keeps it.

    Chroma's native code can crash on a damaged store, so each process probes the store in a
    child process before it first opens it here. A store seen damaged (by the probe, or by an
    error from Chroma) is not opened again until `drop` has rebuilt it."""

    def __init__(self, index: IndexParts, shared: IndexVectors | None = None):
        self.index = index
        self._shared = shared
        self._store: VectorStore | None = None
        self._problem: str | None = None
        self._shortfall = 0  # vectors the catalog expects and the store lacks (seen by a probe)
        self._probed = False
        self._prober: threading.Thread | None = None  # the background probe, joined on close
        self._lock = threading.RLock()

    @property
    def store(self) -> VectorStore:
        """The vector store, opened in this process; VectorStoreError when it is damaged."""
        if self._shared is not None:
            return self._shared.store
        with self._lock:
            if self._store is None and not self._probed and not self.index.settings.chroma_url:
                self.probe()
            if self._problem:
                raise VectorStoreError(self._problem)
            if self._store is None:
                s = self.index.settings
                try:
                    self._store = chroma.VectorStore(self.index.dir, self.index.collection_name, s.chroma_url,
                                                     s.hnsw_m, s.hnsw_construction_ef, s.hnsw_search_ef)
                except OSError as exc:  # its open marker could not be written (a full disk)
                    raise VectorStoreError(f"cannot open the vector store: {exc}") from exc
            return self._store

    @property
    def problem(self) -> str | None:
        """Why the vector store cannot be used now (it needs a rebuild), or None."""
        return self._shared.problem if self._shared is not None else self._problem

    def probe(self) -> ProbeResult:
        """Open the store in a child process: how many vectors it holds, or why it is unusable
        (which is then remembered, here and on disk for the next process)."""
        if self._shared is not None:
            return self._shared.probe()
        with self._lock:
            dead = chroma.died_with_store_open(self.index.dir)
            if self.index.settings.chroma_url:
                result = ProbeResult(count=self.store.count())
            elif not (self.index.dir / chroma.STORE_FOLDER).exists():
                result = ProbeResult(count=None)
            else:
                result = chroma.probe(self.index.dir, self.index.collection_name, self.index.vector_dimension())
            self._probed = True
            if result.ok:
                chroma.forget_dead_markers(self.index.dir, dead)
                expected = self.index.catalog.vectors.expected_count()
                self._shortfall = max(0, expected - (result.count or 0))
                if self._shortfall:  # usable for what it holds; the next index restores the rest
                    self._write_damage_note(f"the vector store lacks {self._shortfall} "
                                            f"of the {expected} vectors the catalog expects")
            elif not says_disk_full(result.problem):  # a full disk is no damage: the store stays as it is
                self.mark_damaged(f"the vector store is damaged ({result.problem})")
            return result

    def probe_soon(self) -> None:
        """Probe in the background (a search loading the model meanwhile waits less)."""
        if self._shared is None and not self._probed and not self.index.settings.chroma_url and self._prober is None:
            self._prober = threading.Thread(target=self._probe_quietly, name="vector-probe", daemon=True)
            self._prober.start()

    def _probe_quietly(self) -> None:
        # a failure here is met again, and reported, by whoever opens the store next
        with contextlib.suppress(Exception), self._lock:
            if not self._probed:
                self.probe()

    @property
    def shortfall(self) -> int:
        """Vectors the catalog expects that the store was found to lack (0: none, or not looked)."""
        return self._shared.shortfall if self._shared is not None else self._shortfall

    def reconciled(self) -> None:
        """The store was checked against the catalog and put right."""
        if self._shared is not None:
            self._shared.reconciled()
            return
        with self._lock:
            self._shortfall = 0
            (self.index.dir / DAMAGED_NOTE).unlink(missing_ok=True)

    def mark_damaged(self, problem: str) -> None:
        """Remember that the store failed: no one here opens it again, and the next process that
        indexes rebuilds it (the note on disk says so). A store that failed for want of space is
        not damaged: it is kept, and used again once there is space."""
        if self._shared is not None:
            self._shared.mark_damaged(problem)
            return
        if says_disk_full(problem):
            return
        with self._lock:
            self._problem = problem
            self._write_damage_note(problem)

    def _write_damage_note(self, problem: str) -> None:
        """Tell the next process; this one remembers even where the note cannot be written."""
        with contextlib.suppress(OSError):
            (self.index.dir / DAMAGED_NOTE).write_text(problem + "\n")

    def need_a_check(self) -> bool:
        """Whether something says the store may not match the catalog: a process died with it
        open, one saw it fail, or it is missing while the catalog says it holds vectors."""
        if self.index.settings.chroma_url:
            return False
        folder = self.index.dir
        return bool(chroma.died_with_store_open(folder) or (folder / DAMAGED_NOTE).exists()
                    or (not (folder / chroma.STORE_FOLDER).exists() and self.index.catalog.vectors.expected_count()))

    def drop(self) -> None:
        """Close and delete the store: the catalog forgets which vectors it held, and the next
        sync rebuilds them from the embedding cache (re-embedding only what the cache lacks)."""
        if self._shared is not None:
            self._shared.drop()
            return
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
            if self.index.settings.chroma_url:
                raise VectorStoreError(f"the Chroma server at {self.index.settings.chroma_url} needs repairing by hand")
            chroma.remove_store(self.index.dir)
            self.index.catalog.vectors.forget_all()
            chroma.forget_dead_markers(self.index.dir, chroma.died_with_store_open(self.index.dir))
            (self.index.dir / DAMAGED_NOTE).unlink(missing_ok=True)
            self._problem = None
            self._shortfall = 0
            self._probed = True  # an empty store has nothing to probe

    def retire(self) -> None:
        """Forget every vector (they have another key): a local store is deleted; on a Chroma
        server, whose collections are named by key, the old collection is left to its owner."""
        if self.index.settings.chroma_url:
            self.index.catalog.vectors.forget_all()
        else:
            self.drop()

    def close(self) -> None:
        # a probe still running when the process exits would be torn down inside the vector
        # store's native code ("FATAL: exception not rethrown", the process aborted after its answer)
        if self._prober is not None:
            self._prober.join(timeout=PROBE_JOIN_SECONDS)
        if self._shared is None and self._store is not None:
            self._store.close()
            self._store = None


IndexT = TypeVar("IndexT", bound=IndexParts)


class IndexWork(Generic[IndexT]):
    """What a pass over one index holds: the index, its catalog and settings, where it logs and
    where it reports progress (the Indexer, and the VectorSync it runs)."""

    def __init__(self, index: IndexT, log: Callable[[str], None] | None = None,
                 on_progress: ProgressSink = no_progress):
        self.index = index
        self.catalog = index.catalog
        self.settings = index.settings
        self.on_progress = on_progress
        self.log = log or (lambda message: None)


class VectorSync(IndexWork[IndexParts]):
    """Keeps one index's vector store in step with its catalog: checks it (a probe in a child
    process), rebuilds it from the catalog when damaged, adds the vectors it lacks and deletes
    those of chunks gone, and reconciles every id on request."""

    def __init__(self, index: IndexParts, log: Callable[[str], None] | None = None,
                 on_progress: ProgressSink = no_progress):
        super().__init__(index, log, on_progress)
        self._stage: StageCounter | None = None  # the run's embed stage, while under way
        # texts embedded in parts that move progress about once a second, when someone watches it
        # (each part is one more call into the model's runtime)
        self._parts = Parts() if on_progress is not no_progress else None

    def needed(self) -> bool:
        """Whether there is vector work: a store to rebuild, chunks without vectors, vectors to delete."""
        return bool(self.index.vectors.problem) or self.catalog.vectors.needed()

    def sync_slice(self, report: VectorTally, limit: int, should_stop: Callable[[], bool]) -> None:
        """At most `limit` rows of a sync (the daemon's slices), after rebuilding a store that a
        search saw fail."""
        if self.index.vectors.problem:
            self.repair(report)
        self.sync(report, limit=limit, should_stop=should_stop)

    def check_and_verify(self, report: VectorTally) -> None:
        """`index --verify`, the vector store's part: checked, then (unless it was rebuilt)
        every id reconciled."""
        self.check(report)
        if not report.vectors_repaired:
            removed, missing = self.verify()
            report.vectors_reconciled += removed + missing
            self.log(f"verified vectors: {removed} stray removed, {missing} missing re-added")

    def prune_cache(self) -> None:
        """Trim the embedding cache to what the chunks use, and the most recently used besides."""
        self.catalog.vectors.prune_cache(keep=max(CACHE_KEPT_AT_LEAST, 2 * self.catalog.files.chunk_count()))

    def check(self, report: VectorTally) -> None:
        """Probe the vector store (in a child process): a damaged or unreadable store is
        rebuilt from the catalog, one that lost vectors (or holds strays) is reconciled."""
        result = self.index.vectors.probe()
        if not result.ok and says_disk_full(result.problem):
            raise OutOfSpace(f"{full_disk_line(self.index.dir)}: the vector store cannot be opened")
        if not result.ok:
            self.repair(report)
            return
        expected = self.catalog.vectors.expected_count()
        if (result.count or 0) != expected:
            self.log(f"the vector store holds {result.count or 0} vectors where the catalog expects {expected}; "
                     "reconciling")
            removed, missing = self.verify()
            report.vectors_reconciled += removed + missing
        self.index.vectors.reconciled()

    def repair(self, report: VectorTally) -> None:
        problem = self.index.vectors.problem or "the vector store failed"
        self.log(f"{problem}; rebuilding it from the catalog (cached vectors are reused)")
        report.vectors_repaired = problem
        self.index.vectors.drop()

    def sync(self, report: VectorTally, limit: int | None = None,
                     should_stop: Callable[[], bool] = lambda: False) -> None:
        """Make Chroma match the catalog: drop vectors of deleted chunks, add missing ones. A
        store that fails on the way is rebuilt from the catalog, once; one on a full disk is
        kept as it is (OutOfSpace)."""
        try:
            with space_errors(self.index.dir):
                self._sync(report, limit, should_stop)
        except VectorStoreError as exc:
            if report.vectors_repaired:
                raise
            self.index.vectors.mark_damaged(str(exc))
            self.repair(report)
            self._sync(report, limit, should_stop)

    def _sync(self, report: VectorTally, limit: int | None, should_stop: Callable[[], bool]) -> None:
        """Vectors for chunks that lack them, then deletions: a store that cannot take the new
        vectors (a full disk) keeps the old ones. `limit`: at most this many rows (the daemon's
        slices)."""
        catalog = self.catalog
        pending = catalog.vectors.pending_deletions()
        # a slice of the daemon's needs no count (its progress is the daemon's own)
        left = catalog.vectors.count_needing() if limit is None else int(catalog.vectors.needed())
        if not pending and not left:
            return  # nothing to do: do not even open Chroma
        vectors = self.index.vectors.store
        if left:
            self._embed_missing(report, left, limit, should_stop)
        if pending:
            live = catalog.vectors.ids_held(pending)  # after the new vectors: an id that came back keeps its
            doomed = [i for i in pending if i not in live]
            vectors.delete(doomed)
            checkpoint("vectors.deleted")  # gone from Chroma, still listed in the catalog
            catalog.vectors.clear_deletions(pending)
            report.vectors_deleted += len(doomed)

    def _embed_stage(self, total: int) -> StageCounter:
        """The embed stage of this run: begun once, grown when a run's later sync finds more."""
        if self._stage is None:
            self._stage = StageCounter(self.on_progress, "embed", total)
        else:
            self._stage.grow(total)
        return self._stage

    def end_progress(self) -> None:
        """The run's vectors are done: its embed stage (if it began) ends, once."""
        if self._stage is not None:
            self._stage.end()
            self._stage = None

    def _embed_missing(self, report: VectorTally, left: int, limit: int | None,
                       should_stop: Callable[[], bool]) -> None:
        """Definitions before file and block chunks (the most useful vectors arrive first), each
        in rid order, a batch at a time: nothing of the whole repository is held at once. A
        daemon's slice (`limit`) is a stage of its own; a run's stage ends with end_progress."""
        catalog = self.catalog
        bar = self._embed_stage(left if limit is None else limit)
        done = 0
        try:
            for definitions in (True, False):
                after = 0
                while (limit is None or done < limit) and not should_stop():
                    size = EMBED_BATCH if limit is None else min(EMBED_BATCH, limit - done)
                    rows = catalog.vectors.needing(size, after, definitions)
                    if not rows:
                        break
                    after = rows[-1].rid
                    self._embed_rows(rows, report, bar.advance)
                    done += len(rows)
        finally:
            if limit is not None:
                self.end_progress()
        if self.catalog.get_meta("dimension") is None and report.vectors_embedded + report.vectors_from_cache:
            with catalog.transaction():
                catalog.set_meta("dimension", str(self.index.vector_dimension()))
        if limit is None:  # a complete sync; the daemon's small slices leave pruning to it
            catalog.vectors.prune_cache(keep=max(CACHE_KEPT_AT_LEAST, 2 * done))

    def _embed_rows(self, rows: list[VectorRow], report: VectorTally, advance: Callable[[int], None]) -> None:
        """Vectors for these rows into Chroma and the catalog: from the cache where it has them,
        else embedded (each distinct text once) from their files as they are now, in parts that
        each `advance` progress (the rest of the rows advance it at the end)."""
        catalog = self.catalog
        cached = catalog.vectors.cached(list({r.embed_hash for r in rows}))
        missing = list({r.embed_hash: r for r in rows if r.embed_hash not in cached}.values())
        todo: list[VectorRow] = []
        if missing:
            made = embed_texts(self.index.root, self.settings, self.index.vector_key, missing)
            report.stale_paths |= made.stale
            todo = [r for r in missing if r.id in made.texts]
            if todo:
                texts = [made.texts[r.id] for r in todo]
                parts = []
                for start, stop in self._parts.spans(len(texts)) if self._parts else [(0, len(texts))]:
                    parts.append(self.index.embedder.encode_documents(texts[start:stop]))
                    advance(stop - start)
                fresh = np.concatenate(parts)
                new_items = [(r.embed_hash, fresh[j].astype(np.float32)) for j, r in enumerate(todo)]
                catalog.vectors.cache(new_items)
                cached.update(catalog.vectors.cached([h for h, _ in new_items]))  # as stored: what a rebuild gives
                report.embedded_ids.extend(r.id for r in todo)
                report.vectors_embedded += len(todo)
        ready = [r for r in rows if r.embed_hash in cached]
        report.vectors_from_cache += len(ready) - len(todo) if missing else len(ready)
        advance(len(rows) - len(todo))
        if not ready:
            return
        matrix = np.stack([cached[r.embed_hash] for r in ready])
        checkpoint("vectors.upserting")  # with @MS: killed inside Chroma's write
        self.index.vectors.store.upsert([r.id for r in ready], matrix,
                                  [{"path": r.path, "language": r.language, "kind": r.kind} for r in ready])
        checkpoint("vectors.upserted")  # in Chroma, not yet recorded in the catalog
        gone = catalog.vectors.mark_stored(ready)
        checkpoint("vectors.marked")
        if gone:  # deleted while being embedded (the daemon writes meanwhile)
            self.index.vectors.store.delete(gone)

    def verify(self) -> tuple[int, int]:
        """Full reconciliation with Chroma: (vectors removed, chunks marked for re-embedding).
        Every id the catalog names is looked up; the store's own list is read only when it holds
        more than those (strays), being slow to list (VectorStore.ids)."""
        vectors = self.index.vectors.store
        live = self.catalog.vectors.live_ids()
        held = vectors.holding(sorted(live))
        extra = sorted(vectors.ids() - live) if vectors.count() > len(held) else []
        vectors.delete(extra)
        missing = sorted(live - held)
        self.catalog.vectors.forget(missing)
        return len(extra), len(missing)
