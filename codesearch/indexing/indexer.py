"""Full and incremental indexing: walk, diff against the catalog, extract, write, embed.

Order of work, chosen for crash safety: every file's rows (file record, chunks, keyword
entries, call sites, imports) are written in one transaction with the others of its batch, so
the catalog is always a consistent snapshot. Graph edges are then re-resolved for what changed,
and only then does Chroma catch up (deletions first, then new vectors), driven by bookkeeping
that lives in the catalog. Killing the process anywhere leaves a catalog that the next run
completes.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..analysis.rows import prepare_rows
from ..faults import checkpoint
from ..ingest.extract import Extracted, SkipFile, extract_files, map_on_workers
from ..ingest.walker import RepoWalker, Skipped, SourceFile
from ..paths import OutsideRoot, confine, on_disk
from ..store.catalog import CatalogError
from ..store.edges import resolve_call_edges
from ..store.files import COLLIDING_ID, FileRecord
from ..store.import_edges import rebuild_import_edges
from ..store.space import space_errors
from ..store.sqlite import sqlite3
from ..text import for_terminal
from ..vocabulary import NON_DEFINITION_KINDS
from .events import ProgressSink, StageCounter, no_progress
from .index import Index, IndexLock
from .scip_source import GIVEN as GIVEN_SCIP
from .scip_source import update_scip_edges
from .vectors import IndexWork, VectorSync
from .vendored import FileEntry, vendored_folders


class IndexInterrupted(RuntimeError):
    """The run was asked to stop; what it wrote is consistent and the next run completes it."""


WRITE_BATCH_FILES = 50  # small enough that writing overlaps extraction on the workers
# what one file's data can raise while it is written: that file is skipped, the batch goes on
FILE_DATA_ERRORS = (sqlite3.IntegrityError, sqlite3.InterfaceError, sqlite3.DataError, UnicodeError, ValueError,
                    TypeError, OverflowError, RecursionError)


@dataclass
class IndexReport:
    added: int = 0
    modified: int = 0
    deleted: int = 0
    renamed: int = 0
    unchanged: int = 0
    skipped: Counter = field(default_factory=Counter)
    chunks_written: int = 0
    vectors_embedded: int = 0
    vectors_from_cache: int = 0
    vectors_deleted: int = 0
    vectors_kept: int = 0  # vectors Chroma held that a rebuild's chunks kept (not stored again)
    embedded_ids: list[str] = field(default_factory=list)
    rebuilt: str = ""
    vectors_repaired: str = ""  # why the vector store was rebuilt from the catalog, if it was
    vectors_rekeyed: str = ""  # the key of the vectors the index held before a change of embedder
    vectors_reconciled: int = 0  # vectors the store had lost (or kept astray), put right
    verified: bool = False  # the catalog's integrity and every vector id were checked
    stale_paths: set[str] = field(default_factory=set)  # files that changed under the embedder: to reindex
    seconds: float = 0.0

    @property
    def changed(self) -> int:
        return self.added + self.modified + self.deleted

    def summary(self) -> str:
        return summary_of(self)


def summary_of(run: IndexReport | Any) -> str:
    """One line for an index run: an IndexReport, or anything with its counts (an IndexAnswer)."""
    parts = [f"{run.added} added", f"{run.modified} modified", f"{run.deleted} deleted", f"{run.unchanged} unchanged"]
    if run.renamed:
        parts.append(f"{run.renamed} renamed")
    if run.skipped:  # and why: an unreadable folder is not passed over without a word
        reasons = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in sorted(run.skipped.items()))
        parts.append(f"{sum(run.skipped.values())} skipped ({reasons})")
    vectors = f"{run.vectors_embedded} embedded, {run.vectors_from_cache} from cache"
    return f"indexed in {run.seconds:.1f}s: {', '.join(parts)}; {run.chunks_written} chunks written; {vectors}"


@dataclass
class _RunState:
    """What one run learns as it goes: used to re-resolve graph edges and count renames."""

    known: dict[str, FileRecord]
    # every edge is resolved at the end (a fresh index, or a run that died before resolving): no
    # file's changes need remembering, and a 100,000-file tree's names are not held in memory
    everything: bool = False
    changed: int = 0  # files written or removed
    changed_paths: set[str] = field(default_factory=set)
    dirty_names: set[str] = field(default_factory=set)  # names (un)defined by changed files
    arrived_or_gone: set[str] = field(default_factory=set)  # files new to the index, or gone from it
    added_hashes: set[str] = field(default_factory=set)

    def note_change(self, rel: str, names: Iterable[str] = (), arrived_or_gone: bool = False) -> None:
        """A file written or removed: what re-resolving its edges needs to know."""
        self.changed += 1
        if self.everything:
            return
        self.changed_paths.add(rel)
        self.dirty_names.update(names)
        if arrived_or_gone:
            self.arrived_or_gone.add(rel)


class Indexer(IndexWork[Index]):
    """Brings an Index up to date with the files on disk."""

    def __init__(self, index: Index, log: Callable[[str], None] | None = None,
                 on_progress: ProgressSink = no_progress,
                 on_written: Callable[[SourceFile, Extracted], None] | None = None):
        """`on_written`: told of each file whose rows were written, with what was extracted from
        it (the team indexer writes the same files into its store without parsing them again)."""
        super().__init__(index, log, on_progress)
        self.vectors = VectorSync(index, self.log, on_progress)
        self.on_written = on_written

    # --- public ---------------------------------------------------------------------------
    def run(self, paths: Iterable[str] | None = None, embed: bool = True, wait_for_lock: float = 0.0,
            should_stop: Callable[[], bool] = lambda: False, verify: bool = False) -> IndexReport:
        """Index the whole repository, or only `paths` (relative, files or folders).

        `should_stop` is asked between write batches; when it says yes the run ends with
        IndexInterrupted (a daemon shutting down). `verify` also checks the catalog's integrity
        (CatalogError when it is damaged) and reconciles every vector id with the store."""
        started = time.monotonic()
        with space_errors(self.index.dir), IndexLock(self.index.dir) as lock:
            lock.acquire(wait_for_lock, on_wait=lambda pid: self.log(
                f"waiting for another codesearch process (pid {pid}) to finish writing the index"))
            report = IndexReport()
            if verify:
                damage = self.catalog.stats.integrity_problem()
                if damage:
                    raise CatalogError(f"the index database {self.catalog.path} is damaged ({damage}); "
                                       f"rebuild it with: codesearch index --rebuild {self.index.root}")
            old_key = self.catalog.get_meta("model")  # read before a reset forgets it
            problem = self.index.compatibility_problem()
            rekeyed = bool(old_key) and old_key != self.index.vector_key
            if rekeyed and not problem:
                # the catalog keeps no chunk text to hash anew: every file is read again (keyword
                # and graph search come back within the reindex; vectors as the sync makes them)
                problem = (f"the embedding model changed ({old_key} -> {self.index.vector_key}): "
                           "every chunk is embedded again, once")
            if problem:
                self.log(f"rebuilding the index: {problem}")
                given_scip = self.catalog.get_meta(GIVEN_SCIP)  # a SCIP file given once stays given
                kept = self.catalog.reset(keep_vectors=not rekeyed)
                if given_scip:
                    self.catalog.set_meta(GIVEN_SCIP, given_scip)
                if rekeyed:
                    report.vectors_rekeyed = old_key or ""
                    self.index.vectors.retire()
                elif not kept and not self.settings.chroma_url:
                    self.index.vectors.drop()  # a layout that cannot say which: made again from the cache
                report.rebuilt = problem
                paths = None
            if self.catalog.get_meta("schema_version") is None:
                self.index.write_meta()  # before any data: a crash never leaves rows without it
            self.update_catalog(report, None if paths is None else list(paths), should_stop)
            if embed:
                try:
                    if verify:
                        self.vectors.check_and_verify(report)
                    elif self.index.vectors.need_a_check():
                        self.vectors.check(report)
                    self.vectors.sync(report)
                    if report.stale_paths:  # changed while being embedded: index them again, then their vectors
                        stale, report.stale_paths = sorted(report.stale_paths), set()
                        self.update_catalog(report, stale, should_stop)
                        self.vectors.sync(report)
                finally:  # one embed stage for the run, however many syncs it took, ended on failure too
                    self.vectors.end_progress()
            report.verified = verify
            checkpoint("index.finishing")
            with self.catalog.transaction():
                self.catalog.set_meta("last_index_time", str(time.time()))
                self.catalog.set_meta("last_index_seconds", f"{time.monotonic() - started:.3f}")
        report.seconds = time.monotonic() - started
        return report

    # --- catalog --------------------------------------------------------------------------
    def _scan(self, paths: list[str] | None) -> tuple[dict[str, SourceFile], dict[str, Skipped], set[str]]:
        """What is on disk now: indexable files, skipped files, and the scope that was looked at."""
        walker = RepoWalker(self.index.root, self.settings, self.index.dir)
        found: dict[str, SourceFile] = {}
        skipped: dict[str, Skipped] = {}
        entries: Iterable[SourceFile | Skipped]
        if paths is None:
            entries = walker.walk()
        else:
            entries = self._scan_paths(walker, paths)
        for entry in entries:
            if isinstance(entry, SourceFile):
                found[entry.rel] = entry
            else:
                skipped[entry.rel] = entry
        return found, skipped, set(paths or [])

    def _scan_paths(self, walker: RepoWalker, paths: list[str]) -> Iterable[SourceFile | Skipped]:
        """`paths` are confined already (see `_confined`)."""
        root = self.index.root
        for rel in paths:
            path = on_disk(root, rel)
            if not rel or walker.ignore.is_ignored_anywhere(rel, path.is_dir()):
                continue
            if path.is_symlink():
                yield walker.symlink(path, rel)
            elif path.is_dir():
                yield from walker.walk_folder(rel)
            elif path.exists():  # a regular file, or a FIFO or device to record as skipped
                yield walker.classify(rel, path)

    def _confined(self, paths: list[str]) -> list[str]:
        """The paths in the index's form, each inside the root; one that leaves it is dropped
        with a log line (clients are refused earlier, at the API boundary)."""
        out = []
        for path in paths:
            try:
                out.append(confine(self.index.root, path, follow_last=False))
            except OutsideRoot as exc:
                self.log(f"not indexed: {exc}")
        return out

    def update_catalog(self, report: IndexReport, paths: list[str] | None,
                       should_stop: Callable[[], bool] = lambda: False) -> None:
        """Files, chunks, keyword rows and edges brought up to date with the tree (or `paths`)."""
        with self.catalog.bulk_writes(), self._one_transaction(paths):
            self._update_catalog(report, paths, should_stop)

    def _one_transaction(self, paths: list[str] | None) -> contextlib.AbstractContextManager:
        """Changed paths (a daemon's batch) are written in one transaction: a run that fails
        (a full disk, a lock held too long) commits nothing of them, and is tried again whole.
        Not a whole tree, nor a run that resolves every edge on the workers: those read what the
        run committed before, and a first index commits batch by batch."""
        whole = paths is None or self.catalog.is_empty() or self.catalog.get_meta("edges_stale") == "1"
        return contextlib.nullcontext() if whole else self.catalog.transaction()

    def _update_catalog(self, report: IndexReport, paths: list[str] | None, should_stop: Callable[[], bool]) -> None:
        if paths is not None:
            paths = self._confined(paths)
        edges_stale = self.catalog.get_meta("edges_stale") == "1"  # a run died before resolving
        fresh = self.catalog.is_empty()
        found, skipped, scope = self._scan(paths)
        known = self.catalog.files.records() if paths is None else self.catalog.files.records_within(scope)
        checkpoint("index.walked")

        def in_scope(rel: str) -> bool:
            return paths is None or any(rel == p or rel.startswith(p + "/") for p in scope)

        gone = [rel for rel in known if in_scope(rel) and rel not in found and rel not in skipped]
        candidates: list[SourceFile] = []
        for rel, entry in found.items():
            old = known.get(rel)
            if old and old.skip_reason is None and old.size == entry.size and old.mtime_ns == entry.mtime_ns:
                report.unchanged += 1
            else:
                candidates.append(entry)
        state = _RunState(known, everything=fresh or edges_stale)
        affected: list[int] | None = []  # the callers whose calls were resolved again (None: all)

        with self.catalog.transaction() as db:
            for rel, skip in skipped.items():
                old = known.get(rel)
                if old is None or old.skip_reason != skip.reason:
                    if old is not None and old.skip_reason is None:
                        self._forget(rel, state)
                    self.catalog.files.delete_chunks(db, rel)
                    self.catalog.files.upsert(db, FileRecord(rel, 0, 0, "", "", skip.reason), skip.detail)
                report.skipped[skip.reason] += 1

        parsed = StageCounter(self.on_progress, "parse", len(candidates)) if candidates else None
        written = StageCounter(self.on_progress, "write") if candidates else None
        batch: list[tuple[SourceFile, Extracted | SkipFile]] = []
        jobs = [(e.rel, e.path, e.language) for e in candidates]
        finish = partial(prepare_rows, self.index.vector_key, self.settings.embed_body_lines,
                         self.settings.embed_words, self.settings.embed_min_chars)
        # an empty catalog is filled without the indexes that only reads need: made once at the end
        with self.catalog.indexes_deferred(empty=fresh and bool(candidates)) as skipped_at_the_end:
            for entry, result in zip(candidates, extract_files(jobs, self.settings, finish=finish)):
                batch.append((entry, result))
                if parsed:
                    parsed.advance()
                if len(batch) >= WRITE_BATCH_FILES:
                    self._write_batch(batch, report, state, written)
                    batch = []
                    if should_stop():
                        raise IndexInterrupted("indexing stopped between two write batches")
            if batch:
                self._write_batch(batch, report, state, written)
        for rel in skipped_at_the_end:
            self.log(f"skipped {rel}: {COLLIDING_ID}")
            report.skipped["failed"] += 1
        for counter in (parsed, written):
            if counter:
                counter.end()

        with self.catalog.transaction() as db:
            for rel in gone:
                self._forget(rel, state)
                self.catalog.files.delete(db, rel)
                state.arrived_or_gone.add(rel)
                report.deleted += 1
            report.renamed = sum(1 for rel in gone if known[rel].content_hash in state.added_hashes)
            if state.changed or state.everything:
                rebuild_import_edges(db, state.changed_paths, state.arrived_or_gone, everything=state.everything)
                checkpoint("index.edges.midway")
            if state.everything:
                self.catalog.set_meta("edges_stale", "1")  # until the calls below are resolved
            else:
                if state.changed:
                    affected = resolve_call_edges(db, state.changed_paths, state.dirty_names)
                # resolved, or nothing to resolve: files only touched (same content) were written
                # in batches that marked the edges stale, and the next run would resolve them all
                self.catalog.set_meta("edges_stale", "0")
            if report.added or report.deleted or fresh:  # the tree's structure may have changed
                folders = vendored_folders(FileEntry(path, digest) for path, digest in self.catalog.files.hashes())
                self.catalog.set_meta("vendored_folders", json.dumps(sorted(folders)))
        if state.everything:
            # every call, its slices worked out on the extraction workers, which read the catalog
            # as committed above (on one core, a long step on a monorepo)
            with self.catalog.transaction() as db:
                affected = resolve_call_edges(db, set(), set(), everything=True, fan_out=map_on_workers)
                self.catalog.set_meta("edges_stale", "0")
        update_scip_edges(self.catalog, self.index.root, self.settings, affected, self.log)
        if paths is None:  # the whole tree is written: a rebuild's held vectors are settled
            kept, given_up = self.catalog.vectors.settle_held()
            report.vectors_kept += kept
            if kept or given_up:
                self.log(f"kept {kept:,} vectors the store already held; {given_up:,} to delete from it")

    def _forget(self, rel: str, state: _RunState) -> None:
        """Note a file whose definitions are about to go: callers of them need re-resolving."""
        names = () if state.everything else self.catalog.graph.chunk_names_in_file(rel)
        state.note_change(rel, names, arrived_or_gone=True)

    def _write_batch(self, batch: list[tuple[SourceFile, Extracted | SkipFile]], report: IndexReport,
                     state: _RunState, written: StageCounter | None = None) -> None:
        """One transaction for the batch, a savepoint per file: a file whose data cannot be
        written is skipped with the reason `failed`, and the rest of the batch is indexed. Trouble
        that is not the file's (a full disk, a locked or broken database) fails the whole run,
        which leaves the previous index as it was."""
        with self.catalog.transaction() as db:
            self.catalog.set_meta("edges_stale", "1")  # cleared once edges are resolved
            keywords: list = []
            messages: list = []  # (chunk rid, its message templates)
            for position, (entry, result) in enumerate(batch):
                if position == len(batch) // 2:
                    checkpoint("index.batch.midway")  # inside the transaction, half written
                try:
                    file_keywords: list = []
                    file_messages: list = []
                    with self.catalog.savepoint(db):
                        self._write_file(db, entry, result, report, state, file_keywords, file_messages)
                    keywords += file_keywords
                    messages += file_messages
                except FILE_DATA_ERRORS as exc:  # one bad file must not fail the batch
                    detail = f"{type(exc).__name__}: {exc}"
                    self.log(f"skipped {entry.rel}: {detail}")
                    self.catalog.files.delete_chunks(db, entry.rel)
                    self.catalog.files.upsert(db, FileRecord(entry.rel, entry.size, entry.mtime_ns, "", entry.language,
                                                            "failed"), detail)
                    report.skipped["failed"] += 1
            self.catalog.keywords.insert(db, keywords)
            self.catalog.keywords.replace_templates(db, messages)
        checkpoint("index.batch.written")
        if written:
            written.advance(report.chunks_written - written.done)

    def _write_file(self, db: sqlite3.Connection, entry: SourceFile, result: Extracted | SkipFile,
                    report: IndexReport, state: _RunState, keywords_out: list, messages_out: list) -> None:
        """One file's rows; its keyword-index rows go to `keywords_out` and its chunks' message
        templates to `messages_out`, which the batch writes after all its files' savepoints (FTS5
        writes a segment of what it holds at each one: written file by file, each file's terms
        became a segment, merged again and again)."""
        rel = entry.rel
        old = state.known.get(rel)
        if isinstance(result, SkipFile):
            if old is not None and old.skip_reason is None:
                self._forget(rel, state)
            self.catalog.files.delete_chunks(db, rel)
            self.catalog.files.upsert(db, FileRecord(rel, entry.size, entry.mtime_ns, "", entry.language,
                                                    result.reason), str(result))
            report.skipped[result.reason] += 1
            return
        digest = result.digest
        record = FileRecord(rel, entry.size, entry.mtime_ns, digest, result.language, None)
        if old is not None and old.skip_reason is None and old.content_hash == digest:
            self.catalog.files.upsert(db, record)  # touched, not changed
            report.unchanged += 1
            return
        was_indexed = old is not None and old.skip_reason is None
        if was_indexed and not state.everything:
            # chunks that keep their ids keep their rows, and the calls into them (write_chunks):
            # only callers of names whose definitions came or went need resolving again
            defined_before = self.catalog.graph.definitions_in_file(rel)
            defined_now = {(c.name, c.id) for c in result.chunks if c.part == 1 and c.kind not in NON_DEFINITION_KINDS}
            state.note_change(rel, {name for name, _ in defined_before ^ defined_now})
        # prepared where the file was extracted (prepare_rows)
        embed_hashes, keywords, traits = result.embed_hashes, result.keyword_columns, result.traits
        assert embed_hashes is not None and keywords is not None, "extracted without prepare_rows"
        assert traits is not None, "extracted without prepare_rows"
        rids = self.catalog.files.write_chunks(db, rel, result.chunks, embed_hashes, keywords, traits, keywords_out)
        if result.message_templates is not None:
            messages_out.extend((rids[c.id], t) for c, t in zip(result.chunks, result.message_templates))
        self.catalog.files.insert_calls(db, result.calls, rids)
        self.catalog.files.insert_imports(db, result.imports)
        self.catalog.files.upsert(db, record)
        # counted once everything is written: a file that fails half way counts as skipped only
        if was_indexed:
            report.modified += 1
        else:
            state.note_change(rel, result.defined_names, arrived_or_gone=True)
            report.added += 1
            state.added_hashes.add(digest)
        report.chunks_written += len(result.chunks)
        if self.on_written is not None:
            self.on_written(entry, result)


def print_log(message: str) -> None:
    """An indexing message on stderr: the paths in it may hold bidirectional controls or C1 codes."""
    print(f"codesearch: {for_terminal(message)}", file=sys.stderr)
