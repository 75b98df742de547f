"""Message templates (analysis/messages.py): string literals read as the patterns of the messages
they produce, and pasted messages matched against them with their placeholders filled in."""

from __future__ import annotations

import pytest

from codesearch.analysis.messages import (
    GAP,
    RECORD,
    best_coverage,
    chunk_templates,
    coverage,
    messages_of,
    templates_of_text,
)
from codesearch.model import Chunk


def templates(source: str) -> list[str]:
    return templates_of_text(source)


@pytest.mark.parametrize("source, expected", [
    ('raise ValueError(f"Token \'{token}\' was already in the vocabulary.")',
     f"Token '{GAP}' was already in the vocabulary."),
    ('return fmt.Errorf("unknown command %q for %q%s", args[0], path, hint)', f"unknown command {GAP}for {GAP}"),
    ('throw new Error(`Failed to lookup view "${name}" in views ${dirs}`);',
     f'Failed to lookup view "{GAP}" in views {GAP}'),
    ('error("Failed to fetch " .. name .. ": " .. err)', f"Failed to fetch {GAP}: {GAP}"),
    ('throw IllegalStateException("Already resumed, but proposed with update $proposedUpdate")',
     f"Already resumed, but proposed with update {GAP}"),
    ('raise ArgumentError, "#{inspect(plug)} plug must implement call/2"', f"{GAP}plug must implement call/2"),
    ('fatalError("Cannot decode \\(type) from \\"\\(value)\\"")', f'Cannot decode {GAP}from "{GAP}"'),
    ('throw new IllegalArgumentException("Expected " + expected\n        + " but was " + actual);',
     f"Expected {GAP}but was {GAP}"),
    ('msg = ("first half of a message "\n       "and its second half")',
     f"first half of a message {GAP}and its second half"),
])
def test_a_literal_and_the_literals_joined_to_it_make_one_template(source, expected):
    assert templates(source) == [expected]


@pytest.mark.parametrize("source", [
    'import "fmt"',  # one word
    'x = "%s: %s" % (a, b)',  # no fixed words
    '# don\'t say it\'s an error message here',  # a comment
    '"""A docstring of several words."""',  # documentation, not a message
    "fn f<'a>(x: &'a str) -> &'a str",  # lifetimes
    'keywords = ["serde", "serialization", "encoding"]',  # words, none side by side
    'raise TypeError("Parameter" + name + "type")',
])
def test_what_is_not_a_message_makes_no_template(source):
    assert templates(source) == []


def test_statements_on_separate_lines_make_separate_templates():
    source = 'raise KeyError("no such key in the table")\nlog.warning("retrying the request later")'
    assert templates(source) == ["no such key in the table", "retrying the request later"]


def test_a_literal_belongs_to_the_innermost_chunk_that_holds_its_line():
    def chunk(kind: str, start: int, end: int, text: str) -> Chunk:
        return Chunk(id=kind, parent_id=None, path="m.py", language="python", kind=kind, name=kind, qualified_name=kind,
                     signature="", docstring="", start_line=start, end_line=end, content_hash="", header="",
                     text=text)
    method = '    def f(self):\n        raise ValueError("the value is out of range")'
    outer = f'class C:\n    NAME = "a constant of the class"\n{method}'
    found = chunk_templates([chunk("class", 1, 4, outer), chunk("method", 3, 4, method),
                             chunk("file", 1, 4, "class C")])
    assert found == ["a constant of the class", "the value is out of range", ""]


def test_documents_and_data_hold_no_messages():
    def chunk(language: str) -> Chunk:
        return Chunk(id=language, parent_id=None, path="f", language=language, kind="block", name="b",
                     qualified_name="b", signature="", docstring="", start_line=1, end_line=1, content_hash="",
                     header="", text='description = "A generic serialization framework for the language"')
    assert chunk_templates([chunk("toml"), chunk("markdown"), chunk("python")]) == [
        "", "", "A generic serialization framework for the language"]


def test_words_found_one_by_one_are_no_match():
    assert coverage("parameter type coercion and value validation", f"Parameter{GAP}type{GAP}") == 0


@pytest.mark.parametrize("query, messages", [
    ("ValueError: Token 'x' was already in the vocabulary.",
     ("token x was already in the vocabulary", "valueerror token x was already in the vocabulary")),
    ("** (ArgumentError) localhost plug must implement call/2",
     ("localhost plug must implement call 2", "argumenterror localhost plug must implement call 2")),
    ("ERROR: could not match ok line", ("could not match ok line", "error could not match ok line")),
    ("Cannot wait on self", ("cannot wait on self",)),
    ("Failed to fetch lazy.nvim: timeout", ("failed to fetch lazy nvim timeout",)),
])
def test_a_pasted_line_is_matched_with_and_without_the_type_in_front(query, messages):
    assert messages_of(query) == messages


def test_placeholders_match_the_values_filled_in_and_runs_keep_their_order():
    template = f"Token '{GAP}' was already in the vocabulary."
    share = coverage(messages_of("ValueError: Token 'default' was already in the vocabulary.")[0], template)
    assert 0.85 < share < 1  # the value filled in counts half
    assert coverage("the vocabulary was already in token", template) < share
    assert coverage("token a was never seen", template) == 0  # under half of the template


def test_a_value_where_a_placeholder_stands_counts_less_against_a_match_than_other_text():
    template = f"Expected {GAP}but was {GAP}"
    filled = coverage("expected default but was itemsmain", template)
    assert filled > 0.5
    assert coverage("expected default but was itemsmain and much more text", f"Expected {GAP}but was") < filled
    assert coverage("foo expected default but was itemsmain", template) < filled


def test_a_short_run_matches_whole_words_only():
    assert coverage("the format of the value is wrong", f"the value {GAP}for {GAP}is wrong") == \
        coverage("the format of the value is wrong", f"the value {GAP}is wrong")


def test_a_chunk_is_matched_by_its_best_template():
    text = RECORD.join([f"retrying {GAP} in {GAP} seconds", f"unknown command {GAP}for {GAP}"])
    assert best_coverage(messages_of("unknown command 'serve' for 'app'"), text) > 0.6
    assert best_coverage(messages_of("nothing alike at all here"), text) == 0
