"""Approval through the engine: policy by name, wildcard and shell arguments; trust; deny; interrupt.

The clicked-through dialogs are the UI's; here the ``ApprovalHandler`` the UI will
install is played by a coroutine, and every outcome is checked in the store and in
what the model is sent next.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from tests.integration.engine.helpers import stored_path
from tests.integration.tools.conftest import faulty_server
from tests.integration.tools.tool_turns import (
    failure,
    run_turn,
    sent_tool_results,
    text_reply,
    tool_call_reply,
)
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer

from threadline.core.config import AgentConfig, Approval, ApprovalRule, ProviderKind
from threadline.core.messages import CANCELLED_RESULT_TEXT, STOPPED_RESULT_TEXT, MessageKind, ToolCall
from threadline.core.turn import TurnState
from threadline.engine.approval import NOBODY_TO_ASK, POLICY_DENIED, Decision
from threadline.engine.engine import Engine
from threadline.engine.events import TurnStateChanged

pytestmark = pytest.mark.asyncio
OPENAI = ProviderKind.OPENAI


class Asker:
    """The UI's approval prompt, scripted: answers by policy name, records what it was shown."""

    def __init__(self, engine: Engine, answers: dict[str, Decision | str]) -> None:
        self.engine = engine
        self.answers = answers
        self.asked: list[ToolCall] = []
        self.previews: dict[str, str | None] = {}

    async def __call__(self, session_id: str, calls: tuple[ToolCall, ...]) -> list[Decision]:
        decisions = []
        for call in calls:
            self.asked.append(call)
            self.previews[call.id] = self.engine.tools.preview(call)
            answer = self.answers.get(call.name, "deny")
            if isinstance(answer, Decision):
                decisions.append(Decision(call.id, answer.allow, answer.always, answer.reason))
            else:
                decisions.append(
                    Decision(call.id, allow=answer in ("allow", "always"), always=answer == "always")
                )
        return decisions


def args(**values: object) -> dict[str, object]:
    return dict(values)


async def test_allow_deny_ask_by_name_and_wildcard(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    await engine.tool_servers.save_server(faulty_server())
    await engine.agents.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=("list_directory", "read_file", "search_files", "faulty/*"),
            allowed_folders=(str(folder),),
            approval_rules=(
                ApprovalRule("read_file", Approval.DENY),
                ApprovalRule("faulty/pid", Approval.DENY),
                ApprovalRule("faulty/*", Approval.ALLOW),
                ApprovalRule("list_*", Approval.ALLOW),
            ),
        )
    )
    asker = Asker(engine, {"search_files": "allow"})
    engine.turns.set_approval_handler(asker)
    replay_server.enqueue(
        tool_call_reply(
            OPENAI,
            [
                ("c1", "list_directory", args()),
                ("c2", "read_file", args(path="a.txt")),
                ("c3", "search_files", args(query="alpha")),
                ("c4", "faulty__echo", args(text="wild")),
                ("c5", "faulty__pid", args()),
            ],
        ),
        text_reply(OPENAI, "ok"),
    )
    session = await engine.sessions.new_session()
    assert failure(await run_turn(engine, session.id, "go")) is None
    assert [c.name for c in asker.asked] == ["search_files"]  # only "ask" reached the user
    sent = sent_tool_results(replay_server, 1)
    assert "a.txt" in sent["c1"][0]
    assert POLICY_DENIED in sent["c2"][0] and POLICY_DENIED in sent["c5"][0]
    assert "a.txt:1: alpha" in sent["c3"][0]
    assert sent["c4"][0] == "echo: wild"


