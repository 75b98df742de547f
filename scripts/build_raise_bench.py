#!/usr/bin/env python3
"""Build the raise-site benchmark: error messages, pasted as a user would paste them, and the
chunk holding the statement that produces each one.

The statements are found with tree-sitter (the grammars codesearch indexes with) in each
benchmark repository's `benchmark_root`, test and vendored files left out. Per language a small
table (`PATTERNS`) names the statements that raise or report an error: node types that throw
(`raise_statement`, `throw_statement`, ...) and call-like node types whose text starts like an
error call (`panic(`, `fmt.Errorf(`, `logger.error(`, `error "`, `@panic(`, ...). The message is
the first string literal inside the statement, with the strings it is concatenated with (`+`,
`.`, `..`, `++`, `<>`); interpolations (`${x}`, `#{x}`, `{x}`, `$x`, `\\(x)`), format
placeholders (`%s`, `%d`, `{}`, `{name}`, `{:?}`) and concatenated expressions become plausible
values. An exception or error type named by the statement goes before the message as its
language prints it (`ValueError: ...`, `** (ArgumentError) ...`, `panic: ...`).

A case is kept when its filled message has at least MIN_WORDS words and MIN_CHARS characters,
its longest fixed run (the text between placeholders) at least MIN_FIXED_CHARS, no other
statement of the repository gives the same query, and the bench index holds a chunk over its
line (the truth: the innermost such chunk). Per repository at most --per-repo cases, chosen by
a hash of their place (stable across runs).

Usage: scripts/build_raise_bench.py [--bench-dir ~/.cache/codesearch-bench]
           [--index-root ~/.cache/codesearch-bench-index] [--per-repo 60]
           [--out ~/.cache/codesearch-bench/raise-cases.json] [NAME ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sqlite3
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import tree_sitter as ts
import tree_sitter_language_pack as tslp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codesearch.analysis.content_class import is_secondary_path
from codesearch.eval.bench import DEFAULT_CHECKOUTS, SHARED_BENCH, benchmark_roots, half_of
from codesearch.ingest.languages import spec_for_path

MIN_WORDS = 3
MIN_CHARS = 15
MIN_FIXED_CHARS = 8  # a message that is all placeholders identifies nothing
MAX_FILE_BYTES = 1 << 20
DEFAULT_OUT = DEFAULT_CHECKOUTS / "raise-cases.json"


@dataclass(frozen=True)
class Pattern:
    """One language's error statements: `throws` node types always count; `calls` node types
    count when their text matches `callee` (anchored at the node's start). `implied`: the type a
    call raises without naming it (Kotlin's `error(...)` throws IllegalStateException);
    `shown`: how the language prints a type before its message."""

    throws: frozenset[str]
    calls: frozenset[str]
    callee: str
    implied: tuple[tuple[str, str], ...] = ()
    shown: str = "{type}: {message}"
    typed: bool = True  # whether a named type goes before the message


def _p(throws: str, calls: str, callee: str, **kw) -> Pattern:
    return Pattern(frozenset(throws.split()), frozenset(calls.split()), callee, **kw)


_JS = _p("throw_statement", "call_expression new_expression",
         r"(?:new \w*Error\(|(?:[\w.]*\.)?(?:error|warn|deprecate|createError)\()")
# C and C++ share one table: a `.h` header of a C++ library is read with the C grammar
_C = _p("throw_statement", "call_expression",
        r"(?:FMT_THROW|report_error|FMT_ASSERT|throw_format_error|fprintf\s*\(\s*stderr|perror|uv__log\w*|fatal\w*|"
        r"die|panic)\s*\(", typed=False)
PATTERNS: dict[str, Pattern] = {
    "python": _p("raise_statement", "call",
                 r"(?:[\w.]*\.)?(?:error|warning|warn|critical|exception|fatal|fail|abort)\("),
    "javascript": _JS, "typescript": _JS, "tsx": _JS,
    "go": _p("", "call_expression",
             r"(?:panic|errors\.New|fmt\.Errorf|log\.(?:Fatal|Panic|Print)\w*|\w+\.(?:Errorf|Fatalf|Warnf|Fatal|Panicf))\(",
             implied=(("panic", "panic"),)),
    "java": _p("throw_statement", "object_creation_expression", r"new \w*(?:Exception|Error)\("),
    "kotlin": _p("jump_expression", "call_expression",
                 r"(?:throw\b|error\(|require\(|check\(|requireNotNull\(|checkNotNull\(|\w+(?:Exception|Error)\()",
                 implied=(("error", "IllegalStateException"), ("check", "IllegalStateException"),
                          ("checkNotNull", "IllegalStateException"), ("require", "IllegalArgumentException"),
                          ("requireNotNull", "IllegalArgumentException"))),
    "scala": _p("throw_expression", "call_expression instance_expression",
                r"(?:sys\.error\(|require\(|new \w*(?:Exception|Error)\()",
                implied=(("sys.error", "java.lang.RuntimeException"),
                         ("require", "java.lang.IllegalArgumentException"))),
    "csharp": _p("throw_statement throw_expression", "object_creation_expression", r"new \w*Exception\("),
    "php": _p("throw_expression", "object_creation_expression function_call_expression",
              r"(?:new \\?[\w\\]*Exception\(|trigger_error\()"),
    "ruby": _p("", "call", r"(?:raise|fail|warn)\b"),
    "swift": _p("", "call_expression control_transfer_statement",
                r"(?:throw\b|fatalError\(|preconditionFailure\(|assertionFailure\(|precondition\(|assert\()"),
    "rust": _p("", "macro_invocation call_expression",
               r"(?:panic!|unreachable!|unimplemented!|todo!|bail!|(?:[\w:]*::)?(?:custom|expect)\(|[\w.]*\.expect\()",
               typed=False),
    "elixir": _p("", "call", r"(?:raise|reraise|Logger\.(?:error|warn|warning))\b", shown="** ({type}) {message}"),
    "cpp": _C, "c": _C,
    "bash": _p("", "redirected_statement command",
               r"(?:(?s:(?:echo|printf)\b.*>&2)|(?:bats_\w*(?:error|fail|warn)\w*|fail|die|abort)\b)", typed=False),
    "lua": _p("", "function_call", r"(?:[\w.:]*[.:])?(?:error|err|warn|notify|assert)\(", typed=False),
    "haskell": _p("", "apply", r"(?:error|errorWithoutStackTrace|fail|throwIO|throw|userError|trace|die)\b",
                  typed=False),
    "zig": _p("", "SuffixExpr",
              r"(?:@panic\(|std\.debug\.panic\(|(?:std\.)?log\.err\(|\w+\.fail\()", typed=False),
}

STRING_TYPES = frozenset({
    "string", "string_literal", "interpreted_string_literal", "raw_string_literal", "template_string",
    "encapsed_string", "interpolated_string_expression", "interpolated_string", "line_string_literal",
    "multi_line_string_literal", "STRINGLITERALSINGLE", "verbatim_string_literal", "raw_string"})
CONCATENATIONS = frozenset({"binary_expression", "binary_operator", "infix", "concatenated_string",
                            "additive_expression", "binary", "parens", "parenthesized_expression"})
CONCAT_OPERATORS = frozenset({"+", ".", "..", "++", "<>"})
INTERPOLATIONS = re.compile(r"interpolat|substitution|expansion|variable_name|^interpolated_identifier$")
TYPE_NODES = frozenset({"identifier", "type_identifier", "constant", "alias", "name", "simple_identifier",
                        "qualified_name", "scoped_type_identifier", "qualified_identifier", "generic_type",
                        "user_type", "scope_resolution", "attribute", "field_access", "navigation_expression"})
ERROR_TYPE = re.compile(r"^[A-Z]\w*(?:Error|Exception|Panic|Fault|Failure)$")
OPENING_QUOTE = re.compile(r"^[A-Za-z$@]{0,2}(?:\"\"\"|'''|\"|'|`|\[\[)")
CLOSING_QUOTE = re.compile(r"(?:\"\"\"|'''|\"|'|`|\]\])$")
# what a language writes around an interpolated value: ${x}, #{x}, {x}, $x, \(x)
AROUND_VALUE = re.compile(r"(?:\$\{|#\{|\{|\\\()(\x00[^\x00]*\x00)[})]|\$(\x00[^\x00]*\x00)")
# a format placeholder in a string: printf's, brace formats ({}, {0}, {name}, {:?}, {s}), and the
# interpolation markers put in for tree-sitter's interpolation nodes
PLACEHOLDER = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[lhqjzt]*[sdifuxXoeEgGcrvqpTwb]|\{[\w.:?<>#!]*\}|\x00[^\x00]*\x00")
SEAM = "\x01"  # where two concatenated literals meet
ESCAPES = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\", "`": "`", "$": "$"}
WORDS = ("config", "user_id", "default", "items", "/tmp/data.json", "main", "timeout", "Response", "'abc'",
         "request", "name", "localhost:8080", "list", "value", "handler", "utf-8")


def _text(source: bytes, node: ts.Node) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def _first_string(node: ts.Node) -> ts.Node | None:
    """The first string literal inside `node`, in source order."""
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        if n.type in STRING_TYPES:
            return n
        stack.extend(reversed(n.children))
    return None


def _concatenation(string: ts.Node, top: ts.Node, source: bytes) -> ts.Node:
    """The whole `"a" + x + "b"` (or `.`, `..`, `++`, `<>`, adjacent literals) a string is part of."""
    node = string
    while node.parent is not None and node.parent.id != top.id and node.parent.type in CONCATENATIONS:
        parent = node.parent
        if parent.type in ("parens", "parenthesized_expression", "concatenated_string"):
            node = parent
            continue
        operators = [c for c in parent.children if not c.is_named or c.type == "operator"]
        if not operators or _text(source, operators[0]).strip() not in CONCAT_OPERATORS:
            break
        node = parent
    return node


def _template(node: ts.Node, source: bytes) -> str:
    """A message's text with a \\x00name\\x00 marker for each interpolated or concatenated value."""
    if node.type in STRING_TYPES:
        out, at = [], node.start_byte
        for child in _interpolations(node):
            out.append(source[at:child.start_byte].decode("utf-8", errors="replace"))
            out.append("\x00" + re.sub(r"\W+", "_", _text(source, child)).strip("_")[-20:] + "\x00")
            at = child.end_byte
        out.append(source[at:node.end_byte].decode("utf-8", errors="replace"))
        text = "".join(out)
        text = AROUND_VALUE.sub(lambda m: m.group(1) or m.group(2), CLOSING_QUOTE.sub("", OPENING_QUOTE.sub("", text)))
        return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), "\\" + m.group(1)), text)
    if node.type in CONCATENATIONS:
        parts = [c for c in node.children if c.is_named and c.type != "operator"]
        return SEAM.join(_template(c, source) for c in parts)
    return "\x00" + re.sub(r"\W+", "_", _text(source, node)).strip("_")[-20:] + "\x00"


