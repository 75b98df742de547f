"""Each export format carries the graph: GraphML, GEXF and JSON read back to the same graph; DOT
is valid for any name a node or attribute may hold."""

from __future__ import annotations

import io
import json

import networkx as nx
import pytest

from codesearch.cli.parser import GRAPH_FORMATS
from codesearch.graph import FORMATS, write_graph
from codesearch.graph.formats import dot_lines


def small_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_node("a1", path="src/a.py", name="run", qualified_name="App.run", kind="method", start_line=3,
                   end_line=9)
    graph.add_node("b2", path='odd "dir"\\x.py', name="go", qualified_name="go\nnow", kind="function",
                   start_line=1, end_line=2)
    graph.add_edge("a1", "b2", kind="calls", weight=0.5, resolution="guess")
    return graph


def written(graph: nx.DiGraph, fmt: str) -> bytes:
    out = io.BytesIO()
    write_graph(graph, fmt, out)
    return out.getvalue()


def test_the_command_line_offers_every_format():
    assert GRAPH_FORMATS == FORMATS


@pytest.mark.parametrize("fmt, read", [
    ("graphml", lambda data: nx.read_graphml(io.BytesIO(data))),
    ("gexf", lambda data: nx.read_gexf(io.BytesIO(data))),
    ("json", lambda data: nx.node_link_graph(json.loads(data), edges="edges")),
])
def test_a_graph_reads_back_the_same(fmt, read):
    graph = small_graph()
    back = read(written(graph, fmt))
    assert set(back.nodes) == set(graph.nodes) and set(back.edges) == set(graph.edges)
    for node, data in graph.nodes(data=True):
        assert {k: back.nodes[node][k] for k in data} == data
    assert {k: back.edges["a1", "b2"][k] for k in ("kind", "weight", "resolution")} == graph.edges["a1", "b2"]


def test_dot_quotes_what_a_name_may_hold():
    lines = list(dot_lines(small_graph()))
    assert lines[0] == "digraph codesearch {" and lines[-1] == "}"
    assert lines[1] == ('  "a1" [label="App.run", path="src/a.py", name="run", qualified_name="App.run", '
                        'kind="method", start_line=3, end_line=9];')
    assert 'path="odd \\"dir\\"\\\\x.py"' in lines[2] and 'label="go\\nnow"' in lines[2]
    assert lines[3] == '  "a1" -> "b2" [kind="calls", weight=0.5, resolution="guess"];'
    assert written(small_graph(), "dot").decode() == "\n".join(lines) + "\n"
