"""Message templates: the string literals of a chunk as the patterns of the messages it produces,
and a pasted message matched against them.

A raise, panic or log statement writes its message as a literal with placeholders (`%s`, `{}`,
`{name}`, `${x}`, `#{x}`, `$x`, `\\(x)`) or as literals concatenated with values (`+`, `..`, `.`,
`<>`, an implicit join of adjacent literals). The message a user pastes has those placeholders
filled, which breaks any exact phrase across them; the fixed runs between them stay, in order. So
each literal, with the literals its statement joins to it, becomes a template (its fixed runs
joined by GAP) of the innermost chunk that holds it, and a query is matched against a candidate
chunk's templates run by run, in order, placeholders matching anything. Lexical, not per grammar:
quotes, escapes and placeholders are alike enough across languages, and this runs on every line
of every indexed file. Plain functions: no index, no model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..ingest.languages import spec_by_name
from ..model import Chunk

GAP = "\x1f"  # where a placeholder or a joined value stood
RECORD = "\x1e"  # between a chunk's templates, as the catalog keeps them
MIN_LETTERS = 8  # fixed letters a template needs: fewer identify nothing
MIN_WORDS = 2  # and words in one run (`"utf-8"`, `'%s'`, `"fmt"`, `["serde", "parser"]` are not messages)
MAX_TEMPLATE_CHARS = 300
MAX_TEMPLATES_PER_CHUNK = 256
MAX_GLUE_CHARS = 80  # code between two literals of one statement (`" + name + "`, `" .. tostring(x) .. "`)
MIN_RUN_CHARS = 3  # a run shorter than this (`: `, `'`) says nothing on its own
MAX_LOOKUP_WORDS = 32
SHORT_RUN_CHARS = 8  # a run shorter than this matches whole words only (`for` is not in `format`)

# one literal on one line: "...", '...', `...` (an unclosed quote, an apostrophe in a comment,
# matches nothing past its line)
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.){0,400})"|\'((?:[^\'\\\n]|\\.){0,400})\'|`([^`\n]{0,400})`')
_PLACEHOLDER = re.compile(  # printf, Go and Python's %, then interpolations
    r"%(?:\([\w.]{1,40}\))?[-+#0]{0,3}(?:\d{1,3}|\*)?(?:\.(?:\d{1,3}|\*))?(?:hh|h|ll|l|L|z|j|t|q)?[a-zA-Z@]"
    r"|\$\{[^{}\n]{0,80}\}|#\{[^{}\n]{0,80}\}|\{[^{}\n]{0,80}\}"  # ${x} #{x} {} {name} {0} {:?} {x!r}
    r"|\$[A-Za-z_][\w.]{0,60}"  # $name, $this.value
    r"|\\\([^()\n]{0,80}\)"  # Swift's \(x)
    r"|\\[nrt0]|\\u\{?[0-9a-fA-F]{1,6}\}?|\\x[0-9a-fA-F]{2}")  # escapes that stand for what a paste shows otherwise
_ESCAPED = re.compile(r"\\(.)")
_COMMENT_LINE = re.compile(r"^[ \t]*(?:#(?![{!\[])|//|/\*|\*|--|;;|%)", re.MULTILINE)
# what may stand between two literals of one message: across a line only with a joining operator
# at the break (or nothing else at all, an implicit join)
_JOIN_AT_BREAK = re.compile(r"(?:\+|\.\.|\.|\+\+|<>|&|~|\\|\|\|)\s*\n|\n\s*(?:\+|\.\.|\.|\+\+|<>|&|~|\|\|)")
_CONCATENATION = r"(?:\+\+?|\.\.|\.|<>|&|~)"  # the operators that join strings and values
_VALUE_BEFORE = re.compile(rf"[\w)\]]\s*{_CONCATENATION}\s*$")
_VALUE_AFTER = re.compile(rf"\s*{_CONCATENATION}\s*[^\s\"'`)\],;]")
_GAPS = re.compile(f"{GAP}[{GAP}\\s]*")  # placeholders side by side, and the spaces after them: one
_WORD = re.compile(r"[^\W_]+")
_NOT_WORD = re.compile(r"[\W_]+")
_TYPE_PREFIX = re.compile(r"^\W{0,4}(?:\(\s*)?[A-Za-z_$][\w.$:\\]{0,120}(?:\s*\))?:?\s+(?=\S)")


def _fixed(literal: str) -> str:
    """A literal's text with placeholders as GAP and other escapes undone."""
    return _ESCAPED.sub(r"\1", _PLACEHOLDER.sub(GAP, literal))


