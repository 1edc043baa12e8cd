"""The conversation as a tree of messages with an active leaf (docs/design.md §1).

Nothing is ever overwritten: editing a prompt or regenerating a reply adds a
sibling, and the conversation shown and sent is the path from the root to the
active leaf. Siblings are ordered by insertion, which is also their creation
order, so "version 2 / 3" is stable across reloads (the store keeps an ordinal).
"""

from __future__ import annotations

from array import array
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from threadline.core.messages import (
    Message,
    MessageKind,
    MessageStatus,
    RequestMetadata,
    Role,
    TextShape,
    TextShapes,
    new_id,
    text_shape,
    text_size,
    written_length,
)
from threadline.core.packed_history import MetadataFields, PackedMessages, packable, parts_packable


class TreeError(ValueError):
    """A tree operation referred to a message that does not fit (unknown id, cycle…)."""


@dataclass(frozen=True, slots=True)
class Version:
    """Where a message sits among its siblings: ``index`` is 1-based."""

    index: int
    count: int


TANGENT_CHECKPOINT = "__tangent_return__"


@dataclass(frozen=True, slots=True)
class RemovedBranch:
    """A subtree taken out by ``ConversationTree.remove_subtree``, enough to put it back."""

    messages: tuple[Message, ...]
    """The removed message first, then its descendants, parents before children, in version order."""
    position: int
    """Its 0-based place among its siblings (its version number minus one)."""
    active_leaf: str | None
    """The active leaf before the removal."""
    checkpoints: dict[str, str]
    """Checkpoints that pointed into the subtree (removed with it)."""


class PathEntry(NamedTuple):
    """One message of a path as ``ConversationTree.path_outline`` gives it."""

    id: str
    kind: MessageKind
    packed: tuple[Role, MessageKind, MessageStatus, int] | None
    """A packed message's role, kind, status and text length; ``None``: held as an object."""


