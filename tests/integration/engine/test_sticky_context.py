"""Sticky context end to end: what the replay server received proves what was sent.

Real engine, real files in a temporary folder, real hook subprocesses, both APIs.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from tests.integration.engine.helpers import failure, turn
from tests.support.engines import open_engine
from tests.support.sse_server import (
    ReplayServer,
    ScriptedResponse,
    anthropic_text_stream,
    openai_text_stream,
    sse_response,
)

from threadline.core.config import AgentConfig, Approval, ApprovalRule, ModelInfo, ProviderKind
from threadline.core.gathered_context import GatheredContext
from threadline.core.messages import MessageStatus
from threadline.core.sticky import ContextHook, ContextSource, HookTiming, StickyContext
from threadline.engine.engine import Engine
from threadline.engine.events import ContextGathered, ConversationEvent
from threadline.engine.sticky_context import DEFAULT_WINDOW_SETTING
from threadline.engine.sticky_sources import MAX_FILE_BYTES

pytestmark = pytest.mark.asyncio


def reply(kind: ProviderKind, text: str = "ok") -> ScriptedResponse:
    if kind is ProviderKind.ANTHROPIC:
        return sse_response(anthropic_text_stream([text], model="claude-replay"))
    return sse_response(openai_text_stream([text]))


def system_sent(server: ReplayServer, index: int = -1) -> str:
    """The system text of a request as it went over the wire (either API's shape)."""
    body = server.requests[index].body
    if "system" in body:  # Anthropic
        system = body["system"]
        return system if isinstance(system, str) else "".join(block["text"] for block in system)
    first = body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


def gathered(events: list[ConversationEvent]) -> GatheredContext:
    found = [e.gathered for e in events if isinstance(e, ContextGathered)]
    assert found, "no ContextGathered event"
    return found[-1]


async def with_session_context(engine: Engine, context: StickyContext) -> str:
    session = await engine.sessions.new_session()
    await engine.sessions.set_session_context(session.id, context)
    return session.id


@pytest_asyncio.fixture(params=[ProviderKind.OPENAI, ProviderKind.ANTHROPIC], ids=["openai", "anthropic"])
async def any_engine(
    request: Any, tmp_path: Path, replay_server: ReplayServer
) -> AsyncIterator[tuple[Engine, ProviderKind]]:
    kind: ProviderKind = request.param
    engine = await open_engine(tmp_path / "data", replay_server, kind)
    yield engine, kind
    await engine.aclose()


async def test_a_file_edited_between_turns_is_sent_as_it_is_now(
    any_engine: tuple[Engine, ProviderKind], replay_server: ReplayServer, tmp_path: Path
) -> None:
    engine, kind = any_engine
    notes = tmp_path / "notes.md"
    notes.write_text("The launch is on Tuesday.\n")
    session_id = await with_session_context(engine, StickyContext(sources=(ContextSource(str(notes)),)))

    replay_server.enqueue(reply(kind))
    events = await turn(engine, session_id, "When is the launch?")
    assert failure(events) is None
    first = system_sent(replay_server)
    assert f'<file path="{notes}">' in first and "The launch is on Tuesday." in first
    assert [p.label for p in gathered(events).pieces] == [str(notes)]

    notes.write_text("The launch moved to Friday.\n")
    replay_server.enqueue(reply(kind))
    await turn(engine, session_id, "And now?")
    second = system_sent(replay_server)
    assert "The launch moved to Friday." in second and "Tuesday" not in second
    # Derived per request, never stored as history: the stored path is the two prompts and replies.
    stored = (await engine.store.load_tree(session_id)).path()
    assert all("Friday" not in m.text and "Tuesday" not in m.text for m in stored)


async def test_agent_and_session_context_both_go_with_the_system_prompt(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    style = tmp_path / "style.md"
    style.write_text("Answer in one line.")
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "a.py").write_text("A = 1\n")
    (src / "pkg" / "b.txt").write_text("not python\n")
    agent = await engine.agents.get_agent()
    await engine.agents.save_agent(
        replace(
            agent,
            system_prompt="You are terse.",
            context=StickyContext(sources=(ContextSource(str(style)),)),
        )
    )
    session_id = await with_session_context(
        engine, StickyContext(sources=(ContextSource("pkg/**/*.py", base=str(src)),))
    )
    replay_server.enqueue(reply(ProviderKind.OPENAI))
    events = await turn(engine, session_id, "Hi")
    system = system_sent(replay_server)
    assert system.startswith("You are terse.")
    assert "Answer in one line." in system and "A = 1" in system and "not python" not in system
    assert system.index("Answer in one line.") < system.index("A = 1")  # the agent's first
    assert [p.origin.value for p in gathered(events).pieces] == ["agent", "session"]


async def test_hook_output_is_sent_and_a_session_start_hook_runs_once(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    context = StickyContext(
        hooks=(
            ContextHook("echo branch-main-42", timing=HookTiming.EVERY_PROMPT, name="Branch"),
            ContextHook(f"echo run >> {runs}; echo started-once", timing=HookTiming.SESSION_START),
        )
    )
    session_id = await with_session_context(engine, context)
    for prompt in ("one", "two"):
        replay_server.enqueue(reply(ProviderKind.OPENAI))
        events = await turn(engine, session_id, prompt)
        system = system_sent(replay_server)
        assert '<hook command="echo branch-main-42">\nbranch-main-42\n</hook>' in system
        assert "started-once" in system  # kept for the session, sent with every request
        assert gathered(events).problems == ()
    assert runs.read_text() == "run\n"


async def test_over_budget_files_are_left_out_whole_and_named(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    engine.hub.remember_models("replay", [ModelInfo("gpt-4o-mini", context_window=10_000)])
    agent = await engine.agents.get_agent()
    await engine.agents.save_agent(replace(agent, context_share=0.1))  # 1,000 tokens for sticky context
    small = tmp_path / "small.md"
    small.write_text("small-file-text\n")
    big = tmp_path / "big.md"
    big.write_text("big-file-start " + "x" * 6000)  # ≈1,500 tokens
    after = tmp_path / "after.md"
    after.write_text("after-text\n")
    session_id = await with_session_context(
        engine, StickyContext(sources=tuple(ContextSource(str(p)) for p in (small, big, after)))
    )
    replay_server.enqueue(reply(ProviderKind.OPENAI))
    events = await turn(engine, session_id, "Hi")
    assert failure(events) is None
    system = system_sent(replay_server)
    assert "small-file-text" in system and "after-text" in system  # a smaller one after still fits
    assert "big-file-start" not in system and "xxxx" not in system  # left out whole, never cut
    result = gathered(events)
    assert (result.window_tokens, result.budget_tokens, result.window_known) == (10_000, 1000, True)
    assert [o.label for o in result.left_out] == [str(big)]
    assert "over budget" in result.left_out[0].reason and "1,000" in result.left_out[0].reason


async def test_an_unknown_window_uses_the_assumed_window_setting(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    await engine.settings.set_setting(DEFAULT_WINDOW_SETTING, 400)
    notes = tmp_path / "notes.md"
    notes.write_text("z" * 2000)  # ≈500 tokens: more than 75 % of 400
    session_id = await with_session_context(engine, StickyContext(sources=(ContextSource(str(notes)),)))
    await engine.sessions.set_session_model(session_id, "replay", "model-nobody-lists")
    replay_server.enqueue(reply(ProviderKind.OPENAI))
    events = await turn(engine, session_id, "Hi")
    result = gathered(events)
    assert (result.window_tokens, result.budget_tokens, result.window_known) == (400, 300, False)
    assert [o.label for o in result.left_out] == [str(notes)]
    assert "zzzz" not in system_sent(replay_server)


async def test_a_hanging_hook_is_stopped_reported_and_the_turn_goes_on(
    engine: Engine, replay_server: ReplayServer
) -> None:
    context = StickyContext(
        hooks=(ContextHook("sleep 60", timeout=1, name="Slow"), ContextHook("echo fine-hook"))
    )
    session_id = await with_session_context(engine, context)
    replay_server.enqueue(reply(ProviderKind.OPENAI, "answered"))
    events = await turn(engine, session_id, "Hi", timeout=60)
    assert failure(events) is None
    live = engine.sessions.live(session_id)
    assert live is not None and live.conversation.path()[-1].text == "answered"
    result = gathered(events)
    assert [(p.label, p.reason) for p in result.problems] == [
        ("Hook: Slow", "did not finish within 1 s and was stopped")
    ]
    assert "fine-hook" in system_sent(replay_server)
    assert live.last_context == result  # the meter reads it without running hooks again


async def test_a_failing_hook_and_a_denied_one_are_reported(
    engine: Engine, replay_server: ReplayServer
) -> None:
    agent = await engine.agents.get_agent()
    await engine.agents.save_agent(
        replace(agent, approval_rules=(ApprovalRule("shell", Approval.DENY, "rm *"),))
    )
    context = StickyContext(hooks=(ContextHook("echo oops >&2; exit 3"), ContextHook("rm -rf /tmp/nothing")))
    session_id = await with_session_context(engine, context)
    replay_server.enqueue(reply(ProviderKind.OPENAI))
    events = await turn(engine, session_id, "Hi")
    assert failure(events) is None
    reasons = [p.reason for p in gathered(events).problems]
    assert reasons == [
        "failed with exit code 3: oops",
        "not run: this agent's rules deny this command for the shell tool",
    ]


async def test_a_file_that_disappears_is_flagged_and_the_turn_goes_on(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("notes-text")
    session_id = await with_session_context(engine, StickyContext(sources=(ContextSource(str(notes)),)))
    replay_server.enqueue(reply(ProviderKind.OPENAI))
    await turn(engine, session_id, "one")
    notes.unlink()
    replay_server.enqueue(reply(ProviderKind.OPENAI, "still here"))
    events = await turn(engine, session_id, "two")
    assert failure(events) is None
    assert "notes-text" not in system_sent(replay_server)
    result = gathered(events)
    assert [(p.label, p.reason.split(":")[0]) for p in result.problems] == [(str(notes), "missing")]
    live = engine.sessions.live(session_id)
    assert live is not None and live.conversation.path()[-1].status is MessageStatus.COMPLETE


async def test_binary_oversized_and_unmatched_sources_are_refused_with_the_reason(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "huge.log").write_text("y" * (MAX_FILE_BYTES + 1))
    (tmp_path / "good.md").write_text("good-text")
    sources = tuple(
        ContextSource(p) for p in ("image.png", "latin1.txt", "huge.log", "good.md", "*.nothing", "gone.md")
    )
    session_id = await with_session_context(
        engine, StickyContext(sources=tuple(replace(s, base=str(tmp_path)) for s in sources))
    )
    replay_server.enqueue(reply(ProviderKind.OPENAI))
    events = await turn(engine, session_id, "Hi")
    system = system_sent(replay_server)
    assert "good-text" in system and "PNG" not in system and "yyyy" not in system
    reasons = {p.label.rsplit("/", 1)[-1]: p.reason for p in gathered(events).problems}
    assert reasons["image.png"] == "refused: a binary file (it contains NUL bytes)"
    assert reasons["latin1.txt"] == "refused: not UTF-8 text (a binary file?)"
    assert reasons["huge.log"] == (
        f"refused: {MAX_FILE_BYTES + 1:,} bytes, more than the 256 KB a context file may have"
    )
    assert reasons["*.nothing"] == "the pattern matches no file"
    assert reasons["gone.md"].startswith("missing")


async def test_stop_during_a_hook_ends_it_at_once(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    pid_file = tmp_path / "hook.pid"
    hook = ContextHook(f"echo $$ > {pid_file}; exec sleep 120", timeout=300)
    session_id = await with_session_context(engine, StickyContext(hooks=(hook,)))
    await engine.sessions.open_session(session_id)
    engine.turns.send(session_id, "Hi")
    for _ in range(3000):  # the hook has started
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.01)
    pid = int(pid_file.read_text())
    engine.turns.cancel(session_id)
    await asyncio.wait_for(engine.turns.wait_idle(session_id), 30)
    assert replay_server.requests == []  # nothing was sent
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_the_session_context_is_stored_with_the_session(engine: Engine, tmp_path: Path) -> None:
    context = StickyContext(
        sources=(ContextSource("~/notes.md"),), hooks=(ContextHook("date", HookTiming.SESSION_START),)
    )
    session = await engine.sessions.new_session()
    info = await engine.sessions.set_session_context(session.id, context)
    assert info.context == context
    stored = await engine.store.get_session(session.id)
    assert stored is not None and stored.context == context
    agent: AgentConfig = await engine.agents.get_agent()
    assert agent.context == StickyContext()  # the agent's own is untouched


async def test_the_budget_leaves_room_for_the_reply_on_a_small_window(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    """75 % of 6,000 tokens would crowd out the 4,096 reserved for the reply: the file is left out instead."""
    engine.hub.remember_models("replay", [ModelInfo("gpt-4o-mini", context_window=6000)])
    notes = tmp_path / "notes.md"
    notes.write_text("w" * 12_000)  # ≈3,000 tokens: under 75 % of the window, over the room left
    session_id = await with_session_context(engine, StickyContext(sources=(ContextSource(str(notes)),)))
    replay_server.enqueue(reply(ProviderKind.OPENAI, "fits"))
    events = await turn(engine, session_id, "Hi")
    assert failure(events) is None
    result = gathered(events)
    assert result.budget_tokens < 6000 - 4096 and [o.label for o in result.left_out] == [str(notes)]
    assert "wwww" not in system_sent(replay_server)
