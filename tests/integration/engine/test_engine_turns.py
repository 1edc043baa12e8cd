"""Turns end to end: the real engine, store and SDKs against the local replay server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from tests.integration.engine.helpers import failure, stored_path, turn
from tests.support.sse_server import (
    OPENAI_MALFORMED_EVENT,
    ReplayServer,
    ScriptedResponse,
    openai_auth_error,
    openai_context_length_error,
    openai_model_not_found,
    openai_rate_limited,
    openai_server_error,
    openai_text_stream,
    openai_tool_call_stream,
    sse_response,
)

from threadline.core.config import AgentConfig, Approval, ApprovalRule, ModelInfo
from threadline.core.messages import MessageKind, MessageStatus, Role
from threadline.core.request import ToolSpec
from threadline.core.turn import TurnState
from threadline.engine.approval import Decision
from threadline.engine.engine import Engine
from threadline.engine.events import ErrorAction, MessageAdded, RetryScheduled, TextDelta
from threadline.tools.registry import ToolOutput

pytestmark = pytest.mark.asyncio


def text_reply(*pieces: str, **options: float) -> ScriptedResponse:
    return sse_response(openai_text_stream(list(pieces)), **options)


async def test_reply_streams_and_every_step_is_stored(engine: Engine, replay_server: ReplayServer) -> None:
    replay_server.enqueue(text_reply("Hel", "lo ", "there"))
    session = await engine.sessions.new_session()
    events = await turn(engine, session.id, "Say hello")

    assert "".join(e.delta for e in events if isinstance(e, TextDelta)) == "Hello there"
    live = engine.sessions.live(session.id)
    assert live is not None and live.conversation.ready_for_input and live.conversation.staged is None
    path = await stored_path(engine.data_dir, session.id)
    assert [(m.kind, m.text) for m in path] == [
        (MessageKind.PROMPT, "Say hello"),
        (MessageKind.RESPONSE, "Hello there"),
    ]
    reply = path[-1]
    assert reply.status is MessageStatus.COMPLETE
    assert reply.metadata is not None
    assert (reply.metadata.provider, reply.metadata.model) == ("replay", "gpt-4o-mini")
    assert reply.metadata.output_tokens == 7 and reply.metadata.stop_reason == "end"
    assert reply.metadata.time_to_first_token_ms is not None
    sent = replay_server.requests[0].body
    assert sent["stream"] is True and sent["messages"][-1] == {"role": "user", "content": "Say hello"}
    info = await engine.store.get_session(session.id)
    assert info is not None and info.title == "Say hello"


FAULTS = {
    "401": ([openai_auth_error()], "authentication", ErrorAction.ADD_KEY, ""),
    "404 model": ([openai_model_not_found("gpt-4o-mini")], "model_not_found", ErrorAction.PICK_MODEL, ""),
    "stall mid-stream": (
        [sse_response(openai_text_stream(["part", "ial"]), stall_after=3, stall_for=30)],
        "timeout",
        ErrorAction.RETRY,
        "partial",
    ),
    "disconnect mid-stream": (
        [sse_response(openai_text_stream(["cut ", "short"]), disconnect_after=3)],
        None,
        ErrorAction.RETRY,
        "cut short",
    ),
    "malformed event": (
        [sse_response([*openai_text_stream(["ok"], done=False)[:2], OPENAI_MALFORMED_EVENT])],
        "malformed_stream",
        ErrorAction.RETRY,
        "ok",
    ),
    "truncated tool-call JSON": (
        [sse_response(openai_tool_call_stream([("call_1", "lookup", '{"q": "un')]))],
        "malformed_stream",
        ErrorAction.RETRY,
        "",
    ),
}


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_fault_keeps_prompt_and_partial_text_and_session_stays_usable(
    fault: str, engine: Engine, replay_server: ReplayServer
) -> None:
    responses, kind, action, partial = FAULTS[fault]
    replay_server.enqueue(*responses)
    session = await engine.sessions.new_session()
    events = await turn(engine, session.id, "Tell me something")

    failed = failure(events)
    assert failed is not None, f"{fault}: no error reported"
    if kind is not None:
        assert failed.error.kind == kind
    assert action in failed.error.actions
    assert "Traceback" not in failed.error.message and len(failed.error.message) > 20
    path = await stored_path(engine.data_dir, session.id)
    assert path[0].text == "Tell me something"
    assert path[-1].is_assistant and path[-1].status is MessageStatus.FAILED
    assert path[-1].text == partial
    assert path[-1].metadata is not None and path[-1].metadata.error == failed.error.message

    replay_server.enqueue(text_reply("Recovered"))
    events = await turn(engine, session.id, "Try again")
    assert failure(events) is None
    path = await stored_path(engine.data_dir, session.id)
    assert path[-1].text == "Recovered" and path[-1].status is MessageStatus.COMPLETE
    sent = replay_server.requests[-1].body["messages"]
    if partial:  # a failed reply with text is sent as the text it has
        assert sent == [
            {"role": "user", "content": "Tell me something"},
            {"role": "assistant", "content": partial},
            {"role": "user", "content": "Try again"},
        ]
    else:  # one without text is left out, and the two prompts are merged so roles alternate
        assert sent == [{"role": "user", "content": "Tell me something\n\nTry again"}]


async def test_transient_errors_are_retried_visibly(engine: Engine, replay_server: ReplayServer) -> None:
    replay_server.enqueue(openai_rate_limited(retry_after=0), openai_server_error(503), text_reply("Finally"))
    session = await engine.sessions.new_session()
    events = await turn(engine, session.id, "Hi")
    assert failure(events) is None
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert [r.attempt for r in retries] == [2, 3]  # the attempt about to be made
    path = await stored_path(engine.data_dir, session.id)
    assert path[-1].text == "Finally"
    assert len(replay_server.requests) == 3


async def test_cancel_mid_stream_keeps_partial_reply(engine: Engine, replay_server: ReplayServer) -> None:
    replay_server.enqueue(text_reply(*[f"w{i} " for i in range(200)], chunk_delay=0.02))
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    deltas: list[str] = []
    live.subscribe(lambda e: deltas.append(e.delta) if isinstance(e, TextDelta) else None)
    engine.turns.send(session.id, "Count slowly")
    while len(deltas) < 5:
        await asyncio.sleep(0.01)
    engine.turns.cancel(session.id)
    await engine.turns.wait_idle(session.id)

    assert live.conversation.state is TurnState.IDLE and live.conversation.staged is None
    path = await stored_path(engine.data_dir, session.id)
    reply = path[-1]
    assert reply.status is MessageStatus.CANCELLED
    assert reply.text == "".join(deltas) and reply.text.startswith("w0 w1 w2 w3 w4")
    assert len(reply.text) < len("".join(f"w{i} " for i in range(200)))


async def test_resume_continues_a_cancelled_reply_in_place(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(
        text_reply(*[f"w{i} " for i in range(100)], chunk_delay=0.02), text_reply("and the rest.")
    )
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    engine.turns.send(session.id, "Write")
    while live.conversation.reply is None or len(live.conversation.reply.text) < 6:
        await asyncio.sleep(0.01)
    engine.turns.cancel(session.id)
    await engine.turns.wait_idle(session.id)
    partial = live.conversation.path()[-1]
    before = partial.text

    engine.turns.resume(session.id, partial.id)
    await engine.turns.wait_idle(session.id)
    path = await stored_path(engine.data_dir, session.id)
    assert len(path) == 2 and path[-1].id == partial.id
    assert path[-1].text == before + "and the rest." and path[-1].status is MessageStatus.COMPLETE
    sent = replay_server.requests[-1].body["messages"]
    assert sent[1] == {"role": "assistant", "content": before}
    assert sent[2]["role"] == "user" and "Continue" in sent[2]["content"]


async def test_edit_regenerate_and_switch_versions(engine: Engine, replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        text_reply("First answer"), text_reply("Second answer"), text_reply("Edited answer")
    )
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "Question")
    live = engine.sessions.live(session.id)
    assert live is not None
    first_reply = live.conversation.path()[-1]

    engine.turns.regenerate(session.id, first_reply.id)
    await engine.turns.wait_idle(session.id)
    second = live.conversation.path()[-1]
    assert second.text == "Second answer" and live.conversation.tree.version(second.id).count == 2

    await engine.controls.switch_version(session.id, second.id, -1)
    assert live.conversation.path()[-1].text == "First answer"

    prompt = live.conversation.path()[0]
    engine.turns.edit_and_resend(session.id, prompt.id, "Better question")
    await engine.turns.wait_idle(session.id)
    path = await stored_path(engine.data_dir, session.id)
    assert [m.text for m in path] == ["Better question", "Edited answer"]
    tree = live.conversation.tree
    assert tree.version(path[0].id).index == 2 and tree.version(path[0].id).count == 2
    assert replay_server.requests[-1].body["messages"] == [{"role": "user", "content": "Better question"}]


class LookupTool:
    """A real tool object registered with the engine's registry."""

    spec = ToolSpec("lookup", "Look a word up", {"type": "object", "properties": {"q": {"type": "string"}}})

    def __init__(self) -> None:
        self.calls: list[dict[str, object]] = []

    async def call(self, arguments: dict[str, object]) -> ToolOutput:
        self.calls.append(arguments)
        return ToolOutput(json.dumps({"definition": f"{arguments['q']} means a long thread"}))