class ConversationTree:
    """Messages indexed by id, their children in order, and the active leaf."""

    def __init__(self, messages: Iterable[Message] = (), active_leaf: str | None = None) -> None:
        self._messages: dict[str, Message | None] = {}
        """Every message by id, in the order added: the object, or ``None`` for one kept in
        ``_packed`` (see ``pack``)."""
        self._packed = PackedMessages()
        self._children: dict[str | None, str | tuple[str, ...]] = {}
        """Each parent's children's ids, oldest first (``None``: the roots): the id itself for
        an only child, a tuple for several, nothing for a leaf. Read through ``_kids``.

        Most messages of a long chat have exactly one child, so this makes no object per
        message at all. A list per message (empty for leaves, over-allocated for the rest),
        then a one-item tuple, were objects of every message in a long chat, kept in the
        small-object heap among its messages, where a closed chat's few survivors keep
        whatever it used (docs/performance.md). Adding a child replaces its parent's
        entry; siblings are few."""
        self.checkpoints: dict[str, str] = {}
        for message in _parents_first(messages):
            self.add(message, activate=False)
        if active_leaf is not None and active_leaf not in self._messages:
            raise TreeError(f"active leaf {active_leaf!r} is not in the tree")
        self._active_leaf = active_leaf if active_leaf is not None else self._default_leaf()

    # -- building -----------------------------------------------------------------

    def add(self, message: Message, *, activate: bool = True) -> Message:
        """Insert ``message`` under its parent; by default it becomes the active leaf."""
        self._check_new(message.id, message.parent_id)
        self._messages[message.id] = message
        self._set_kids(message.parent_id, (*self._kids(message.parent_id), message.id))
        if activate:
            self._active_leaf = message.id
        return message

    def remove_leaf(self, message_id: str) -> Message:
        """Take out a message without children, one the store never accepted (an unsaved prompt).

        Stored messages are never removed this way; the active leaf falls back to
        the newest branch under the parent.
        """
        message = self.get(message_id)
        if message_id in self._children:
            raise TreeError(f"message {message_id!r} has replies and cannot be removed")
        del self._messages[message_id]
        self._drop_child(message.parent_id, message_id)
        if self._active_leaf == message_id:
            parent = message.parent_id
            self._active_leaf = self.newest_leaf_under(parent) if parent is not None else self._default_leaf()
        return message

    def remove_subtree(self, message_id: str) -> RemovedBranch:
        """Take a message and everything below it out of the tree (a user's delete).

        Returns what ``restore_subtree`` needs to put it back exactly: the messages,
        the message's place among its siblings (its version number), the active leaf
        and the checkpoints that pointed into it. The active leaf, if it was inside,
        moves to the parent's newest remaining branch (or the parent itself).
        """
        top = self.get(message_id)
        ordered: list[Message] = []
        stack = [message_id]
        while stack:
            node = stack.pop()
            ordered.append(self.get(node))
            stack.extend(reversed(self._kids(node)))
        removed_ids = {m.id for m in ordered}
        siblings = self._kids(top.parent_id)
        branch = RemovedBranch(
            messages=tuple(ordered),
            position=siblings.index(message_id),
            active_leaf=self._active_leaf,
            checkpoints={n: t for n, t in self.checkpoints.items() if t in removed_ids},
        )
        self._drop_child(top.parent_id, message_id)
        for message in ordered:
            if self._messages.pop(message.id) is None:
                self._packed.remove(message.id)
            self._children.pop(message.id, None)
        for name in branch.checkpoints:
            del self.checkpoints[name]
        if self._active_leaf in removed_ids:
            parent = top.parent_id
            self._active_leaf = self.newest_leaf_under(parent) if parent is not None else self._default_leaf()
        return branch

    def restore_subtree(self, branch: RemovedBranch, *, activate: bool = True) -> None:
        """Put back what ``remove_subtree`` took out: same ids, same version place, and (with
        ``activate``) the active leaf it had. Raises ``TreeError`` when its parent is gone."""
        top = branch.messages[0]
        if top.parent_id is not None and top.parent_id not in self._messages:
            raise TreeError(f"parent {top.parent_id!r} of {top.id!r} is not in the tree")
        if any(m.id in self._messages for m in branch.messages):
            raise TreeError(f"message {top.id!r} is already in the tree")
        siblings = list(self._kids(top.parent_id))
        self._messages[top.id] = top
        siblings.insert(min(branch.position, len(siblings)), top.id)
        self._set_kids(top.parent_id, tuple(siblings))
        for message in branch.messages[1:]:
            self.add(message, activate=False)
        self.checkpoints.update(branch.checkpoints)
        if activate and (branch.active_leaf is None or branch.active_leaf in self._messages):
            self._active_leaf = branch.active_leaf

    # -- queries ------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._messages)

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._messages

    def __iter__(self) -> Iterator[Message]:
        """Every message in the order added (a packed one made anew, as ``get`` does)."""
        for message_id, message in self._messages.items():
            yield self._packed.message(message_id) if message is None else message

    def of_kinds(self, kinds: Collection[MessageKind]) -> Iterator[Message]:
        """The messages of those kinds, in the order added, making no packed message of another kind."""
        for message_id, message in self._messages.items():
            if message is not None:
                if message.kind in kinds:
                    yield message
            else:
                place = self._packed.place(message_id)
                if self._packed.kind_at(place) in kinds:
                    yield self._packed.message_at(place)

    def request_facts(
        self, kinds: Collection[MessageKind]
    ) -> Iterator[tuple[str, MessageStatus, RequestMetadata | None, int]]:
        """For each message of those kinds, in the order added: its id, status, request metadata
        and the characters of its text and tool-call arguments, making no packed message
        (what the usage report reads of every reply, after every turn)."""
        packed = self._packed
        for message_id, message in self._messages.items():
            if message is not None:
                if message.kind in kinds:
                    yield message.id, message.status, message.metadata, written_length(message)
            else:
                place = packed.place(message_id)
                if packed.kind_at(place) in kinds:
                    yield message_id, *packed.request_facts_at(place)  # the key is the stored id

    def ids(self) -> list[str]:
        """Every message's id in the order added, without making any packed message."""
        return list(self._messages)

    def has_children(self, message_id: str) -> bool:
        return message_id in self._children

    def get(self, message_id: str) -> Message:
        """The message; a packed one is made anew at each call (equal, not the same object)."""
        message = self._entry(message_id)
        return self._packed.message(message_id) if message is None else message

    def editable(self, message_id: str) -> Message:
        """The message as the object the tree holds, which a change made in place reaches: a
        packed one is unpacked first. For a change that arrives from elsewhere (the change
        feed bringing another window's write); this tree's own code never rewrites a
        message that has children."""
        message = self._entry(message_id)
        if message is None:
            message = self._messages[message_id] = self._packed.remove(message_id)
        return message

    def parent_id(self, message_id: str) -> str | None:
        """``get(message_id).parent_id`` without making a packed message."""
        message = self._entry(message_id)
        return self._packed.parent_id(message_id) if message is None else message.parent_id

    def stored_id(self, message_id: str) -> str:
        """The tree's own string for ``message_id``, so that links to it need no string of their own."""
        message = self._entry(message_id)
        return self._packed.stored_id(message_id) if message is None else message.id

    @property
    def active_leaf(self) -> str | None:
        return self._active_leaf

    def children(self, message_id: str | None) -> list[Message]:
        return [self.get(c) for c in self._kids(message_id)]

    def siblings(self, message_id: str) -> list[Message]:
        """The message and its siblings (the versions), oldest first."""
        return self.children(self.parent_id(message_id))

    def version(self, message_id: str) -> Version:
        ids = self._kids(self.parent_id(message_id))
        return Version(ids.index(message_id) + 1, len(ids))

    def path(self, leaf: str | None = None) -> list[Message]:
        """Messages from the root to ``leaf`` (default: the active leaf)."""
        return [self.get(message_id) for message_id in self.path_ids(leaf)]

    def path_ids(self, leaf: str | None = None) -> list[str]:
        """The ids of ``path(leaf)``, without making any packed message."""
        return self._walk(leaf)[0]

    def path_outline(self, leaf: str | None = None) -> Iterator[PathEntry]:
        """For each message of ``path(leaf)``, one at a time: its id, its kind, and for a packed
        one what a request's estimate reads of it (``None`` for one held as an object: ``get``
        it). Scans of a long chat read this instead of making every packed message; one
        entry lives at a time, as objects of every message made during an open keep memory
        after the chat is closed (docs/performance.md)."""
        packed = self._packed
        for message_id, message, place in self._path_items(leaf):
            if message is None:
                yield PathEntry(message_id, packed.kind_at(place), packed.facts_at(place))
            else:
                yield PathEntry(message_id, message.kind, None)

    def path_kinds(self, leaf: str | None = None) -> tuple[list[str], list[MessageKind]]:
        """``path_ids(leaf)`` and each message's kind (two lists of shared objects)."""
        ids: list[str] = []
        kinds: list[MessageKind] = []
        for message_id, message, place in self._path_items(leaf):
            ids.append(message_id)
            kinds.append(self._packed.kind_at(place) if message is None else message.kind)
        return ids, kinds

    def path_text_shapes(self, leaf: str | None = None) -> tuple[list[str], TextShapes]:
        """``path_ids(leaf)`` and each message's ``text_shape``, in columns, reading packed
        messages in place."""
        ids: list[str] = []
        shapes = TextShapes()
        for message_id, message, place in self._path_items(leaf):
            ids.append(message_id)
            if message is None:
                shapes.add(*self._packed.text_shape_at(place), 0)  # no tool parts when packed
            else:
                shapes.add(message.kind, *text_size(message))
        return ids, shapes

    def path_of_kinds(self, kinds: Collection[MessageKind], leaf: str | None = None) -> list[Message]:
        """The messages of ``path(leaf)`` whose kind is one of ``kinds``, in path order: the
        markers or summaries of a long chat without making every message on the way."""
        packed = self._packed
        out: list[Message] = []
        for _id, message, place in self._path_items(leaf):
            if message is None:
                if packed.kind_at(place) in kinds:
                    out.append(packed.message_at(place))
            elif message.kind in kinds:
                out.append(message)
        return out

    def path_text_length(self, leaf: str | None = None) -> int:
        """Characters of ``path(leaf)``'s texts and attached files, without making packed messages."""
        total = 0
        for _id, message, place in self._path_items(leaf):
            if message is None:
                total += self._packed.text_length_at(place)
            else:
                total += len(message.text) + sum(len(c.text) for c in message.context)
        return total

    def _path_items(self, leaf: str | None) -> Iterator[tuple[str, Message | None, int]]:
        """``path(leaf)`` one message at a time: its id, and the object (then its place is -1)
        or ``None`` and its place among the packed messages."""
        ids, places = self._walk(leaf)
        messages = self._messages
        for message_id, place in zip(ids, places, strict=True):
            yield message_id, (messages[message_id] if place < 0 else None), place

    def _walk(self, leaf: str | None) -> tuple[list[str], array[int]]:
        """``path(leaf)``'s ids and, for each, its place among the packed messages (-1: an object);
        the places in an ``array``: no ``int`` object each."""
        node = self._active_leaf if leaf is None else leaf
        ids: list[str] = []
        places = array("q")
        # A path longer than the tree has messages went round a cycle: counting costs nothing,
        # where a set of the ids seen was a large table for a long path, at every call
        # (figures: docs/performance.md).
        longest = len(self._messages)
        messages, packed = self._messages, self._packed
        while node is not None:
            if len(ids) >= longest:
                raise TreeError("cycle in conversation tree")
            try:
                message = messages[node]
            except KeyError:
                raise TreeError(f"no message {node!r}") from None
            if message is None:
                node = packed.climb(node, ids, places)
            else:
                ids.append(message.id)
                places.append(-1)
                node = message.parent_id
        if len(ids) > longest:
            raise TreeError("cycle in conversation tree")
        ids.reverse()
        places.reverse()
        return ids, places

    def kind(self, message_id: str) -> MessageKind:
        """``get(message_id).kind``, without making a packed message."""
        message = self._entry(message_id)
        packed = self._packed
        return packed.kind_at(packed.place(message_id)) if message is None else message.kind

    def text_shape(self, message_id: str) -> TextShape:
        """``text_shape(get(message_id))``, without making a packed message."""
        message = self._entry(message_id)
        if message is None:
            kind, chars, breaks = self._packed.text_shape_at(self._packed.place(message_id))
            return TextShape(kind, chars, breaks, 0)  # a packed message has no tool parts
        return text_shape(message)

    def _check_new(self, message_id: str, parent_id: str | None) -> None:
        """Refuse a message already here, or one whose parent is not."""
        if message_id in self._messages:
            raise TreeError(f"message {message_id!r} is already in the tree")
        if parent_id is not None and parent_id not in self._messages:
            raise TreeError(f"parent {parent_id!r} of {message_id!r} is not in the tree")

    def _entry(self, message_id: str) -> Message | None:
        try:
            return self._messages[message_id]
        except KeyError:
            raise TreeError(f"no message {message_id!r}") from None

    def newest_leaf_under(self, message_id: str) -> str:
        """Follow the newest child from ``message_id`` down to a leaf."""
        node = message_id
        while kids := self._children.get(node):
            node = kids if isinstance(kids, str) else kids[-1]
        return node

    # -- moving the active leaf ----------------------------------------------------

    def set_active_leaf(self, message_id: str | None) -> None:
        if message_id is not None:
            self.get(message_id)
        self._active_leaf = message_id

    def switch_version(self, message_id: str, offset: int) -> str:
        """Show the sibling ``offset`` steps away; returns the new active leaf.

        The path continues down that sibling's newest branch, as chat apps do when
        you flip "‹ 2/3 ›".
        """
        ids = self._kids(self.parent_id(message_id))
        target = ids[(ids.index(message_id) + offset) % len(ids)]
        self._active_leaf = self.newest_leaf_under(target)
        return self._active_leaf

    def lane(self, leaf: str | None) -> ConversationTree:
        """Another view of these same messages with an active leaf of its own.

        Parallel replies (``core/compare.py``) grow several branches at once: each
        worker adds through its lane, so every message lands in this one tree (no
        copy to merge back), while each lane keeps the leaf its replies hang under.
        """
        view = ConversationTree()
        view._messages = self._messages
        view._packed = self._packed
        view._children = self._children
        view.checkpoints = self.checkpoints
        view.set_active_leaf(leaf)
        return view

    # -- checkpoints and tangents --------------------------------------------------

    @property
    def named_checkpoints(self) -> dict[str, str]:
        """The checkpoints the person named (name → message id), without the tangent's return point."""
        return {name: target for name, target in self.checkpoints.items() if name != TANGENT_CHECKPOINT}

    @property
    def tangent_origin(self) -> str | None:
        """Where leaving the current tangent returns to (``None``: not in a tangent)."""
        return self.checkpoints.get(TANGENT_CHECKPOINT)

    def set_checkpoint(self, name: str, message_id: str | None = None) -> str:
        target = message_id or self._active_leaf
        if target is None:
            raise TreeError("an empty conversation has nothing to checkpoint")
        self.get(target)
        self.checkpoints[name] = target
        return target

    def restore_checkpoint(self, name: str) -> str:
        try:
            target = self.checkpoints[name]
        except KeyError:
            raise TreeError(f"no checkpoint named {name!r}") from None
        self.set_active_leaf(target)
        return target

    @property
    def in_tangent(self) -> bool:
        return TANGENT_CHECKPOINT in self.checkpoints

    def start_tangent(self) -> None:
        """Remember where to come back to; what follows is a side branch."""
        if self.in_tangent:
            raise TreeError("already in a tangent")
        if self._active_leaf is None:
            raise TreeError("an empty conversation has nothing to return to")
        self.checkpoints[TANGENT_CHECKPOINT] = self._active_leaf

    def end_tangent(self) -> str:
        """Return to where the tangent started; the side branch stays in the tree."""
        target = self.restore_checkpoint(TANGENT_CHECKPOINT)
        del self.checkpoints[TANGENT_CHECKPOINT]
        return target

    # -- forks ----------------------------------------------------------------------

    def fork_path(self, leaf: str | None = None) -> list[Message]:
        """Copies of the path to ``leaf`` with fresh ids, relinked, for a new session."""
        copies: list[Message] = []
        parent: str | None = None
        for message in self.path(leaf):
            copy = message.copy(id=new_id(), parent_id=parent)
            copies.append(copy)
            parent = copy.id
        ids = {old.id: new.id for old, new in zip(self.path(leaf), copies, strict=True)}
        return [
            c.copy(summarised_through=ids.get(c.summarised_through)) if c.summarised_through else c
            for c in copies
        ]

    # -- packing --------------------------------------------------------------------

    def pack(self, message_ids: Iterable[str | None]) -> int:
        """Keep those of ``message_ids`` that have children, are settled and plain in
        the packed form (``core/packed_history.py``); returns how many were packed.

        Packing trades a little time at each read (a packed message is made anew) for
        about five fewer objects per message while the chat is open, which is what lets
        a closed long chat give its memory back (docs/performance.md). Only messages
        that can no longer change qualify: one with children is never rewritten. The
        store reads plain rows straight into the packed form (``add_settled``) and, once a
        chat is read, packs those of the rows it made as messages that qualify.
        """
        count = 0
        for message_id in message_ids:
            if message_id is None or message_id not in self._children:
                continue
            message = self._messages.get(message_id)
            if message is not None and packable(message):
                self._packed.add(message)
                self._messages[message_id] = None
                count += 1
        return count

    def add_settled(
        self,
        message_id: str,
        parent_id: str | None,
        role: Role,
        kind: MessageKind,
        text: str,
        status: MessageStatus,
        created_at: datetime,
        metadata: MetadataFields | None,
    ) -> bool:
        """Add a plain message (nothing but these parts) straight into the packed form, as
        ``add(..., activate=False)`` would add it and ``pack`` then keep it; ``False`` (and
        nothing added) when the parts cannot be packed exactly: add a ``Message`` instead.

        For a store reading a chat: it makes no ``Message`` for most rows. A message added
        so may have no children yet; ``unpack_leaves`` restores the rule that a packed
        message has children once the chat is read."""
        self._check_new(message_id, parent_id)
        if not parts_packable(status, text, created_at, metadata):
            return False
        self._packed.add_parts(message_id, parent_id, role, kind, text, status, created_at, metadata)
        self._messages[message_id] = None
        self._set_kids(parent_id, (*self._kids(parent_id), message_id))
        return True

    def unpack_leaves(self) -> None:
        """Make every packed message without children an object again (after ``add_settled``)."""
        leaves = [i for i, m in self._messages.items() if m is None and i not in self._children]
        for message_id in leaves:
            self._messages[message_id] = self._packed.remove(message_id)

    @property
    def packed_count(self) -> int:
        """How many messages are held packed (for tests and benchmarks)."""
        return len(self._packed)

    # -- internals --------------------------------------------------------------------

    def _default_leaf(self) -> str | None:
        roots = self._kids(None)
        return self.newest_leaf_under(roots[-1]) if roots else None

    def _drop_child(self, parent_id: str | None, child_id: str) -> None:
        """Take ``child_id`` out of its parent's children (a parent left without any has none).

        A packed parent left without children becomes an object again: a leaf may still
        change (a partial reply is continued in place), and only objects can."""
        self._set_kids(parent_id, tuple(c for c in self._kids(parent_id) if c != child_id))
        if parent_id is not None and parent_id not in self._children and parent_id in self._packed:
            self._messages[parent_id] = self._packed.remove(parent_id)

    def _kids(self, parent_id: str | None) -> tuple[str, ...]:
        """``parent_id``'s children's ids, oldest first (empty for a leaf)."""
        kids = self._children.get(parent_id, ())
        return (kids,) if isinstance(kids, str) else kids

    def _set_kids(self, parent_id: str | None, kids: tuple[str, ...]) -> None:
        """Store ``parent_id``'s children in the form ``_children`` describes."""
        if not kids:
            self._children.pop(parent_id, None)
        else:
            self._children[parent_id] = kids[0] if len(kids) == 1 else kids


def _parents_first(messages: Iterable[Message]) -> list[Message]:
    """``messages`` reordered so every parent comes before its children.

    A store may hand rows back by time or ordinal, where a parent can follow its
    child. Siblings keep their order in ``messages`` (their version order). A
    message whose parent is missing, or a cycle, is left for ``add`` to refuse.
    """
    given = list(messages)
    ids = {m.id for m in given}
    placed: set[str] = set()
    for message in given:
        if message.parent_id is not None and message.parent_id in ids and message.parent_id not in placed:
            break
        placed.add(message.id)
    else:
        return given  # already parents first: keep the order as given
    children: dict[str | None, list[Message]] = {}
    for message in given:
        parent = message.parent_id if message.parent_id in ids else None
        children.setdefault(parent, []).append(message)
    ordered: list[Message] = []
    stack = list(reversed(children.get(None, [])))
    seen: set[int] = set()
    while stack:
        message = stack.pop()
        if id(message) in seen:
            continue
        seen.add(id(message))
        ordered.append(message)
        stack.extend(reversed(children.get(message.id, [])))
    # Whatever was not reached sits on a cycle: append it so ``add`` reports it.
    ordered.extend(m for m in given if id(m) not in seen)
    return ordered
