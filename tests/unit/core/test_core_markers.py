"""Markers: kept in history, the parent of the next prompt, never sent; and the agent a path pins."""

from __future__ import annotations

import pytest

from threadline.core.agent_json import agent_to_json
from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.conversation import Conversation
from threadline.core.messages import Marker, MarkerType, MessageKind
from threadline.core.request import build_request, check_well_formed
from threadline.core.transcript import transcript_markdown
from threadline.engine.agents import agent_marker, session_agent


def answered(c: Conversation, text: str) -> None:
    c.stage(text)
    c.begin_reply()
    c.append_text(f"re: {text}")
    c.finish_reply()


def test_a_marker_parents_the_next_prompt_and_is_never_sent() -> None:
    c = Conversation("s")
    answered(c, "one")
    marker = c.add_marker(Marker(MarkerType.AGENT, "Reviewer"))
    assert marker.kind is MessageKind.MARKER and not marker.is_user and not marker.is_assistant
    assert marker.text == "Agent: Reviewer" == marker.marker.label  # type: ignore[union-attr]
    prompt = c.stage("two")
    assert prompt.parent_id == marker.id
    request = build_request(c.path())
    assert check_well_formed(request.messages) == []
    assert [m.text for m in request.messages] == ["one", "re: one", "two"]
    assert all(marker.id not in m.source_ids for m in request.messages)


def test_editing_the_prompt_after_a_marker_keeps_it_under_the_marker() -> None:
    c = Conversation("s")
    marker = c.add_marker(Marker(MarkerType.AGENT, "Reviewer"))
    prompt = c.stage("first")
    c.cancel()
    edited = c.edit(prompt.id, "first, again")
    assert edited.parent_id == marker.id


def test_a_retry_below_a_marker_answers_it() -> None:
    c = Conversation("s")
    c.stage("question")
    c.fail("boom")
    marker = c.add_marker(Marker(MarkerType.AGENT, "Reviewer"))
    assert c.answer(marker.id) is marker
    request = build_request(c.path())
    assert [m.text for m in request.messages] == ["question"]


def test_the_transcript_shows_the_marker_as_a_divider() -> None:
    c = Conversation("s")
    c.add_marker(Marker(MarkerType.AGENT, "Default", detail="the agent Reviewer was deleted"))
    assert "*Agent: Default — the agent Reviewer was deleted*" in transcript_markdown(c.path())


def test_the_latest_agent_marker_on_the_path_pins_the_agents_settings() -> None:
    reviewer = AgentConfig(id="r", name="Reviewer", system_prompt="old prompt", temperature=0.2)
    c = Conversation("s")
    assert session_agent(c.path(), reviewer).agent is reviewer  # no marker: the agent as it is
    c.add_marker(agent_marker(reviewer))
    edited = AgentConfig(
        id="r",
        name="Reviewer",
        system_prompt="new prompt",
        approval_rules=(ApprovalRule("shell", Approval.ALLOW),),
    )
    state = session_agent(c.path(), edited)
    assert state.agent.system_prompt == "old prompt" and state.agent.temperature == 0.2
    assert state.update_available
    # "Always allow" is trust granted to the agent: its rules always apply
    assert state.agent.approval_rules == edited.approval_rules
    only_rules_changed = AgentConfig(
        id="r",
        name="Reviewer",
        system_prompt="old prompt",
        temperature=0.2,
        approval_rules=edited.approval_rules,
    )
    assert not session_agent(c.path(), only_rules_changed).update_available


@pytest.mark.expected_log_warnings("an agent marker's settings cannot be read")
def test_an_unreadable_snapshot_falls_back_to_the_agent() -> None:
    agent = AgentConfig(id="r", name="Reviewer", system_prompt="now")
    c = Conversation("s")
    broken = dict(agent_to_json(agent), temperature="hot")
    c.add_marker(Marker(MarkerType.AGENT, "Reviewer", settings=broken))
    assert session_agent(c.path(), agent).agent is agent
