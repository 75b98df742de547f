"""Source bytes -> definitions, call sites and imports, via one tree-sitter query per language."""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Callable
from functools import cache
from operator import itemgetter

import tree_sitter as ts
import tree_sitter_language_pack as tslp

from ..model import CallSite, ImportRef, ParsedDefinition, ParsedFile
from .block_names import KINDS as BLOCK_KINDS
from .block_names import BlockNames
from .languages import LanguageSpec
from .scopes import EXTERNAL, METHOD, Scopes

MAX_SIGNATURE_CHARS = 240
MAX_DOCSTRING_CHARS = 2000
_WS = re.compile(r"\s+")
_COMMENT_OPENER = re.compile(r"^(/\*\*?|\*/|\*|//!|///?|#+|--+\s*\|?|;+|@(module)?doc\s*(\"\"\"|~[sS]\"\"\")?)")
_COMMENT_CLOSER = re.compile(r"(\*/|\"\"\"|''')$")
_LICENCE = re.compile(r"copyright|licen[cs]e|SPDX-|all rights reserved", re.IGNORECASE)


@cache
def compiled_query(spec: LanguageSpec) -> ts.Query:
    """The language's query, compiled once per process (raises ts.QueryError on a bad spec)."""
    return ts.Query(tslp.get_language(spec.grammar), spec.query)  # type: ignore[arg-type]  # names are data


_parsers = threading.local()


def _parser(grammar: str) -> ts.Parser:
    """Parsers are not thread-safe: keep one per grammar per thread."""
    cache = getattr(_parsers, "cache", None)
    if cache is None:
        cache = _parsers.cache = {}
    if grammar not in cache:
        cache[grammar] = tslp.get_parser(grammar)  # type: ignore[arg-type]  # grammar names are data
    return cache[grammar]


def _text(source: bytes, node: ts.Node) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def _clean_comment(text: str) -> str:
    """Strip comment markers (//, #, --, /* */, ///, triple quotes) and tidy whitespace."""
    lines = []
    for line in text.strip().splitlines():
        line = line.strip()
        if line.startswith("#!"):  # a shebang is not documentation
            continue
        line = _COMMENT_OPENER.sub("", line)
        line = _COMMENT_CLOSER.sub("", line).strip()
        lines.append(line)
    return "\n".join(lines).strip().strip("\"'").strip()


@cache
def _doc_rewrites(spec: LanguageSpec) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern), replacement) for pattern, replacement in spec.doc_rewrites)


