"""Fitting a search answer to a token budget (`max_tokens`): an agent pays for every token it
reads, so it can say how many an answer may cost.

Tokens are estimated as characters / 4 of the answer's JSON, the usual rule of thumb for English
and code under BPE tokenizers; no tokenizer is loaded. Snippets are shortened from the lowest
result up, one line at a time, then the lowest results are dropped; the best result stays,
whatever its size, with at least its first line."""

from __future__ import annotations

import json
from dataclasses import replace

from .requests import SearchAnswer, SearchResult

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def _compact(data: object) -> str:
    """JSON as MCP sends it: no spaces, characters as they are."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def answer_tokens(answer: SearchAnswer) -> int:
    return estimate_tokens(_compact(answer.to_dict()))


def _size(result: SearchResult) -> int:
    return len(_compact(result.to_dict())) + 1  # and a comma


def fit_budget(answer: SearchAnswer, max_tokens: int | None) -> SearchAnswer:
    """The answer, trimmed to about `max_tokens` (None: unchanged); `note` says what was cut."""
    if max_tokens is None or answer_tokens(answer) <= max_tokens:
        return answer
    budget = max_tokens * CHARS_PER_TOKEN - len(_compact(replace(answer, results=()).to_dict()))
    results = list(answer.results)
    sizes = [_size(r) for r in results]
    over = sum(sizes) - budget
    shortened = 0
    for i in reversed(range(len(results))):  # the lowest result's snippet first, one line at a time
        if over <= 0:
            break
        lines = results[i].snippet.split("\n")
        while over > 0 and len(lines) > 1:
            removed = lines.pop()
            over -= len(json.dumps(removed, ensure_ascii=False)) - 1  # its characters, escaped, and a newline
        if len(lines) < results[i].snippet.count("\n") + 1:
            results[i] = replace(results[i], snippet="\n".join(lines))
            sizes[i] = _size(results[i])
            shortened += 1
    over = sum(sizes) - budget
    dropped = 0
    while over > 0 and len(results) > 1:
        over -= sizes.pop()
        results.pop()
        dropped += 1
    cuts = [f"{shortened} snippets shortened"] + ([f"{dropped} results dropped"] if dropped else [])
    note = f"fitted to max_tokens {max_tokens}: " + ", ".join(cuts)
    return replace(answer, results=tuple(results), note="; ".join(n for n in (answer.note, note) if n))
