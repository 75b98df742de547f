"""What the embedding model sees for a chunk, and the hash that keys its vector in the cache.

Plain text functions, apart from the model: extraction workers compute these hashes without
importing numpy or torch.
"""

from __future__ import annotations

import hashlib


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


def text_hash(model: str, text: str) -> str:
    return hashlib.blake2b(f"{model}\0{text}".encode("utf-8", "replace"), digest_size=16).hexdigest()
