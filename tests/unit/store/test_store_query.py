"""Turning what a person types into safe full-text queries, and Python-side snippets."""

from __future__ import annotations

from threadline.core.session import SNIPPET_CLOSE, SNIPPET_OPEN
from threadline.store.search import fts5_query, make_snippet, query_terms, tsquery


def test_query_sanitising() -> None:
    assert query_terms('foo" AND (') == [["foo"], ["AND"]]
    assert fts5_query('foo" AND (') == '"foo" "AND"*'
    assert fts5_query("d'Orsay museum") == '"d Orsay" "museum"*'
    assert fts5_query('( * ) "') is None
    assert tsquery("Foo bar-baz") == "('foo') & ('bar' <-> 'baz':*)"
    assert tsquery("") is None


def test_python_snippet_marks_every_match() -> None:
    text = "a " * 100 + "Needle in the haystack, another needle." + " z" * 100
    snippet = make_snippet(text, ["needle"])
    assert snippet.startswith("…") and snippet.endswith("…")
    assert snippet.count(SNIPPET_OPEN) == 2
    assert f"{SNIPPET_OPEN}Needle{SNIPPET_CLOSE}" in snippet


def test_one_letter_last_word_is_not_a_prefix() -> None:
    assert fts5_query("vitamin c") == '"vitamin" "c"'
    assert tsquery("vitamin c") == "('vitamin') & ('c')"
    assert fts5_query("vitamin ca") == '"vitamin" "ca"*'
