"""Conversation controls in core: what /clear, compaction, tangents and checkpoints do to the
tree and to what a request sends."""

from __future__ import annotations

import pytest

from threadline.core.compaction import NothingToCompactError, plan_compaction
from threadline.core.conversation import MAX_CHECKPOINT_NAME, Conversation
from threadline.core.messages import ImageBlock, MarkerType, Message, MessageKind
from threadline.core.request import after_clear, build_request, split_at_summary
from threadline.core.tree import TANGENT_CHECKPOINT, TreeError


def turn(conversation: Conversation, text: str, answer: str) -> tuple[Message, Message]:
    prompt = conversation.stage(text)
    reply = conversation.begin_reply()
    conversation.append_text(answer)
    conversation.finish_reply()
    return prompt, reply


def sent(conversation: Conversation) -> list[str]:
    return [m.text for m in build_request(conversation.path()).messages]


# -- clear --------------------------------------------------------------------------------------


def test_a_request_starts_after_the_latest_clear() -> None:
    c = Conversation("s")
    turn(c, "Q1", "A1")
    marker = c.clear_context()
    assert marker.kind is MessageKind.MARKER and marker.marker is not None
    assert marker.marker.type is MarkerType.CLEAR and marker.marker.value == "Context cleared"
    turn(c, "Q2", "A2")
    c.clear_context()
    turn(c, "Q3", "A3")
    assert sent(c) == ["Q3", "A3"]
    assert [m.text for m in c.path()][:2] == ["Q1", "A1"]  # nothing deleted


def test_a_summary_before_a_clear_is_not_sent() -> None:
    c = Conversation("s")
    _, a1 = turn(c, "Q1", "A1")
    turn(c, "Q2", "A2")
    c.add_summary("Summary of Q1", a1.id)
    c.clear_context()
    turn(c, "Q3", "A3")
    summary, body = split_at_summary(c.path())
    assert summary is None and [m.text for m in body] == ["Q3", "A3"]
    request = build_request(c.path(), system="Be brief.")
    assert request.system == "Be brief." and request.summary_id is None


def test_compaction_only_plans_after_the_clear() -> None:
    c = Conversation("s")
    turn(c, "Q1", "A1")
    turn(c, "Q2", "A2")
    c.clear_context()
    turn(c, "Q3", "A3")
    with pytest.raises(NothingToCompactError):
        plan_compaction(c.path(), keep_turns=1)  # only one turn after the clear
    turn(c, "Q4", "A4")
    plan = plan_compaction(c.path(), keep_turns=1)
    assert [m.text for m in plan.messages] == ["Q3", "A3"]


def test_after_clear_without_a_clear_is_the_whole_path() -> None:
    c = Conversation("s")
    turn(c, "Q1", "A1")
    assert list(after_clear(c.path())) == c.path()


# -- tangents -----------------------------------------------------------------------------------


def test_a_tangent_from_an_earlier_message_returns_to_where_the_main_line_was() -> None:
    c = Conversation("s")
    _, a1 = turn(c, "Q1", "A1")
    _, a2 = turn(c, "Q2", "A2")
    marker = c.start_tangent(a1.id)
    assert marker.marker is not None and marker.marker.type is MarkerType.TANGENT
    assert marker.marker.value == "Tangent" and marker.parent_id == a1.id
    assert c.tree.tangent_origin == a2.id and c.tree.in_tangent
    assert TANGENT_CHECKPOINT not in c.tree.named_checkpoints
    turn(c, "T1", "TA1")
    assert sent(c) == ["Q1", "A1", "T1", "TA1"]  # the main line's later turn is absent
    assert c.end_tangent() == []
    assert c.tree.active_leaf == a2.id and c.tree.tangent_origin is None
    assert sent(c) == ["Q1", "A1", "Q2", "A2"]
    assert any(m.text == "TA1" for m in c.tree)  # the tangent stays, browsable


def test_bringing_the_last_exchange_copies_its_text_only_and_marks_it() -> None:
    c = Conversation("s")
    _, a1 = turn(c, "Q1", "A1")
    c.start_tangent()
    turn(c, "T1", "TA1")
    image = ImageBlock("image/png", "aGVsbG8=")
    prompt = c.stage("T2", images=(image,))
    c.begin_reply()
    c.append_text("TA2")
    c.finish_reply()
    copies = c.end_tangent(bring_last_exchange=True)
    assert [m.text for m in copies] == ["T2", "TA2"]
    assert copies[0].parent_id == a1.id and c.tree.active_leaf == copies[1].id
    assert copies[0].images == ()
    assert copies[0].metadata is not None and copies[0].metadata.brought_from == prompt.id
    assert copies[1].metadata is not None and copies[1].metadata.brought_from
    assert sent(c) == ["Q1", "A1", "T2", "TA2"]