async def test_shell_argument_rules_and_trust(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    """``shell`` + ``echo safe*`` → allow; others ask; the default and wildcards do not trust shell."""
    folder = tmp_path / "work"
    folder.mkdir()
    await engine.agents.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=("shell", "write_file"),
            allowed_folders=(str(folder),),
            default_approval=Approval.ALLOW,
            approval_rules=(
                ApprovalRule("shell", Approval.DENY, argument_pattern="rm *"),
                ApprovalRule("shell", Approval.ALLOW, argument_pattern="echo safe*"),
                ApprovalRule("*", Approval.ALLOW),
            ),
        )
    )
    replay_server.enqueue(
        tool_call_reply(
            OPENAI,
            [
                ("s1", "shell", args(command="echo safe and sound")),
                ("s2", "shell", args(command="echo other > made.txt")),
                ("s3", "shell", args(command="rm -rf /tmp/nothing")),
                ("w1", "write_file", args(path="x.txt", content="x")),
            ],
        ),
        text_reply(OPENAI, "ok"),
    )
    session = await engine.sessions.new_session()  # no approval handler: "ask" means refused
    assert failure(await run_turn(engine, session.id, "go")) is None
    sent = sent_tool_results(replay_server, 1)
    assert "safe and sound" in sent["s1"][0] and "[exit code 0]" in sent["s1"][0]
    assert NOBODY_TO_ASK in sent["s2"][0] and not (folder / "made.txt").exists()
    assert POLICY_DENIED in sent["s3"][0]
    assert NOBODY_TO_ASK in sent["w1"][0] and not (folder / "x.txt").exists()


async def test_always_allow_is_stored_and_survives_a_restart(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data_dir, folder = tmp_path / "data", tmp_path / "work"
    folder.mkdir()
    engine = await open_engine(data_dir, replay_server)
    await engine.tool_servers.save_server(faulty_server())
    await engine.agents.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=("shell", "faulty/*"),
            allowed_folders=(str(folder),),
        )
    )
    first = Asker(engine, {"shell": "always", "faulty/echo": "always"})
    engine.turns.set_approval_handler(first)
    replay_server.enqueue(
        tool_call_reply(
            OPENAI,
            [("a1", "shell", args(command="echo [trusted] *")), ("a2", "faulty__echo", args(text="1"))],
        ),
        text_reply(OPENAI, "ok"),
    )
    session = await engine.sessions.new_session()
    assert failure(await run_turn(engine, session.id, "first")) is None
    assert [c.name for c in first.asked] == ["shell", "faulty/echo"]
    rules = (await engine.agents.get_agent()).approval_rules
    assert ApprovalRule("faulty/echo", Approval.ALLOW) in rules
    assert any(r.pattern == "shell" and r.argument_pattern for r in rules)  # this command only
    await engine.aclose()

    engine = await open_engine(data_dir, replay_server)  # a restart: new engine, same data dir
    try:
        second = Asker(engine, {"shell": "deny"})
        engine.turns.set_approval_handler(second)
        replay_server.enqueue(
            tool_call_reply(
                OPENAI,
                [
                    ("b1", "shell", args(command="echo [trusted] *")),
                    ("b2", "faulty__echo", args(text="2")),
                    ("b3", "shell", args(command="echo [trusted] and more")),
                ],
            ),
            text_reply(OPENAI, "ok"),
        )
        assert failure(await run_turn(engine, session.id, "second")) is None
        assert [c.id for c in second.asked] == ["b3"]  # the trusted command and tool ran unasked
        sent = sent_tool_results(replay_server, 3)
        assert "[trusted] *" in sent["b1"][0] and sent["b2"][0] == "echo: 2"
        assert CANCELLED_RESULT_TEXT in sent["b3"][0]
    finally:
        await engine.aclose()


