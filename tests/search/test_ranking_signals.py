"""What each ranking step saw of a candidate is kept in Ranked.signals (scripts/train_ranker.py
learns from them): a step that did nothing to a candidate leaves no signal."""

from __future__ import annotations

from codesearch.model import Chunk
from codesearch.search.query import Query
from codesearch.search.ranking import RankingOptions, rank


def chunk(cid: str, path: str, name: str, kind: str = "function", parent_id: str | None = None) -> Chunk:
    return Chunk(id=cid, parent_id=parent_id, path=path, language="python", kind=kind, name=name,
                 qualified_name=name, signature="", docstring="", start_line=1, end_line=2,
                 content_hash=cid, header="", text=f"def {name}(): pass\n")


def signals_by_id(query: str, chunks: list[Chunk]) -> dict[str, dict[str, float]]:
    fused = [(c, 1.0 / (60 + i)) for i, c in enumerate(chunks, start=1)]
    return {r.chunk.id: r.signals for r in rank(Query.parse(query), fused, RankingOptions())}


def test_name_and_path_matches_are_kept_with_their_weight():
    signals = signals_by_id("retry backoff delay", [
        chunk("a", "src/retry.py", "compute_backoff"), chunk("b", "src/other.py", "unrelated")])
    assert signals["a"]["path_words"] == 1.0  # "retry", the first query word
    assert signals["a"]["name_words"] > 0
    assert "path_words" not in signals["b"] and "name_words" not in signals["b"]


def test_a_symbol_query_keeps_the_tier_of_its_definitions():
    signals = signals_by_id("LoadConfig", [
        chunk("use", "src/app.py", "main"), chunk("def", "src/config.py", "LoadConfig", kind="class")])
    assert signals["def"]["symbol_tier"] >= 3.0  # an exact-case type
    assert "symbol_tier" not in signals["use"]


def test_a_files_later_chunks_keep_their_place_in_it():
    signals = signals_by_id("parse tokens", [
        chunk("one", "src/lex.py", "first"), chunk("two", "src/lex.py", "second"),
        chunk("three", "src/lex.py", "third")])
    places = sorted(s.get("file_position", 0.0) for s in signals.values())
    assert places == [0.0, 1.0, 2.0]