async def test_tool_round_runs_allowed_tool_and_sends_result(
    engine: Engine, replay_server: ReplayServer
) -> None:
    tool = LookupTool()
    engine.tools.register(tool)
    await engine.agents.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=("lookup",),
            approval_rules=(ApprovalRule("lookup", Approval.ALLOW),),
        )
    )
    replay_server.enqueue(
        sse_response(
            openai_tool_call_stream(
                [("call_1", "lookup", {"q": "threadline"})], text_pieces=["Let me check."]
            )
        ),
        text_reply("It means a long thread."),
    )
    session = await engine.sessions.new_session()
    events = await turn(engine, session.id, "What is a threadline?")
    assert failure(events) is None
    assert tool.calls == [{"q": "threadline"}]
    path = await stored_path(engine.data_dir, session.id)
    assert [m.kind for m in path] == [
        MessageKind.PROMPT,
        MessageKind.TOOL_CALLS,
        MessageKind.TOOL_RESULTS,
        MessageKind.RESPONSE,
    ]
    assert path[1].tool_calls[0].parsed_arguments() == {"q": "threadline"}
    assert path[2].tool_results[0].call_id == "call_1" and "long thread" in path[2].tool_results[0].text
    first, second = replay_server.requests[0].body, replay_server.requests[1].body
    assert first["tools"][0]["function"]["name"] == "lookup"
    tool_message = next(m for m in second["messages"] if m["role"] == "tool")
    assert tool_message["tool_call_id"] == "call_1" and "long thread" in tool_message["content"]


