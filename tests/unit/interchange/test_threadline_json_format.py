"""Threadline JSON: every field of a message and a session is written and read back; damaged
chats become problems naming them, never exceptions, and the other chats still come through."""

from __future__ import annotations

import copy
import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from threadline.core.messages import (
    ContextFile,
    ImageBlock,
    Marker,
    MarkerType,
    Message,
    MessageKind,
    MessageStatus,
    RequestMetadata,
    Role,
    ToolCall,
    ToolResult,
)
from threadline.core.reasoning import Reasoning
from threadline.core.session import SessionInfo
from threadline.core.sources import Source, SourceKind, SourceLocator
from threadline.interchange.model import ImportedConversation, ImportProblem, ImportSource
from threadline.interchange.threadline_json import (
    SESSION_FIELDS_LEFT_OUT,
    dumps,
    looks_like_threadline,
    parse_threadline,
    session_record,
)

WHEN = datetime(2025, 3, 4, 5, 6, 7, 891000, tzinfo=UTC)


def full_message(**changes: Any) -> Message:
    """A message whose every field holds a value different from its default."""
    message = Message(
        id="m-full",
        parent_id="m-root",
        role=Role.ASSISTANT,
        kind=MessageKind.TOOL_CALLS,
        text="let me look",
        images=(ImageBlock("image/png", "aGk=", "plot.png"),),
        context=(ContextFile("notes.txt", "some notes"),),
        tool_calls=(ToolCall("c1", "read_file", '{"path": "a"}'),),
        tool_results=(ToolResult("c1", "out", (ImageBlock("image/gif", "R0lG"),), True, "read_file"),),
        status=MessageStatus.INTERRUPTED,
        metadata=RequestMetadata(
            provider="p",
            model="m",
            request_id="r",
            started_at=WHEN,
            ended_at=WHEN,
            time_to_first_token_ms=12.5,
            input_tokens=3,
            output_tokens=4,
            stop_reason="tool_use",
            error="e",
        ),
        created_at=WHEN,
        summarised_through="m-root",
        marker=Marker(MarkerType.AGENT, "Reviewer", "was renamed", {"model": "qwen", "temperature": 0.2}),
        reasoning=(Reasoning("hm", signature="s", duration_ms=5.0), Reasoning(redacted_data="x")),
        sources=(
            Source(
                SourceKind.KNOWLEDGE, "handbook", SourceLocator("/d/manual.pdf", page=3), "p3", pinned=True
            ),
            Source(SourceKind.WEB, "web", SourceLocator(url="https://example.org"), "q", score=0.5),
        ),
    )
    return message.copy(**changes)


def root() -> Message:
    return Message.prompt("hello", id="m-root").copy(created_at=WHEN)


def full_session(**changes: Any) -> SessionInfo:
    info = SessionInfo(
        id="s-1",
        title="Plans",
        title_set_by_user=True,
        pinned=True,
        archived=True,
        folder="work",
        agent_id="coder",
        provider="local",
        model="qwen",
        active_leaf="m-full",
        preview="ignored",
        created_at=WHEN,
        updated_at=WHEN,
        checkpoints={"start": "m-root"},
    )
    return dataclasses.replace(info, **changes)


def one(data: object) -> ImportedConversation | ImportProblem:
    (result,) = list(parse_threadline(data))
    return result


def document(*sessions: dict[str, Any]) -> dict[str, Any]:
    return {"format": "threadline", "version": 1, "sessions": list(sessions)}


def test_every_message_field_is_written_with_a_value() -> None:
    record = session_record(full_session(), [root(), full_message()])
    written = record["messages"][1]
    names = {f.name for f in dataclasses.fields(Message)}
    assert set(written) == names, "a Message field is not exported"
    defaults = Message(id="x", parent_id=None, role=Role.USER, kind=MessageKind.PROMPT)
    for name in names - {"id", "parent_id", "role", "kind"}:
        assert getattr(full_message(), name) != getattr(defaults, name), (
            f"full_message leaves {name} at its default"
        )


def test_every_session_field_is_written() -> None:
    record = session_record(full_session(), [])
    expected = {f.name for f in dataclasses.fields(SessionInfo)} - SESSION_FIELDS_LEFT_OUT
    assert expected <= set(record), "a SessionInfo field is not exported"
    assert "preview" not in record


def test_a_whole_chat_comes_back_equal() -> None:
    text = dumps([(full_session(), [root(), full_message()])])
    data = json.loads(text)
    assert looks_like_threadline(data)
    result = one(data)
    assert isinstance(result, ImportedConversation)
    assert result.messages == (root(), full_message())
    assert result.source is ImportSource.THREADLINE
    assert (result.source_id, result.title, result.active_leaf) == ("s-1", "Plans", "m-full")
    assert (result.pinned, result.archived, result.agent_id, result.provider, result.model) == (
        True,
        True,
        "coder",
        "local",
        "qwen",
    )
    assert result.checkpoints == {"start": "m-root"}
    assert (result.created_at, result.updated_at) == (WHEN, WHEN)
    assert result.source_message_ids == {"m-root": "m-root", "m-full": "m-full"}


