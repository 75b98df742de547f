"""ReindexCache: built again when the catalog's index time changes, kept otherwise."""

from __future__ import annotations

from codesearch.search.reindex_cache import ReindexCache


class FakeCatalog:
    def __init__(self) -> None:
        self.meta: dict[str, str] = {}

    def get_meta(self, key: str) -> str | None:
        return self.meta.get(key)


def test_built_once_per_index_time_and_unindexed_before_any():
    catalog = FakeCatalog()
    builds: list[int] = []
    cache = ReindexCache(catalog, lambda: builds.append(1) or len(builds), 0)  # type: ignore[arg-type]
    assert cache.get() == 0 and not builds  # nothing indexed yet: no build
    catalog.meta["last_index_time"] = "1"
    assert cache.get() == 1 and cache.get() == 1
    catalog.meta["last_index_time"] = "2"
    assert cache.get() == 2
    assert cache.renew() == 3 and cache.get() == 3  # renewed for the same index time