async def test_denied_tool_call_reaches_model_with_reason(
    engine: Engine, replay_server: ReplayServer
) -> None:
    tool = LookupTool()
    engine.tools.register(tool)
    await engine.agents.save_agent(AgentConfig("default", "Default", enabled_tools=("lookup",)))
    asked: list[str] = []

    async def deny(session_id: str, calls: tuple) -> list[Decision]:  # type: ignore[type-arg]
        asked.extend(c.name for c in calls)
        return [Decision(c.id, allow=False, reason="not on a Sunday") for c in calls]

    engine.turns.set_approval_handler(deny)
    replay_server.enqueue(
        sse_response(openai_tool_call_stream([("call_9", "lookup", {"q": "x"})])), text_reply("Understood.")
    )
    session = await engine.sessions.new_session()
    events = await turn(engine, session.id, "Look x up")
    assert failure(events) is None and asked == ["lookup"] and tool.calls == []
    path = await stored_path(engine.data_dir, session.id)
    assert path[2].kind is MessageKind.CANCELLED_TOOL_USES
    tool_message = next(m for m in replay_server.requests[1].body["messages"] if m["role"] == "tool")
    assert "not on a Sunday" in tool_message["content"]


async def test_always_allow_is_stored_with_the_agent(engine: Engine, replay_server: ReplayServer) -> None:
    engine.tools.register(LookupTool())
    await engine.agents.save_agent(AgentConfig("default", "Default", enabled_tools=("lookup",)))
    prompts: list[int] = []

    async def always(session_id: str, calls: tuple) -> list[Decision]:  # type: ignore[type-arg]
        prompts.append(len(calls))
        return [Decision(c.id, allow=True, always=True) for c in calls]

    engine.turns.set_approval_handler(always)
    replay_server.enqueue(
        sse_response(openai_tool_call_stream([("c1", "lookup", {"q": "a"})])),
        text_reply("one"),
        sse_response(openai_tool_call_stream([("c2", "lookup", {"q": "b"})])),
        text_reply("two"),
    )
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "first")
    await turn(engine, session.id, "second")
    assert prompts == [1]  # asked once, then the stored rule allowed it
    agent = await engine.agents.get_agent()
    assert agent.approval_for("lookup") is Approval.ALLOW


