"""The keyword index's message templates, real SQLite FTS5 filled by a real indexing run."""

from __future__ import annotations

from conftest import keyword_indexed_files

from codesearch.filters import Filters

RAISE = 'def {name}(path):\n    raise OSError(f"frobnicator {{path}} could not be opened")\n'


def test_templates_holding_words_are_the_best_inside_the_filter(tmp_path):
    """A path filter picks among its own files' templates: the `limit` best of the whole
    repository may all lie outside it."""
    files = {f"other/open_{i}.py": RAISE.format(name=f"open_{i}") for i in range(4)}
    files["wanted/reader.py"] = ('def read(path):\n    raise OSError(f"the frobnicator {path} could not be opened '
                                 'for reading, the file being locked or missing")\n')
    index = keyword_indexed_files(tmp_path / "repo", files)
    try:
        keywords = index.catalog.keywords
        words = ["frobnicator", "opened"]
        assert len(keywords.templates_holding(words, Filters(), 10)) == 5
        found = keywords.templates_holding(words, Filters(path_glob="wanted/**"), 2)
        assert [index.catalog.files.chunks_by_ids([i])[i].path for i in found] == ["wanted/reader.py"]
    finally:
        index.close()