async def test_deny_with_a_reason_reaches_an_anthropic_model(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    kind = ProviderKind.ANTHROPIC
    engine = await open_engine(tmp_path / "data", replay_server, kind)
    try:
        await engine.tool_servers.save_server(faulty_server())
        await engine.agents.save_agent(AgentConfig("default", "Default", enabled_tools=("faulty/*",)))
        asker = Asker(engine, {"faulty/echo": Decision("", allow=False, reason="not in production")})
        engine.turns.set_approval_handler(asker)
        replay_server.enqueue(
            tool_call_reply(kind, [("toolu_1", "faulty__echo", args(text="x"))]), text_reply(kind, "Fine.")
        )
        session = await engine.sessions.new_session()
        assert failure(await run_turn(engine, session.id, "echo x")) is None
        path = await stored_path(engine.data_dir, session.id)
        assert path[2].kind is MessageKind.CANCELLED_TOOL_USES
        text, is_error = sent_tool_results(replay_server, 1)["toolu_1"]
        assert "not in production" in text and is_error
    finally:
        await engine.aclose()


async def test_write_file_approval_shows_a_diff(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.md").write_text("one\ntwo\n")
    await engine.agents.save_agent(
        AgentConfig("default", "Default", enabled_tools=("write_file",), allowed_folders=(str(folder),))
    )
    asker = Asker(engine, {"write_file": "allow"})
    engine.turns.set_approval_handler(asker)
    replay_server.enqueue(
        tool_call_reply(OPENAI, [("w1", "write_file", args(path="notes.md", content="one\nthree\n"))]),
        text_reply(OPENAI, "Written."),
    )
    session = await engine.sessions.new_session()
    assert failure(await run_turn(engine, session.id, "edit")) is None
    diff = asker.previews["w1"]
    assert diff is not None and "-two\n" in diff and "+three\n" in diff and "a/notes.md" in diff
    assert (folder / "notes.md").read_text() == "one\nthree\n"


async def wait_for_state(events: list[object], state: TurnState, timeout: float = 20) -> None:
    async def poll() -> None:
        while not any(isinstance(e, TurnStateChanged) and e.state is state for e in events):
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


async def test_interrupt_while_tools_run_gives_cancelled_results(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    await engine.tool_servers.save_server(faulty_server())
    await engine.agents.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=("shell", "faulty/*"),
            allowed_folders=(str(folder),),
            approval_rules=(ApprovalRule("shell", Approval.ALLOW), ApprovalRule("faulty/*", Approval.ALLOW)),
        )
    )
    replay_server.enqueue(
        tool_call_reply(
            OPENAI,
            [
                ("i1", "faulty__echo", args(text="done first")),
                ("i2", "shell", args(command="echo started > started.txt; sleep 30; echo late > late.txt")),
                ("i3", "faulty__hang", args()),
            ],
        )
    )
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    events: list[object] = []
    live.subscribe(events.append)
    engine.turns.send(session.id, "run them")
    await wait_for_state(events, TurnState.RUNNING_TOOLS)
    for _ in range(600):  # a condition, up to 30 s
        if (folder / "started.txt").exists():
            break
        await asyncio.sleep(0.05)
    engine.turns.cancel(session.id)
    await asyncio.wait_for(engine.turns.wait_idle(session.id), 20)

    path = await stored_path(engine.data_dir, session.id)
    assert path[-1].kind is MessageKind.CANCELLED_TOOL_USES
    results = {r.call_id: r for r in path[-1].tool_results}
    assert results["i1"].text == "echo: done first"  # what ran before the stop is kept
    assert results["i2"].is_error and results["i3"].is_error
    await asyncio.sleep(0.5)
    assert not (folder / "late.txt").exists()  # the command's process group was killed

    replay_server.enqueue(
        tool_call_reply(OPENAI, [("j1", "faulty__echo", args(text="after"))]), text_reply(OPENAI, "Back.")
    )
    assert failure(await run_turn(engine, session.id, "again")) is None
    sent = sent_tool_results(replay_server, 1)
    assert sent["i1"][0] == "echo: done first"
    assert STOPPED_RESULT_TEXT in sent["i2"][0]  # it ran and was killed: the model is told so
    assert CANCELLED_RESULT_TEXT in sent["i3"][0]  # never started
    assert sent_tool_results(replay_server, 2)["j1"][0] == "echo: after"  # the MCP server survived
    json.dumps(sent)
