"""What the embedding model sees for chunks the catalog lists, made again from their files.

The catalog keeps no chunk text (docs/benchmarks.md, "Index size"): a chunk's embedding text comes from
extracting its file once more, a few milliseconds a file against about a hundred to embed its
chunks. A file that changed since it was indexed no longer gives the chunk, or gives it another
embed hash: such rows are left to the reindex that the change brings (`stale`), never embedded
from text the catalog does not describe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.embed_text import embed_text_of, text_hash
from ..config import Settings
from ..ingest.extract import SkipFile, extract_bytes
from ..paths import read_inside
from ..store.catalog import VectorRow


@dataclass
class EmbedTexts:
    texts: dict[str, str] = field(default_factory=dict)  # chunk id -> what the model embeds
    stale: set[str] = field(default_factory=set)  # paths whose file no longer matches the catalog


def embed_texts(root: Path, settings: Settings, vector_key: str, rows: list[VectorRow]) -> EmbedTexts:
    """The embedding texts of `rows` (grouped by file, each file extracted once)."""
    out = EmbedTexts()
    by_path: dict[str, list[VectorRow]] = {}
    for row in rows:
        by_path.setdefault(row.path, []).append(row)
    for rel, group in by_path.items():
        data = read_inside(root, rel, settings.max_file_bytes + 1)
        result = extract_bytes(rel, data, group[0].language, settings) if data is not None else None
        if result is None or isinstance(result, SkipFile):
            out.stale.add(rel)
            continue
        chunks = {c.id: c for c in result.chunks}
        for row in group:
            chunk = chunks.get(row.id)
            text = embed_text_of(chunk, settings.embed_body_lines, settings.embed_words) if chunk is not None else None
            if text is None or text_hash(vector_key, text) != row.embed_hash:
                out.stale.add(rel)
                continue
            out.texts[row.id] = text
    return out
