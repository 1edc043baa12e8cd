"""``threadline ask`` answers an MCP server's questions on the terminal, or declines with one line."""

from __future__ import annotations

import asyncio
import io

import pytest

from threadline.cli.mcp_person import TerminalPerson
from threadline.tools.mcp.oauth import SignInError
from threadline.tools.mcp.person import Answer, FormRequest, UrlRequest

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "default": "Ada"},
        "seats": {"type": "integer", "description": "How many seats"},
        "window": {"type": "boolean", "default": False},
        "course": {"type": "string", "enum": ["starter", "main", "dessert"]},
        "note": {"type": "string"},
    },
    "required": ["seats", "course"],
}
FORM = FormRequest("asking", "Who is the table for?", SCHEMA)


def _person(typed: str, *, interactive: bool = True) -> tuple[TerminalPerson, io.StringIO, list[str]]:
    out = io.StringIO()
    opened: list[str] = []
    person = TerminalPerson(
        interactive=interactive, input=io.StringIO(typed), out=out, open_url=opened.append
    )
    return person, out, opened


def test_a_form_is_asked_field_by_field_with_defaults_and_types_checked() -> None:
    person, out, _ = _person("\nfour\n4\ny\nsoup\nmain\n\n")
    answer = asyncio.run(person.answer_form(FORM))
    assert answer == Answer("accept", {"name": "Ada", "seats": 4, "window": True, "course": "main"})
    text = out.getvalue()
    assert "MCP server asking asks: Who is the table for?" in text
    assert "a whole number" in text and "one of: starter, main, dessert" in text
    assert "seats (required) (integer)" in text and "How many seats" in text


def test_a_dash_declines_and_the_end_of_input_cancels() -> None:
    person, _, _ = _person("\n-\n")
    assert asyncio.run(person.answer_form(FORM)) == Answer("decline")
    person, _, _ = _person("")
    assert asyncio.run(person.answer_form(FORM)) == Answer("cancel")


def test_without_a_terminal_each_question_is_declined_with_one_line() -> None:
    person, out, opened = _person("4\n", interactive=False)
    assert asyncio.run(person.answer_form(FORM)) == Answer("decline")
    url = UrlRequest("asking", "Pay on the provider's page.", "https://pay.example.com/checkout/42")
    assert asyncio.run(person.answer_url(url)) == Answer("decline")
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and all("declined (no terminal to answer on)" in line for line in lines)
    assert "pay.example.com" in lines[1] and opened == []
    with pytest.raises(SignInError, match="threadline mcp login asking"):
        asyncio.run(person.open_sign_in("asking", "https://auth.example.com/authorize"))


def test_a_url_is_opened_only_with_consent() -> None:
    url = UrlRequest("asking", "Pay on the provider's page.", "https://pay.example.com/checkout/42")
    person, out, opened = _person("n\n")
    assert asyncio.run(person.answer_url(url)) == Answer("decline") and opened == []
    assert "a page on pay.example.com" in out.getvalue()
    person, _, opened = _person("y\n")
    assert asyncio.run(person.answer_url(url)) == Answer("accept") and opened == [url.url]
