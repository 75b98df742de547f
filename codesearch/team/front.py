"""What the front-ends call to use a team store: open it from a URI, index a repository into it,
build its service; one-line errors for a bad URI or a missing extra."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..config import Settings
from ..embedding.backends import process_embedder
from ..embedding.base import Embedder
from .milvus_store import MilvusStore
from .team_indexer import TeamIndexer, TeamIndexReport, VectorSource
from .team_search import Scope
from .team_service import TeamService
from .uri import parse_store_uri

DEFAULT_BRANCH = "main"


def open_store(uri: str) -> MilvusStore:
    """StoreUriError for a URI that names no store, TeamStoreError when it cannot be opened."""
    return MilvusStore(parse_store_uri(uri))


def current_branch(root: Path) -> str:
    """The branch a checkout is on (from .git/HEAD, without running git), else DEFAULT_BRANCH."""
    head = Path(root) / ".git" / "HEAD"
    try:
        text = head.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return DEFAULT_BRANCH
    prefix = "ref: refs/heads/"
    return text[len(prefix):] if text.startswith(prefix) else DEFAULT_BRANCH


def embedder_vectors(embedder: Embedder) -> VectorSource:
    def vectors(hashes, texts) -> np.ndarray:
        return embedder.encode_documents(list(texts))
    return vectors


def index_repository(store: MilvusStore, root: Path, settings: Settings, name: str | None = None,
                     branch: str | None = None, embedder: Embedder | None = None,
                     vectors: VectorSource | None = None) -> TeamIndexReport:
    """Index `root` as repository `name` (default: its folder's name), branch `branch` (default:
    the checkout's)."""
    root = Path(root).resolve()
    embedder = embedder or process_embedder(settings)
    indexer = TeamIndexer(store, root, name or root.name, branch or current_branch(root), settings, embedder.key,
                          embedder.dimension, vectors or embedder_vectors(embedder))
    return indexer.run()


def team_service(store: MilvusStore, settings: Settings, keyword_only: bool = False, repo: str | None = None,
                 branch: str | None = None, http: str | None = None) -> TeamService:
    """The store's service; the model loads on the first vector search (none with `keyword_only`)."""
    embedder = None if keyword_only else process_embedder(settings)
    return TeamService(store, settings, embedder, Scope(repo, branch), http)
