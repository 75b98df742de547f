"""What the embedding model sees for a chunk, and the hash that keys its vector in the cache.

Plain text functions, apart from the model: extraction workers compute these hashes without
importing numpy or torch.
"""

from __future__ import annotations

import hashlib
import re

_SPACE = re.compile(r"\s+")


def embed_text(kind: str, qualified_name: str, signature: str, docstring: str, text: str,
               body_lines: int) -> str:
    """What the model sees for a chunk: kind, qualified name, signature, docstring and the start
    of the body. No path: a renamed or moved file keeps its cached vectors."""
    body = "\n".join(text.split("\n", body_lines)[:body_lines])
    head = f"{kind} {qualified_name}".strip()
    # a file chunk's text opens with its docstring already
    parts = [head, body] if kind == "file" else [head, signature, docstring[:500], body]
    return "\n".join(p for p in parts if p)


def embed_text_of(chunk, body_lines: int) -> str:
    """embed_text for a Chunk or a catalog row (anything with these fields by name)."""
    get = chunk.__getitem__ if hasattr(chunk, "keys") else lambda name: getattr(chunk, name)
    return embed_text(get("kind"), get("qualified_name"), get("signature"), get("docstring"), get("text"),
                      body_lines)


def worth_embedding(kind: str, docstring: str, text: str, min_chars: int) -> bool:
    """Whether a chunk says enough for a vector of its own: a file always does (it stands in for
    what it holds), a documented definition does; otherwise at least `min_chars` non-whitespace
    characters of code (a one-line accessor, a closing `});` or a lone type alias say little
    that their name does not, and keyword and graph search still find them by it)."""
    return kind == "file" or bool(docstring.strip()) or len(_SPACE.sub("", text)) >= min_chars


def embed_hash_of(vector_key: str, chunk, body_lines: int, min_chars: int) -> str | None:
    """The key of a chunk's vector (a Chunk or a catalog row), or None: it gets no vector."""
    get = chunk.__getitem__ if hasattr(chunk, "keys") else lambda name: getattr(chunk, name)
    if not worth_embedding(get("kind"), get("docstring") or "", get("text") or "", min_chars):
        return None
    return text_hash(vector_key, embed_text_of(chunk, body_lines))


def text_hash(model: str, text: str) -> str:
    return hashlib.blake2b(f"{model}\0{text}".encode("utf-8", "replace"), digest_size=16).hexdigest()
