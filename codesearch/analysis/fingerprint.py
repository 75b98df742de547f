"""A chunk's near-duplicate fingerprint: a 64-bit SimHash of the parts of its text that copies
and translations keep.

Code keeps its words: a copied or regenerated function has the same identifiers, so code is
fingerprinted from the terms the keyword index holds of it. A document translated into another
language keeps, of its text, what is not prose: its code blocks and inline code, its link and
image targets, and the names written as code in its sentences; its prose changes word for word.
So a document is fingerprinted from those parts alone. Two chunks are near-duplicates when their
fingerprints differ in few bits (search/collapse.py). A chunk with too few such features gets no
fingerprint (0): a short paragraph or a one-line function is never called a copy of another.
"""

from __future__ import annotations

import re
import zlib

from .content_class import DOCUMENT_LANGUAGES

BITS = 64
MASK = (1 << BITS) - 1
SALT = 0x9E3779B9  # the second CRC-32 of a feature starts here: 64 bits from two
MIN_FEATURES = 8  # distinct features a chunk needs to be fingerprinted at all

WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|\d+(?:\.\d+)*")
FENCE = re.compile(r"^\s*(```|~~~)[^\n]*\n(.*?)^\s*\1", re.MULTILINE | re.DOTALL)
INDENTED_CODE = re.compile(r"^(?:    |\t)\S[^\n]*$", re.MULTILINE)  # Markdown's and reST's literal blocks
INLINE_CODE = re.compile(r"`+([^`\n]+)`+")
LINK_TARGET = re.compile(r"\]\(([^)\s]+)[^)]*\)|<(https?://[^>\s]+)>|(https?://[^\s)\]>\"']+)")
# a name written as code in a sentence: snake_case, camelCase, dotted.names, call()s
CODE_NAME = re.compile(r"\b[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)+(?:\(\))?|"
                       r"\b[a-z]+_[\w$]+\b|\b[a-z]+[A-Z][\w$]*\b|\b[A-Za-z_$][\w$]*\(\)")


def document_features(text: str) -> set[str]:
    """The parts of a document that its translations keep: the words of its code (fenced,
    indented, inline), its link targets, and names written as code."""
    features: set[str] = set()
    for m in FENCE.finditer(text):
        features.update(WORD.findall(m.group(2)))
    prose = FENCE.sub(" ", text)
    for line in INDENTED_CODE.findall(prose):
        features.update(WORD.findall(line))
    for code in INLINE_CODE.findall(prose):
        features.update(WORD.findall(code))
    for m in LINK_TARGET.finditer(prose):
        features.add("link:" + next(g for g in m.groups() if g))
    features.update(CODE_NAME.findall(INLINE_CODE.sub(" ", prose)))
    return features


def simhash(features: set[str]) -> int:
    """The 64-bit SimHash of a set of features, as a signed integer (what SQLite stores); 0 for
    fewer than MIN_FEATURES of them.

    Each bit is set where most features' hashes have it: the 64 counts are kept bit-sliced (plane
    k holds bit k of every count), so adding a hash is a ripple of carries through a few integers
    and no numpy is needed on the extraction workers."""
    if len(features) < MIN_FEATURES:
        return 0
    planes = [0] * (len(features).bit_length() + 1)
    for f in features:
        data = f.encode()
        carry = zlib.crc32(data) << 32 | zlib.crc32(data, SALT)
        k = 0
        while carry:
            plane = planes[k]
            planes[k] = plane ^ carry
            carry &= plane
            k += 1
    half = len(features) // 2  # a bit is set where its count is above half
    above, equal = 0, MASK
    for k in reversed(range(len(planes))):
        if half >> k & 1:
            equal &= planes[k]
        else:
            above |= equal & planes[k]
            equal &= ~planes[k]
    return (above - (1 << BITS) if above >> (BITS - 1) else above) or 1  # 0 means "none"


def fingerprints(chunks: list[tuple[str, str, str]]) -> list[int]:
    """The fingerprint of each (language, text, analysed body terms) of a file's chunks (0: none):
    a document's from its code, links and names, code's from its index terms."""
    return [simhash(document_features(text) if language in DOCUMENT_LANGUAGES else set(terms.split()))
            for language, text, terms in chunks]


def distance(a: int, b: int) -> int:
    """How many of the 64 bits two fingerprints differ in."""
    return ((a ^ b) & MASK).bit_count()
