"""The JSON contract's records: round trips, and clear errors for every kind of bad input."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from codesearch.api.methods import METHODS, UnknownMethod, call
from codesearch.api.protocol import Service
from codesearch.api.types import (
    DefinitionRequest,
    Empty,
    GrepRequest,
    Health,
    IndexAnswer,
    IndexRequest,
    Ok,
    ReadRequest,
    RelatedResult,
    RelationsAnswer,
    RelationsRequest,
    RelationTarget,
    SearchAnswer,
    SearchRequest,
    SearchResult,
    Stats,
    Status,
)
from codesearch.filters import Filters
from codesearch.search.requests import MAX_QUERY_CHARS
from codesearch.vocabulary import MODES
from codesearch.wire import RequestError

RESULT = SearchResult(path="a/b.py", start_line=3, end_line=9, kind="function", name="f", qualified_name="m.f",
                      language="python", score=0.0123, sources={"vector": 2, "keyword": None, "graph": 1},
                      snippet="def f():\n    pass", snippet_line=3, signature="def f()", id="abc")


def test_search_request_round_trip_and_defaults():
    request = SearchRequest(query="retry backoff", mode="keyword", limit=7,
                            filters=Filters(language="go", path_glob="src/*"), files=True, context=2)
    data = request.to_dict()
    assert data == {"query": "retry backoff", "mode": "keyword", "limit": 7,
                    "filters": {"language": "go", "kind": None, "path_glob": "src/*"},
                    "files": True, "explain": False, "context": 2, "truncated": False}
    assert SearchRequest.from_dict(json.loads(json.dumps(data))) == request
    assert SearchRequest.from_dict({"query": "x"}) == SearchRequest(query="x")


def test_a_query_over_the_cap_is_cut_and_flagged():
    request = SearchRequest.from_dict({"query": "word " * 20_000})
    assert len(request.query) == MAX_QUERY_CHARS and request.truncated
    assert not SearchRequest(query="short").truncated


def test_in_process_fields_never_cross_the_wire():
    request = SearchRequest(query="x", retrievers=("keyword",))
    assert "retrievers" not in request.to_dict() and "ranking" not in request.to_dict()
    with pytest.raises(RequestError, match="unknown field 'retrievers'"):
        SearchRequest.from_dict({"query": "x", "retrievers": ["keyword"]})


def test_answer_leaves_out_optional_fields_until_set():
    answer = SearchAnswer(query="q", mode="hybrid", results=(RESULT,), timing_ms={"total": 1.5})
    data = answer.to_dict()
    assert set(data) == {"query", "mode", "results", "timing_ms"}
    assert set(data["results"][0]) == {"path", "start_line", "end_line", "kind", "name", "qualified_name", "language",
                                       "score", "sources", "snippet", "snippet_line", "signature", "id"}
    partial = SearchAnswer(query="q", mode="hybrid", results=(), timing_ms={}, partial=True, embedded_share=0.25)
    assert partial.to_dict()["partial"] is True and partial.to_dict()["embedded_share"] == 0.25
    assert SearchAnswer.from_dict(json.loads(json.dumps(data))) == answer


@pytest.mark.parametrize("record", [
    RelationsAnswer(name="f", direction="callers", targets=(RelationTarget("a.py", 1, "f"),),
                    results=(RelatedResult("b.py", 2, 4, "function", "g", "g", "python", 1.0, 1, "g()", 2, "id"),),
                    timing_ms={"total": 0.4}),
    IndexAnswer(ok=True, added=2, skipped={"binary": 1}, seconds=0.5),
    Stats(files=1, chunks=2, vectors=2, edges=0, skipped={}, languages={"python": 1}, chunks_without_vectors=0,
          index_bytes=10, source_bytes=5, index_dir="/i", root="/r", model="m", last_index_time=None,
          last_index_seconds=None),
    Health(ok=True, pid=5, ready=False, root="/r"),
    Ok(),
], ids=lambda r: type(r).__name__)
def test_answers_round_trip_through_json(record):
    assert type(record).from_dict(json.loads(json.dumps(record.to_dict()))) == record


BAD_SEARCHES = [
    ({}, "'query' is required"),
    ({"query": None}, "query must be a string, not null"),
    ({"query": 5}, "query must be a string, not a number"),
    ({"query": "   "}, "the query is empty"),
    ({"query": "x", "limit": "ten"}, "limit must be an integer, not a string"),
    ({"query": "x", "limit": True}, "limit must be an integer, not a boolean"),
    ({"query": "x", "limit": 2.5}, "limit must be an integer"),
    ({"query": "x", "limit": 0}, "limit must be between 1 and 1000"),
    ({"query": "x", "limit": -5}, "limit must be between 1 and 1000"),
    ({"query": "x", "limit": 10 ** 9}, "limit must be between 1 and 1000"),
    ({"query": "x", "mode": "psychic"}, "unknown mode 'psychic'"),
    ({"query": "x", "filters": "py"}, "filters must be an object, not a string"),
    ({"query": "x", "filters": {"colour": 1}}, "unknown field 'colour'"),
    ({"query": "x", "filters": {"language": 3}}, "filters.language must be a string"),
    ({"query": "x", "files": "yes"}, "files must be true or false"),
    ({"query": "x", "context": 1000}, "context must be between 0 and 100"),
    ({"query": "x", "surprise": 1}, "unknown field 'surprise'"),
]


@pytest.mark.parametrize("params, message", BAD_SEARCHES, ids=[m for _, m in BAD_SEARCHES])
def test_bad_search_params_are_refused_with_a_sentence_naming_the_field(params, message):
    with pytest.raises(RequestError, match=message.replace("(", r"\(").replace(")", r"\)")):
        SearchRequest.from_dict(params)


@pytest.mark.parametrize("params, message", [
    ({}, "give a name or a chunk id"), ({"name": ""}, "the name is empty"), ({"id": ""}, "the name is empty"),
    ({"name": "f", "depth": 0}, "depth must be"),
    ({"name": "f", "depth": "2"}, "depth must be an integer"), ({"name": "f", "direction": "callees"}, "unknown field"),
])
def test_bad_relation_params(params, message):
    with pytest.raises(RequestError, match=message):
        RelationsRequest.from_dict(params)


def test_index_request_paths_must_be_a_list_of_strings():
    assert IndexRequest.from_dict({"paths": ["a.py", "b/"]}).paths == ("a.py", "b/")
    for bad in ({"paths": "a.py"}, {"paths": [1]}, {"timeout": -1}):
        with pytest.raises(RequestError):
            IndexRequest.from_dict(bad)


BAD_TEXT = [
    (SearchRequest, {"query": "\ud800"}, "the query is not valid UTF-8 text"),  # JSON's "\ud800"
    (SearchRequest, {"query": "a\udcffb"}, "the query is not valid UTF-8 text"),  # argv's b"a\xffb"
    (SearchRequest, {"query": "a\0b"}, "the query holds a NUL character"),
    (SearchRequest, {"query": "x", "filters": {"path_glob": "\udcff*"}}, "the path_glob is not valid"),
    (RelationsRequest, {"name": "\udcff"}, "the name is not valid UTF-8 text"),
    (GrepRequest, {"pattern": "a\udcffb"}, "the pattern is not valid UTF-8 text"),
    (GrepRequest, {"pattern": "x", "paths": ["ok", "a\0"]}, r"paths\[1\] holds a NUL character"),
    (ReadRequest, {"path": "a\0b"}, "the path holds a NUL character"),
    (IndexRequest, {"paths": ["\ud800"]}, r"paths\[0\] is not valid UTF-8 text"),
    (DefinitionRequest, {"name": "f", "near": "\ud800"}, "the near is not valid"),
]


@pytest.mark.parametrize(("record", "params", "message"), BAD_TEXT, ids=[m for _, _, m in BAD_TEXT])
def test_requests_refuse_text_that_is_not_utf8_or_holds_a_nul(record, params, message):
    """Every front-end reads requests through these records: one check serves the socket, HTTP,
    MCP, LSP and the CLI (which builds some of them directly)."""
    with pytest.raises(RequestError, match=message):
        record.from_dict(params)
    with pytest.raises(RequestError, match=message):
        record(**{k: Filters(**v) if k == "filters" else tuple(v) if isinstance(v, list) else v
                  for k, v in params.items()})


def test_answers_may_hold_any_text():
    """A snippet is a file's text: a NUL in it is the file's business, not a client's mistake."""
    answer = SearchAnswer(query="x", mode="keyword", results=(replace(RESULT, snippet="a\0b\udcff"),),
                          timing_ms={})
    assert answer.results[0].snippet == "a\0b\udcff"