async def test_context_overflow_compacts_and_retries_once(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(text_reply("A1"), text_reply("A2"))
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "Q1")
    await turn(engine, session.id, "Q2")
    replay_server.enqueue(
        openai_context_length_error(), text_reply("Summary: Q1 and Q2 were asked."), text_reply("A3")
    )
    events = await turn(engine, session.id, "Q3")
    assert failure(events) is None
    path = await stored_path(engine.data_dir, session.id)
    kinds = [m.kind for m in path]
    assert kinds[-3:] == [MessageKind.PROMPT, MessageKind.SUMMARY, MessageKind.RESPONSE]
    assert path[-1].text == "A3"
    retried = replay_server.requests[-1].body["messages"]
    assert retried == [
        {
            "role": "system",
            "content": "Summary of the earlier part of this conversation:\nSummary: Q1 and Q2 were asked.",
        },
        {"role": "user", "content": "Q3"},
    ]
    assert any("Q1 and Q2 were asked" in str(m) for m in retried)
    summary_request = replay_server.requests[-2].body["messages"]
    assert any("Q1" in str(m) and "A2" in str(m) for m in summary_request)


async def test_no_provider_is_a_clear_error_and_keeps_the_prompt(tmp_path: Path) -> None:
    engine = await Engine.open(tmp_path / "empty")
    try:
        session = await engine.sessions.new_session()
        events = await turn(engine, session.id, "Anyone there?")
        failed = failure(events)
        assert failed is not None and failed.error.kind == "no_provider"
        assert ErrorAction.SETTINGS in failed.error.actions
        path = await stored_path(engine.data_dir, session.id)
        assert path[0].text == "Anyone there?"
    finally:
        await engine.aclose()


async def test_eight_sessions_stream_at_once_into_the_right_sessions(
    engine: Engine, replay_server: ReplayServer
) -> None:
    def responder(request):  # type: ignore[no-untyped-def]
        prompt = request.body["messages"][-1]["content"]
        tag = prompt.split()[-1]
        return sse_response(openai_text_stream([f"{tag}-{i} " for i in range(40)]), chunk_delay=0.005)

    replay_server.responder = responder
    sessions = [await engine.sessions.new_session() for _ in range(8)]
    for index, session in enumerate(sessions):
        await engine.sessions.open_session(session.id)
        engine.turns.send(session.id, f"stream for s{index}")
    await asyncio.wait_for(asyncio.gather(*(engine.turns.wait_idle(s.id) for s in sessions)), 30)
    assert replay_server.max_concurrent_streams >= 4
    for index, session in enumerate(sessions):
        path = await stored_path(engine.data_dir, session.id)
        assert path[-1].text == "".join(f"s{index}-{i} " for i in range(40))