class _DefinitionBuilder:
    """Turns query matches into Definitions with qualified names, docs and signatures."""

    def __init__(self, spec: LanguageSpec, source: bytes):
        self.spec = spec
        self.source = source
        self.rewrites = _doc_rewrites(spec)

    def clean_doc(self, text: str) -> str:
        """Comment markers stripped, the language's doc markup dropped, length bounded."""
        doc = _clean_comment(text)
        if self.rewrites:
            for pattern, replacement in self.rewrites:
                doc = pattern.sub(replacement, doc)
            doc = "\n".join(line.strip() for line in doc.split("\n") if line.strip())  # lines that held only tags
        return doc[:MAX_DOCSTRING_CHARS]

    def outer_node(self, node: ts.Node) -> ts.Node:
        """The node that owns decorators, export keywords or template headers."""
        while node.parent is not None and node.parent.type in self.spec.wrapper_types:
            node = node.parent
        return node

    def leading_doc(self, node: ts.Node) -> tuple[str, int]:
        """Comments (or doc attributes) right above a definition, and the first line they use."""
        spec = self.spec
        parts: list[str] = []
        first_row = node.start_point[0]
        sibling = node.prev_named_sibling
        if sibling is None and node.parent is not None and node.parent.start_point[0] == first_row:
            sibling = node.parent.prev_named_sibling  # first in a body whose comment sits outside it
        expected_row = node.start_point[0]
        while sibling is not None:
            is_comment = sibling.type in spec.comment_types
            is_doc_attr = (sibling.type in spec.doc_node_types
                           and _text(self.source, sibling).lstrip().startswith(spec.doc_prefixes))
            is_skipped = sibling.type in spec.leading_skip_types and not is_doc_attr
            if sibling.end_point[0] < expected_row - 1:
                break
            if not (is_comment or is_doc_attr or is_skipped):
                # some grammars hang a trailing comment on the previous node: look inside it
                inner = sibling
                while inner.named_child_count and inner.type not in spec.comment_types:
                    inner = inner.named_child(inner.named_child_count - 1)
                if inner is sibling or inner.type not in spec.comment_types:
                    break
                sibling = inner
                continue
            if not is_skipped:
                parts.append(_text(self.source, sibling))
            first_row = sibling.start_point[0]
            expected_row = first_row
            sibling = sibling.prev_named_sibling
        if not parts:
            return "", first_row + 1
        parts.reverse()
        return self.clean_doc("\n".join(parts)), first_row + 1

    def body_node(self, node: ts.Node) -> ts.Node | None:
        for name in self.spec.body_fields:
            body = node.child_by_field_name(name)
            if body is not None:
                return body
        if self.spec.body_types:
            for child in node.named_children:
                if child.type in self.spec.body_types:
                    return child
        return None

    def body_docstring(self, body: ts.Node | None) -> str:
        if body is None or not self.spec.docstring_in_body:
            return ""
        first = body.named_child(0) if body.named_child_count else None
        if first is not None and first.type == "expression_statement" and first.named_child_count:
            first = first.named_child(0)  # older grammars wrap the string in a statement
        if first is not None and first.type == "string":
            return self.clean_doc(_text(self.source, first))
        if first is not None and self.spec.doc_prefixes:
            text = _text(self.source, first).lstrip()
            if text.startswith(self.spec.doc_prefixes):
                return self.clean_doc(text)
        return ""

    def opening_comment(self, top_level: list[ts.Node]) -> str:
        """The comment block a file opens with (often its documentation)."""
        blocks: list[list[str]] = []
        last_row = None
        for child in top_level:
            if child.type not in self.spec.comment_types:
                break
            text = _text(self.source, child)
            if text.startswith("#!"):
                continue  # a shebang is not documentation
            if last_row is None or child.start_point[0] > last_row + 1:
                blocks.append([])  # a blank line starts a new block
            blocks[-1].append(text)
            last_row = child.end_point[0]
        # the first block, unless it is a licence header: then the next one (Go's package doc)
        for block in blocks:
            text = self.clean_doc("\n".join(block))
            if not _LICENCE.search(text[:400]):
                return text
        return ""

    def signature(self, node: ts.Node, outer: ts.Node, body: ts.Node | None) -> str:
        start = outer.start_byte if self.spec.signature_includes_wrapper else node.start_byte
        end = body.start_byte if body is not None and body.start_byte > start else node.end_byte
        for child in node.children:  # a comment before the body is not part of the signature
            if child.start_byte >= end:
                break
            if child.type in self.spec.comment_types and start < child.start_byte:
                end = child.start_byte
                break
        text = self.source[start:end].decode("utf-8", errors="replace")
        if body is None:
            text = text.split("\n", 1)[0]
        text = _WS.sub(" ", text).strip().rstrip("{:=").strip()
        if len(text) > MAX_SIGNATURE_CHARS:
            text = text[:MAX_SIGNATURE_CHARS - 1] + "…"
        return text

    def seams(self, body: ts.Node | None) -> tuple[tuple[int, int], ...]:
        """(line, depth) where statements begin: depth 1 in the body, deeper inside blocks."""
        if body is None:
            return ()
        found: dict[int, int] = {}
        frontier = [(body, 1)]
        while frontier:
            node, depth = frontier.pop()
            for child in node.named_children:
                line = child.start_point[0] + 1
                if depth < found.get(line, 99):
                    found[line] = depth
                if depth < 6 and child.end_point[0] > child.start_point[0]:
                    for grandchild in child.named_children:
                        if grandchild.type in self.spec.block_types:
                            frontier.append((grandchild, depth + 1))
                    if child.type in self.spec.block_types:
                        frontier.append((child, depth + 1))
        return tuple(sorted(found.items()))


def _split_qualified(name: str, separators: tuple[str, ...]) -> list[str]:
    if not any(sep in name for sep in separators):
        name = name.strip()
        return [name] if name else []
    parts = [name]
    for sep in separators:
        parts = [p for part in parts for p in part.split(sep)]
    return [p for p in (p.strip() for p in parts) if p]


