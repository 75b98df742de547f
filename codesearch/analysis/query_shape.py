"""What a long query (a bug report, a stack trace, a commit message) says about the code: the files
and traceback frames it names, the identifiers it writes in code style, the error messages it
quotes, and the prose around them.

A short query is searched word for word. A report is not: its first words are mostly prose
("When I call ... with ... I expect ..."), and the few tokens that identify code (`parse_config`,
`app/views.py`, `JsonReader.nextString`, "unexpected end of input") drown among them. The
retrievers and the ranking ask `shape_of` for these parts and weigh them (`keyword_terms`,
`embedding_text`, `code_words`). Plain text functions: no index, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..ingest.languages import language_for_path, spec_for_path
from .messages import messages_of
from .tokens import STOPWORDS, identifier_terms, index_text, query_terms

LONG_QUERY_WORDS = 20  # more words than this and a query is a report (the benchmark's questions: 14 at most)
LONG_QUERY_LINES = 3  # or this many non-empty lines (a message with a body, a pasted trace)
MAX_SYMBOLS = 64  # identifiers kept from one report, in order of appearance
MAX_MESSAGES = 8  # quoted messages kept
MAX_PROSE_TERMS = 48  # distinct prose terms searched (the rest of a long report adds noise, not evidence)
MAX_KEYWORD_TERMS = 256  # terms sent to BM25, repeats (weights) included
EMBED_WORDS = 80  # the embedding model reads about this many words (128 tokens)
MAX_ANALYSED_CHARS = 20_000  # a report's head; beyond it a paste is a log, and costs time, not evidence
MAX_FRAMES = 200
PHRASE_TERMS = 3  # index terms in a row that make one exact phrase
PHRASE_WORDS = 2  # words of the query a phrase spans at least (one identifier's parts say only its name)
MAX_PHRASES = 32  # exact phrases searched for one query

# keyword weights: how many times a term is repeated in the BM25 query (FTS5 sums over phrases)
WEIGHT_SYMBOL = 3
WEIGHT_PATH = 3
WEIGHT_MESSAGE = 2
WEIGHT_TITLE = 2
WEIGHT_PROSE = 1


@dataclass(frozen=True)
class Frame:
    """One frame of a stack trace: the file, line and function it names (any may be unknown)."""

    path: str | None
    line: int | None
    function: str | None


@dataclass(frozen=True)
class QueryShape:
    title: str  # the first line (a subject, an exception line), or the first sentence
    paths: tuple[str, ...]  # files named, `/`-separated (frames first, then code spans, then the text)
    frames: tuple[Frame, ...]
    symbols: tuple[str, ...]  # identifiers written in code style, qualified as written
    messages: tuple[str, ...]  # quoted and exception messages
    prose: str  # the text after the title, without code blocks, traces, URLs, paths and code spans


# --- recognizers -----------------------------------------------------------------------------
_URL = re.compile(r"\b(?:https?|file|ftp)://\S+|\bwww\.\S+")
_ISSUE_REF = re.compile(r"\(?(?<![\w&.-])(?:[\w.-]{1,100}/[\w.-]{1,100})?#\d+\b\)?|\bGH-\d+\b")  # (#12), org/repo#12
_OVERLONG = re.compile(r"\S{200,}")  # not a word, a name or a path: a blob, a minified line
_CONVENTIONAL = re.compile(  # a Conventional Commits type: "fix(parser): ..." -> "parser ..."
    r"^(\s*)(?:fix|bugfix|hotfix|feat|feature|chore|docs?|refactor|perf|test|build|ci|style|revert)"
    r"(?:\(([^)\n]*)\))?!?:(?=\s)", re.IGNORECASE)
_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"(`+)([^`\n]{1,300}?)\1")
_IDENT = r"[A-Za-z_$][\w$]*"
_QUALIFIED = re.compile(rf"(?<![\w$.#:/\\-]){_IDENT}(?:(?:\.|::|->|#){_IDENT})*(?P<call>\()?")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]{2}")
# Every pattern that can start inside a long token starts at a token's edge (a look-behind) and
# repeats a bounded number of times: a 64-KB query of one word or of `a/a/a...` stays linear.
_EDGE = r"(?<![^\s'\"(\[<,;=`:])"  # what may stand before a path: start, space, an opening mark
_SEGMENT = r"[\w@+~-][\w@+.~-]{0,127}"
_PATH = re.compile(rf"(?<![\w@$/\\.-])((?:[A-Za-z]:)?[\\/]?(?:\.{{1,2}}[\\/]){{0,8}}(?:{_SEGMENT}[\\/]){{0,32}}"
                   rf"[\w@+~-][\w@+.~-]{{0,127}}\.[A-Za-z0-9]{{1,6}})(?=$|[\s:,;'\")\]>(])")
_PATH_CHARS = r"[^\s:'\"()\[\]<>,;`]{1,256}"
_QUOTED = re.compile(r"(?<![\w`])(?:\"([^\"\n]{3,200})\"|'([^'\n]{3,200})'|“([^”\n]{3,200})”)(?![\w`])")
_EXCEPTION_LINE = re.compile(  # "pkg.SomeError: message", "panic: message", "error[E0382]: message"
    r"(?:^|(?<=\s))(?:[\w$]{1,128}[.\\]){0,16}(?P<name>[A-Z]\w{0,128}?(?:Error|Exception|Panic|Fault|Failure))\b"
    r"(?:(?::|\s+-)\s+(?P<msg>[^\n]{0,200}))?"
    r"|^[ \t]*(?:fatal error|panic|error|Error|ERROR|FATAL|fatal)(?:\[\w+\])?:[ \t]*(?P<msg2>[^\n]{1,200})",
    re.MULTILINE)
_PANIC = re.compile(r"panicked at (?:'(?P<msg>[^'\n]{1,200})', )?(?P<path>[^\s:]{1,256}\.rs):(?P<line>\d+)")

# traceback frames, by language; each names some of: path, line, func
_FRAMES = [
    re.compile(r'File "(?P<path>[^"\n]{1,256})", line (?P<line>\d+)(?:, in (?P<func>[\w<>.]{1,128}))?'),  # Python
    re.compile(r"\bat (?P<func>[\w$.<>/]{1,256})\((?P<path>[\w$.-]{1,128}\.\w+):(?P<line>\d+)\)"),  # Java, Kotlin
    re.compile(r"\bat (?P<func>[\w$.<>`\[\],]{1,256})\([^)\n]{0,256}\) in (?P<path>[^\n]{1,256}?):line (?P<line>\d+)"),
    re.compile(r"\bat (?:(?:async |new )?(?P<func>[^\s()][^()\n]{0,200}?) \()?(?:file://)?"
               r"(?P<path>[^\s()]{1,256}?\.[A-Za-z]{1,5}):(?P<line>\d+)(?::\d+)?\)?(?=\s|$)"),  # JS, TS, Rust `at`
    re.compile(rf"{_EDGE}(?P<path>{_PATH_CHARS}\.rb):(?P<line>\d+):in [`'](?:[\w:]{{1,128}}[#.])?"
               r"(?P<func>[^'`\n]{1,128})'"),  # Ruby
    re.compile(r"#\d+ (?P<path>[^\s(]{1,256}\.php)\((?P<line>\d+)\): (?P<func>[\w\\]{1,256}(?:->|::)\w+)"),  # PHP
    re.compile(rf"{_EDGE}(?P<path>[\w./-]{{1,256}}\.exs?):(?P<line>\d+): (?P<func>[\w.!?]{{1,128}})/\d+"),  # Elixir
    re.compile(r"^(?P<func>[\w./-]{1,256}\.(?:\(\*?\w+\)\.)?\w+)\([^\n]{0,256}\)\n\s{1,16}"
               r"(?P<path>[^\s:]{1,256}\.go):(?P<line>\d+)", re.MULTILINE),  # Go: function line, then its file line
    re.compile(r"^[ \t]*\d+:[ \t]+(?:0x[0-9a-f]+ - )?(?P<func>[\w:<>]{1,256}::[\w<>]+)(?:::h[0-9a-f]{16})?$",
               re.MULTILINE),  # Rust backtrace
    re.compile(rf"{_EDGE}(?P<path>{_PATH_CHARS}\.\w{{1,5}}):(?P<line>\d+)(?::\d+)?"),  # any path:line
]


def is_long_query(query: str) -> bool:
    """A report rather than a question: many words, or several lines."""
    return (len(query.split()) > LONG_QUERY_WORDS
            or sum(1 for line in query.split("\n") if line.strip()) >= LONG_QUERY_LINES)


def normalize_path(path: str) -> str:
    """`/`-separated, without a drive, `./`, `file://` or a Go module version (`mod@v1.2.3/`)."""
    p = path.replace("\\", "/").removeprefix("file://")
    p = re.sub(r"^[A-Za-z]:/", "/", p)
    p = re.sub(r"@v?\d[\w.+-]*/", "/", p)
    while p.startswith("./"):
        p = p[2:]
    return p


def is_file_path(token: str) -> bool:
    """A token that names a file: a known extension, and a folder or a source-code extension
    (`app/views.py`, `format-inl.h`, `Gson.java`; not `e.g.`, `v1.2` or a sentence's end)."""
    if not re.search(r"\.[A-Za-z][A-Za-z0-9]{0,5}$", token):
        return False
    if "/" in token:
        return language_for_path(token) is not None or bool(re.search(r"\.[a-z]{1,4}$", token))
    return spec_for_path(token) is not None


def is_code_style(token: str) -> bool:
    """An identifier written as code: snake_case, camelCase, CamelCase with an inner capital,
    `$name`, or a qualified name (`a.b`, `A::b`, `a->b`, `A#b`) of parts longer than a letter."""
    parts = re.split(r"\.|::|->|#", token)
    if len(parts) > 1:
        return all(re.fullmatch(_IDENT, p) for p in parts) and max(len(p) for p in parts) > 1
    word = parts[0]
    if "_" in word.strip("_") or "$" in word or word.startswith("__"):
        return any(c.isalpha() for c in word)
    return bool(_CAMEL.search(word))


def _frames(text: str) -> list[Frame]:
    found: list[tuple[int, Frame]] = []
    taken: list[tuple[int, int]] = []
    for pattern in _FRAMES:
        for m in pattern.finditer(text):
            if len(found) >= MAX_FRAMES:
                break
            if any(s <= m.start() < e or s < m.end() <= e for s, e in taken):
                continue
            groups = m.groupdict()
            path = groups.get("path")
            if path and not is_file_path(normalize_path(path).rsplit("/", 1)[-1]) and "/" not in path:
                continue
            func = groups.get("func")
            if func:
                func = re.sub(r"\s*\[as [^\]]*\]", "", func).strip() or None
            line = groups.get("line")
            taken.append((m.start(), m.end()))
            found.append((m.start(), Frame(normalize_path(path) if path else None, int(line) if line else None,
                                           func)))
    return [f for _, f in sorted(found, key=lambda pair: pair[0])]


def _add(items: dict[str, None], value: str, limit: int) -> None:
    if value and len(items) < limit:
        items.setdefault(value, None)


@lru_cache(maxsize=64)
def shape_of(query: str) -> QueryShape:
    """The parts of a report, each in order of first appearance."""
    text = _OVERLONG.sub(" ", query[:MAX_ANALYSED_CHARS])
    text = _CONVENTIONAL.sub(lambda m: f"{m.group(1)}{m.group(2) or ''}", _ISSUE_REF.sub(" ", _URL.sub(" ", text)))
    symbols: dict[str, None] = {}
    paths: dict[str, None] = {}
    messages: dict[str, None] = {}

    frames = _frames(text)
    for frame in frames:
        if frame.path:
            _add(paths, frame.path, MAX_SYMBOLS)
        if frame.function and not frame.function.startswith("<"):
            _add(symbols, frame.function, MAX_SYMBOLS)

    code_blocks = [m.group(2) for m in _FENCE.finditer(text)]
    prose = _FENCE.sub(" ", text)
    for m in _INLINE_CODE.finditer(prose):  # everything in backticks is code
        span = m.group(2).strip()
        if is_file_path(normalize_path(span).rsplit("/", 1)[-1]) and " " not in span:
            _add(paths, normalize_path(span), MAX_SYMBOLS)
            continue
        for word in _QUALIFIED.finditer(span):
            name = word.group(0).rstrip("(")
            if len(name) > 1 and name.lower() not in STOPWORDS:
                _add(symbols, name, MAX_SYMBOLS)
    prose = _INLINE_CODE.sub(" ", prose)

    for m in _EXCEPTION_LINE.finditer(prose + "\n" + "\n".join(code_blocks)):
        if m.group("name"):
            _add(symbols, m.group("name"), MAX_SYMBOLS)
        message = (m.group("msg") or m.group("msg2") or "").strip()
        if len(message.split()) >= 2:
            _add(messages, message[:200], MAX_MESSAGES)
    for m in _PANIC.finditer(text):
        if m.group("msg"):
            _add(messages, m.group("msg"), MAX_MESSAGES)
    for m in _QUOTED.finditer(prose):
        quoted = next(g for g in m.groups() if g is not None).strip()
        if len(quoted.split()) >= 2:
            _add(messages, quoted, MAX_MESSAGES)
        elif is_code_style(quoted.rstrip("()")):
            _add(symbols, quoted.rstrip("()"), MAX_SYMBOLS)

    for source in (prose, *code_blocks):
        for m in _PATH.finditer(source):
            path = normalize_path(m.group(1))
            if is_file_path(path.rsplit("/", 1)[-1]) or ("/" in path and is_file_path(path)):
                _add(paths, path, MAX_SYMBOLS)
    without_paths = _PATH.sub(lambda m: " " if is_file_path(normalize_path(m.group(1)).rsplit("/", 1)[-1]) else
                              m.group(0), prose)
    for source in (without_paths, *code_blocks):
        for m in _QUALIFIED.finditer(source):
            name = m.group(0).rstrip("(")
            called = bool(m.group("call")) and not source[m.end():m.end() + 3].startswith(("s)", "es)"))
            if is_code_style(name) or (called and len(name) > 2 and name.lower() not in STOPWORDS):
                _add(symbols, name, MAX_SYMBOLS)

    readable = _FENCE.sub(" ", text).replace("`", "")
    lines = [ln.strip() for ln in readable.split("\n") if ln.strip() and not _looks_like_trace(ln.strip())]
    title, rest = (lines[0], lines[1:]) if lines else ("", [])
    if len(title.split()) > 30:
        title, _, more = title.partition(". ")
        rest.insert(0, more)
    trace_free = "\n".join(rest)
    return QueryShape(title=title, paths=tuple(paths), frames=tuple(frames), symbols=tuple(symbols),
                      messages=tuple(messages), prose=trace_free)


def _looks_like_trace(line: str) -> bool:
    return bool(re.match(r"^(at \S|File \"|#\d+ \S+\(\d+\)|\d+: \S|Traceback |goroutine \d|\.\.\. \d+ more|Caused by:)",
                         line))


# --- what each part of the search gets ----------------------------------------------------------
def _identifier_terms(name: str, weight: int, out: dict[str, int]) -> None:
    """The whole identifier at `weight`, its parts one lower (at least 1)."""
    for part in re.split(r"\.|::|->|#|/", name):
        terms = identifier_terms(part)
        for i, term in enumerate(terms):
            if term in STOPWORDS:
                continue
            w = weight if i == 0 else max(1, weight - 1)
            out[term] = max(out.get(term, 0), w)


def _path_terms(path: str, weight: int, out: dict[str, int]) -> None:
    """The file name's stem and its folder (the rest of an absolute path is the reporter's machine)."""
    parts = [p for p in path.split("/") if p]
    for part in parts[-2:]:
        _identifier_terms(re.sub(r"\.[A-Za-z0-9]{1,6}$", "", part).replace("-", "_"), weight, out)


def _words(text: str) -> list[str]:
    """Query terms of prose, numbers left out (versions, counts and dates, not code)."""
    return [t for t in query_terms(text) if not t.isdigit()]


def keyword_terms(shape: QueryShape) -> list[str]:
    """BM25 terms for a report, strongest first, each repeated as often as it weighs: code
    identifiers and file names, then messages and the title, then a bounded share of the prose."""
    weights: dict[str, int] = {}
    for symbol in shape.symbols:
        _identifier_terms(symbol, WEIGHT_SYMBOL, weights)
    for path in shape.paths:
        _path_terms(path, WEIGHT_PATH, weights)
    for message in shape.messages:
        for term in _words(message):
            weights[term] = max(weights.get(term, 0), WEIGHT_MESSAGE)
    for term in _words(shape.title):
        weights[term] = max(weights.get(term, 0), WEIGHT_TITLE)
    for term in _words(shape.prose)[:MAX_PROSE_TERMS]:
        weights.setdefault(term, WEIGHT_PROSE)
    ordered = sorted(weights, key=lambda t: -weights[t])  # stable: first appearance within a weight
    out: list[str] = []
    for term in ordered:
        if len(out) + weights[term] > MAX_KEYWORD_TERMS:
            break
        out += [term] * weights[term]
    return out


def embedding_text(shape: QueryShape) -> str:
    """What the embedding model reads for a report: the title, then the code it names and its
    messages, then the prose, cut to what the model reads (it would otherwise read only the
    first 128 tokens of the report, mostly prose)."""
    parts = [shape.title, " ".join(shape.symbols[:16]), " ".join(p.rsplit("/", 1)[-1] for p in shape.paths[:8]),
             " ".join(shape.messages[:3]), shape.prose]
    words = " ".join(p for p in parts if p).split()
    return " ".join(words[:EMBED_WORDS])


def code_words(shape: QueryShape) -> set[str]:
    """The lower-cased words of the identifiers and file names a report names (for matching file,
    folder and definition names in the ranking)."""
    weights: dict[str, int] = {}
    for symbol in shape.symbols:
        _identifier_terms(symbol, 1, weights)
    for path in shape.paths:
        _path_terms(path, 1, weights)
    return {t for t in weights if len(t) > 2}


def symbol_names(shape: QueryShape) -> list[str]:
    """The names a report's identifiers may be defined under: a plain one itself (`parse_config`),
    a qualified one its last part and the part before (`JsonReader.nextString` -> `nextString`,
    `JsonReader`; package parts such as `com.google` are left out)."""
    names: dict[str, None] = {}
    for symbol in shape.symbols:
        parts = [p for p in re.split(r"\.|::|->|#", symbol) if re.fullmatch(_IDENT, p)]
        for name in parts[-1:] + [p for p in parts[-2:-1] if len(p) > 2]:
            names.setdefault(name, None)
    return list(names)


def mentions(path: str, named: tuple[str, ...]) -> bool:
    """Whether a repository path is one of the files a report names: the file's name and, when
    both sides have one, its folder agree (`src/flask/app.py` is named by
    `/usr/lib/python3/site-packages/flask/app.py`, by `flask/app.py` and by `app.py`)."""
    mine = path.split("/")
    for other in named:
        theirs = [p for p in other.split("/") if p]
        if not theirs or theirs[-1] != mine[-1]:
            continue
        if len(theirs) == 1 or len(mine) == 1 or theirs[-2] == mine[-2]:
            return True
    return False


def exact_phrases(text: str, shape: QueryShape | None) -> tuple[str, ...]:
    """The query's text as the keyword index would hold it, in runs of PHRASE_TERMS terms over
    PHRASE_WORDS words or more, each run a phrase a chunk holds only if it holds those words in
    that order (stopwords and one-letter words are not indexed, so none breaks a run). A pasted
    error message shares most of its runs with the statement that produces it: a value filled
    into a placeholder breaks only the runs across it. A report's runs come from its messages
    alone (its prose and trace would match everywhere)."""
    fragments = shape.messages if shape else (text,)
    phrases: dict[str, None] = {}
    for fragment in fragments:
        terms: list[str] = []
        word_of: list[int] = []  # which word of the fragment each term comes from
        for i, word in enumerate(fragment.split()):
            more = index_text(word).split()
            terms += more
            word_of += [i] * len(more)
        for i in range(len(terms) - PHRASE_TERMS + 1):
            if word_of[i + PHRASE_TERMS - 1] - word_of[i] >= PHRASE_WORDS - 1:
                _add(phrases, " ".join(terms[i:i + PHRASE_TERMS]), MAX_PHRASES)
    return tuple(phrases)


def pasted_messages(text: str, shape: QueryShape | None, symbol: bool) -> tuple[str, ...]:
    """What of the query a message template may have produced, normalized (analysis/messages.py
    messages_of): a short query's text, a report's messages; none for a bare name (the symbol
    step answers it)."""
    if symbol:
        return ()
    return tuple(dict.fromkeys(m for line in (shape.messages if shape else (text,)) for m in messages_of(line)))
