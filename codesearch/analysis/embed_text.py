"""What the embedding model sees for a chunk, and the hash that keys its vector in the cache.

Plain text functions, apart from the model: extraction workers compute these hashes without
importing numpy or torch.
"""

from __future__ import annotations

import hashlib
import re

_SPACE = re.compile(r"\s+")
_NOT_WORDS = re.compile(r"[\W_]+")  # what lies between words: punctuation, operators, underscores
_ASCII_NOT_WORDS = str.maketrans({chr(i): " " for i in range(128) if not chr(i).isalnum()})


def words_of(text: str) -> str:
    """The letters and digits of `text` (any script), one space between runs of them."""
    if text.isascii():  # most code: a translation table, faster than the regular expression
        return " ".join(text.translate(_ASCII_NOT_WORDS).split())
    return _NOT_WORDS.sub(" ", text).strip()


def embed_text(kind: str, qualified_name: str, signature: str, docstring: str, text: str,
               body_lines: int, words: bool) -> str:
    """What the model sees for a chunk: kind, qualified name, signature, docstring and the start
    of the body. No path: a renamed or moved file keeps its cached vectors.

    `words`: only its words, and the body without the signature and docstring it repeats. The
    model reads a bounded number of tokens, and code spends over a third of them on punctuation
    (each bracket, colon and underscore is a token of its own: 207 tokens a chunk as code, 128 as
    words, on 300 sampled chunks), so its input limit can halve for about the same words
    (embed_max_tokens; docs/benchmarks.md, "Indexing")."""
    body = "\n".join(text.split("\n", body_lines)[:body_lines])
    head = f"{kind} {qualified_name}".strip()
    if kind == "file":  # a file chunk's text opens with its docstring already
        parts = [words_of(head), words_of(body)] if words else [head, body]
    elif words:
        said, documented = words_of(signature), words_of(docstring)
        rest = f" {words_of(body)} "
        for repeated in (documented, said):
            if repeated:
                rest = rest.replace(f" {repeated} ", " ", 1)
        shown = documented if len(docstring) <= 500 else words_of(docstring[:500])  # (the docstring reduced once)
        parts = [words_of(head), said, shown, rest.strip()]
    else:
        parts = [head, signature, docstring[:500], body]
    return "\n".join(p for p in parts if p)


def embed_text_of(chunk, body_lines: int, words: bool) -> str:
    """embed_text for a Chunk or a catalog row (anything with these fields by name)."""
    get = chunk.__getitem__ if hasattr(chunk, "keys") else lambda name: getattr(chunk, name)
    return embed_text(get("kind"), get("qualified_name"), get("signature"), get("docstring"), get("text"),
                      body_lines, words)


def worth_embedding(kind: str, docstring: str, text: str, min_chars: int) -> bool:
    """Whether a chunk says enough for a vector of its own: a file always does (it stands in for
    what it holds), a documented definition does; otherwise at least `min_chars` non-whitespace
    characters of code (a one-line accessor, a closing `});` or a lone type alias say little
    that their name does not, and keyword and graph search still find them by it)."""
    return kind == "file" or bool(docstring.strip()) or len(_SPACE.sub("", text)) >= min_chars


def embed_hash_of(vector_key: str, chunk, body_lines: int, words: bool, min_chars: int) -> str | None:
    """The key of a chunk's vector (a Chunk or a catalog row), or None: it gets no vector."""
    get = chunk.__getitem__ if hasattr(chunk, "keys") else lambda name: getattr(chunk, name)
    if not worth_embedding(get("kind"), get("docstring") or "", get("text") or "", min_chars):
        return None
    return text_hash(vector_key, embed_text_of(chunk, body_lines, words))


def text_hash(model: str, text: str) -> str:
    return hashlib.blake2b(f"{model}\0{text}".encode("utf-8", "replace"), digest_size=16).hexdigest()
