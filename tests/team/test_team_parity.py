"""The team store's search gets the local search's inputs: FTS5's bm25 (checked against SQLite's
own), document frequencies of the repository searched (not of the whole store), exact phrases,
near-duplicates collapsed, and a dense index that a repository filter does not empty."""

from __future__ import annotations

import sqlite3

import pytest
from team_helpers import BILLING, DIMENSION, index, store_fixture, write  # noqa: F401 - the store fixture

from codesearch.config import Settings
from codesearch.search.requests import SearchRequest
from codesearch.search.retrievers.keyword import COLUMN_WEIGHTS
from codesearch.team.keyword_score import Collection, bm25, columns_of, keyword_text, phrases_held
from codesearch.team.milvus_store import CHUNKS, TeamStoreError
from codesearch.team.stemming import stemmed
from codesearch.team.team_search import Scope, TeamSearcher

ROWS = [  # name, path, signature and docstring, body: analysed terms as the catalog holds them
    ("retry backoff", "billing retry py", "retry with backoff call attempts", "for attempt in range retry call"),
    ("apply tax", "billing invoice py", "apply tax line", "return line tax rate"),
    ("invoice", "billing invoice py", "", "invoice lines totals tax tax tax"),
    ("wait exponentially", "billing retry py", "wait exponentially attempt", "return attempt power"),
    ("gateway", "billing gateway py", "gateway timeout retries", "payment gateway times out retry later"),
]


def test_the_keyword_score_is_fts5s_bm25_with_the_catalogs_column_weights():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(name, path, signature, body, tokenize = 'porter unicode61')")
    db.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", ROWS)
    columns = [columns_of(keyword_text(row)) for row in ROWS]
    collection = Collection.of(keyword_text(row) for row in ROWS)
    for query in (["retry"], ["tax", "invoice"], ["retry", "retry", "gateway"], ["attempt", "line"]):
        stems = stemmed(" ".join(query)).split()
        match = " OR ".join(f'"{t}"' for t in query)
        weights = ", ".join(map(str, COLUMN_WEIGHTS))
        expected = dict(db.execute(f"SELECT rowid, -bm25(t, {weights}) FROM t WHERE t MATCH ?", (match,)))
        mine = {i + 1: bm25(stems, cols, COLUMN_WEIGHTS, collection) for i, cols in enumerate(columns)}
        assert expected and {i: pytest.approx(s, rel=1e-9) for i, s in expected.items()} == \
            {i: s for i, s in mine.items() if s > 0}, query


def test_the_keyword_field_gives_back_each_column_once():
    row = ("retry backoff", "billing retry py", "", "retrying calls retries")
    assert columns_of(keyword_text(row)) == [stemmed(c).split() for c in row]


def test_exact_phrases_are_held_word_for_word_within_one_column():
    columns = [["retri", "backoff"], ["bill", "retri", "py"], [], ["call", "the", "payment", "gatewai"]]
    assert phrases_held([["retri", "backoff"], ["payment", "gatewai"], ["backoff", "bill"]], columns) == 2


def test_document_frequencies_are_the_searched_repositorys(store, tmp_path):
    """A term common in another repository is as rare in this one as the local index finds it."""
    index(store, write(tmp_path / "billing", BILLING), "billing")
    noise = {f"noise/retry_{i}.py": f"def retry_{i}(x):\n    return retry(x) + {i}\n" for i in range(6)}
    index(store, write(tmp_path / "noise", noise), "noise")
    searcher = TeamSearcher(store, Settings(), None)
    states = searcher.states(Scope(repo="billing"))
    collection = searcher.collection(states, ["retri"])
    rows = store.chunks_where('repo == "billing"', 100, ("keywords",))
    every = store.chunks_where('repo != ""', 100, ("keywords",))
    assert collection.chunks == len(rows) < len(every)
    assert collection.holding["retri"] == sum(any("retri" in c for c in columns_of(r["keywords"])) for r in rows)
    assert collection.holding["retri"] < Collection.of(r["keywords"] for r in every).holding["retri"]


def test_near_duplicates_are_collapsed_into_the_best_one(store, tmp_path):
    body = '''def normalise_currency_amount(amount, currency, rounding, precision, ledger):
    """Round an amount to the currency's precision before it reaches the ledger."""
    scaled = round(amount * 10 ** precision) / 10 ** precision
    ledger.record(currency, scaled, rounding)
    return scaled
'''
    index(store, write(tmp_path / "shop", {"eu/money.py": body, "us/money.py": body}), "shop")
    answer = TeamSearcher(store, Settings(), None).search(
        SearchRequest(query="normalise currency amount ledger", mode="keyword", limit=10))
    found = [r for r in answer.results if r.name == "normalise_currency_amount"]
    assert len(found) == 1 and found[0].similar is not None
    ids = {r["chunk_id"] for r in store.chunks_where('repo == "shop"', 100, ("chunk_id",))}
    assert [s.id for s in found[0].similar] and {s.id for s in found[0].similar} <= ids
    assert found[0].content_class == "code"


def test_a_pasted_message_finds_the_statement_that_writes_it(store, tmp_path):
    """The message templates and exact phrases the candidates hold lift the raise site, with its
    value filled in, as a local search does."""
    files = {"ledger/lookup.py": 'def find_invoice(ledger, name):\n'
                                 '    if name not in ledger.invoices:\n'
                                 '        raise KeyError(f"no invoice named {name} in the ledger of this shop")\n'
                                 '    return ledger.invoices[name]\n',
             "ledger/names.py": 'def invoice_named(ledger, name):\n'
                                '    """The invoice of the ledger named name, in this shop."""\n'
                                '    return ledger.invoice(name)\n'}
    index(store, write(tmp_path / "ledger", files), "ledger")
    answer = TeamSearcher(store, Settings(), None).search(SearchRequest(
        query="KeyError: no invoice named acme-42 in the ledger of this shop", mode="keyword", limit=5,
        explain=True))
    first = answer.results[0]
    assert first.name == "find_invoice" and any("word for word" in note for note in first.explain or ())


def test_a_lite_stores_dense_index_is_exact(store):
    store.ensure(DIMENSION)
    assert store.client.describe_index(CHUNKS, "dense")["index_type"] == "FLAT"


def test_a_store_made_without_the_ranking_fields_is_refused_in_one_line(store):
    """Chunks written before fingerprints, content classes and templates were stored: searching
    them says so, and what to do."""
    dt = store.milvus.DataType
    schema = store.client.create_schema(auto_id=False)
    schema.add_field("uid", dt.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("dense", dt.FLOAT_VECTOR, dim=DIMENSION)
    index_params = store.client.prepare_index_params()
    index_params.add_index("dense", index_type="FLAT", metric_type="COSINE")
    store.client.create_collection(CHUNKS, schema=schema, index_params=index_params)
    with pytest.raises(TeamStoreError, match=r"made by an earlier codesearch.*index into a new store"):
        store.chunks_by_uid(["x"])
    with pytest.raises(TeamStoreError, match="made by an earlier codesearch"):
        store.ensure(DIMENSION)
