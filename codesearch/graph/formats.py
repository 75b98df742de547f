"""A graph written out for other tools: GraphML and GEXF (NetworkX's writers), node-link JSON, and
DOT, written here so that Graphviz's Python bindings are never needed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import BinaryIO

import networkx as nx

FORMATS = ("graphml", "gexf", "json", "dot")


def write_graph(graph: nx.DiGraph, fmt: str, out: BinaryIO) -> None:
    """`graph` in format `fmt` (one of FORMATS), as UTF-8 bytes on `out`."""
    WRITERS[fmt](graph, out)


def _write_json(graph: nx.DiGraph, out: BinaryIO) -> None:
    out.write(json.dumps(nx.node_link_data(graph, edges="edges"), ensure_ascii=False).encode("utf-8"))
    out.write(b"\n")


def _write_dot(graph: nx.DiGraph, out: BinaryIO) -> None:
    for line in dot_lines(graph):
        out.write(line.encode("utf-8"))
        out.write(b"\n")


def dot_lines(graph: nx.DiGraph) -> Iterator[str]:
    """The graph in Graphviz's DOT language, a line at a time; a node's label is its qualified name."""
    yield "digraph codesearch {"
    for node, attributes in graph.nodes(data=True):
        label = {"label": attributes["qualified_name"]} if "qualified_name" in attributes else {}
        yield f"  {_quoted(node)} [{_dot_attributes({**label, **attributes})}];"
    for src, dst, attributes in graph.edges(data=True):
        yield f"  {_quoted(src)} -> {_quoted(dst)} [{_dot_attributes(attributes)}];"
    yield "}"


def _dot_attributes(attributes: Mapping[str, object]) -> str:
    return ", ".join(f"{key}={value if isinstance(value, (int, float)) else _quoted(str(value))}"
                     for key, value in attributes.items())


def _quoted(text: str) -> str:
    """A DOT string: quotes and backslashes escaped, line breaks kept as `\\n`."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r").replace("\n", "\\n")
    return f'"{escaped}"'


WRITERS: dict[str, Callable[[nx.DiGraph, BinaryIO], None]] = {
    "graphml": nx.write_graphml, "gexf": nx.write_gexf, "json": _write_json, "dot": _write_dot}
