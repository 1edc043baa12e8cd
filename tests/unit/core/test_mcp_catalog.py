"""``core.mcp_catalog``: the ``/server:prompt`` command line, URI templates and resource names."""

from __future__ import annotations

import pytest

from threadline.core.mcp_catalog import (
    PromptArgument,
    PromptInfo,
    command_text,
    expand_template,
    missing_arguments,
    parse_prompt_command,
    parse_resource_ref,
    template_variables,
)
from threadline.core.slash_commands import PlainText, parse

PROMPT = PromptInfo(
    "everything", "args-prompt", arguments=(PromptArgument("city", required=True), PromptArgument("state"))
)


def test_a_prompt_command_is_its_server_prompt_and_name_value_words() -> None:
    command = parse_prompt_command('/everything:args-prompt city="New York" state=NY')
    assert command is not None
    assert (command.server, command.prompt, command.arguments, command.problem) == (
        "everything",
        "args-prompt",
        {"city": "New York", "state": "NY"},
        "",
    )
    assert parse_prompt_command("/everything:simple-prompt").arguments == {}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "text", ["/usr/bin is a folder", "/compact", "hello /a:b", "/a:", "//a:b", "/a__b:c"]
)
def test_text_that_is_not_a_prompt_command_is_left_alone(text: str) -> None:
    assert parse_prompt_command(text) is None


def test_a_prompt_command_is_plain_text_to_the_slash_parser() -> None:
    """So that a /server:prompt of no configured server is sent as written, as before."""
    assert parse("/everything:args-prompt city=Lyon") == PlainText("/everything:args-prompt city=Lyon")


def test_words_that_are_not_name_value_are_a_problem() -> None:
    command = parse_prompt_command("/everything:args-prompt Lyon")
    assert command is not None and "“Lyon” is not name=value" in command.problem
    unclosed = parse_prompt_command('/everything:args-prompt city="Lyon')
    assert unclosed is not None and "could not be read" in unclosed.problem


def test_missing_arguments_and_the_command_line_back() -> None:
    assert missing_arguments(PROMPT, {"state": "TX"}) == ["city"]
    assert missing_arguments(PROMPT, {"city": " "}) == ["city"]
    text = command_text(PROMPT, {"city": "New York", "state": ""})
    assert text == "/everything:args-prompt city='New York'"
    assert parse_prompt_command(text).arguments == {"city": "New York"}  # type: ignore[union-attr]
    assert PROMPT.usage == "/everything:args-prompt city=… [state=…]"


def test_uri_templates_are_filled_in() -> None:
    assert template_variables("demo://resource/dynamic/text/{resourceId}") == ["resourceId"]
    assert expand_template("demo://text/{resourceId}", {"resourceId": "a b/c"}) == "demo://text/a%20b%2Fc"
    assert expand_template("file:///{+path}", {"path": "a b/c"}) == "file:///a%20b/c"
    assert template_variables("https://x/search{?q,lang}") == ["q", "lang"]
    assert expand_template("https://x/search{?q,lang}", {"q": "mcp"}) == "https://x/search?q=mcp"
    assert expand_template("https://x{/path}", {"path": "a"}) == "https://x/a"


def test_a_resource_reference_is_server_colon_uri() -> None:
    assert parse_resource_ref("everything:demo://x/y") == ("everything", "demo://x/y")
    with pytest.raises(ValueError, match="is not NAME:URI"):
        parse_resource_ref("everything")
