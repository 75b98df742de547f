"""The service in this process, without a daemon: what the CLI uses when none is running."""

from __future__ import annotations

from pathlib import Path

from ..indexing.index import Index, IndexMissing
from ..indexing.indexer import Indexer, IndexReport
from ..paths import confine
from ..search.searcher import Searcher
from .protocol import ServiceUnavailable
from .serving import IndexService, NoModelYet, Serving
from .stats import collect_stats
from .types import Health, IndexAnswer, IndexRequest, Ok, Stats, Status


def confined_paths(root: Path, request: IndexRequest) -> list[str] | None:
    """The request's paths in the index's form; OutsideRoot (a bad request) for any that leaves
    the repository, whichever front-end it came through."""
    if request.paths is None:
        return None
    return [confine(root, path, follow_last=False) for path in request.paths]


def index_answer(report: IndexReport, ok: bool = True, note: str | None = None) -> IndexAnswer:
    return IndexAnswer(ok=ok, added=report.added, modified=report.modified, deleted=report.deleted,
                       renamed=report.renamed, unchanged=report.unchanged, skipped=dict(report.skipped),
                       chunks_written=report.chunks_written, vectors_embedded=report.vectors_embedded,
                       vectors_from_cache=report.vectors_from_cache, vectors_deleted=report.vectors_deleted,
                       seconds=round(report.seconds, 3), rebuilt=report.rebuilt,
                       vectors_repaired=report.vectors_repaired, vectors_reconciled=report.vectors_reconciled,
                       verified=report.verified, note=note)


class LocalService(IndexService):
    """Answers from the index on disk in this process; loads the model itself when it needs it.

    `vectors_elsewhere`: the vectors are being made by someone else (the daemon a first query
    started): searches answer at once from keyword and graph, marked partial, with this note,
    rather than loading the model for an index that has no vectors yet."""

    def __init__(self, index: Index, vectors_elsewhere: str | None = None):
        self.repository = self.reader_index = index
        rule = NoModelYet(vectors_elsewhere, every_search=True) if vectors_elsewhere is not None else None
        self.serving = Serving(no_model=lambda: rule)

    def open_searcher(self) -> Searcher:
        """IndexMissing for an index with nothing to search."""
        if self.repository.catalog.is_empty():
            root = self.repository.root
            if self.repository.catalog.outdated:
                raise IndexMissing(f"the index of {root} was made by an older codesearch; run: codesearch "
                                   f"index {root} (its vectors are kept)")
            raise IndexMissing(f"the index of {root} is empty; run: codesearch index {root}")
        searcher = Searcher(self.repository)
        if self.repository.catalog.vectors.expected_count():
            self.repository.vectors.probe_soon()  # beside the model's loading
        return searcher

    def index(self, request: IndexRequest) -> IndexAnswer:
        paths = confined_paths(self.repository.root, request)
        report = Indexer(self.repository).run(paths, wait_for_lock=request.timeout)
        return index_answer(report)

    def stats(self) -> Stats:
        return collect_stats(self.repository)

    def _no_daemon(self) -> ServiceUnavailable:
        return ServiceUnavailable(f"no codesearch daemon serves {self.repository.root}")

    def status(self) -> Status:
        raise self._no_daemon()

    def health(self) -> Health:
        raise self._no_daemon()

    def shutdown(self) -> Ok:
        raise self._no_daemon()

    def close(self) -> None:
        self.repository.close()


def open_local(root: Path, settings, index_dir: str | None) -> LocalService:
    return LocalService(Index(root, settings, index_dir))
