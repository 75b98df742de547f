"""What the embedding model reads for a chunk."""

from __future__ import annotations

from conftest import extract_sample

from codesearch.analysis.embed_text import embed_text, embed_text_of


def test_a_file_chunk_is_read_as_its_path_docstring_and_outline():
    """A file's vector carries its path and what it defines (its imports come last and are cut
    first), so a question about a module can find the file itself."""
    file_chunk = extract_sample("python", "inventory.py").chunks[0]
    text = embed_text_of(file_chunk, body_lines=4)
    lines = text.split("\n")
    assert lines[0] == "file inventory.py"
    assert lines[1] == "Inventory service: stores items and computes their total value."
    assert "import" not in text and "def " in text
    assert text.count("Inventory service") == 1  # the docstring once, not again as a field


def test_a_definition_is_read_as_kind_name_signature_docstring_and_body_start():
    text = embed_text("function", "pkg.load", "def load(path)", "Read it.", "def load(path):\n    x\n    y", 2)
    assert text == "function pkg.load\ndef load(path)\nRead it.\ndef load(path):\n    x"
