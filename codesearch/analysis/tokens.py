"""Code-aware text analysis shared by the keyword index and keyword queries.

Identifiers are indexed whole and split (`getHTTPResponse` -> gethttpresponse, get, http,
response; `parse_config` -> parseconfig, parse, config); SQLite's porter tokenizer then stems
every term, on both sides. Terms of one character and English stopwords are not indexed: no
search is helped by them (queries of several words drop stopwords), and they were a fifth of
the keyword index's postings.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|[0-9]+")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
MAX_TERM_CHARS = 64

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers him his how i if in into is it its itself just me more most my no nor not
now of off on once only or other our out over own same she should so some such than that the their
them then there these they this those through to too under until up very was we were what when
where which while who whom why will with would you your yours
""".split())


def split_identifier(word: str) -> list[str]:
    """`getHTTPResponse2` -> ['get', 'http', 'response', '2']; `parse_config` -> ['parse', 'config']."""
    parts: list[str] = []
    for piece in word.replace("$", "_").split("_"):
        parts.extend(p.lower() for p in _PARTS.findall(piece))
    return parts


def _analysed(word: str) -> list[str]:
    """The whole identifier and its parts (only its first 8 parts when it is too long whole)."""
    parts = split_identifier(word)
    whole = "".join(parts)
    if not whole or len(whole) > MAX_TERM_CHARS:
        return parts[:8]
    return [whole, *parts] if len(parts) > 1 else [whole]


@lru_cache(maxsize=262144)
def _terms_of(word: str) -> str:
    """identifier_terms joined by spaces, memoized: code repeats its identifiers endlessly."""
    return " ".join(_analysed(word))


def identifier_terms(word: str) -> list[str]:
    """The whole identifier (lower-cased, separators removed) and its parts."""
    terms = _terms_of(word)
    return terms.split(" ") if terms else []


def indexed(term: str) -> bool:
    """Whether the keyword index holds this (analysed) term."""
    return len(term) > 1 and term not in STOPWORDS


@lru_cache(maxsize=262144)
def _indexed_terms_of(word: str) -> str:
    """The terms of `word` the index holds, joined by spaces, memoized (the indexer's own cache:
    it fills no other)."""
    return " ".join(t for t in _analysed(word) if indexed(t))


def index_text(text: str) -> str:
    """Text as the keyword index stores it: a space-separated stream of terms."""
    return " ".join(map(_indexed_terms_of, _WORD.findall(text)))  # an empty term adds a space: harmless


def query_terms(query: str, drop_stopwords: bool = True) -> list[str]:
    """Distinct terms of a query, in order, analysed like the index; stopwords dropped."""
    seen: dict[str, None] = {}
    words = _WORD.findall(query)
    for word in words:
        if drop_stopwords and word.lower() in STOPWORDS and len(words) > 1:
            continue
        for term in identifier_terms(word):
            if not (drop_stopwords and term in STOPWORDS and len(words) > 1):
                seen.setdefault(term, None)
    return list(seen)


def path_text(path: str) -> str:
    """A path as terms: folders, file stem and extension, each identifier-split."""
    return index_text(path.replace("/", " ").replace(".", " ").replace("-", " "))


def looks_like_symbol(query: str) -> bool:
    """A bare identifier (`HTTPException`, `parse_config`, `Foo.bar`, `ns::f`): a name lookup."""
    q = query.strip()
    if not q or " " in q:
        return False
    return bool(re.fullmatch(r"[A-Za-z_$][\w$]*((\.|::|#|->)[A-Za-z_$][\w$]*)*(\(\))?", q))