def _content_end(node: ts.Node, comment_types: frozenset[str]) -> ts.Node:
    """The last descendant on the right edge that is not a comment (Scala and Kotlin attach the
    comment of the next definition to the end of the previous one)."""
    current = node
    while current.child_count:
        last = current.child(current.child_count - 1)
        if last.type in comment_types:
            kept = [c for c in current.children if c.type not in comment_types]
            return kept[-1] if kept else current
        if not last.is_named:
            return node  # a closing token (`}`, `end`) ends it: nothing hangs on it
        current = last
    return node


def _last_line(node: ts.Node) -> int:
    """1-based last line; a node that ends at column 0 ends on the line before."""
    row, column = node.end_point
    return row if column == 0 and row > node.start_point[0] else row + 1


def _has_ancestor(node: ts.Node, types: frozenset[str], levels: int) -> bool:
    parent = node.parent
    for _ in range(levels):
        if parent is None:
            return False
        if parent.type in types:
            return True
        parent = parent.parent
    return False


def _import_target(statement: str) -> str:
    """The module an import statement names, when the query did not capture it."""
    words = statement.split(None, 1)
    return words[1].split("\n", 1)[0].strip().rstrip(";") if len(words) == 2 else ""


def _restates(parent: ParsedDefinition, node: ts.Node, name: str) -> bool:
    """A nested definition that adds nothing: its parent's name and span but for the edges
    (`typedef struct X {...} X;`), or exactly its parent's lines (`const f = function g() {}`)."""
    start, end = node.start_point[0] + 1, _last_line(node)
    if start == parent.start_line and end == parent.end_line and parent.kind not in ("class", "module", "namespace"):
        return True
    return parent.name == name and start - parent.start_line <= 1 and parent.end_line - end <= 1


# Far deeper than any syntax tree in the benchmark checkouts (docs/benchmarks.md). Matching the
# language's query over a deeper tree takes super-linear time in tree-sitter; so no match starts
# below this depth, and a file nested deeper is skipped.
MAX_SYNTAX_DEPTH = 1000
DEPTH_SAMPLES = 16  # byte offsets at which the nesting is measured


class TooDeep(ValueError):
    """The file nests deeper than MAX_SYNTAX_DEPTH (generated or hostile input)."""


def _name_position(source: bytes, node: ts.Node, name: str) -> tuple[int, int]:
    """(line, column) of `name` (the last part of the name node's text), 1-based, the column in
    characters as editors count them; (0, 0) when the name is not where the node says."""
    encoded = name.encode("utf-8")
    start = source.rfind(encoded, node.start_byte, node.end_byte)
    if start < 0:
        return 0, 0
    line_start = source.rfind(b"\n", 0, start) + 1
    line = source.count(b"\n", node.start_byte, start) + node.start_point[0] + 1
    return line, len(source[line_start:start].decode("utf-8", errors="replace")) + 1


def _sampled_depth(root: ts.Node, size: int) -> int:
    """How deep the tree goes at a few evenly spaced offsets (at most MAX_SYNTAX_DEPTH + 1):
    cheap for real code, and a file nested past the bound is nested so almost everywhere."""
    deepest = 0
    for i in range(1, DEPTH_SAMPLES + 1):
        offset = size * i // (DEPTH_SAMPLES + 1)
        cursor = root.walk()  # down from the root: Node.parent would search from the root each step
        depth = 0
        while depth <= MAX_SYNTAX_DEPTH and cursor.goto_first_child_for_byte(offset) is not None:
            depth += 1
        deepest = max(deepest, depth)
    return deepest


def _scopes(spec: LanguageSpec, parsed: ParsedFile, bindings: list[tuple[ts.Node, str, ts.Node]],
            scope_at: Callable[[int], int | None]) -> Scopes:
    """The file's bindings and import aliases, for the hints of its call sites."""
    assert spec.import_aliases is not None
    aliases = {alias: (module, member) for ref in parsed.imports
               for alias, module, member in spec.import_aliases(ref.text, ref.module)}
    scopes = Scopes(spec, parsed.definitions, aliases)
    literals = dict(spec.literal_types)
    source = parsed.source
    for name_node, how, said in bindings:
        if how == "value":
            scopes.declare(scope_at(name_node.start_byte), _text(source, name_node), name_node.start_point[0] + 1)
            continue
        if how == "literal":
            type_text = literals.get(said.type, "")
        elif how == "same":
            type_text = scopes.type_of(scope_at(said.start_byte), _text(source, said))
        else:
            type_text = _text(source, said)
            if how == "new" and spec.constructors_capitalized:
                last = type_text.rsplit(".", 1)[-1]
                if not (last[:1].isupper() or last in spec.builtin_types):
                    # `x = make()`: what the file's own signature of make says it returns, if it does
                    type_text = scopes.returned(scope_at(said.start_byte), type_text)
        if type_text:
            scopes.bind(scope_at(name_node.start_byte), _text(source, name_node), type_text)
    return scopes


