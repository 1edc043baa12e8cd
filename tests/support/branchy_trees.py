"""Deterministic conversation trees with many branches, for the branch map's tests and benchmark.

``branchy_tree(n)`` grows a main line of prompts and replies and, as it goes, the kinds of
branch a real session gets: regenerated replies (versions), edited prompts with their own
continuation, tangents (a tangent marker and a side conversation), tool rounds, a summary
and nested branches off branches. Seeded, so a failure reproduces.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from threadline.core.messages import Marker, MarkerType, Message, ToolCall, ToolResult
from threadline.core.tree import ConversationTree

START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def tangent_marker(parent_id: str | None, label: str = "Side question") -> Message:
    """The marker that opens a tangent: what follows it is the side conversation."""
    return Message.marker_message(Marker(MarkerType.TANGENT, label), parent_id=parent_id)


class _Grower:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.messages: list[Message] = []
        self.clock = START

    def add(self, message: Message) -> Message:
        self.clock += timedelta(seconds=self.rng.randint(5, 90))
        message.created_at = self.clock
        self.messages.append(message)
        return message

    def exchange(self, parent: Message | None, n: int) -> Message:
        prompt = self.add(Message.prompt(f"Question {n}: how does part {n} work?", parent_id=_id(parent)))
        if self.rng.random() < 0.08:
            call = ToolCall(f"call-{n}", "search", '{"q": "part"}')
            calls = self.add(Message.reply(parent_id=prompt.id, text="Let me look.", tool_calls=(call,)))
            calls.status = calls.status.COMPLETE
            results = self.add(
                Message.tool_results_message(
                    (ToolResult(call.id, "3 hits", tool_name="search"),), parent_id=calls.id
                )
            )
            prompt = results
        reply = self.add(Message.reply(parent_id=prompt.id, text=f"Answer {n}: part {n} works like this."))
        reply.status = reply.status.COMPLETE
        return reply

    def line(self, parent: Message | None, exchanges: int, start: int) -> Message:
        node = parent
        for i in range(exchanges):
            node = self.exchange(node, start + i)
        assert node is not None
        return node


def _id(message: Message | None) -> str | None:
    return None if message is None else message.id


def branchy_tree(size: int = 10_000, *, seed: int = 11, branch_every: int = 12) -> ConversationTree:
    """A tree of about ``size`` messages: a main line with a branch every ~``branch_every`` messages.

    The active leaf is the main line's end, so most branches hang off the active path,
    and some branches have branches of their own.
    """
    grow = _Grower(seed)
    main: list[Message] = []
    node: Message | None = None
    n = 0
    while len(grow.messages) < size:
        node = grow.exchange(node, n)
        main.append(node)
        n += 1
        if len(grow.messages) >= size or n % max(1, branch_every // 2):
            continue
        anchor = grow.rng.choice(main[-8:])
        kind = grow.rng.random()
        if kind < 0.35:  # a regenerated reply: a version of the anchor
            version = grow.add(Message.reply(parent_id=anchor.parent_id, text="Another take."))
            version.status = version.status.COMPLETE
            grow.line(version, grow.rng.randint(0, 3), n * 100)
        elif kind < 0.6:  # an edited prompt with its own continuation
            grow.line(anchor, grow.rng.randint(1, 4), n * 100)
        elif kind < 0.85:  # a tangent from here
            marker = grow.add(tangent_marker(anchor.id))
            end = grow.line(marker, grow.rng.randint(1, 5), n * 100)
            if grow.rng.random() < 0.3:  # a branch inside the tangent
                grow.line(grow.messages[grow.messages.index(end) - 1], 1, n * 100 + 50)
        else:  # a branch whose own reply was regenerated
            side = grow.line(anchor, 2, n * 100)
            again = grow.add(Message.reply(parent_id=side.parent_id, text="Once more."))
            again.status = again.status.COMPLETE
    tree = ConversationTree(grow.messages[:size] if len(grow.messages) > size else grow.messages)
    leaf = next((m.id for m in reversed(main) if m.id in tree), None)
    tree.set_active_leaf(leaf)
    return tree


def small_tree() -> tuple[ConversationTree, dict[str, str]]:
    """A short chat with two versions of a reply, an edited prompt, a tangent and two checkpoints.

    Returns the tree and names of interesting messages (``old_reply``, ``tangent``…).
    """
    grow = _Grower(3)
    first = grow.exchange(None, 1)
    second_prompt = grow.add(Message.prompt("Can you show it with an example?", parent_id=first.id))
    old_reply = grow.add(Message.reply(parent_id=second_prompt.id, text="Here is a first example."))
    old_reply.status = old_reply.status.COMPLETE
    grow.line(old_reply, 1, 10)
    new_reply = grow.add(Message.reply(parent_id=second_prompt.id, text="Here is a better example."))
    new_reply.status = new_reply.status.COMPLETE
    edited = grow.add(Message.prompt("Show it in Rust instead.", parent_id=first.id))
    edited_end = grow.line(edited, 0, 0)
    edited_reply = grow.add(Message.reply(parent_id=edited.id, text="In Rust it reads like this."))
    edited_reply.status = edited_reply.status.COMPLETE
    middle = grow.line(new_reply, 2, 20)
    marker = grow.add(tangent_marker(middle.id, "What is a monad?"))
    tangent_end = grow.line(marker, 2, 30)
    main_end = grow.line(middle, 3, 40)
    tree = ConversationTree(grow.messages)
    tree.set_active_leaf(main_end.id)
    tree.set_checkpoint("draft-1", first.id)
    tree.set_checkpoint("before tangent", middle.id)
    del edited_end
    return tree, {
        "first": first.id,
        "old_reply": old_reply.id,
        "new_reply": new_reply.id,
        "edited": edited.id,
        "edited_reply": edited_reply.id,
        "middle": middle.id,
        "tangent": marker.id,
        "tangent_end": tangent_end.id,
        "main_end": main_end.id,
    }
