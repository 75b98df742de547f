"""Every definition knows where its name stands (line and character column, 1-based), in every
sample language: what editors jump to and what `--vimgrep` prints."""

from __future__ import annotations

import pytest
from conftest import SAMPLES, extract_text

from codesearch.ingest.languages import language_for_path

FILES = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and ".codesearch" not in p.parts
               and language_for_path(p.name) and p.suffix not in (".md", ".txt", ".json", ".toml", ".yaml", ".yml"))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(SAMPLES)) for p in FILES])
def test_each_definition_points_at_its_name(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    extracted = extract_text(path.name, text)
    definitions = [c for c in extracted.chunks if c.kind not in ("file", "block", "section") and c.part == 1]
    placed = [c for c in definitions if c.name_line]
    assert len(placed) == len(definitions), [c.qualified_name for c in definitions if not c.name_line]
    for c in placed:
        assert c.start_line <= c.name_line <= c.end_line, c.qualified_name
        assert lines[c.name_line - 1][c.name_column - 1:].startswith(c.name), (c.qualified_name, c.name_line,
                                                                               c.name_column)


def test_columns_count_characters_not_bytes():
    extracted = extract_text("uni.py", "# é\nx = 'ü'; \ndef ünïcode_name():\n    pass\n")
    chunk = next(c for c in extracted.chunks if c.kind == "function")
    assert (chunk.name_line, chunk.name_column) == (3, 5)
