"""A streamed reply's reasoning: grown as it arrives, timed, stored like its text.

The turn runner hands every provider event of a round to ``ReasoningTracker.observe``.
Reasoning pieces grow the reply's ``reasoning`` blocks (never its text), tell the
writer (which coalesces them like text) and the observers (one ``ReasoningDelta``
each, a row repaint). Anything else — the answer's first words, a tool call, the end
of the stream — closes the block being thought, so "Thought for 12 s" is the time
from the block's first piece to the first thing that was not reasoning.

The reply's status follows the same rules as for text: reasoning alone keeps it
``streaming``; a stream cut after some reasoning leaves a partial reply.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from threadline.core.messages import Message
from threadline.core.reasoning import close_last, grow
from threadline.engine.events import ReasoningDelta
from threadline.llm import events as llm_events

Clock = Callable[[], float]


class ReasoningTracker:
    """Follows one round's stream; ``emit`` and ``changed`` are the live conversation's and writer's."""

    def __init__(
        self,
        session_id: str,
        emit: Callable[[ReasoningDelta], None],
        changed: Callable[[], None],
        clock: Clock = time.perf_counter,
    ) -> None:
        self._session_id = session_id
        self._emit = emit
        self._changed = changed
        self._clock = clock
        self._began: float | None = None

    @property
    def thinking(self) -> bool:
        """A block is open: reasoning arrived and nothing else has since."""
        return self._began is not None

    def observe(self, reply: Message, event: llm_events.StreamEvent) -> bool:
        """Take ``event`` into account; ``True`` when it was reasoning (nothing else to do with it)."""
        if isinstance(event, llm_events.ReasoningDelta):
            if self._began is None:
                self._began = self._clock()
            reply.reasoning = grow(
                reply.reasoning,
                text=event.text,
                signature=event.signature,
                redacted_data=event.redacted_data,
                new_block=event.new_block,
                source=event.source,
            )
            self._changed()
            self._emit(ReasoningDelta(self._session_id, reply.id, event.text))
            return True
        if isinstance(event, llm_events.Usage):
            return False  # a token count says nothing about whether the model still thinks
        self.close(reply)
        return False

    def close(self, reply: Message) -> None:
        """The block being thought has ended (the answer began, the stream ended or stopped)."""
        if self._began is None:
            return
        reply.reasoning = close_last(reply.reasoning, (self._clock() - self._began) * 1000)
        self._began = None
        self._changed()
        self._emit(ReasoningDelta(self._session_id, reply.id, ""))
