"""A pasted error message with its placeholders filled in lands on the statement that produces it
(analysis/messages.py templates, stored by the indexer, matched by the searcher), in five
languages; a message no template produced is ranked as before."""

from __future__ import annotations

import pytest
from conftest import keyword_indexed_files

from codesearch.analysis.messages import GAP
from codesearch.indexing.indexer import Indexer
from codesearch.search.ranking import RankingOptions
from codesearch.search.requests import SearchRequest
from codesearch.search.searcher import Searcher

# each file: the raise site, and a function whose names and comments repeat the message's words
FILES = {
    "vocab.py": '''
def register(vocab, token):
    if token in vocab:
        raise ValueError(f"Token '{token}' was already in the vocabulary.")
    vocab.add(token)


def vocabulary_token_default(vocabulary, token="default"):
    """The default token of a vocabulary: the token already in the vocabulary, or the default."""
    token_default = vocabulary.get(token, "default")
    return token_default if token_default in vocabulary else "default token"
''',
    "cmd/find.go": '''package cmd

import "fmt"

func Find(name string, path string) (*Command, error) {
	if c := lookup(name); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("unknown command %q for %q", name, path)
}

// ServeAppCommand is the command named serve of the app: every command of the app for serve.
func ServeAppCommand(app string) string {
	serve := "serve"
	command := app + " " + serve
	return command
}
''',
    "src/view.ts": '''
export function lookup(name: string, root: string): View {
  const view = find(name, root);
  if (!view) {
    throw new Error(`Failed to lookup view "${name}" in views directory ${root}`);
  }
  return view;
}

// the index view in the views directory /srv/views: lookup of the index view
export function indexViewLookup(views: string[]): string {
  const index = views.find((view) => view === "index");
  return index ?? "srv/views/index";
}
''',
    "lua/fetch.lua": '''
local M = {}

function M.fetch(name)
  local ok, err = pcall(download, name)
  if not ok then
    error("Failed to fetch " .. name .. ": " .. err)
  end
end

-- lazy.nvim timeout: the timeout of lazy.nvim when a fetch of lazy.nvim times out
function M.lazy_nvim_timeout()
  local timeout = 30
  return timeout
end

return M
''',
    "src/Continuation.kt": '''
class Continuation {
    fun tryResume(proposedUpdate: Any?) {
        if (state != null) {
            throw IllegalStateException("Already resumed, but proposed with update $proposedUpdate")
        }
    }

    // a CompletedContinuation: the update of a continuation once completed
    fun completedContinuationUpdate(update: CompletedContinuation): CompletedContinuation = update
}
''',
}

PASTED = [
    ("ValueError: Token 'default' was already in the vocabulary.", "vocab.py", 4),
    ('unknown command "serve" for "app"', "cmd/find.go", 9),
    ('Error: Failed to lookup view "index" in views directory /srv/views', "src/view.ts", 5),
    ("Failed to fetch lazy.nvim: timeout", "lua/fetch.lua", 7),
    ("IllegalStateException: Already resumed, but proposed with update CompletedContinuation",
     "src/Continuation.kt", 5),
]


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    index = keyword_indexed_files(tmp_path_factory.mktemp("messages"), FILES)
    yield Searcher(index)
    index.close()


def top(searcher: Searcher, query: str, ranking: RankingOptions | None = None):
    answer = searcher.search(SearchRequest(query=query, mode="keyword", limit=5, explain=True, ranking=ranking))
    return answer.results


@pytest.mark.parametrize("query, path, line", PASTED)
def test_a_pasted_message_with_its_values_filled_in_finds_its_raise_site_first(searcher, query, path, line):
    first = top(searcher, query)[0]
    assert first.path == path and first.start_line <= line <= first.end_line
    assert any("word for word" in note for note in first.explain or ())


def test_without_templates_the_raise_sites_are_not_all_first(searcher):
    """What the templates add: phrases and words alone put a decoy first somewhere."""
    off = RankingOptions(message_templates=False)
    firsts = [top(searcher, query, off)[0] for query, _, _ in PASTED]
    assert any(not (r.path == path and r.start_line <= line <= r.end_line)
               for r, (_, path, line) in zip(firsts, PASTED))


@pytest.mark.parametrize("query", ["Token default vocabulary lookup failed: no such entry was registered",
                                   "where is the default token of a vocabulary"])
def test_a_query_no_template_produced_is_ranked_as_without_templates(searcher, query):
    with_templates = [(r.path, r.start_line) for r in top(searcher, query)]
    without = [(r.path, r.start_line) for r in top(searcher, query, RankingOptions(message_templates=False))]
    assert with_templates == without


def test_templates_follow_their_file_when_it_changes_or_goes(tmp_path):
    raising = 'def f():\n    raise KeyError("no entry named %s in the table")\n'
    index = keyword_indexed_files(tmp_path, {"m.py": raising})

    def stored() -> list[str]:
        ids = [row[0] for row in index.catalog.db.execute("SELECT id FROM chunks")]
        return sorted(index.catalog.keywords.templates(ids).values())

    try:
        assert stored() == [f"no entry named {GAP}in the table"]
        (tmp_path / "m.py").write_text('def f():\n    raise KeyError("the table holds no such row: %s")\n')
        Indexer(index).run(embed=False)
        assert stored() == [f"the table holds no such row: {GAP}"]
        (tmp_path / "m.py").unlink()
        Indexer(index).run(embed=False)
        assert index.catalog.db.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 0
    finally:
        index.close()