async def test_two_sessions_switching_keep_nothing_staged(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """The bug that broke the original multi-session design: a stale staged prompt in a second copy.

    See docs/design.md §1."""
    replay_server.responder = lambda r: text_reply(f"re: {r.body['messages'][-1]['content']}")
    a, b = await engine.sessions.new_session(), await engine.sessions.new_session()
    await engine.sessions.open_session(a.id)
    await engine.sessions.open_session(b.id)
    for prompt in ("a1", "b1", "a2", "b2"):
        target = a if prompt.startswith("a") else b
        await turn(engine, target.id, prompt)
        for session in (a, b):
            live = engine.sessions.live(session.id)
            assert live is not None and live.conversation.ready_for_input and live.conversation.staged is None
    assert await engine.sessions.open_session(a.id) is engine.sessions.live(
        a.id
    )  # one live object per session
    for session, tag in ((a, "a"), (b, "b")):
        path = await stored_path(engine.data_dir, session.id)
        assert [m.text for m in path] == [f"{tag}1", f"re: {tag}1", f"{tag}2", f"re: {tag}2"]
        assert [m.role for m in path] == [Role.USER, Role.ASSISTANT] * 2


async def test_events_reach_subscribers_in_order(engine: Engine, replay_server: ReplayServer) -> None:
    replay_server.enqueue(text_reply("x"))
    session = await engine.sessions.new_session()
    events = await turn(engine, session.id, "hi")
    added = [e.message.kind for e in events if isinstance(e, MessageAdded)]
    assert added == [MessageKind.PROMPT, MessageKind.RESPONSE]


async def test_manual_compaction_stores_a_summary_used_by_later_requests(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(text_reply("A1"), text_reply("A2"), text_reply("A3"))
    session = await engine.sessions.new_session()
    for prompt in ("Q1", "Q2", "Q3"):
        await turn(engine, session.id, prompt)
    live = engine.sessions.live(session.id)
    assert live is not None
    replay_server.enqueue(text_reply("Q1 was asked and answered."))
    await engine.turns.compact(session.id, "keep it short")
    summary_prompt = replay_server.requests[-1].body["messages"][-1]["content"]
    assert "Q1" in summary_prompt and "keep it short" in summary_prompt and "Q3" not in summary_prompt
    path = live.conversation.path()
    assert path[-1].kind is MessageKind.SUMMARY and path[-1].text == "Q1 was asked and answered."

    replay_server.enqueue(text_reply("A4"))
    await turn(engine, session.id, "Q4")
    sent = replay_server.requests[-1].body["messages"]
    assert sent[0]["role"] == "system" and "Q1 was asked and answered." in sent[0]["content"]
    assert [m["content"] for m in sent[1:]] == ["Q2", "A2", "Q3", "A3", "Q4"]  # the last turns verbatim
    stored = await stored_path(engine.data_dir, session.id)
    assert [m.text for m in stored if m.kind is MessageKind.PROMPT] == [
        "Q1",
        "Q2",
        "Q3",
        "Q4",
    ]  # nothing lost


async def test_manual_compaction_of_a_short_chat_says_there_is_nothing_to_do(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(text_reply("A1"))
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "Q1")
    live = engine.sessions.live(session.id)
    assert live is not None
    events: list = []  # type: ignore[type-arg]
    live.subscribe(events.append)
    await engine.turns.compact(session.id)
    failed = failure(events)
    assert failed is not None and "nothing to compact" in failed.error.message.lower()
    assert len(replay_server.requests) == 1  # no request was wasted


async def test_anthropic_turn_with_tool_round(tmp_path: Path, replay_server: ReplayServer) -> None:
    from tests.support.engines import open_engine
    from tests.support.sse_server import anthropic_text_stream, anthropic_tool_use_stream

    from threadline.core.config import ProviderKind

    engine = await open_engine(tmp_path / "data", replay_server, ProviderKind.ANTHROPIC)
    try:
        tool = LookupTool()
        engine.tools.register(tool)
        await engine.agents.save_agent(
            AgentConfig(
                "default",
                "Default",
                system_prompt="Be brief.",
                enabled_tools=("lookup",),
                approval_rules=(ApprovalRule("look*", Approval.ALLOW),),
            )
        )
        replay_server.enqueue(
            sse_response(
                anthropic_tool_use_stream([("toolu_1", "lookup", {"q": "loom"})], text_pieces=["Checking."])
            ),
            sse_response(anthropic_text_stream(["A loom ", "weaves."])),
        )
        session = await engine.sessions.new_session()
        events = await turn(engine, session.id, "What is a loom?")
        assert failure(events) is None and tool.calls == [{"q": "loom"}]
        path = await stored_path(engine.data_dir, session.id)
        assert path[-1].text == "A loom weaves." and path[-1].metadata is not None
        assert path[-1].metadata.model == "claude-sonnet-4-5" and path[-1].metadata.output_tokens == 15
        second = replay_server.requests[1].body
        assert second["system"] == "Be brief."
        result_block = second["messages"][-1]["content"][0]
        assert result_block["type"] == "tool_result" and result_block["tool_use_id"] == "toolu_1"
        assert second["messages"][1]["content"][-1]["type"] == "tool_use"
    finally:
        await engine.aclose()


async def test_compacts_before_sending_when_near_the_context_window(
    engine: Engine, replay_server: ReplayServer
) -> None:
    long_answer = "word " * 2000  # ~2,500 tokens by the character estimate
    replay_server.enqueue(text_reply(long_answer), text_reply(long_answer))
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "Q1")
    await turn(engine, session.id, "Q2")
    engine.hub.remember_models("replay", [ModelInfo("gpt-4o-mini", context_window=4096 + 5000)])
    replay_server.enqueue(text_reply("Summary of Q1 and Q2."), text_reply("A3"))
    events = await turn(engine, session.id, "Q3")
    assert failure(events) is None
    path = await stored_path(engine.data_dir, session.id)
    assert [m.kind for m in path][-3:] == [MessageKind.PROMPT, MessageKind.SUMMARY, MessageKind.RESPONSE]
    assert "word word" not in str(replay_server.requests[-1].body["messages"])


async def test_empty_prompt_is_refused_before_anything_is_stored(engine: Engine) -> None:
    session = await engine.sessions.new_session()
    await engine.sessions.open_session(session.id)
    with pytest.raises(ValueError, match="nothing to send"):
        engine.turns.send(session.id, "   \n")
    assert await stored_path(engine.data_dir, session.id) == []


async def test_reply_after_automatic_compaction_can_be_regenerated(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(text_reply("A1"), text_reply("A2"))
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "Q1")
    await turn(engine, session.id, "Q2")
    replay_server.enqueue(
        openai_context_length_error(), text_reply("Summary."), text_reply("A3"), text_reply("A3 again")
    )
    await turn(engine, session.id, "Q3")
    live = engine.sessions.live(session.id)
    assert live is not None
    engine.turns.regenerate(session.id, live.conversation.path()[-1].id)
    await engine.turns.wait_idle(session.id)
    path = await stored_path(engine.data_dir, session.id)
    assert [m.kind for m in path][-3:] == [MessageKind.PROMPT, MessageKind.SUMMARY, MessageKind.RESPONSE]
    assert path[-1].text == "A3 again" and live.conversation.tree.version(path[-1].id).count == 2


async def test_early_failure_record_names_provider_and_model(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(openai_auth_error())
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "hello")
    path = await stored_path(engine.data_dir, session.id)
    assert path[-1].status is MessageStatus.FAILED and path[-1].metadata is not None
    assert (path[-1].metadata.provider, path[-1].metadata.model) == ("replay", "gpt-4o-mini")


async def test_sidebar_preview_follows_the_prompt_before_the_reply(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """A turn waiting (here: on a slow first byte) already shows its prompt in the session listing."""
    from threadline.engine.events import SessionUpdated

    replay_server.enqueue(text_reply("Hello!"), text_reply("late", first_byte_delay=60.0))
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "Hi")  # titled now: no automatic rename will refresh the listing
    updates: list[SessionUpdated] = []
    engine.sessions.subscribe_sessions(lambda e: updates.append(e) if isinstance(e, SessionUpdated) else None)
    engine.turns.send(session.id, "What is on the menu today?")
    for _ in range(3000):  # a condition, up to 30 s; the reply's first byte is a minute away
        if any(u.session.preview.startswith("What is on the menu") for u in updates):
            break
        await asyncio.sleep(0.01)
    assert engine.turns.running(session.id), "the preview must arrive while the reply is still pending"
    assert any(u.session.preview.startswith("What is on the menu") for u in updates)
    engine.turns.cancel(session.id)  # no need to wait for the slow reply
    await asyncio.wait_for(engine.turns.wait_idle(session.id), 30)


async def test_tool_definitions_count_against_the_context_window(
    engine: Engine, replay_server: ReplayServer
) -> None:
    """A window that holds the messages but not the messages plus the offered tools: compact first."""

    class Wordy(LookupTool):
        spec = ToolSpec("wordy", "d" * 8000, {"type": "object", "properties": {}})  # ~2,000 tokens

    engine.tools.register(Wordy())
    replay_server.enqueue(text_reply("A1 " * 200), text_reply("A2 " * 200))
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "Q1")
    await turn(engine, session.id, "Q2")
    # ~320 tokens of messages; 4,096 reserved for the reply; the window leaves 2,300 for the rest.
    engine.hub.remember_models("replay", [ModelInfo("gpt-4o-mini", context_window=4096 + 2300)])
    replay_server.enqueue(text_reply("A3"))
    await turn(engine, session.id, "Q3")
    assert [m.kind for m in await stored_path(engine.data_dir, session.id)][-1] is MessageKind.RESPONSE
    assert "tools" not in replay_server.requests[-1].body  # not offered: the window holds the messages

    await engine.agents.save_agent(AgentConfig("default", "Default", enabled_tools=("wordy",)))
    replay_server.enqueue(text_reply("Summary of Q1-Q3."), text_reply("A4"))
    events = await turn(engine, session.id, "Q4")
    assert failure(events) is None
    path = await stored_path(engine.data_dir, session.id)
    assert [m.kind for m in path][-3:] == [MessageKind.PROMPT, MessageKind.SUMMARY, MessageKind.RESPONSE]
    assert replay_server.requests[-1].body["tools"][0]["function"]["name"] == "wordy"
