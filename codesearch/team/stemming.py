"""Porter stemming, as SQLite's FTS5 `porter` tokenizer does it, so that the team store's keyword
text and queries are stemmed exactly like the local catalog's (Milvus Lite's own analyzers offer
no Porter stemmer, and its other stemmers split terms differently)."""

from __future__ import annotations

from functools import lru_cache

MIN_STEMMED_CHARS = 3  # FTS5 passes shorter terms through unchanged ...
MAX_STEMMED_CHARS = 64  # ... and longer ones

_STEP2 = (("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
          ("logi", "log"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
          ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
          ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"))
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""),
          ("ness", ""))
_STEP4 = ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism",
          "ate", "iti", "ous", "ive", "ize")


def _consonant(word: str, i: int) -> bool:
    c = word[i]
    if c in "aeiou":
        return False
    if c == "y":
        return i == 0 or not _consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in the stem."""
    m, seen_vowel = 0, False
    for i in range(len(stem)):
        if _consonant(stem, i):
            if seen_vowel:
                m += 1
                seen_vowel = False
        else:
            seen_vowel = True
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, i) for i in range(len(stem)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    """Consonant, vowel, consonant at the end, the last not w, x or y."""
    n = len(word)
    return (n >= 3 and _consonant(word, n - 1) and not _consonant(word, n - 2) and _consonant(word, n - 3)
            and word[-1] not in "wxy")


def _replace(word: str, rules, least: int) -> str:
    for suffix, by in rules:
        if word.endswith(suffix):
            stem = word[:-len(suffix)]
            return stem + by if _measure(stem) > least else word
    return word


def _step1(word: str) -> str:
    if (word.endswith("sses") and len(word) > 4) or (word.endswith("ies") and len(word) > 3):  # a stem is left
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if word.endswith("eed") and len(word) > 3:
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        for suffix in ("ed", "ing"):
            if word.endswith(suffix) and _has_vowel(word[:-len(suffix)]):
                word = word[:-len(suffix)]
                if word.endswith(("at", "bl", "iz")):
                    word += "e"
                elif _double_consonant(word) and word[-1] not in "lsz":
                    word = word[:-1]
                elif _measure(word) == 1 and _cvc(word):
                    word += "e"
                break
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    return word


def _step4(word: str) -> str:
    for suffix in _STEP4:
        if word.endswith(suffix):
            stem = word[:-len(suffix)]
            if _measure(stem) > 1 and (suffix != "ion" or stem.endswith(("s", "t"))):
                return stem
            return word
    return word


def _step5(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


@lru_cache(maxsize=262144)
def porter(term: str) -> str:
    """One lower-case term stemmed as FTS5's porter tokenizer stems it."""
    if not MIN_STEMMED_CHARS <= len(term) <= MAX_STEMMED_CHARS or not term.isascii():
        return term
    word = _step1(term)
    word = _replace(word, _STEP2, 0)
    word = _replace(word, _STEP3, 0)
    return _step5(_step4(word))


def stemmed(text: str) -> str:
    """Space-separated terms, each stemmed."""
    return " ".join(porter(t) for t in text.split())
