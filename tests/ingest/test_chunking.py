"""File -> Class -> Method chunks: tree shape, stable ids, hashes, splitting, text fallbacks."""

from __future__ import annotations

import pytest
from conftest import SAMPLES, extract_sample, extract_text

from codesearch.config import Settings
from codesearch.model import non_whitespace_size

INVENTORY_PY = (SAMPLES / "python" / "inventory.py").read_text(encoding="utf-8")
REL = "inventory.py"

# (kind, qualified_name, start_line, end_line, qualified_name of the parent chunk or None)
EXPECTED_TREE = [
    ("file", REL, 1, 82, None),
    ("class", "Item", 9, 19, REL),
    ("method", "Item.value", 17, 19, "Item"),
    ("class", "Inventory", 22, 61, REL),
    ("class", "Inventory.Stats", 25, 30, "Inventory"),
    ("method", "Inventory.Stats.__init__", 28, 30, "Inventory.Stats"),
    ("method", "Inventory.__init__", 32, 35, "Inventory"),
    ("method", "Inventory.add_item", 37, 41, "Inventory"),
    ("method", "Inventory.remove_item", 43, 45, "Inventory"),
    ("method", "Inventory.total_value", 47, 49, "Inventory"),
    ("method", "Inventory.stats", 51, 53, "Inventory"),
    ("method", "Inventory.to_json", 55, 61, "Inventory"),
    ("function", "Inventory.to_json.encode", 58, 59, "Inventory.to_json"),
    ("function", "compute_backoff", 64, 67, REL),
    ("function", "main", 70, 78, REL),
    # loose statements are named by their first line, whitespace-collapsed, at most 60 characters
    ("block", '"""Inventory service: stores items and computes their total…', 1, 1, REL),  # docstring
    ("block", 'if __name__ == "__main__":', 81, 82, REL),  # if __name__ == "__main__": main()
]


def chunks_of(text: str, settings: Settings | None = None, rel: str = REL):
    return extract_text(rel, text, settings).chunks


def by_name(chunks):
    return {(c.kind, c.qualified_name): c for c in chunks}


# --- the chunk tree of the python fixture ---------------------------------------------------------

def test_python_fixture_chunk_tree():
    chunks = extract_sample("python", REL).chunks
    by_id = {c.id: c for c in chunks}
    assert len(by_id) == len(chunks), "chunk ids must be unique within a file"
    actual = [(c.kind, c.qualified_name, c.start_line, c.end_line,
               by_id[c.parent_id].qualified_name if c.parent_id else None) for c in chunks]
    assert actual == EXPECTED_TREE


def test_file_chunk_comes_first_and_is_the_root():
    chunks = extract_sample("python", REL).chunks
    file_chunk = chunks[0]
    assert file_chunk.kind == "file" and file_chunk.parent_id is None
    assert file_chunk.name == "inventory.py" and file_chunk.language == "python"
    assert [c for c in chunks if c.parent_id is None] == [file_chunk]
    # the file chunk is an outline: imports and signatures, not code
    assert "from config import parse_config, clamp" in file_chunk.text
    assert "def compute_backoff(attempt: int, base: float = 0.5, cap: float = 30.0) -> float" in file_chunk.text
    assert "return clamp(delay, 0.0, cap)" not in file_chunk.text
    assert file_chunk.docstring == "Inventory service: stores items and computes their total value."
    # its outline comes before its imports: what the model reads first (its input is cut short)
    assert file_chunk.text.index("def compute_backoff") < file_chunk.text.index("from config import")


def test_ruby_class_methods_are_named_under_self_not_by_the_block_text():
    source = ("module Shop\n  class Cart\n    class << self\n      def build\n        new\n      end\n"
              "    end\n  end\nend\n")
    chunks = extract_text("cart.rb", source).chunks
    names = {c.qualified_name for c in chunks if c.kind != "file"}
    assert {"Shop.Cart.self", "Shop.Cart.self.build"} <= names, names


def test_parent_ids_point_at_the_enclosing_chunk():
    chunks = extract_sample("python", REL).chunks
    names = by_name(chunks)
    for kind, name, _start, _end, parent in EXPECTED_TREE:
        chunk = names[(kind, name)]
        if parent is None:
            assert chunk.parent_id is None
        else:
            expected_parent = next(c for c in chunks if c.qualified_name == parent)
            assert chunk.parent_id == expected_parent.id, name


