"""Packed history: settled messages kept in flat buffers read back equal, and a tree that
packs answers every query as the same tree unpacked does (core/packed_history.py,
core/id_positions.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from threadline.core.id_positions import IdPositions
from threadline.core.messages import (
    ASSISTANT_KINDS,
    ContextFile,
    Marker,
    MarkerType,
    Message,
    MessageKind,
    MessageStatus,
    RequestMetadata,
    Role,
    ToolCall,
    text_shape,
)
from threadline.core.packed_history import PackedMessages, packable
from threadline.core.pricing import Price
from threadline.core.reasoning import Reasoning
from threadline.core.tree import ConversationTree
from threadline.core.usage import reply_usage, usage_of_reply

# Any text a model or a person can produce, lone surrogates (which decoded JSON can hold)
# and texts past the small-object limit included.
texts = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec=None), max_size=40),
    st.text(min_size=480, max_size=700),
    st.sampled_from(["", "\ud800 lone", "é" * 300, "🙂" * 200]),
)
times = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC))
counts = st.one_of(st.none(), st.integers(min_value=0, max_value=2**62))
metadata = st.builds(
    RequestMetadata,
    provider=st.sampled_from(["", "openai", "local"]),
    model=st.sampled_from(["", "gpt-x", "llama"]),
    request_id=st.text(max_size=30),
    started_at=st.one_of(st.none(), times),
    ended_at=st.one_of(st.none(), times),
    time_to_first_token_ms=st.one_of(st.none(), st.floats(allow_nan=False)),
    input_tokens=counts,
    output_tokens=counts,
    stop_reason=st.sampled_from(["", "stop", "length"]),
    error=st.text(max_size=20),
    edited=st.booleans(),
    brought_from=st.text(max_size=10),
)
plain_messages = st.builds(
    Message,
    id=st.uuids().map(lambda u: u.hex),
    parent_id=st.one_of(st.none(), st.uuids().map(lambda u: u.hex)),
    role=st.sampled_from(Role),
    kind=st.sampled_from(MessageKind),
    text=texts,
    status=st.sampled_from([s for s in MessageStatus if s is not MessageStatus.STREAMING]),
    metadata=st.one_of(st.none(), metadata),
    created_at=times,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(plain_messages, max_size=30, unique_by=lambda m: m.id))
def test_a_packed_message_reads_back_equal(messages: list[Message]) -> None:
    packed = PackedMessages()
    for message in messages:
        assert packable(message)
        packed.add(message)
    assert len(packed) == len(messages)
    for message in messages:
        back = packed.message(message.id)
        assert back == message
        assert back is not message
        assert type(back.created_at) is datetime and back.created_at.tzinfo is UTC
        assert packed.parent_id(message.id) == message.parent_id


def test_what_cannot_be_packed_exactly_stays_an_object() -> None:
    base = Message.reply(parent_id="p", text="t", status=MessageStatus.COMPLETE)
    assert packable(base)
    refused = [
        base.copy(status=MessageStatus.STREAMING),
        base.copy(tool_calls=(ToolCall("c", "tool", "{}"),)),
        base.copy(reasoning=(Reasoning(text="hm"),)),
        base.copy(context=(ContextFile(name="a.txt", text="x"),)),
        base.copy(marker=Marker(MarkerType.CLEAR, "Fresh context")),
        base.copy(summarised_through="x"),
        base.copy(created_at=datetime(2026, 1, 1)),  # naive: packing would have to pick a zone
        base.copy(created_at=datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=2)))),
        base.copy(metadata=RequestMetadata(time_to_first_token_ms=120)),  # int, would come back 120.0
        base.copy(metadata=RequestMetadata(time_to_first_token_ms=float("nan"))),
        base.copy(metadata=RequestMetadata(input_tokens=-1)),
        base.copy(metadata=RequestMetadata(started_at=datetime(2026, 1, 1))),
    ]
    for message in refused:
        assert not packable(message), message


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 60)), max_size=300))
def test_id_positions_answer_as_a_dict_does(steps: list[tuple[bool, int]]) -> None:
    table = IdPositions()
    model: dict[str, int] = {}
    for position, (adding, n) in enumerate(steps):
        key = f"id-{n}"
        if adding and key not in model:
            table.add(key, position)
            model[key] = position
        elif not adding:
            table.discard(key)
            model.pop(key, None)
        assert len(table) == len(model)
    for n in range(61):
        key = f"id-{n}"
        assert table.get(key) == model.get(key, -1)
        assert (key in table) == (key in model)


def test_id_positions_from_a_list_keep_each_first_place() -> None:
    ids = [f"m{i}" for i in range(5000)] + ["m7"]
    table = IdPositions(ids)
    assert len(table) == 5000
    assert [table.get(f"m{i}") for i in (0, 7, 4999)] == [0, 7, 4999]
    assert table.get("m5000") == -1
    with pytest.raises(ValueError):
        table.add("x", -1)


# -- a tree that packs answers as one that does not ------------------------------------


@st.composite
def trees(draw: st.DrawFn) -> list[Message]:
    """Messages of a random tree, parents first: each hangs under an earlier one (or is a root)."""
    count = draw(st.integers(1, 40))
    messages: list[Message] = []
    for i in range(count):
        parent = None if i == 0 or draw(st.integers(0, 9)) == 0 else messages[draw(st.integers(0, i - 1))].id
        status = draw(
            st.sampled_from([MessageStatus.COMPLETE, MessageStatus.COMPLETE, MessageStatus.STREAMING])
        )
        tool = draw(st.integers(0, 5)) == 0
        messages.append(
            Message(
                id=f"m{i:03d}",
                parent_id=parent,
                role=Role.ASSISTANT if i % 2 else Role.USER,
                kind=MessageKind.TOOL_CALLS
                if tool
                else (MessageKind.RESPONSE if i % 2 else MessageKind.PROMPT),
                text=draw(texts),
                tool_calls=(ToolCall(f"c{i}", "t", "{}"),) if tool else (),
                status=status,
                metadata=draw(st.one_of(st.none(), metadata)),
                created_at=draw(times),
            )
        )
    return messages


def assert_same(packed: ConversationTree, plain: ConversationTree) -> None:
    assert len(packed) == len(plain)
    assert list(packed) == list(plain)
    assert packed.ids() == plain.ids() == [m.id for m in plain]
    assert packed.active_leaf == plain.active_leaf
    assert packed.path() == plain.path()
    assert packed.path_ids() == [m.id for m in plain.path()]
    for message in plain:
        assert packed.get(message.id) == message
        assert message.id in packed
        assert packed.parent_id(message.id) == message.parent_id
        assert packed.stored_id(message.id) == message.id
        assert packed.children(message.id) == plain.children(message.id)
        assert packed.version(message.id) == plain.version(message.id)
        assert packed.has_children(message.id) == bool(plain.children(message.id))
        assert packed.path(message.id) == plain.path(message.id)


@settings(max_examples=150, deadline=None)
@given(trees(), st.data())
def test_a_packed_tree_answers_as_the_same_tree_unpacked(
    messages: list[Message], data: st.DataObject
) -> None:
    plain = ConversationTree([m.copy() for m in messages])
    packed = ConversationTree([m.copy() for m in messages])
    packed.pack(packed.ids())
    settled_parents = [
        m
        for m in messages
        if plain.has_children(m.id) and m.status is not MessageStatus.STREAMING and not m.tool_calls
    ]
    assert packed.packed_count == len(settled_parents)
    assert_same(packed, plain)

    # Delete a branch and put it back: parents left without children become objects again.
    target = data.draw(st.sampled_from(messages)).id
    branch_plain, branch_packed = plain.remove_subtree(target), packed.remove_subtree(target)
    assert branch_packed == branch_plain
    assert_same(packed, plain)
    still_packed = [m for m in messages if m.id in packed and packed.has_children(m.id)]
    assert packed.packed_count <= len(still_packed)  # a packed message always has children
    plain.restore_subtree(branch_plain)
    packed.restore_subtree(branch_packed)
    assert_same(packed, plain)


def test_a_reply_whose_only_child_is_deleted_can_be_continued_in_place() -> None:
    """Packing relies on a message with children never changing; one left without them may."""
    prompt = Message.prompt("q", id="p")
    reply = Message.reply(parent_id="p", text="partial", status=MessageStatus.CANCELLED, id="r")
    follow = Message.prompt("next", parent_id="r", id="f")
    answer = Message.reply(parent_id="f", text="a", status=MessageStatus.COMPLETE, id="a")
    tree = ConversationTree([prompt, reply, follow, answer])
    assert tree.pack(tree.ids()) == 3  # all but the leaf
    tree.remove_subtree("f")
    assert tree.packed_count == 1  # the reply is an object again; the prompt still has it
    again = tree.get("r")
    assert again is tree.get("r")
    again.text += " and more"
    assert tree.get("r").text == "partial and more"


def test_packing_skips_unknown_leaves_and_repeats() -> None:
    prompt = Message.prompt("q", id="p")
    reply = Message.reply(parent_id="p", text="a", status=MessageStatus.COMPLETE, id="r")
    tree = ConversationTree([prompt, reply])
    assert tree.pack(["r", None, "nowhere"]) == 0  # a leaf, a root's parent, an unknown id
    assert tree.pack(["p", "p"]) == 1
    assert tree.get("p") == prompt
    assert tree.stored_id("p") is prompt.id


@settings(max_examples=100, deadline=None)
@given(trees(), st.sets(st.sampled_from(MessageKind)))
def test_reading_by_kind_or_shape_makes_no_other_message(
    messages: list[Message], kinds: set[MessageKind]
) -> None:
    """``of_kinds``, ``kind``, ``text_shape``, ``path_text_length``, ``path_of_kinds`` and
    ``packed_facts`` answer as the made messages do."""
    plain = ConversationTree([m.copy() for m in messages])
    packed = ConversationTree([m.copy() for m in messages])
    packed.pack(packed.ids())
    assert list(packed.of_kinds(kinds)) == [m for m in plain if m.kind in kinds]
    assert packed.path_of_kinds(kinds) == [m for m in plain.path() if m.kind in kinds]
    lengths = [len(m.text) + sum(len(c.text) for c in m.context) for m in plain.path()]
    assert packed.path_text_length() == sum(lengths)
    for message in plain:
        assert packed.kind(message.id) is message.kind
        assert packed.text_shape(message.id) == text_shape(message)
    outline = list(packed.path_outline())
    assert [(e.id, e.kind) for e in outline] == [(m.id, m.kind) for m in plain.path()]
    for entry, message in zip(outline, plain.path(), strict=True):
        if entry.packed is not None:
            assert entry.packed == (message.role, message.kind, message.status, len(message.text))


@settings(max_examples=100, deadline=None)
@given(trees())
def test_request_facts_give_what_the_usage_report_reads_of_each_reply(messages: list[Message]) -> None:
    """Each reply's usage from ``request_facts`` equals ``reply_usage`` of the made message."""
    plain = ConversationTree([m.copy() for m in messages])
    packed = ConversationTree([m.copy() for m in messages])
    packed.pack(packed.ids())

    def price_of(provider: str, model: str) -> Price | None:
        return Price(input_per_mtok=1.5, output_per_mtok=3.0) if model == "gpt-x" else None

    expected = [u for m in plain if (u := reply_usage(m, price_of)) is not None]
    got = [
        usage_of_reply(message_id, status, meta, written, price_of)
        for message_id, status, meta, written in packed.request_facts(ASSISTANT_KINDS)
        if meta is not None
    ]
    assert got == expected


def test_an_editable_message_is_unpacked_and_changes_in_place() -> None:
    """A change from elsewhere (another window's write) reaches a packed message."""
    prompt = Message.prompt("q", id="p")
    reply = Message.reply(parent_id="p", text="a", status=MessageStatus.COMPLETE, id="r")
    follow = Message.prompt("next", parent_id="r", id="f")
    tree = ConversationTree([prompt, reply, follow])
    tree.pack(tree.ids())
    assert tree.packed_count == 2
    held = tree.editable("r")
    held.status = MessageStatus.FAILED
    assert tree.packed_count == 1
    assert tree.get("r") is held
    assert tree.get("r").status is MessageStatus.FAILED
    assert [m.id for m in tree.path()] == ["p", "r", "f"]
    assert tree.editable("p") == prompt
