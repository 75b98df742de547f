"""A value read from the catalog and kept until the next reindex: the catalog's `last_index_time`
changes whenever the indexer writes, so one cheap meta read tells whether what was read before
still holds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from ..store.catalog import Catalog

T = TypeVar("T")


class ReindexCache(Generic[T]):
    """`build()`'s value, built again when the index time differs from the one it was built at.
    Before anything was indexed (no index time yet) it is `unindexed`. The (time, value) pair is
    swapped as one, so threads that read at once see one or the other, never a mix."""

    def __init__(self, catalog: Catalog, build: Callable[[], T], unindexed: T):
        self._catalog = catalog
        self._build = build
        self._held: tuple[str | None, T] = (None, unindexed)

    def get(self) -> T:
        stamp = self._catalog.get_meta("last_index_time")
        held = self._held
        if held[0] != stamp:
            held = self._held = (stamp, self._build())
        return held[1]

    def renew(self) -> T:
        """A fresh `build()` for the same index time (what was kept grew too large)."""
        held = self._held = (self._held[0], self._build())
        return held[1]
