"""A server's questions in the middle of a tool call (elicitation) reach the person, and its
``instructions`` are kept: a real stdio server (the SDK's MCPServer, ``servers/asking_server.py``).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from tests.support.waiting import until

from threadline.tools.mcp.client import McpConnection
from threadline.tools.mcp.config import McpServerConfig
from threadline.tools.mcp.person import Answer, DefaultsPerson, FormRequest, UrlRequest

pytestmark = pytest.mark.asyncio

ASKING_SERVER = Path(__file__).parent / "servers" / "asking_server.py"


def _config(**extra: float) -> McpServerConfig:
    return McpServerConfig("asking", command=sys.executable, args=(str(ASKING_SERVER),), **extra)  # type: ignore[arg-type]


class Recorder(DefaultsPerson):
    """Answers forms with ``values`` (over the defaults) and records what it was asked."""

    def __init__(self, values: dict[str, object] | None = None, action: str = "accept") -> None:
        super().__init__()
        self.values = values or {}
        self.action = action
        self.forms: list[FormRequest] = []
        self.urls: list[UrlRequest] = []

    async def answer_form(self, request: FormRequest) -> Answer:
        self.forms.append(request)
        if self.action != "accept":
            return Answer(self.action)  # type: ignore[arg-type]
        return Answer("accept", {**request.defaults(), **self.values})  # type: ignore[dict-item]

    async def answer_url(self, request: UrlRequest) -> Answer:
        self.urls.append(request)
        return await super().answer_url(request)


async def _call(connection: McpConnection, tool: str) -> dict[str, object]:
    output = await connection.call(tool, {})
    assert not output.is_error, output.text
    result: dict[str, object] = json.loads(output.text)
    return result


async def test_a_form_question_reaches_the_person_and_the_answer_goes_back() -> None:
    person = Recorder({"seats": 4})
    connection = McpConnection(_config(), person=person)
    try:
        await connection.start()
        assert connection.instructions == "Book tables with `book`; `pay` takes the payment."
        assert connection.state().protocol_version == "2025-11-25"
        result = await _call(connection, "book")
    finally:
        await connection.stop()
    assert result == {
        "action": "accept",
        "data": {"name": "Ada", "seats": 4, "window": False, "course": "main"},
    }
    (form,) = person.forms
    assert form.server == "asking" and form.message == "Who is the table for?"
    assert form.required() == {"seats"}
    assert form.properties()["course"]["enum"] == ["starter", "main", "dessert"]
    assert form.defaults() == {"name": "Ada", "window": False, "course": "main"}


async def test_declining_and_a_url_question() -> None:
    person = Recorder(action="decline")
    connection = McpConnection(_config(), person=person)
    try:
        await connection.start()
        assert await _call(connection, "book") == {"action": "decline", "data": None}
        assert await _call(connection, "pay") == {"action": "accept"}
    finally:
        await connection.stop()
    (url,) = person.urls
    assert url.host == "pay.example.com" and url.elicitation_id == "pay-42"
    assert person.opened == ["https://pay.example.com/checkout/42"]


async def test_with_nobody_to_answer_the_question_is_declined() -> None:
    connection = McpConnection(_config(), person=None)
    try:
        await connection.start()
        assert await _call(connection, "book") == {"action": "decline", "data": None}
    finally:
        await connection.stop()


class SlowPerson(Recorder):
    """Takes longer to answer than the call's whole time limit."""

    def __init__(self, think: float) -> None:
        super().__init__({"seats": 2})
        self.think = think

    async def answer_form(self, request: FormRequest) -> Answer:
        start = time.monotonic()
        await until(lambda: time.monotonic() - start > self.think, "the person thinking")
        return await super().answer_form(request)


async def test_the_call_time_limit_stops_while_the_person_answers() -> None:
    connection = McpConnection(_config(call_timeout=5), person=SlowPerson(think=11))
    try:
        await connection.start()
        result = await _call(connection, "book")
    finally:
        await connection.stop()
    assert result["action"] == "accept"