def test_a_tangent_without_a_finished_reply_brings_nothing() -> None:
    c = Conversation("s")
    _, a1 = turn(c, "Q1", "A1")
    c.start_tangent()
    c.stage("T1")
    c.cancel()
    assert c.end_tangent(bring_last_exchange=True) == []
    assert c.tree.active_leaf == a1.id


def test_tangents_refuse_what_does_not_apply() -> None:
    c = Conversation("s")
    with pytest.raises(TreeError, match="empty chat"):
        c.start_tangent()
    with pytest.raises(TreeError, match="not in a tangent"):
        c.end_tangent()
    turn(c, "Q1", "A1")
    with pytest.raises(TreeError, match="no longer in this chat"):
        c.start_tangent("gone")
    assert not c.tree.in_tangent
    c.start_tangent()
    before = len(c.tree)
    with pytest.raises(TreeError, match="already in a tangent"):
        c.start_tangent()
    assert len(c.tree) == before


# -- checkpoints --------------------------------------------------------------------------------


def test_checkpoints_are_named_listed_restored_and_removed() -> None:
    c = Conversation("s")
    _, a1 = turn(c, "Q1", "A1")
    assert c.set_checkpoint("  first   answer ") == a1.id
    turn(c, "Q2", "A2")
    assert c.tree.named_checkpoints == {"first answer": a1.id}
    _, a2 = c.path()[-2:]
    assert c.set_checkpoint("first answer ") == a2.id  # a name used again moves, as a tag set again
    assert c.tree.named_checkpoints == {"first answer": a2.id}
    c.set_checkpoint("first answer", a1.id)
    size = len(c.tree)
    assert c.restore_checkpoint("first answer") == a1.id
    assert c.tree.active_leaf == a1.id and len(c.tree) == size  # nothing deleted
    turn(c, "Q3", "A3")
    assert sent(c) == ["Q1", "A1", "Q3", "A3"]
    c.remove_checkpoint("first answer")
    assert c.tree.named_checkpoints == {}
    with pytest.raises(TreeError, match="no checkpoint"):
        c.restore_checkpoint("first answer")


@pytest.mark.parametrize(
    ("name", "refusal"),
    [
        ("", "needs a name"),
        ("   ", "needs a name"),
        ("x" * (MAX_CHECKPOINT_NAME + 1), "at most"),
        (TANGENT_CHECKPOINT, "reserved"),
    ],
)
def test_bad_checkpoint_names_are_refused(name: str, refusal: str) -> None:
    c = Conversation("s")
    turn(c, "Q1", "A1")
    with pytest.raises(TreeError, match=refusal):
        c.set_checkpoint(name)
    assert c.tree.named_checkpoints == {}


def test_a_checkpoint_needs_a_message() -> None:
    c = Conversation("s")
    with pytest.raises(TreeError, match="send a message first"):
        c.set_checkpoint("start")
    turn(c, "Q1", "A1")
    with pytest.raises(TreeError, match="no longer in this chat"):
        c.set_checkpoint("start", "gone")


def test_restoring_out_of_a_tangent_leaves_it_and_into_it_keeps_it() -> None:
    c = Conversation("s")
    _, a1 = turn(c, "Q1", "A1")
    c.set_checkpoint("main")
    c.start_tangent()
    _, ta1 = turn(c, "T1", "TA1")
    c.set_checkpoint("side")
    turn(c, "T2", "TA2")
    c.restore_checkpoint("side")
    assert c.tree.in_tangent and c.tree.active_leaf == ta1.id
    c.restore_checkpoint("main")
    assert not c.tree.in_tangent and c.tree.active_leaf == a1.id
    assert c.tree.named_checkpoints == {"main": a1.id, "side": ta1.id}


def answer_again(c: Conversation, reply: Message, text: str) -> Message:
    c.regenerate(reply.id)
    again = c.begin_reply()
    c.append_text(text)
    c.finish_reply()
    return again


def test_moving_out_of_a_tangent_by_a_version_or_the_branch_map_leaves_it() -> None:
    c = Conversation("s")
    q1, a1 = turn(c, "Q1", "A1")
    answer_again(c, a1, "A1 again")
    c.start_tangent()
    _, ta1 = turn(c, "T1", "TA1")
    answer_again(c, ta1, "TA1 again")
    c.switch_version(ta1.id, 0)  # a version switch inside the tangent keeps it
    assert c.tree.in_tangent and c.path()[-1].id == ta1.id
    c.switch_version(a1.id, 0)  # the main line's first reply: out of the tangent
    assert not c.tree.in_tangent and c.path()[-1].id == a1.id
    assert ta1.id in c.tree  # the tangent stays browsable

    c.set_active_leaf(ta1.id)  # back into it by the branch map: it is not reopened
    assert not c.tree.in_tangent
    c.set_active_leaf(a1.id)
    c.start_tangent()
    turn(c, "T2", "TA2")
    c.set_active_leaf(q1.id)  # the branch map, to a point above the tangent
    assert not c.tree.in_tangent and TANGENT_CHECKPOINT not in c.tree.checkpoints
