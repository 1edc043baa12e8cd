"""Telling slash commands from text to send, and reading their arguments."""

from __future__ import annotations

import pytest

from threadline.core.slash_commands import (
    COMMANDS,
    CommandName,
    CommandProblem,
    PlainText,
    SlashCommand,
    export_request,
    help_text,
    looks_like_command,
    matching,
    model_request,
    parse,
    tangent_request,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/compact", SlashCommand(CommandName.COMPACT)),
        ("/compact keep the numbers", SlashCommand(CommandName.COMPACT, "keep the numbers")),
        ("/COMPACT  keep\nall figures  ", SlashCommand(CommandName.COMPACT, "keep\nall figures")),
        ("/clear", SlashCommand(CommandName.CLEAR)),
        ("/clear\n", SlashCommand(CommandName.CLEAR)),
        ("/tangent end bring", SlashCommand(CommandName.TANGENT, "end bring")),
        ("/checkpoint before refactor", SlashCommand(CommandName.CHECKPOINT, "before refactor")),
        ("/restore", SlashCommand(CommandName.RESTORE)),
        ("/model openai/gpt-4o-mini", SlashCommand(CommandName.MODEL, "openai/gpt-4o-mini")),
        ("/export json ~/chat.json", SlashCommand(CommandName.EXPORT, "json ~/chat.json")),
    ],
)
def test_commands_are_recognised_with_their_argument(text: str, expected: SlashCommand) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "hello /compact",
        "/usr/bin is where programs live",
        "/etc/hosts",
        "/5 of them",
        "/ maybe",
        "/.config is hidden",
        " /compact",  # not at the very start: the user typed around it
        "",
    ],
)
def test_text_that_only_starts_with_a_slash_is_sent_as_is(text: str) -> None:
    assert parse(text) == PlainText(text)
    assert not looks_like_command(text)


def test_a_double_slash_escapes_to_send_literally() -> None:
    assert parse("//usr is a folder") == PlainText("/usr is a folder")
    assert parse("//compact") == PlainText("/compact")


def test_an_unknown_command_is_refused_with_help_and_not_sent() -> None:
    parsed = parse("/compcat now")
    assert isinstance(parsed, CommandProblem)
    assert parsed.name == "compcat"
    assert parsed.message.startswith("Unknown command /compcat — type /help")
    assert "//" in parsed.message
    assert looks_like_command("/usr is a folder")  # a bare word: refused, // sends it


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("/clear everything", "takes no argument"),
        ("/help me", "takes no argument"),
        ("/checkpoint", "name"),
        ("/checkpoint a\nb", "one line"),
        ("/checkpoint " + "x" * 61, "at most 60"),  # the conversation's own limit (MAX_CHECKPOINT_NAME)
        ("/checkpoint __tangent_return__", "reserved"),
        ("/tangent start", "/tangent end"),
        ("/tangent end now", "/tangent end bring"),
    ],
)
def test_wrong_arguments_say_what_is_expected(text: str, words: str) -> None:
    parsed = parse(text)
    assert isinstance(parsed, CommandProblem), parsed
    assert words in parsed.message


def test_a_checkpoint_name_is_judged_as_the_conversation_keeps_it() -> None:
    """Inner runs of spaces count once, as ``Conversation.set_checkpoint`` keeps the name."""
    assert isinstance(parse("/checkpoint " + "x" * 60), SlashCommand)
    assert isinstance(parse("/checkpoint " + "x " * 29 + "     xx"), SlashCommand)  # 60 once trimmed


def test_tangent_arguments() -> None:
    assert not tangent_request("").end
    assert tangent_request("end").end and not tangent_request("end").bring_last_exchange
    assert tangent_request("END Bring").bring_last_exchange


def test_export_arguments() -> None:
    assert export_request("") == export_request("markdown")
    assert (export_request("").fmt, export_request("").path) == ("markdown", "")
    assert (export_request("json out/chat").fmt, export_request("json out/chat").path) == ("json", "out/chat")
    assert export_request("notes.json").fmt == "json"
    assert export_request("my notes.md").path == "my notes.md"
    assert export_request("markdown-branches x.md").fmt == "markdown-branches"


def test_model_arguments() -> None:
    assert (model_request("openai/gpt-4o").provider, model_request("openai/gpt-4o").model) == (
        "openai",
        "gpt-4o",
    )
    request = model_request("router/anthropic/claude-3")
    assert (request.provider, request.model) == ("router", "anthropic/claude-3")
    assert (model_request("gpt-4o").provider, model_request("gpt-4o").model) == ("", "gpt-4o")


def test_the_table_completes_by_prefix_and_lists_every_command_in_help() -> None:
    assert [s.name for s in matching("c")] == [
        CommandName.COMPACT,
        CommandName.CLEAR,
        CommandName.CHECKPOINT,
        CommandName.CONTEXT,
        CommandName.COMPARE,
    ]
    assert [s.name for s in matching("")] == [s.name for s in COMMANDS]
    assert matching("zz") == []
    assert {s.name for s in COMMANDS} == set(CommandName)
    listed = help_text()
    for spec in COMMANDS:
        assert spec.description and spec.usage in listed
