"""What the indexer computes for each chunk before the store sees it: the keyword-index columns
and the hash that keys the chunk's vector. Plain functions, run on the extraction workers."""

from __future__ import annotations

from ..ingest.extract import Extracted
from ..model import Chunk
from .content_class import CLASS_NUMBERS, content_class
from .embed_text import embed_hash_of
from .fingerprint import fingerprints
from .messages import chunk_templates
from .tokens import index_text, path_text


def keyword_columns(chunk: Chunk) -> tuple[str, str, str, str]:
    """The chunk's keyword-index columns (name, path, signature+docstring, body) as analysed terms.

    A file's qualified name is its path (the path column has it) and a block's repeats its name;
    definitions and Markdown sections (heading paths) add their qualified names to the name."""
    c = chunk
    names = c.name if c.kind in ("file", "block") else f"{c.name} {c.qualified_name}"
    return index_text(names), path_text(c.path), index_text(f"{c.signature}\n{c.docstring}"), index_text(c.text)


def prepare_rows(vector_key: str, body_lines: int, words: bool, min_chars: int, result: Extracted) -> None:
    """The per-chunk work of writing a file that needs no database (keyword terms, embed hashes,
    None for a chunk that gets no vector, message templates, near-duplicate fingerprints and
    content classes): the indexer has it done in the worker process that extracted the file."""
    result.keyword_columns = [keyword_columns(c) for c in result.chunks]
    result.embed_hashes = {c.id: embed_hash_of(vector_key, c, body_lines, words, min_chars) for c in result.chunks}
    result.message_templates = chunk_templates(result.chunks)
    prints = fingerprints([(c.language, c.text, body) for c, (*_, body) in zip(result.chunks, result.keyword_columns)])
    result.traits = [(f, CLASS_NUMBERS[content_class(c.path, c.language)]) for c, f in zip(result.chunks, prints)]
