"""``<think>…</think>`` at the start of a reply's content → reasoning, the rest → text.

Ollama and many GGUF chat templates stream a thinking model's reasoning inside the
content, wrapped in ``<think>`` tags. Only a tag at the very start (after blank space)
counts: a reply that mentions ``<think>`` later is text. The tags may arrive split
across chunks (``<thi`` + ``nk>``), so a start that could still become the tag is held
back until it is decided, as is an end that could still become ``</think>``. A reply
whose ``</think>`` never comes is all reasoning; ``finish`` hands out what was held.
"""

from __future__ import annotations

from threadline.core.reasoning import SOURCE_THINK_TAG
from threadline.llm.events import ReasoningDelta, TextDelta

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"

_START, _THINKING, _AFTER, _TEXT = range(4)


class ThinkTagSplitter:
    """Feeds content pieces in order; returns the reasoning and text events they make."""

    def __init__(self) -> None:
        self._state = _START
        self._held = ""
        self._began = False

    @property
    def thinking(self) -> bool:
        """Inside an open ``<think>`` (its end not seen yet)."""
        return self._state == _THINKING

    def feed(self, piece: str) -> list[ReasoningDelta | TextDelta]:
        if self._state == _TEXT:
            return [TextDelta(piece)]
        self._held += piece
        if self._state == _START:
            return self._decide_start()
        if self._state == _THINKING:
            return self._inside()
        return self._after()

    def finish(self) -> list[ReasoningDelta | TextDelta]:
        """What was held back when the content ended."""
        held, self._held = self._held, ""
        if not held:
            return []
        if self._state == _THINKING:
            return [self._reasoning(held)]
        if self._state == _START:
            self._state = _TEXT
            return [TextDelta(held)]
        return []  # blank space after ``</think>``

    def _decide_start(self) -> list[ReasoningDelta | TextDelta]:
        start = self._held.lstrip()
        if not start or (len(start) < len(OPEN_TAG) and OPEN_TAG.startswith(start)):
            return []  # blank so far, or a start of the tag: wait for more
        if start.startswith(OPEN_TAG):
            self._state = _THINKING
            self._held = start[len(OPEN_TAG) :]
            return self._inside()
        self._state = _TEXT
        held, self._held = self._held, ""
        return [TextDelta(held)]

    def _inside(self) -> list[ReasoningDelta | TextDelta]:
        end = self._held.find(CLOSE_TAG)
        if end >= 0:
            thought = self._held[:end]
            self._held = self._held[end + len(CLOSE_TAG) :]
            self._state = _AFTER
            out: list[ReasoningDelta | TextDelta] = [self._reasoning(thought)] if thought else []
            return out + self._after()
        keep = _partial_suffix(self._held, CLOSE_TAG)
        thought = self._held[: len(self._held) - keep]
        self._held = self._held[len(self._held) - keep :]
        return [self._reasoning(thought)] if thought else []

    def _after(self) -> list[ReasoningDelta | TextDelta]:
        text = self._held.lstrip()
        if not text:
            self._held = ""
            return []
        self._state = _TEXT
        self._held = ""
        return [TextDelta(text)]

    def _reasoning(self, text: str) -> ReasoningDelta:
        first = not self._began
        self._began = True
        return ReasoningDelta(text, new_block=first, source=SOURCE_THINK_TAG)


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest end of ``text`` that is a beginning of ``tag`` (and not all of it)."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0