def _interpolations(string: ts.Node) -> list[ts.Node]:
    found, stack = [], list(reversed(string.children))
    while stack:
        n = stack.pop()
        if INTERPOLATIONS.search(n.type):
            found.append(n)
        elif n.type not in STRING_TYPES:
            stack.extend(reversed(n.children))
    return found


def fill(template: str, seed: str) -> tuple[str, str]:
    """(the message with each placeholder given a plausible value, its longest fixed run: the
    longest text between placeholders within one literal, as one line of source holds it)."""
    h = int(hashlib.sha1(seed.encode()).hexdigest(), 16)
    fixed = max(re.split(f"{PLACEHOLDER.pattern}|{SEAM}", template), key=lambda s: len(s.strip())).strip()
    template = template.replace(SEAM, "")
    pieces = PLACEHOLDER.split(template)
    out = [pieces[0]]
    for i, m in enumerate(PLACEHOLDER.finditer(template)):
        p = m.group(0)
        if re.search(r"[diux]$|\{:?d\}|count|num|size|len|index|line|\bn\b", p, re.IGNORECASE):
            value = str(3 + (h >> i) % 97)
        elif p.endswith(("f", "e", "g")) and p.startswith("%"):
            value = "0.5"
        elif p.endswith(("r", "q")) and p.startswith("%"):
            value = "'abc'"
        elif p.endswith("p") and p.startswith("%"):
            value = "0x7ffd5e8c"
        else:
            value = WORDS[(h >> (4 * i)) % len(WORDS)]
        out += [value, pieces[i + 1]]
    return "".join(out), fixed


