"""Turning a source's message graph into a Threadline tree, whatever the source got wrong.

Every format describes a tree by parent links, and an untrusted file can break
them in three ways: a parent that is not there, two nodes naming each other
(a loop), and nodes Threadline does not show (ChatGPT's hidden system and
context nodes). Missing parents attach to the root, so the text is kept and
visible as its own branch; a loop makes the conversation fail, since no order of
it is the right one; hidden nodes are skipped and their children re-parented to
the nearest shown ancestor, keeping the tree connected.

The walk is iterative (a chain of 100,000 messages is an ordinary long chat, not
a reason for a ``RecursionError``) and emits parents before children, siblings
in the source's order — the store's insertion order, which is also the order of
versions ("2 / 3").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from threadline.core.messages import Message
from threadline.interchange.common import ConversationProblem, as_id, as_time, fallback_title
from threadline.interchange.ids import session_id_for
from threadline.interchange.limits import ImportLimits
from threadline.interchange.model import ImportedConversation, ImportSource


@dataclass(slots=True)
class SourceNode:
    """One node of the source's graph and the messages it becomes (none when hidden).

    ``messages`` form a chain (each the parent of the next); the first one's
    ``parent_id`` is set here, once the nearest shown ancestor is known.
    """

    source_id: str
    parent: str | None
    order: tuple[float, int]
    """Sorts siblings: (creation time, position in the file)."""
    messages: list[Message] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class AssembledTree:
    messages: tuple[Message, ...]
    active_leaf: str | None
    source_message_ids: dict[str, str]
    detached: int
    """Nodes whose parent was missing, attached to the root instead."""


@dataclass(frozen=True, slots=True)
class MessageListKeys:
    """Where a flat message list keeps each message's id, parent id and time.

    ``root_parent`` is a parent id the source writes for "no parent" (Claude's
    all-zero UUID); it is read as a root rather than as a missing parent.
    """

    id: str
    parent: str
    time: str
    root_parent: str | None = None


def nodes_from_message_list(
    raw_messages: Sequence[dict[str, object]],
    keys: MessageListKeys,
    created: datetime,
    convert: Callable[[str, dict[str, object]], list[Message]],
) -> list[SourceNode]:
    """The source nodes of a flat list of messages that may or may not carry parent links.

    Claude and Open WebUI both export a list in which newer versions name each
    message's parent (a tree with every edit and regeneration) and older ones do
    not (one chain in file order). A list where any message has the parent key is
    read as linked; otherwise each message's parent is the one before it. A
    message without an id is named by its position, one without a time takes the
    conversation's, and ``convert`` (given the source id and the raw message) makes
    the messages it becomes, which are stamped with that time.
    """
    linked = any(keys.parent in raw for raw in raw_messages)
    nodes: list[SourceNode] = []
    previous: str | None = None
    for position, raw in enumerate(raw_messages):
        source_id = as_id(raw.get(keys.id)) or f"#{position}"
        if linked:
            parent = as_id(raw.get(keys.parent))
            parent = None if parent == keys.root_parent else parent
        else:
            parent = previous
        when = as_time(raw.get(keys.time)) or created
        made = convert(source_id, raw)
        for message in made:
            message.created_at = when
        nodes.append(SourceNode(source_id, parent, (when.timestamp(), position), made))
        previous = source_id
    return nodes


def imported_conversation(
    source: ImportSource,
    conversation_id: str,
    tree: AssembledTree,
    *,
    title: str,
    created: datetime,
    updated: datetime,
    model: str,
    archived: bool,
    pinned: bool = False,
) -> ImportedConversation:
    """The conversation every foreign parser returns, built one way from its assembled tree.

    The rules that must not differ between sources live here: an empty title falls
    back to the first prompt (else the date), the session id is derived from the
    source and its id (so a re-import finds the same session), and the update time
    is never before the creation time (some exports write them the wrong way round).
    """
    return ImportedConversation(
        source=source,
        source_id=conversation_id,
        session_id=session_id_for(source, conversation_id),
        title=title or fallback_title(tree.messages, created),
        created_at=created,
        updated_at=max(updated, created),
        messages=tree.messages,
        active_leaf=tree.active_leaf,
        archived=archived,
        pinned=pinned,
        model=model,
        source_message_ids=tree.source_message_ids,
    )


def assemble(nodes: Sequence[SourceNode], current: str | None, limits: ImportLimits) -> AssembledTree:
    """Messages parents-first with their parents set, and the active leaf for ``current``."""
    index: dict[str, SourceNode] = {}
    for node in nodes:
        if node.source_id in index:
            raise ConversationProblem(f"two of its messages have the same id ({node.source_id[:40]})")
        index[node.source_id] = node
    detached = 0
    parents: dict[str, str | None] = {}
    for node in nodes:
        parent = node.parent
        if parent is not None and (parent not in index or parent == node.source_id):
            parent = None
            detached += 1
        parents[node.source_id] = parent
    _refuse_loops(parents)
    children: dict[str | None, list[SourceNode]] = {}
    for node in nodes:
        children.setdefault(parents[node.source_id], []).append(node)
    for siblings in children.values():
        siblings.sort(key=lambda n: n.order)

    ordered: list[Message] = []
    tail_of: dict[str, str | None] = {}
    source_ids: dict[str, str] = {}
    stack: list[tuple[SourceNode, str | None]] = [(n, None) for n in reversed(children.get(None, []))]
    while stack:
        node, shown_parent = stack.pop()
        tail = shown_parent
        if node.messages:
            node.messages[0].parent_id = shown_parent
            for message in node.messages:
                ordered.append(message)
                source_ids[message.id] = node.source_id
            tail = node.messages[-1].id
            if len(ordered) > limits.max_messages:
                raise ConversationProblem(
                    f"it has more than {limits.max_messages:,} messages, "
                    "the most Threadline imports in one chat"
                )
        tail_of[node.source_id] = tail
        stack.extend((child, tail) for child in reversed(children.get(node.source_id, [])))
    if not ordered:
        raise ConversationProblem("it holds no messages")
    return AssembledTree(
        messages=tuple(ordered),
        active_leaf=_active_leaf(ordered, tail_of.get(current) if current is not None else None),
        source_message_ids=source_ids,
        detached=detached,
    )


def _refuse_loops(parents: dict[str, str | None]) -> None:
    """Raise when following parents from some node comes back to a node of the same walk."""
    settled: set[str] = set()
    for start in parents:
        walk: list[str] = []
        on_walk: set[str] = set()
        node: str | None = start
        while node is not None and node not in settled:
            if node in on_walk:
                raise ConversationProblem("its messages' parent links form a loop")
            walk.append(node)
            on_walk.add(node)
            node = parents[node]
        settled.update(walk)


def _active_leaf(ordered: list[Message], chosen: str | None) -> str | None:
    """The chosen message, moved down to a leaf along the newest children; else the newest leaf."""
    children: dict[str | None, list[Message]] = {}
    for message in ordered:
        children.setdefault(message.parent_id, []).append(message)
    if chosen is None:
        leaves = [m for m in ordered if m.id not in children]
        return max(leaves, key=lambda m: m.created_at).id if leaves else None
    while chosen in children:
        chosen = children[chosen][-1].id
    return chosen