def test_class_chunk_collapses_methods_to_signatures():
    names = by_name(extract_sample("python", REL).chunks)
    inventory = names[("class", "Inventory")].text
    assert "    def add_item(self, item: Item) -> None …" in inventory
    assert "    def remove_item(self, name: str) -> Item …" in inventory
    assert "    class Stats …" in inventory
    assert '"""An in-memory collection of items keyed by name."""' in inventory
    # no method bodies in the class skeleton
    assert 'raise ValueError("inventory is full")' not in inventory
    assert "self.items.pop(name)" not in inventory
    assert "json.dumps" not in inventory
    item = names[("class", "Item")].text
    assert item.startswith("@dataclass\nclass Item:")
    assert "    def value(self) -> float …" in item
    assert "self.price * self.quantity" not in item
    # a method collapses its nested function, and the nested function has its own chunk
    to_json = names[("method", "Inventory.to_json")].text
    assert "        def encode(item: Item) -> dict …" in to_json
    assert '"qty": item.quantity' not in to_json
    assert '"qty": item.quantity' in names[("function", "Inventory.to_json.encode")].text


def test_method_chunk_text_is_the_source():
    names = by_name(extract_sample("python", REL).chunks)
    lines = INVENTORY_PY.splitlines()
    add_item = names[("method", "Inventory.add_item")]
    assert add_item.text == "\n".join(lines[36:41])
    assert add_item.signature == "def add_item(self, item: Item) -> None"
    assert add_item.docstring == "Add an item, replacing any existing item with the same name."


def test_every_header_starts_with_path_and_names_kind_and_qualified_name():
    for chunk in extract_sample("python", REL).chunks:
        first_line = chunk.header.splitlines()[0]
        assert first_line.startswith(f"{REL} | "), chunk.header
        assert chunk.kind in first_line
        assert chunk.qualified_name in chunk.header
        if chunk.signature:
            assert chunk.signature in chunk.header
        assert chunk.path == REL and chunk.language == "python"
        assert chunk.size == non_whitespace_size(chunk.text)


# --- stable ids and content hashes ----------------------------------------------------------------

def test_ids_and_hashes_are_stable_across_runs():
    first = chunks_of(INVENTORY_PY)
    second = chunks_of(INVENTORY_PY)
    assert [(c.id, c.content_hash) for c in first] == [(c.id, c.content_hash) for c in second]


def _insert_blank_lines_above(source: str, marker: str, count: int) -> str:
    assert marker in source
    return source.replace(marker, "\n" * count + marker, 1)


def test_ids_survive_blank_lines_inserted_above_a_function():
    before = by_name(chunks_of(INVENTORY_PY))
    after = by_name(chunks_of(_insert_blank_lines_above(INVENTORY_PY, "def compute_backoff", 3)))
    definition_keys = [k for k in before if k[0] != "block"]
    for key in definition_keys:
        assert after[key].id == before[key].id, key
        assert after[key].content_hash == before[key].content_hash, key  # same code, same hash
    moved = ("function", "compute_backoff")
    assert after[moved].start_line == before[moved].start_line + 3
    assert after[moved].end_line == before[moved].end_line + 3
    assert after[("function", "main")].start_line == before[("function", "main")].start_line + 3
    unmoved = ("method", "Inventory.add_item")
    assert after[unmoved].start_line == before[unmoved].start_line


def test_block_ids_survive_blank_lines_inserted_above():
    before = [c for c in chunks_of(INVENTORY_PY) if c.kind == "block"]
    after = [c for c in chunks_of(_insert_blank_lines_above(INVENTORY_PY, "def compute_backoff", 3))
             if c.kind == "block"]
    assert [(c.start_line, c.end_line) for c in before] == [(1, 1), (81, 82)]
    assert [(c.start_line, c.end_line) for c in after] == [(1, 1), (84, 85)]  # the second one moved
    assert [c.text for c in after] == [c.text for c in before]
    assert [c.qualified_name for c in after] == [c.qualified_name for c in before]
    assert [c.id for c in after] == [c.id for c in before]
    assert [c.content_hash for c in after] == [c.content_hash for c in before]


def _changed(before, after):
    b, a = by_name(before), by_name(after)
    assert a.keys() == b.keys()
    return {key for key in b if a[key].content_hash != b[key].content_hash}