def test_the_method_table_covers_the_socket_contract():
    assert {"search", "callers", "callees", "index", "stats", "status", "health", "shutdown"} <= set(METHODS)
    for method in METHODS.values():
        assert method.summary and method.answer is not None
    assert METHODS["stats"].request is Empty and Empty.from_dict({}) == Empty()
    for method in METHODS.values():  # every row is answered by a method of the Service protocol
        assert method.service in Service.__dict__ and method.request and method.answer
        if method.writes_json:
            assert method.service + "_json" in Service.__dict__


def test_the_socket_client_is_made_from_the_method_table(monkeypatch):
    from codesearch.daemon import client as client_module

    sent = []

    def answer(path, name, params, timeout):
        sent.append((name, params, timeout))
        if name in ("stats", "index"):
            raise client_module.DaemonError("no", 1)
        return RelationsAnswer(name="f", direction=name, targets=(), results=(), timing_ms={}).to_dict()

    monkeypatch.setattr(client_module, "call", answer)
    client = client_module.DaemonClient("/nowhere", timeout=7.0)
    got = client.relations(RelationsRequest(name="f", direction="callers"))
    assert isinstance(got, RelationsAnswer) and got.direction == "callers"
    assert sent[-1] == ("callers", RelationsRequest(name="f", direction="callers").to_dict(), 7.0)
    client.relations(RelationsRequest(name="f", direction="callees"))
    assert sent[-1][0] == "callees"
    with pytest.raises(client_module.DaemonError):
        client.stats()
    assert sent[-1] == ("stats", {}, 7.0)
    with pytest.raises(client_module.DaemonError):
        client.index(IndexRequest(timeout=5.0))
    assert sent[-1][0] == "index" and sent[-1][2] == 5.0 + client_module.INDEX_REPLY_SLACK_SECONDS
    assert getattr(client, "close", None) is None and getattr(client, "search_json", None) is None


