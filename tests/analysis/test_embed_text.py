"""What the model sees of a chunk, and which chunks get no vector (embed_min_chars)."""

from __future__ import annotations

from conftest import extract_sample, extract_text

from codesearch.analysis.embed_text import embed_hash_of, embed_text, embed_text_of, text_hash, worth_embedding
from codesearch.api.types import embedded_share

SOURCE = '''\
class Account:
    def owner(self):
        return self._owner

    def balance(self):
        """The balance, in cents, after pending transfers."""
        return self._b

    def settle(self, transfers):
        for transfer in transfers:
            self._b += transfer.amount
            self.history.append(transfer)
        return self._b
'''


def test_short_undocumented_chunks_get_no_vector_and_the_rest_keep_theirs():
    chunks = {c.name: c for c in extract_text("account.py", SOURCE).chunks}
    hashes = {name: embed_hash_of("model:t128", c, 30, True, 60) for name, c in chunks.items()}
    assert hashes["owner"] is None  # a one-line accessor: its name says it all
    assert hashes["balance"] is not None  # as short, but documented
    assert hashes["settle"] == text_hash("model:t128", embed_text_of(chunks["settle"], 30, True))
    assert all(h is not None for name, h in hashes.items() if chunks[name].kind == "file")
    assert all(embed_hash_of("model:t128", c, 30, True, 0) for c in chunks.values())  # 0: every chunk


def test_a_file_always_gets_a_vector_whatever_its_size():
    assert worth_embedding("file", "", "x = 1", 60)
    assert not worth_embedding("block", "", "});", 60)
    assert not worth_embedding("method", "", "  def f(self):\n      return  self.x  ", 40)
    assert worth_embedding("method", "", "def f(self):\n    return " + "x" * 60, 60)


def test_the_embedded_share_counts_only_chunks_that_get_vectors():
    assert embedded_share(0, 0) == 1.0
    assert embedded_share(30, 0) == 1.0
    assert embedded_share(30, 10) == 0.75


def test_a_file_chunk_is_read_as_its_path_docstring_and_outline():
    """A file's vector carries its path and what it defines (its imports come last and are cut
    first), so a question about a module can find the file itself."""
    file_chunk = extract_sample("python", "inventory.py").chunks[0]
    text = embed_text_of(file_chunk, 4, False)
    lines = text.split("\n")
    assert lines[0] == "file inventory.py"
    assert lines[1] == "Inventory service: stores items and computes their total value."
    assert "import" not in text and "def " in text
    assert text.count("Inventory service") == 1  # the docstring once, not again as a field
    head, body = embed_text_of(file_chunk, 4, True).split("\n")
    assert head == "file inventory py"
    assert body.startswith("Inventory service stores items and computes their total value class Item def ")


def test_a_definition_is_read_as_kind_name_signature_docstring_and_body_start():
    text = embed_text("function", "pkg.load", "def load(path)", "Read it.", "def load(path):\n    x\n    y", 2, False)
    assert text == "function pkg.load\ndef load(path)\nRead it.\ndef load(path):\n    x"


def test_in_words_a_definition_is_read_without_punctuation_nor_what_its_body_repeats():
    """The model reads a bounded number of tokens: each bracket, colon or underscore is one, and
    the body's own signature and docstring were read just before."""
    body = 'def load_config(path: str) -> dict:\n    """Read the file at path."""\n    return json.loads(path)'
    text = embed_text("function", "pkg.load_config", "def load_config(path: str) -> dict", "Read the file at path.",
                      body, 30, True)
    assert text == ("function pkg load config\ndef load config path str dict\nRead the file at path\n"
                    "return json loads path")
    # a docstring that the body does not hold as it is leaves the body whole
    text = embed_text("method", "A.f", "", "Other words.", "f(x) { y(); }", 30, True)
    assert text == "method A f\nOther words\nf x y"
    assert embed_text("method", "Ünïcode.名前", "", "", "a→b", 30, True) == "method Ünïcode 名前\na b"