def test_body_change_changes_only_that_chunks_hash():
    before = chunks_of(INVENTORY_PY)
    edited = INVENTORY_PY.replace("delay = base * (2 ** attempt)", "delay = base * (3 ** attempt)")
    assert edited != INVENTORY_PY
    after = chunks_of(edited)
    assert _changed(before, after) == {("function", "compute_backoff")}  # the outline is unchanged
    assert [c.id for c in after] == [c.id for c in before]


def test_method_body_change_leaves_class_skeleton_alone():
    before = chunks_of(INVENTORY_PY)
    edited = INVENTORY_PY.replace('raise ValueError("inventory is full")', 'raise ValueError("full!")')
    assert _changed(before, chunks_of(edited)) == {("method", "Inventory.add_item")}


def test_signature_change_also_changes_the_file_outline():
    before = chunks_of(INVENTORY_PY)
    edited = INVENTORY_PY.replace("cap: float = 30.0) -> float:", "cap: float = 60.0) -> float:")
    assert _changed(before, chunks_of(edited)) == {("function", "compute_backoff"), ("file", REL)}


# --- oversized definitions -------------------------------------------------------------------------

def _big_function_source() -> tuple[str, int, int, tuple[int, int]]:
    """A ~200-statement function with an if/else block in the middle.

    Returns (source, def line, last line, (first, last) line of the if/else block).
    """
    lines = ["import os", "", "", "def big(x):", '    """A big function."""', "    total = 0"]
    lines += [f"    total += x * {i} + len(str({i}))" for i in range(90)]
    if_start = len(lines) + 1
    lines.append("    if total > 10:")
    lines += [f"        total -= {i} * x" for i in range(15)]
    lines += ["    else:", "        total += 1"]
    if_end = len(lines)
    lines += [f"    total += x * {i} + len(str({i}))" for i in range(90, 180)]
    lines.append("    return total")
    return "\n".join(lines) + "\n", 4, len(lines), (if_start, if_end)


def test_oversized_function_is_split_into_parts():
    source, def_line, last_line, (if_start, if_end) = _big_function_source()
    budget = 400
    chunks = chunks_of(source, Settings(max_chunk_chars=budget), rel="big.py")
    file_chunk = chunks[0]
    parts = [c for c in chunks if c.qualified_name == "big"]
    assert len(parts) >= 5
    first, rest = parts[0], parts[1:]
    assert first.parent_id == file_chunk.id
    assert all(p.parent_id == first.id for p in rest)
    assert len({p.id for p in parts}) == len(parts)
    assert all(p.kind == "function" and p.name == "big" for p in parts)
    assert first.docstring == "A big function." and all(p.docstring == "" for p in rest)
    assert f"(part 2/{len(parts)})" in rest[0].header
    source_lines = source.splitlines()
    for part in parts:
        longest_line = max(non_whitespace_size(line) for line in part.text.splitlines())
        assert part.size <= budget or longest_line > budget, (part.start_line, part.size)
        assert part.text == "\n".join(source_lines[part.start_line - 1:part.end_line])
    # in order, without overlap, covering every non-blank line of the function
    assert first.start_line == def_line and parts[-1].end_line == last_line
    for a, b in zip(parts, parts[1:]):
        assert a.end_line < b.start_line
    covered = {n for p in parts for n in range(p.start_line, p.end_line + 1)}
    assert {n for n in range(def_line, last_line + 1) if source_lines[n - 1].strip()} <= covered
    # the if/else block fits the budget, so it is not cut in two
    holder = [p for p in parts if p.start_line <= if_start <= p.end_line]
    assert len(holder) == 1 and holder[0].end_line >= if_end


def test_block_larger_than_budget_is_cut_inside_it():
    source, _def_line, _last, (if_start, if_end) = _big_function_source()
    budget = 120
    parts = [c for c in chunks_of(source, Settings(max_chunk_chars=budget), rel="big.py")
             if c.qualified_name == "big"]
    assert all(p.size <= budget for p in parts)
    assert sum(1 for p in parts if if_start <= p.start_line <= if_end) >= 1
    for a, b in zip(parts, parts[1:]):
        assert a.end_line < b.start_line