class Recorder:
    """A stand-in service that records what the method table hands it."""

    def __init__(self):
        self.calls = []

    def search(self, request):
        self.calls.append(request)
        return SearchAnswer(query=request.query, mode=request.mode, results=(), timing_ms={"total": 0.0})

    def relations(self, request):
        self.calls.append(request)
        return RelationsAnswer(name=request.name, direction=request.direction, targets=(), results=(), timing_ms={})

    def health(self):
        return Health(ok=True, pid=1, ready=True, root="/")


def test_call_reads_params_calls_the_service_and_writes_the_answer():
    service = Recorder()
    assert call(service, "search", {"query": "q", "mode": "keyword"})["mode"] == "keyword"
    assert service.calls[-1] == SearchRequest(query="q", mode="keyword")
    assert call(service, "callees", {"name": "f", "depth": 2})["direction"] == "callees"
    assert service.calls[-1] == RelationsRequest(name="f", depth=2, direction="callees")
    assert call(service, "health", {}) == {"ok": True, "pid": 1, "ready": True, "root": "/"}
    with pytest.raises(UnknownMethod):
        call(service, "frobnicate", {})
    with pytest.raises(RequestError):
        call(service, "health", {"unexpected": 1})


def test_modes_are_one_set():
    assert MODES == ("hybrid", "vector", "keyword", "graph")
    assert Status.__dataclass_fields__["embedding"]  # status nests its embedding progress