def parse_source(path: str, source: bytes, spec: LanguageSpec) -> ParsedFile:
    """Parse one file and extract what chunking and the graph need; TooDeep for a tree nested
    past MAX_SYNTAX_DEPTH."""
    tree = _parser(spec.grammar).parse(source)
    root = tree.root_node
    if _sampled_depth(root, len(source)) > MAX_SYNTAX_DEPTH:
        raise TooDeep(f"nested more than {MAX_SYNTAX_DEPTH} syntax levels deep")
    parsed = ParsedFile(path=path, language=spec.name, source=source, has_errors=root.has_error)
    builder = _DefinitionBuilder(spec, source)
    cursor = ts.QueryCursor(compiled_query(spec))
    cursor.set_max_start_depth(MAX_SYNTAX_DEPTH)  # the bound holds even where sampling missed

    raw_defs: list[tuple[ts.Node, str, ts.Node, ts.Node | None]] = []  # node, kind, name, receiver
    call_nodes: list[tuple[ts.Node, ts.Node | None, bool]] = []  # name, receiver, a reference
    bindings: list[tuple[ts.Node, str, ts.Node]] = []  # name, how (type, new, literal, same, value), the node saying it
    seen_defs: set[tuple[int, int]] = set()
    imported: set[tuple[int, int]] = set()  # the module names of the imports found
    for _pattern, captures in cursor.matches(root):
        calls = captures.get("call")
        if calls is not None:  # most matches are calls: the fast path
            receivers = captures.get("call.receiver")
            call_nodes.extend((node, receivers[0] if receivers else None, False) for node in calls)
            if len(captures) == (1 if receivers is None else 2):
                continue
        refs = captures.get("ref")
        if refs is not None:
            receivers = captures.get("ref.receiver")
            call_nodes.append((refs[0], receivers[0] if receivers else None, True))
            continue
        bound = captures.get("bind.name")
        if bound is not None:
            for how in ("type", "new", "literal", "same", "value"):
                said = captures.get("bind." + how)
                if said:
                    bindings.extend((node, how, said[0]) for node in bound)
            continue
        for cap_name, nodes in captures.items():
            if cap_name.startswith("definition."):
                name_nodes = captures.get("name")
                if not name_nodes:
                    continue
                node = nodes[0]
                key = node.byte_range
                if key in seen_defs:
                    continue
                seen_defs.add(key)
                receivers = captures.get("receiver")
                raw_defs.append((node, cap_name[11:], name_nodes[0], receivers[0] if receivers else None))
            elif cap_name == "import":
                module_nodes = captures.get("import.module")
                if module_nodes and module_nodes[0].byte_range in imported:
                    continue  # `const x = require("m")`: the declaration's match came first, with the call
                imported.update(n.byte_range for n in module_nodes or ())
                for node in nodes:
                    text = source[node.start_byte:_content_end(node, spec.comment_types).end_byte].decode(
                        "utf-8", errors="replace")
                    module = _text(source, module_nodes[0]) if module_nodes else _import_target(text)
                    parsed.imports.append(ImportRef(text=_WS.sub(" ", text).strip()[:300],
                                                    module=module.strip("\"'<>` "), line=node.start_point[0] + 1))

    # definitions in document order; parents by range containment (a stack of open ranges)
    raw_defs.sort(key=lambda d: (d[0].start_byte, -d[0].end_byte))
    stack: list[int] = []
    bodies: list[ts.Node | None] = []
    blocks = BlockNames(spec.lexical_blocks, spec.block_types, len(source)) if spec.lexical_blocks else None
    for node, kind, name_node, receiver in raw_defs:
        outer = builder.outer_node(node)
        end_node = _content_end(outer, spec.comment_types)  # a comment after its last line is no part of it
        while stack and not (parsed.definitions[stack[-1]].end_byte >= end_node.end_byte
                             and parsed.definitions[stack[-1]].start_byte <= node.start_byte):
            stack.pop()
        parent = stack[-1] if stack else None
        if parent is not None and _restates(parsed.definitions[parent], node, _text(source, name_node)):
            continue  # `typedef struct X {...} X;`: the typedef already stands for the struct
        name_parts = _split_qualified(_text(source, name_node), spec.qualifier_separators)
        if not name_parts:
            continue
        name = name_parts[-1]
        prefix = [parsed.definitions[parent].qualified_name] if parent is not None else []
        if receiver is not None:
            receiver_name = _split_qualified(_text(source, receiver), spec.qualifier_separators)
            if receiver_name and (not prefix or not prefix[-1].endswith(receiver_name[-1])):
                prefix.append(receiver_name[-1])
        prefix.extend(name_parts[:-1])
        qualified = ".".join(prefix + [name])
        parent_kind = parsed.definitions[parent].kind if parent is not None else None
        if kind == "function" and (parent_kind in spec.method_parent_kinds or receiver is not None
                                   or len(name_parts) > 1):
            kind = "method"
        body = builder.body_node(node)
        doc = builder.body_docstring(body)
        leading, first_line = builder.leading_doc(outer)
        doc = doc or leading
        name_line, name_column = _name_position(source, name_node, name)
        parsed.definitions.append(ParsedDefinition(
            kind=kind, name=name, qualified_name=qualified, name_line=name_line, name_column=name_column,
            signature=builder.signature(node, outer, body), docstring=doc,
            start_line=min(first_line, outer.start_point[0] + 1), end_line=_last_line(end_node),
            start_byte=outer.start_byte, end_byte=end_node.end_byte,
            body_start_byte=body.start_byte if body is not None else node.end_byte,
            parent=parent))
        if blocks is not None and kind in BLOCK_KINDS:
            blocks.add(node, name_node, name, name_line)
        bodies.append(body)
        stack.append(len(parsed.definitions) - 1)

    if blocks is not None and blocks.in_blocks:  # the values that may hide a block's function
        for name_node, how, _ in bindings:
            if how == "value":
                blocks.add_value(name_node, _text(source, name_node))

    # attribute each call and binding to the innermost definition that contains it
    definitions = parsed.definitions
    starts = [d.start_byte for d in definitions]

    def scope_at(start: int) -> int | None:
        i = bisect.bisect_right(starts, start) - 1
        while i >= 0:
            d = definitions[i]
            if start < d.end_byte:  # d starts at or before the node (bisect)
                return i
            i = d.parent if d.parent is not None else -1
        return None

    scopes = _scopes(spec, parsed, bindings, scope_at) if spec.import_aliases is not None else None
    name_ranges = {n.byte_range for _, _, n, _ in raw_defs}
    separators, ignored = spec.qualifier_separators, spec.ignored_calls
    for node, receiver, is_ref in call_nodes:
        start, end = node.byte_range
        if (start, end) in name_ranges:
            continue  # Elixir's `def f(x)` is a call node naming the definition
        if spec.call_parent_excluded and _has_ancestor(node, spec.call_parent_excluded, 3):
            continue
        name = source[start:end].decode("utf-8", errors="replace")
        for sep in separators:
            if sep in name:
                name = (_split_qualified(name, separators) or [""])[-1]
                break
        if not name or name in ignored:
            continue
        caller = scope_at(start)
        hint: str | None = ""
        if scopes is not None:
            hint = scopes.hint(caller, _text(source, receiver) if receiver is not None else None, name)
            if is_ref and (hint == EXTERNAL or (not hint and (receiver is not None or name not in scopes.defined))):
                hint = None  # a value of unknown origin: most are variables, not definitions
            elif not hint and receiver is not None and spec.unknown_receivers_call_methods:
                hint = EXTERNAL if name in spec.builtin_methods else METHOD
        if blocks is not None and receiver is None:
            hint = blocks.site(len(parsed.calls), caller, name, start, hint)
        if hint is not None:
            parsed.calls.append(CallSite(name, node.start_point[0] + 1, caller, hint, is_ref))
    if blocks is not None:
        parsed.calls = blocks.settled(parsed.calls)
    parsed.calls.sort(key=itemgetter(1))  # by line
    top_level = root.named_children
    parsed.top_level_boundaries = tuple((c.start_point[0] + 1, 1) for c in top_level)
    parsed.docstring = builder.body_docstring(root) or builder.opening_comment(top_level)
    parsed.seam_finder = lambda i: builder.seams(bodies[i])  # keeps the tree alive until released
    return parsed