def test_a_single_line_over_the_budget_becomes_its_own_part():
    long_line = "    data = [" + ", ".join(str(i) for i in range(150)) + "]"
    source = "def f():\n    a = 1\n" + long_line + "\n    return data\n"
    budget = 100
    parts = [c for c in chunks_of(source, Settings(max_chunk_chars=budget), rel="f.py") if c.name == "f"]
    assert len(parts) >= 2
    oversized = [p for p in parts if p.size > budget]
    assert [p.text for p in oversized] == [long_line]


def test_small_function_is_one_chunk_spanning_children():
    chunks = chunks_of(INVENTORY_PY, Settings(max_chunk_chars=100_000))
    assert len([c for c in chunks if c.qualified_name == "Inventory"]) == 1


# --- loose statements, text fallbacks ------------------------------------------------------------

def test_loose_top_level_statements_become_block_chunks():
    source = "import os\n\nX = 1\nY = 2\n\n\ndef f():\n    return 1\n\n\nprint(f())\nZ = 3\n"
    chunks = chunks_of(source, rel="loose.py")
    blocks = [(c.kind, c.name, c.start_line, c.end_line, c.text) for c in chunks if c.kind == "block"]
    # runs separated by a definition are not merged; imports are not blocks
    assert blocks == [
        ("block", "X = 1", 3, 4, "X = 1\nY = 2"),
        ("block", "print(f())", 11, 12, "print(f())\nZ = 3"),
    ]
    assert all(c.parent_id == chunks[0].id for c in chunks if c.kind == "block")


def test_block_names_collapse_whitespace_and_are_cut_at_60_characters():
    long_call = "configure(" + ", ".join(f"option_{i}=True" for i in range(10)) + ")"
    source = f"x  =   {{'a':    1}}\n\n\ndef f():\n    return 1\n\n\n{long_call}\n"
    blocks = [c for c in chunks_of(source, rel="loose.py") if c.kind == "block"]
    assert [(c.name, c.start_line, c.end_line) for c in blocks] == [
        ("x = {'a': 1}", 1, 1), (long_call[:59] + "…", 8, 8)]
    assert all(c.qualified_name == c.name and len(c.name) <= 60 for c in blocks)


def test_blocks_with_the_same_first_line_get_distinct_ids():
    source = "print(1)\n\n\ndef f():\n    return 1\n\n\nprint(1)\n"
    blocks = [c for c in chunks_of(source, rel="loose.py") if c.kind == "block"]
    assert [(c.name, c.start_line) for c in blocks] == [("print(1)", 1), ("print(1)", 8)]
    assert blocks[0].id != blocks[1].id


def test_markdown_is_chunked_by_headings():
    result = extract_sample("python", "README.md")
    assert result.fell_back and result.language == "markdown"
    file_chunk, *sections = result.chunks
    assert file_chunk.kind == "file" and file_chunk.parent_id is None
    assert [(c.kind, c.name, c.qualified_name, c.start_line, c.end_line) for c in sections] == [
        ("section", "Inventory Service", "Inventory Service", 1, 4),
        ("section", "Usage", "Inventory Service / Usage", 6, 10),
        ("section", "Retry Policy", "Inventory Service / Retry Policy", 12, 15),
    ]
    assert all(c.parent_id == file_chunk.id for c in sections)
    assert sections[1].text.startswith("## Usage\n")


def test_markdown_heading_paths_ignore_code_fences():
    text = "# Top\n\nintro\n\n```\n# not a heading\n```\n\n## Sub\n\ntext\n\n### Deeper\n\nmore\n\n## Other\n\nend\n"
    chunks = extract_text("doc.md", text).chunks
    assert [(c.qualified_name, c.start_line, c.end_line) for c in chunks[1:]] == [
        ("Top", 1, 7), ("Top / Sub", 9, 11), ("Top / Sub / Deeper", 13, 15), ("Top / Other", 17, 19),
    ]


@pytest.mark.parametrize("rel, language", [("notes.txt", "text"), ("config.yaml", "yaml")])
def test_unknown_grammar_is_chunked_by_line_windows(rel, language):
    text = "".join(f"line number {i}\n" for i in range(1, 131))
    result = extract_text(rel, text, Settings(text_window_lines=50))
    assert result.fell_back and result.language == language
    file_chunk, *blocks = result.chunks
    assert (file_chunk.kind, file_chunk.start_line, file_chunk.end_line) == ("file", 1, 130)
    assert [(c.kind, c.qualified_name, c.start_line, c.end_line) for c in blocks] == [
        ("block", "lines 1-50", 1, 50), ("block", "lines 51-100", 51, 100), ("block", "lines 101-130", 101, 130),
    ]
    assert all(c.parent_id == file_chunk.id for c in blocks)


