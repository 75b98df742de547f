"""File centrality: PageRank over the files that call and import each other, stored at index
time and kept fresh as files change."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from conftest import SAMPLES

from codesearch.config import load_settings
from codesearch.indexing import indexer as indexer_module
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.store.centrality import file_pagerank, pagerank


def test_pagerank_flows_to_what_is_linked_to():
    # 1, 2 and 3 link to 0; 0 links to 1
    rank = pagerank(4, np.array([1, 2, 3, 0]), np.array([0, 0, 0, 1]), np.ones(4))
    assert rank.sum() == pytest.approx(1.0)
    assert rank.argmax() == 0 and rank[1] > rank[2] == pytest.approx(rank[3])


def test_pagerank_without_edges_is_even():
    rank = pagerank(3, np.array([], dtype=np.int64), np.array([], dtype=np.int64), np.array([]))
    assert rank == pytest.approx(np.full(3, 1 / 3))


def test_pagerank_weights_count():
    # 2 links to 0 with weight 3 and to 1 with weight 1
    rank = pagerank(3, np.array([2, 2]), np.array([0, 1]), np.array([3.0, 1.0]))
    assert rank[0] > rank[1] > rank[2]


@pytest.fixture
def shop(tmp_path):
    root = tmp_path / "shop"
    shutil.copytree(SAMPLES / "ranking", root, ignore=shutil.ignore_patterns(".codesearch"))
    index = Index(root, load_settings(root), create=True)
    yield root, index
    index.close()


def ranks(index: Index) -> dict[str, float]:
    return dict(index.catalog.db.execute("SELECT path, centrality FROM file_rank").fetchall())


def test_the_file_everything_calls_is_the_most_central(shop):
    _, index = shop
    Indexer(index).run(embed=False)
    stored = ranks(index)
    computed = file_pagerank(index.catalog.db)
    assert stored == pytest.approx(computed)
    assert max(stored, key=stored.get) == "shop/money.py"  # four files call its format_amount
    assert stored["shop/money.py"] > 2 * stored["shop/coins.py"]  # the same code, called by none
    assert sum(stored.values()) / len(stored) == pytest.approx(1.0)  # 1.0 is the average
    assert index.catalog.file_centrality(["shop/money.py", "nowhere.py"]) == {"shop/money.py": stored["shop/money.py"]}


def test_centrality_follows_the_calls_as_files_change(shop):
    root, index = shop
    Indexer(index).run(embed=False)
    before = ranks(index)
    (root / "shop" / "reports.py").write_text(
        "from shop.coins import format_amount\n\n\ndef sales_report(sessions):\n"
        "    return [format_amount(s.total) for s in sessions]\n")
    Indexer(index).run(embed=False)
    after = ranks(index)
    assert after["shop/coins.py"] > before["shop/coins.py"]
    assert after["shop/money.py"] < before["shop/money.py"]


def test_centrality_waits_for_enough_changes_in_a_large_repository(shop, monkeypatch):
    root, index = shop
    Indexer(index).run(embed=False)
    before = ranks(index)
    monkeypatch.setattr(indexer_module, "FILE_RANK_STALE_SHARE", 0.5)  # half the files must change first
    (root / "shop" / "reports.py").write_text("from shop.coins import format_amount\n\n\n"
                                              "def r(s):\n    return format_amount(s)\n")
    Indexer(index).run(embed=False)
    assert ranks(index) == before and index.catalog.get_meta("file_rank_pending") == "1"
    for name in ("checkout.py", "pricing.py", "session.py", "cart.py", "legacy.py", "lock.py", "rounding.py"):
        path = root / "shop" / name
        path.write_text(path.read_text() + "\n# changed\n")
    Indexer(index).run(embed=False)
    assert ranks(index) != before and index.catalog.get_meta("file_rank_pending") == "0"