def _message_like(text: str) -> bool:
    """Words enough for a message, some of them side by side in one run."""
    runs = [_WORD.findall(run) for run in text.split(GAP)]
    return any(len(words) >= MIN_WORDS for words in runs) and sum(len(w) for ws in runs for w in ws) >= MIN_LETTERS


def templates_of_text(text: str) -> list[str]:
    """The templates of some source text: each literal, joined to the literals of the same
    statement after it, as long as it holds a message's words."""
    out: list[str] = []
    current: list[str] = []
    last_end = -1
    for m in _LITERAL.finditer(text):
        start = m.start()
        if (start > 0 and text[start - 1] == text[start]) or _COMMENT_LINE.match(
                text, text.rfind("\n", 0, start) + 1):  # a """doc""", a comment
            continue
        body = m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else m.group(3)
        if current and _joins(text[last_end:start]):
            current.append(_fixed(body))
        else:
            _keep(current, text[last_end:last_end + MAX_GLUE_CHARS], out)
            current = [GAP if _VALUE_BEFORE.search(text[max(0, start - MAX_GLUE_CHARS):start]) else "", _fixed(body)]
        last_end = m.end()
    _keep(current, text[last_end:last_end + MAX_GLUE_CHARS], out)
    return out


def _joins(glue: str) -> bool:
    """Whether the code between two literals keeps them in one statement."""
    if len(glue) > MAX_GLUE_CHARS or any(c in glue for c in ";{}"):
        return False
    breaks = glue.count("\n")
    return breaks == 0 or (breaks == 1 and (not glue.strip() or bool(_JOIN_AT_BREAK.search(glue))))


def _keep(parts: list[str], after: str, out: list[str]) -> None:
    """A statement's literals as a template, with a placeholder after them where a value is
    joined to the last one (`after`: the code that follows it)."""
    text = "".join(parts[:1]) + GAP.join(parts[1:]) + (GAP if _VALUE_AFTER.match(after) else "")
    text = _GAPS.sub(GAP, text).strip(" \t\n")[:MAX_TEMPLATE_CHARS]
    if parts and _message_like(text):
        out.append(text)


def chunk_templates(chunks: Sequence[Chunk]) -> list[str]:
    """Each chunk's templates joined by RECORD ("" for none), in the order of `chunks`, each
    literal in the innermost chunk that holds its line: a method's messages are the method's, not
    its class's or its file's too. A file chunk's text is its outline (its lines are its parts');
    documents and data (a language without a grammar: Markdown, TOML, JSON) hold no messages."""
    order = sorted(range(len(chunks)), key=lambda i: chunks[i].end_line - chunks[i].start_line)
    owned: set[int] = set()
    out = [""] * len(chunks)
    for i in order:
        c = chunks[i]
        if c.kind == "file" or not c.text or spec_by_name(c.language) is None:
            continue
        lines = c.text.split("\n")
        first = c.start_line
        if owned.isdisjoint(range(first, first + len(lines))):
            text = c.text
        else:
            text = "\n".join(line for n, line in enumerate(lines, start=first) if n not in owned)
        owned.update(range(first, first + len(lines)))
        if '"' in text or "'" in text or "`" in text:
            out[i] = RECORD.join(templates_of_text(text)[:MAX_TEMPLATES_PER_CHUNK])
    return out