def _type_name(statement: ts.Node, before: int, source: bytes, pattern: Pattern) -> str | None:
    """The exception or error type a statement names before its message, or the one it implies."""
    head = source[statement.start_byte:before].decode("utf-8", errors="replace")
    for callee, implied in pattern.implied:
        if re.match(rf"{re.escape(callee)}\s*[(!{{ ]", head):
            return implied
    if not pattern.typed:
        return None
    stack = list(reversed(statement.children))
    while stack:
        n = stack.pop()
        if n.start_byte >= before:
            break
        if n.type in TYPE_NODES:
            name = re.split(r"\.|::|\\", _text(source, n))[-1]
            if ERROR_TYPE.match(name):
                return name
        stack.extend(reversed(n.children))
    return None


def statements(path: Path, language: str, grammar: str) -> list[tuple[int, int, str, str]]:
    """(first line, last line, query, longest fixed run) of each error statement of one file."""
    pattern = PATTERNS.get(language)
    if pattern is None or path.stat().st_size > MAX_FILE_BYTES:
        return []
    source = path.read_bytes()
    tree = tslp.get_parser(grammar).parse(source)  # type: ignore[arg-type]
    callee = re.compile(pattern.callee)
    used: set[int] = set()
    out = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.children))
        if node.type not in pattern.throws and not (node.type in pattern.calls
                                                    and callee.match(_text(source, node)[:4000])):
            continue
        string = _first_string(node)
        if string is None or string.id in used:
            continue
        used.add(string.id)
        message_node = _concatenation(string, node, source)
        template = _template(message_node, source).split("\n")[0].strip()
        message, fixed = fill(template, f"{path}:{node.start_point[0]}")
        message = re.sub(r"\s+", " ", message).strip()
        if len(message.split()) < MIN_WORDS or len(message) < MIN_CHARS or len(fixed) < MIN_FIXED_CHARS:
            continue
        kind = _type_name(node, message_node.start_byte, source, pattern)
        query = pattern.shown.format(type=kind, message=message) if kind else message
        out.append((node.start_point[0] + 1, node.end_point[0] + 1, query, fixed))
    return out


