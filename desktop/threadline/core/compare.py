"""Several models or agents answering one prompt at once: one turn, several sibling replies.

A compare is still *one* turn of the session (only one runs per session): the
session's turn is ``COMPARING`` from the prompt until every worker has ended or
the person picked one reply to continue with. Each worker runs in a *lane*: a
``Conversation`` of its own (its own turn state, reply and tool rounds) over a
view of the session's tree (``ConversationTree.lane``), so every reply lands in
the one tree as a sibling under the prompt while each lane keeps its own leaf.

The rule "ready for input when all workers ended or one was picked" lives in
``Conversation.worker_ended``/``pick``; this module holds the workers and what
state each one is in, derived from its lane so the two can never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from threadline.core.messages import ASSISTANT_KINDS, Message, MessageStatus
from threadline.core.tree import ConversationTree, TreeError
from threadline.core.turn import TurnState

if TYPE_CHECKING:
    from threadline.core.conversation import Conversation

AGENT_PREFIX = "agent:"
"""How ``threadline ask --models`` names an agent among models: ``agent:NAME``."""
MIN_WORKERS = 2
MAX_WORKERS = 4
"""More columns than four no longer fit side by side, and cost the person four bills."""


class WorkerState(StrEnum):
    STREAMING = "streaming"
    AWAITING_APPROVAL = "awaiting_approval"
    RUNNING_TOOLS = "running_tools"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def ended(self) -> bool:
        return self in _ENDED

    @property
    def label(self) -> str:
        """How a column and ``threadline ask --models`` say it."""
        return _LABELS[self]


_ENDED = frozenset({WorkerState.DONE, WorkerState.FAILED, WorkerState.CANCELLED})
_LABELS = {
    WorkerState.STREAMING: "Writing…",
    WorkerState.AWAITING_APPROVAL: "Waiting for your approval",
    WorkerState.RUNNING_TOOLS: "Running tools…",
    WorkerState.DONE: "Done",
    WorkerState.FAILED: "Failed",
    WorkerState.CANCELLED: "Stopped",
}
_BUSY_STATES = {
    TurnState.STREAMING: WorkerState.STREAMING,
    TurnState.AWAITING_APPROVAL: WorkerState.AWAITING_APPROVAL,
    TurnState.RUNNING_TOOLS: WorkerState.RUNNING_TOOLS,
}


@dataclass(frozen=True, slots=True)
class CompareTarget:
    """Who answers in one column: a provider and model, or an agent (optionally with a model)."""

    provider: str = ""
    model: str = ""
    agent_id: str = ""
    label: str = ""
    """What the column and the command line call it (default: ``provider/model``)."""

    @property
    def display(self) -> str:
        if self.label:
            return self.label
        if self.provider and self.model:
            return f"{self.provider}/{self.model}"
        return self.agent_id or self.model or "?"

    @classmethod
    def parse(cls, spec: str) -> CompareTarget:
        """``PROVIDER/MODEL`` (the model may contain slashes itself) or ``agent:NAME`` (an agent,
        by name or id, answering with its own instructions, tools and model); ``ValueError`` otherwise.
        """
        text = spec.strip()
        if text[:6].casefold() == AGENT_PREFIX:
            name = text[6:].strip()
            if not name:
                raise ValueError(f"“{text}” names no agent (for example agent:Coder).")
            return cls(agent_id=name, label=f"{AGENT_PREFIX}{name}")
        provider, _, model = text.partition("/")
        if not provider or not model:
            raise ValueError(f"“{text}” is not PROVIDER/MODEL (for example openai/gpt-4o) nor agent:NAME.")
        return cls(provider=provider.strip(), model=model.strip())


def check_targets(targets: Sequence[CompareTarget]) -> None:
    """Two to four targets, or a ``TreeError`` saying so (the composer and ``ask`` show it)."""
    if not MIN_WORKERS <= len(targets) <= MAX_WORKERS:
        raise TreeError(
            f"Compare needs {MIN_WORKERS} to {MAX_WORKERS} models or agents; {len(targets)} given."
        )


class CompareWorker:
    """One column: its target and the lane its replies grow in."""

    def __init__(self, index: int, target: CompareTarget, lane: Conversation, prompt_id: str) -> None:
        self.index = index
        self.target = target
        self.lane = lane
        self._prompt_id = prompt_id

    @property
    def state(self) -> WorkerState:
        lane_state = self.lane.state
        if lane_state in _BUSY_STATES:
            return _BUSY_STATES[lane_state]
        if lane_state is TurnState.FAILED:
            return WorkerState.FAILED
        # Done only when the lane ends on a finished reply. Anything else was stopped: before
        # its first token (the leaf is still the prompt), mid-reply, at an approval, or after a
        # tool round before the next reply began (the leaf is that round's results).
        if self.leaf == self._prompt_id:  # (the prompt may be gone: given back, never sent)
            return WorkerState.CANCELLED
        leaf = self.lane.tree.get(self.leaf)
        finished = leaf.kind in ASSISTANT_KINDS and leaf.status is MessageStatus.COMPLETE
        return WorkerState.DONE if finished else WorkerState.CANCELLED

    @property
    def leaf(self) -> str:
        leaf = self.lane.tree.active_leaf
        assert leaf is not None  # a lane starts at its prompt
        return leaf

    def messages(self) -> list[Message]:
        """This worker's messages below the prompt, in order (replies, tool rounds)."""
        path = self.lane.path()
        ids = [m.id for m in path]
        return path[ids.index(self._prompt_id) + 1 :]

    @property
    def reply_id(self) -> str | None:
        """The first reply under the prompt: the sibling version this worker added."""
        mine = self.messages()
        return mine[0].id if mine else None


class Compare:
    """The workers of one compare and the prompt they answer."""

    def __init__(self, prompt: Message, targets: Sequence[CompareTarget], tree: ConversationTree) -> None:
        from threadline.core.conversation import Conversation  # the lanes are conversations

        check_targets(targets)
        self.prompt_id = prompt.id
        self._prompt_parent = prompt.parent_id
        self._tree = tree
        self.workers = tuple(
            CompareWorker(i, target, Conversation(f"lane-{i}", tree.lane(prompt.id)), prompt.id)
            for i, target in enumerate(targets)
        )
        for worker in self.workers:
            worker.lane.answer(prompt.id)

    @property
    def all_ended(self) -> bool:
        return all(w.state.ended for w in self.workers)

    def worker(self, index: int) -> CompareWorker:
        if not 0 <= index < len(self.workers):
            raise TreeError(f"no worker {index} in this compare")
        return self.workers[index]

    def worker_of(self, message_id: str) -> CompareWorker | None:
        """The worker whose lane holds ``message_id`` below the prompt."""
        return next((w for w in self.workers if message_id in {m.id for m in w.messages()}), None)

    def default_leaf(self) -> str | None:
        """Where the session's path goes when nobody picked: the first finished reply,
        else the first worker that produced anything, else the prompt.

        A worker whose leaf is still the prompt wrote nothing, so it is never ``DONE``
        (``CompareWorker.state``): the chat must not end at the prompt and hide another
        column's reply.
        """
        if self.prompt_id not in self._tree:  # a compare turned away before it began (prompt given back)
            return self._prompt_parent
        for worker in self.workers:
            if worker.state is WorkerState.DONE:
                return worker.leaf
        return next((w.leaf for w in self.workers if w.leaf != self.prompt_id), self.prompt_id)
