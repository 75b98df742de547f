"""The call graph as NetworkX graphs: built from the catalog, which keeps the graph itself in SQL
(`digraphs`), and written out as GraphML, GEXF, node-link JSON or DOT (`formats`)."""

from .digraphs import neighbourhood, repository_graph
from .formats import FORMATS, write_graph

__all__ = ["FORMATS", "neighbourhood", "repository_graph", "write_graph"]
