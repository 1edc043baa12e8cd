"""Generated conversation trees (Hypothesis) and a way to store one as a chat, for export tests.

The trees are what the product can hold: branches (versions) anywhere, every status,
tool rounds with results and errors, cancelled calls, summaries, images and attached
files, request metadata; ids are kept so a round trip can compare message by message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from hypothesis import strategies as st

from threadline.core.messages import (
    ContextFile,
    ImageBlock,
    Message,
    MessageKind,
    MessageStatus,
    RequestMetadata,
    Role,
    ToolCall,
    ToolResult,
    new_id,
)
from threadline.core.session import SessionInfo
from threadline.store.repository import Store

texts = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40
)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_/.-", min_size=1, max_size=12)
moments = st.datetimes(min_value=datetime(2001, 1, 1), max_value=datetime(2099, 1, 1), timezones=st.just(UTC))
images = st.builds(
    ImageBlock, st.sampled_from(["image/png", "image/jpeg"]), st.just("aGVsbG8="), names | st.just("")
)
results = st.builds(
    ToolResult, names, texts, st.tuples() | st.tuples(images), st.booleans(), names | st.just("")
)
metadata = st.none() | st.builds(
    RequestMetadata,
    provider=names,
    model=names,
    request_id=names | st.just(""),
    started_at=st.none() | moments,
    ended_at=st.none() | moments,
    time_to_first_token_ms=st.none() | st.floats(0, 1e6, allow_nan=False),
    input_tokens=st.none() | st.integers(0, 10**9),
    output_tokens=st.none() | st.integers(0, 10**9),
    stop_reason=st.sampled_from(["", "stop", "tool_use", "length"]),
    error=texts,
)


@dataclass
class Chat:
    info: SessionInfo
    messages: list[Message] = field(default_factory=list)


@st.composite
def messages_of(draw: st.DrawFn, parent: Message | None, earlier: list[Message]) -> Message:
    """One message under ``parent`` of a kind that may follow it."""
    user_turn = parent is None or parent.is_assistant
    parent_id = None if parent is None else parent.id
    common = {"id": new_id(), "created_at": draw(moments), "text": draw(texts)}
    if user_turn:
        kinds = [MessageKind.PROMPT]
        if parent is not None and parent.tool_calls:
            kinds += [MessageKind.TOOL_RESULTS, MessageKind.CANCELLED_TOOL_USES]
        if earlier:
            kinds.append(MessageKind.SUMMARY)
        kind = draw(st.sampled_from(kinds))
        if kind is MessageKind.PROMPT:
            return Message(
                parent_id=parent_id,
                role=Role.USER,
                kind=kind,
                images=tuple(draw(st.lists(images, max_size=2))),
                context=tuple(draw(st.lists(st.builds(ContextFile, names, texts), max_size=2))),
                **common,
            )
        if kind is MessageKind.SUMMARY:
            return Message(
                parent_id=parent_id,
                role=Role.USER,
                kind=kind,
                summarised_through=draw(st.sampled_from(earlier)).id,
                **common,
            )
        assert parent is not None
        answers = tuple(
            ToolResult(c.id, draw(texts), is_error=draw(st.booleans()), tool_name=c.name)
            for c in parent.tool_calls
        )
        status = draw(
            st.sampled_from([MessageStatus.COMPLETE, MessageStatus.STREAMING, MessageStatus.INTERRUPTED])
        )
        return Message(
            parent_id=parent_id, role=Role.USER, kind=kind, tool_results=answers, status=status, **common
        )
    calls = tuple(
        ToolCall(new_id(), draw(names), draw(st.sampled_from(["{}", '{"path": "a.txt"}', "{bad json"])))
        for _ in range(draw(st.integers(0, 2)))
    )
    return Message(
        parent_id=parent_id,
        role=Role.ASSISTANT,
        kind=MessageKind.TOOL_CALLS if calls else MessageKind.RESPONSE,
        tool_calls=calls,
        status=draw(st.sampled_from(list(MessageStatus))),
        metadata=draw(metadata),
        **common,
    )


@st.composite
def chats(draw: st.DrawFn, max_messages: int = 14) -> Chat:
    """A chat: a tree grown one message at a time under a random earlier message (or a new root)."""
    messages: list[Message] = []
    for _ in range(draw(st.integers(0, max_messages))):
        parent = draw(st.none() | st.sampled_from(messages)) if messages else None
        if parent is None and messages and draw(st.booleans()):
            parent = messages[-1]  # mostly grow the conversation rather than start new roots
        messages.append(draw(messages_of(parent, messages)))
    leaf = draw(st.sampled_from(messages)).id if messages and draw(st.booleans()) else None
    checkpoints = (
        {draw(names): draw(st.sampled_from(messages)).id for _ in range(draw(st.integers(0, 2)))}
        if messages
        else {}
    )
    info = SessionInfo(
        id=new_id(),
        title=draw(texts),
        pinned=draw(st.booleans()),
        archived=draw(st.booleans()),
        agent_id=draw(names | st.just("")),
        provider=draw(names | st.just("")),
        model=draw(names | st.just("")),
        active_leaf=leaf,
        checkpoints=checkpoints,
    )
    return Chat(info, messages)


async def store_chat(store: Store, chat: Chat) -> None:
    """Write ``chat`` with its ids as they are: session fields, messages, active leaf."""
    info = chat.info
    await store.create_session(
        title=info.title, agent_id=info.agent_id, provider=info.provider, model=info.model, session_id=info.id
    )
    if chat.messages:
        await store.append_messages(info.id, chat.messages)
    if info.active_leaf is not None:
        await store.set_active_leaf(info.id, info.active_leaf)
    if info.checkpoints:
        await store.update_session(info.id, checkpoints=dict(info.checkpoints))
    if info.pinned:
        await store.pin_session(info.id, True)
    if info.archived:
        await store.archive_session(info.id, True)