def truth_chunk(db: sqlite3.Connection, path: str, line: int) -> tuple[int, int] | None:
    """The innermost indexed chunk over `line` of `path`."""
    row = db.execute("SELECT c.start_line, c.end_line FROM chunks c JOIN files f ON f.fid = c.fid "
                     "WHERE f.path = ? AND c.start_line <= ? AND c.end_line >= ? "
                     "ORDER BY c.end_line - c.start_line LIMIT 1", (path, line, line)).fetchone()
    return (row[0], row[1]) if row else None


def build(name: str, root: Path, index_dir: Path, per_repo: int, rejected: Counter) -> list[dict]:
    db = sqlite3.connect(f"file:{index_dir / 'catalog.sqlite3'}?mode=ro", uri=True)
    found: list[dict] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for file in sorted(files):
            full = Path(folder) / file
            rel = full.relative_to(root).as_posix()
            spec = spec_for_path(rel)
            if spec is None or is_secondary_path(rel):
                continue
            for start, end, query, fixed in statements(full, spec.name, spec.grammar):
                found.append({"repo": name, "half": half_of(name), "language": spec.name, "path": rel,
                              "line": start, "end_line": end, "query": query, "fixed": fixed})
    counts = Counter(c["query"] for c in found)
    kept = []
    for case in found:
        if counts[case["query"]] > 1:
            rejected["same query as another statement"] += 1
            continue
        chunk = truth_chunk(db, case["path"], case["line"])
        if chunk is None:
            rejected["no indexed chunk"] += 1
            continue
        case["chunk"] = list(chunk)
        kept.append(case)
    db.close()
    kept.sort(key=lambda c: hashlib.sha1(f"{c['path']}:{c['line']}".encode()).hexdigest())
    rejected["over the per-repository cap"] += max(0, len(kept) - per_repo)
    return sorted(kept[:per_repo], key=lambda c: (c["path"], c["line"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench-dir", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--index-root", type=Path, default=Path.home() / ".cache/codesearch-bench-index")
    parser.add_argument("--repos-json", type=Path, default=SHARED_BENCH / "repos.json")
    parser.add_argument("--per-repo", type=int, default=60)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    cases: list[dict] = []
    rejected: Counter = Counter()
    for name, root in benchmark_roots(args.repos_json, args.bench_dir, args.names):
        made = build(name, root, args.index_root / name, args.per_repo, rejected)
        print(f"{name:<20} {len(made):>4}", file=sys.stderr)
        cases += made
    by_language: dict[str, int] = defaultdict(int)
    for case in cases:
        by_language[case["language"]] += 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(cases, indent=1))
    print(f"{len(cases)} cases in {len(by_language)} languages -> {args.out}", file=sys.stderr)
    print("per language: " + ", ".join(f"{k} {v}" for k, v in sorted(by_language.items())), file=sys.stderr)
    print("left out: " + ", ".join(f"{k} {v}" for k, v in rejected.most_common()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