# --- matching ----------------------------------------------------------------------------------
def normalized(text: str) -> str:
    """Lower case, every run of characters that is not a letter or digit one space, none at the ends."""
    return _NOT_WORD.sub(" ", text.lower()).strip()


def messages_of(query: str) -> tuple[str, ...]:
    """What of a pasted line a template can have produced, normalized: the line, and, where an
    exception type or level stands in front (`ValueError: `, `panic: `, `** (ArgumentError) `),
    the line without it (a statement that prints `ERROR: ...` itself holds it, one that raises
    `ValueError` does not)."""
    text = query.strip()
    whole = normalized(text)
    m = _TYPE_PREFIX.match(text.lstrip("*").strip())
    if m and m.group(0).rstrip().endswith((":", ")")):
        rest = normalized(text.lstrip("*").strip()[m.end():])
        return tuple(dict.fromkeys(v for v in (rest, whole) if v))
    return (whole,) if whole else ()


def _letters(text: str) -> int:
    return len(text) - text.count(" ")


def _find(message: str, run: str, start: int) -> int:
    """Where `run` stands in `message` from `start`: a short run only as whole words."""
    at = message.find(run, start)
    if len(run) >= SHORT_RUN_CHARS:
        return at
    while at >= 0 and not ((at == 0 or message[at - 1] == " ") and
                           (at + len(run) == len(message) or message[at + len(run)] == " ")):
        at = message.find(run, at + 1)
    return at


def coverage(message: str, template: str) -> float:
    """How much of `message` (normalized, messages_of) `template` produced: its runs matched in
    order, each after the one before it, a run not found passed over; the letters they cover
    against those of the message, where a letter that stands where the template has a
    placeholder counts half (a filled-in value is explained, not matched). 0 unless the runs
    found hold MIN_LETTERS letters, a run of MIN_WORDS words and half the template's fixed text."""
    return _coverage(message, _template_parts(template))


def _template_parts(template: str) -> list[str]:
    """A template's fixed runs, normalized as messages are, with "" where it opens or ends on a gap."""
    return [normalized(part) for part in template.split(GAP)]


def _coverage(message: str, parts: list[str]) -> float:
    position = found = total = 0
    phrase = False  # a run of MIN_WORDS words or more found
    explained = 0  # letters where a placeholder stands
    opened = bool(parts) and not parts[0]  # a placeholder before the first run
    last_end = -1
    for part in parts:
        total += _letters(part)
        if len(part) < MIN_RUN_CHARS:
            continue
        at = _find(message, part, position)
        if at < 0:
            continue
        between = message[max(last_end, 0):at]
        if last_end >= 0 or opened:
            explained += _letters(between)
        position = last_end = at + len(part)
        found += _letters(part)
        phrase = phrase or part.count(" ") + 1 >= MIN_WORDS
    if found < MIN_LETTERS or not phrase or found * 2 < total:
        return 0.0
    if not parts[-1] or len(parts[-1]) < MIN_RUN_CHARS:  # a placeholder after the last run
        explained += _letters(message[last_end:])
    unexplained = _letters(message) - found - explained
    return found / (found + unexplained + explained / 2)


def message_words(messages: Sequence[str]) -> list[str]:
    """The distinct words of some normalized messages, at most MAX_LOOKUP_WORDS: what finds the
    templates that may have produced them."""
    return list(dict.fromkeys(w for m in messages for w in m.split()))[:MAX_LOOKUP_WORDS]


def best_coverage(messages: Sequence[str], templates: str) -> float:
    """The most of one of `messages` that one of `templates` (RECORD-joined) produced."""
    parts = [_template_parts(t) for t in templates.split(RECORD)]  # once a template, not once a message
    return max((_coverage(m, p) for p in parts for m in messages), default=0.0)
