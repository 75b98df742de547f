"""One repository parsed and resolved by the local indexer itself, into a catalog of its own in a
temporary folder: the team indexer takes each file's extraction from it as it is written (no
second parse) and, once every call is resolved, each file's edges (store/graph_export.py). So the
team store's edges are the local index's, resolved by scope, type, import and SCIP alike, with
no second resolver to keep in step; the folder goes when the run ends (the indexer keeps no state)."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config import Settings
from ..indexing.index import Index
from ..indexing.indexer import Indexer, IndexReport
from ..ingest.extract import Extracted
from ..ingest.walker import SourceFile
from ..store.graph_export import EdgeRow, file_edges


@dataclass(frozen=True)
class KeyOnlyEmbedder:
    """The team indexer's vector key and dimension where the local indexer asks for its model's:
    the catalog it writes holds embed-text hashes (made with this key), never vectors."""

    key: str
    dimension: int

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("the team indexer's graph catalog embeds nothing")

    def encode_query(self, text: str) -> np.ndarray:
        raise RuntimeError("the team indexer's graph catalog embeds nothing")


@dataclass
class RepoGraph:
    """What the local indexer made of the tree: the files it indexed (path -> content hash), the
    skipped ones by reason, and each file's edges with a hash of them."""

    hashes: dict[str, str]
    skipped: dict[str, int]
    edges: dict[str, list[EdgeRow]]

    def edges_hash(self, path: str) -> str:
        rows = self.edges.get(path, [])
        return hashlib.blake2b(repr(rows).encode("utf-8", "replace"), digest_size=16).hexdigest()


@contextmanager
def resolved_repository(root: Path, settings: Settings, vector_key: str, dimension: int,
                        on_written: Callable[[SourceFile, Extracted], None]) -> Iterator[RepoGraph]:
    """Index `root` into a temporary catalog (no vectors), telling `on_written` of each file as it
    is written, and give its graph."""
    with tempfile.TemporaryDirectory(prefix="codesearch-team-") as folder:
        index = Index(root, settings, index_dir=Path(folder) / "index", create=True,
                      embedder=KeyOnlyEmbedder(vector_key, dimension))
        try:
            index.write_meta()
            report = IndexReport()
            Indexer(index, on_written=on_written).update_catalog(report, None)
            hashes = {path: digest for path, digest in index.catalog.files.hashes() if digest}
            yield RepoGraph(hashes, dict(report.skipped), file_edges(index.catalog.db))
        finally:
            index.close()
