"""`--files` ranked per retriever (search/file_ranking.py) beside the fused-first ranking: each
list's aggregation, and both strategies on a real index of sample_repos/python (keyword and
graph; with vectors in the slow test): one result per file, the fields of the JSON contract."""

from __future__ import annotations

import pytest
from conftest import keyword_indexed_sample

from codesearch.api.types import SearchRequest
from codesearch.cli.parser import build_parser
from codesearch.cli.quick import search_params
from codesearch.config import ConfigError, Settings
from codesearch.model import Chunk
from codesearch.search.file_ranking import DECAYED_SUM, FILE_RRF_K, MAX_PASSAGE, file_list, rank_files
from codesearch.search.query import Query
from codesearch.search.ranking import Ranked, RankingOptions
from codesearch.search.searcher import Searcher
from codesearch.vocabulary import FILE_RANKINGS
from codesearch.wire import RequestError

CONTRACT = {"path", "start_line", "end_line", "kind", "name", "language", "score", "sources", "snippet"}
QUESTIONS = ["parse the configuration file", "add an item to the inventory", "parse_config",
             "ValueError: not enough values to unpack"]


def chunk(cid: str, path: str, name: str = "f") -> Chunk:
    return Chunk(id=cid, parent_id=None, path=path, language="python", kind="function", name=name,
                 qualified_name=name, signature="", docstring="", start_line=1, end_line=2, content_hash=cid,
                 header="", text="")


PATHS = {"a1": "a.py", "b1": "b.py", "b2": "b.py", "b3": "b.py", "c1": "c.py"}


def test_max_passage_ranks_a_file_by_its_best_chunk():
    assert file_list(["b1", "a1", "b2", "c1", "b3"], [9, 8, 7, 6, 5], PATHS, MAX_PASSAGE, 0.0) == \
        ["b.py", "a.py", "c.py"]


def test_a_decayed_sum_lets_several_near_chunks_outweigh_one_nearer():
    ids, scores = ["a1", "b1", "b2", "b3", "c1"], [0.9, 0.8, 0.7, 0.6, 0.1]
    assert file_list(ids, scores, PATHS, DECAYED_SUM, 0.5)[:2] == ["b.py", "a.py"]  # 0.8 + 0.35 + 0.15 > 0.9
    assert file_list(ids, scores, PATHS, DECAYED_SUM, 0.0)[:2] == ["a.py", "b.py"]  # no decay: max-passage


def test_a_list_without_scores_counts_its_ranks():
    assert file_list(["a1", "b1", "b2"], [], PATHS, DECAYED_SUM, 0.5) == ["a.py", "b.py"]  # 1 > 1/2 + 1/6


def test_one_retriever_s_many_chunks_of_a_file_speak_for_it_once():
    """Fused first, the keyword list's three chunks of b.py outrank a.py, which both lists put
    first; per retriever, each list names b.py once."""
    chunks = {cid: chunk(cid, path) for cid, path in PATHS.items()}
    lists = {"keyword": ["b1", "b2", "b3", "a1"], "vector": ["a1", "c1"]}
    scores = {"keyword": [5.0, 4.9, 4.8, 4.0], "vector": [0.6, 0.5]}
    fused = {"b1": 0.05, "a1": 0.04, "b2": 0.03, "b3": 0.02, "c1": 0.01}
    ranked = [Ranked(chunks[cid], score) for cid, score in fused.items()]
    files = rank_files(Query.parse("x y", "hybrid"), lists, scores, ranked, {"keyword": 1.0, "vector": 1.0},
                       RankingOptions.off())
    assert [r.chunk.path for r, _ in files] == ["a.py", "b.py", "c.py"]
    assert [r.chunk.id for r, _ in files][1] == "b1"  # the file's best chunk stands for it
    k = FILE_RRF_K
    assert files[0][1] == pytest.approx(1 / (k + 1) + 1 / (k + 2))  # a.py: second of keyword's files, first of vector's


def test_exact_text_found_by_no_list_brings_its_file_in():
    chunks = {cid: chunk(cid, path) for cid, path in PATHS.items()}
    ranked = [Ranked(chunks["a1"], 0.02), Ranked(chunks["c1"], 0.0)]
    files = rank_files(Query.parse("x y", "hybrid"), {"keyword": ["a1"]}, {"keyword": [1.0]}, ranked,
                       {"keyword": 1.0}, RankingOptions(), exact={"c1": 1.0})
    assert [r.chunk.path for r, _ in files] == ["c.py", "a.py"]


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    index = keyword_indexed_sample(tmp_path_factory.mktemp("files"), "python")
    yield Searcher(index)
    index.close()


def answers(searcher: Searcher, query: str, mode: str = "hybrid") -> dict[str, list[dict]]:
    return {strategy: [r.to_dict() for r in searcher.search(SearchRequest(
        query=query, mode=mode, limit=10, files=True, file_ranking=strategy)).results] for strategy in FILE_RANKINGS}


@pytest.mark.parametrize("query", QUESTIONS)
def test_both_strategies_give_one_result_per_file_with_the_same_fields(searcher, query):
    found = answers(searcher, query)
    for strategy, results in found.items():
        paths = [r["path"] for r in results]
        assert paths and len(paths) == len(set(paths)), (strategy, paths)
        scores = [r["score"] for r in results]
        assert scores == sorted(scores, reverse=True), strategy
        assert all(r.keys() >= CONTRACT for r in results), strategy


def test_the_setting_chooses_the_strategy_a_request_does_not(searcher):
    request = SearchRequest(query="parse the configuration file", files=True)
    chosen = searcher.search(request).results
    default = searcher.search(SearchRequest(query=request.query, files=True,
                                            file_ranking=Settings().file_ranking)).results
    assert [r.path for r in chosen] == [r.path for r in default]


def test_a_report_finds_the_file_to_fix_per_retriever(searcher):
    from test_report_search import REPORT, check_answer
    answer = searcher.search(SearchRequest(query=REPORT, mode="hybrid", limit=5, files=True,
                                           file_ranking="per_retriever"))
    check_answer([r.path for r in answer.results])


def test_an_unknown_strategy_is_refused_in_one_line():
    with pytest.raises(RequestError, match="unknown file_ranking 'best'"):
        SearchRequest(query="x", files=True, file_ranking="best")
    with pytest.raises(ConfigError, match="file_ranking"):
        Settings(file_ranking="best")


def test_files_by_asks_for_files_ranked_that_way():
    args = build_parser().parse_args(["query", "parse config", "--files-by", "per_retriever"])
    request = SearchRequest.from_dict(search_params(args, "parse config"))
    assert request.files and request.file_ranking == "per_retriever"
    args = build_parser().parse_args(["query", "parse config"])
    assert "file_ranking" not in search_params(args, "parse config")


@pytest.mark.slow
def test_with_vectors_both_strategies_give_one_result_per_file(tmp_path_factory):
    from test_report_search import indexed
    index = indexed(tmp_path_factory, embed=True)
    try:
        for query in QUESTIONS:
            for strategy, results in answers(Searcher(index), query).items():
                paths = [r["path"] for r in results]
                assert len(paths) == len(set(paths)) and r_sources(results), (strategy, paths)
    finally:
        index.close()


def r_sources(results: list[dict]) -> bool:
    """Whether some result was found by the vector retriever (the model took part)."""
    return any((r.get("sources") or {}).get("vector") for r in results)
