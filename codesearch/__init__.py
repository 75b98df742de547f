"""codesearch: local code search over tree-sitter chunks, BM25, vectors and a call graph."""

__version__ = "0.1.0"