# --- malformed input ------------------------------------------------------------------------------

BROKEN_PY = '''import os


def good_one(a):
    return a + 1


def broken(b):
    x = foo(b, [1, 2
    return x


def good_two(c):
    """Still fine."""
    return c * 2


class Keeper:
    def method(self):
        return 3
'''


def test_python_with_syntax_error_keeps_intact_definitions():
    result = extract_text("broken.py", BROKEN_PY)
    assert result.parsed.has_errors
    names = {(c.kind, c.qualified_name, c.start_line, c.end_line) for c in result.chunks}
    assert {("function", "good_one", 4, 5), ("function", "good_two", 13, 15), ("class", "Keeper", 18, 20),
            ("method", "Keeper.method", 19, 20)} <= names
    assert by_name(result.chunks)[("function", "good_two")].docstring == "Still fine."


JS_TEMPLATE = """function alpha(a) {{
  return a + 1;
}}

{garbage}

function beta(b) {{
  return b * 2;
}}

class Gamma {{
  delta() {{ return 4; }}
}}
"""
JS_EXPECTED = {("function", "alpha", 1, 3), ("function", "beta", 7, 9), ("class", "Gamma", 11, 13),
               ("method", "Gamma.delta", 12, 12)}


@pytest.mark.parametrize("garbage", ["let = = = ;", "if (x { y ))", "const broken = (1, 2;", "}}}"])
def test_javascript_with_garbage_keeps_intact_definitions(garbage):
    result = extract_text("broken.js", JS_TEMPLATE.format(garbage=garbage))
    assert result.parsed.has_errors
    assert {(c.kind, c.qualified_name, c.start_line, c.end_line) for c in result.chunks} >= JS_EXPECTED


@pytest.mark.parametrize("garbage", [
    pytest.param("%%% ))) garbage {{{ <<< @@@ ;;;", marks=pytest.mark.xfail(
        strict=True, reason="error recovery parses `function alpha(){}` + the garbage line as one "
                            "expression_statement (`function alpha(){} % ...`); the named function_expression "
                            "is now captured, but expression_statement is a JavaScript wrapper type, so "
                            "alpha's range runs on to the garbage: 1-5 instead of 1-3")),
    "@@@ ### !!!",
])
def test_javascript_garbage_next_to_a_declaration(garbage):
    result = extract_text("broken.js", JS_TEMPLATE.format(garbage=garbage))
    assert {(c.kind, c.qualified_name, c.start_line, c.end_line) for c in result.chunks} >= JS_EXPECTED


def test_invalid_utf8_in_a_string_does_not_raise():
    data = b'def f():\n    s = "caf\xe9 \xff\xfe"\n    return s\n\n\ndef g():\n    return 1\n'
    result = extract_text("latin.py", data)
    chunks = by_name(result.chunks)
    assert (chunks[("function", "f")].start_line, chunks[("function", "f")].end_line) == (1, 3)
    assert chunks[("function", "g")].text == "def g():\n    return 1"
    assert "\ufffd" in chunks[("function", "f")].text  # undecodable bytes are replaced, not dropped


@pytest.mark.parametrize("separator", ["\f", "\v", "\x1c", "\u2028", "\r"])
def test_line_numbers_count_newlines_only(separator):
    """A form feed (old C and Python code) or another Unicode separator is not a line break for
    tree-sitter or an editor: it must not shift the lines of the definitions after it."""
    source = f"def a():\n    return 1\n{separator}\ndef b():\n    return 2\n"
    chunks = by_name(chunks_of(source))
    b = chunks[("function", "b")]
    assert (b.start_line, b.end_line) == (4, 5)
    assert b.text == "def b():\n    return 2"
    assert not [c for c in chunks.values() if c.kind == "block"]


def test_crlf_lines_keep_their_numbers_and_lose_the_carriage_return():
    source = "def a():\r\n    return 1\r\n\r\ndef b():\r\n    return 2\r\n"
    b = by_name(chunks_of(source))[("function", "b")]
    assert (b.start_line, b.end_line) == (4, 5)
    assert b.text == "def b():\n    return 2"