def test_no_secret_shaped_keys_are_written() -> None:
    text = dumps([(full_session(), [root(), full_message()])]).lower()
    for word in ("api_key", "password", "secret", 'token"', "headers", "env"):
        assert word not in text


def test_children_listed_before_their_parents_are_put_in_order() -> None:
    record = session_record(full_session(), [root(), full_message()])
    record["messages"].reverse()
    result = one(document(record))
    assert isinstance(result, ImportedConversation)
    assert [m.id for m in result.messages] == ["m-root", "m-full"]


def test_other_files_are_not_threadline() -> None:
    assert not looks_like_threadline([{"mapping": {}}])
    assert not looks_like_threadline({"format": "other", "sessions": []})
    assert not looks_like_threadline("threadline")


def good() -> dict[str, Any]:
    return session_record(full_session(), [root(), full_message()])


def broken(change: Any) -> dict[str, Any]:
    record = copy.deepcopy(good())
    change(record)
    return record


BROKEN = {
    "a message with a parent not in the chat": lambda r: r["messages"][1].update(parent_id="nowhere"),
    "a cycle": lambda r: r["messages"][0].update(parent_id="m-full"),
    "a message its own parent": lambda r: r["messages"][1].update(parent_id="m-full", id="m-full"),
    "a repeated message id": lambda r: r["messages"].append(dict(r["messages"][1])),
    "text that is a number": lambda r: r["messages"][0].update(text=5),
    "an unknown role": lambda r: r["messages"][0].update(role="system"),
    "an unknown status": lambda r: r["messages"][1].update(status="weird"),
    "a missing kind": lambda r: r["messages"][0].pop("kind"),
    "images that are not a list": lambda r: r["messages"][1].update(images={"a": 1}),
    "a tool call without a name": lambda r: r["messages"][1]["tool_calls"][0].pop("name"),
    "tokens as text": lambda r: r["messages"][1]["metadata"].update(input_tokens="3"),
    "a bad date": lambda r: r["messages"][0].update(created_at="yesterday"),
    "an active leaf not in the chat": lambda r: r.update(active_leaf="gone"),
    "a checkpoint not in the chat": lambda r: r.update(checkpoints={"x": "gone"}),
    "a summary of a missing message": lambda r: r["messages"][1].update(summarised_through="gone"),
    "messages not a list": lambda r: r.update(messages="none"),
    "pinned as text": lambda r: r.update(pinned="yes"),
    "an empty id": lambda r: r.update(id=""),
    "a missing id": lambda r: r.pop("id"),
    "deep nesting": lambda r: r["messages"][0].update(
        images=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
    ),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_damaged_chat_is_a_problem_with_its_title_and_the_rest_still_imports(name: str) -> None:
    other = session_record(full_session(id="s-2", title="Fine", active_leaf="m-root"), [root()])
    results = list(parse_threadline(document(broken(BROKEN[name]), other)))
    assert len(results) == 2
    problem, fine = results
    assert isinstance(problem, ImportProblem), name
    assert problem.title == "Plans"
    assert problem.reason.startswith("The chat is damaged")
    assert isinstance(fine, ImportedConversation) and fine.source_id == "s-2"


@pytest.mark.parametrize(
    "data",
    [
        {"format": "threadline", "sessions": []},
        {"format": "threadline", "version": "1", "sessions": []},
        {"format": "threadline", "version": 99, "sessions": []},
        {"format": "threadline", "version": 1, "sessions": {"a": 1}},
        {"format": "threadline", "version": 1, "sessions": [None, 3, "x", []]},
        ["not", "ours"],
    ],
)
def test_a_damaged_file_gives_problems_never_exceptions(data: object) -> None:
    results = list(parse_threadline(data))
    assert results and all(isinstance(r, ImportProblem) for r in results)
    assert all(r.title and r.reason for r in results if isinstance(r, ImportProblem))


def test_a_newer_format_says_to_update() -> None:
    problem = one({"format": "threadline", "version": 2, "sessions": []})
    assert isinstance(problem, ImportProblem) and "newer Threadline" in problem.reason


def test_a_chat_twice_in_one_file_is_read_once() -> None:
    results = list(parse_threadline(document(good(), good())))
    assert isinstance(results[0], ImportedConversation)
    assert isinstance(results[1], ImportProblem) and "twice" in results[1].reason


def test_unknown_keys_from_a_later_release_are_ignored() -> None:
    record = good()
    record["colour"] = "blue"
    record["messages"][0]["reactions"] = ["+1"]
    assert isinstance(one(document(record)), ImportedConversation)


def test_sticky_context_is_never_imported() -> None:
    """Hooks are commands: a file from elsewhere must not bring any in."""
    record = good()
    record["context"] = {"sources": [], "hooks": [{"command": "rm -rf ~", "timing": "every_prompt"}]}
    result = one(document(record))
    assert isinstance(result, ImportedConversation)
    assert "rm -rf" not in repr(result)
