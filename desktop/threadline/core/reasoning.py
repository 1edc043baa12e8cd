"""Reasoning: what a thinking model wrote before its answer, kept apart from the answer.

A reply's reasoning is a tuple of ``Reasoning`` blocks on its ``Message``, never part of
its ``text``. Several blocks, because Anthropic may interleave thinking with tool use
(one block each time it thinks, each with its own signature), and a redacted block is
kept as the opaque data the API gave.

Where each kind comes from (``source``):

* ``anthropic``: a ``thinking`` block (text + ``signature``) or a ``redacted_thinking``
  block (``redacted_data``). The API checks the signature when the block comes back, so
  both are stored byte for byte and sent back unchanged within a tool round.
* ``openai``: ``reasoning_content`` / ``reasoning`` deltas of an OpenAI-compatible stream
  (llama.cpp's server, vLLM, DeepSeek, OpenRouter). Never sent back: DeepSeek refuses a
  request that carries it.
* ``think_tag``: ``<think>…</think>`` at the start of the content (Ollama and many GGUF
  models). Never sent back either.

``duration_ms`` is how long the model thought: from the block's first piece to the next
thing that was not reasoning (the answer's first words, a tool call, the end).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

REASONING_EFFORTS = ("low", "medium", "high")
"""The ``reasoning_effort`` values an agent may set (OpenAI, vLLM, OpenRouter, DeepSeek…)."""
MIN_THINKING_BUDGET = 1024
"""Anthropic's smallest ``budget_tokens``."""
THINKING_OUTPUT_ROOM = 1024
"""Tokens of answer kept beyond the thinking budget when ``max_tokens`` would not leave any."""

SOURCE_ANTHROPIC = "anthropic"
SOURCE_OPENAI = "openai"
SOURCE_THINK_TAG = "think_tag"


@dataclass(frozen=True, slots=True)
class Reasoning:
    """One block of a reply's reasoning."""

    text: str = ""
    signature: str = ""
    """Anthropic's signature of the thinking text (checked by the API when sent back)."""
    redacted_data: str = ""
    """A ``redacted_thinking`` block's encrypted data: nothing to show, only to send back."""
    source: str = ""
    duration_ms: float | None = None

    @property
    def redacted(self) -> bool:
        return bool(self.redacted_data)

    @property
    def signed(self) -> bool:
        """A block Anthropic can take back (it checks the signature or the redacted data)."""
        return bool(self.signature or self.redacted_data)

    def to_json(self) -> dict[str, Any]:
        """As stored in a message's content JSON and in Threadline JSON; empty fields left out."""
        data: dict[str, Any] = {"text": self.text}
        if self.signature:
            data["signature"] = self.signature
        if self.redacted_data:
            data["redacted_data"] = self.redacted_data
        if self.source:
            data["source"] = self.source
        if self.duration_ms is not None:
            data["duration_ms"] = self.duration_ms
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reasoning:
        duration = data.get("duration_ms")
        return cls(
            text=str(data.get("text") or ""),
            signature=str(data.get("signature") or ""),
            redacted_data=str(data.get("redacted_data") or ""),
            source=str(data.get("source") or ""),
            duration_ms=float(duration)
            if isinstance(duration, int | float) and not isinstance(duration, bool)
            else None,
        )


def reasoning_text(blocks: Iterable[Reasoning]) -> str:
    """The readable reasoning of a reply: its blocks' texts, one paragraph each."""
    return "\n\n".join(b.text.strip() for b in blocks if b.text.strip())


def total_duration_ms(blocks: Iterable[Reasoning]) -> float | None:
    """How long the model thought in all (``None`` when no block was timed)."""
    durations = [b.duration_ms for b in blocks if b.duration_ms is not None]
    return sum(durations) if durations else None


def thought_label(blocks: tuple[Reasoning, ...], *, thinking: bool, elapsed_ms: float | None = None) -> str:
    """The block's heading: "Thinking… 4 s" while it streams, "Thought for 12 s" after."""
    if thinking:
        if elapsed_ms is None or elapsed_ms < 1000:
            return "Thinking…"
        return f"Thinking… {format_seconds(elapsed_ms)}"
    total = total_duration_ms(blocks)
    if total is None:
        return "Thoughts"
    return f"Thought for {format_seconds(total)}"


def format_seconds(ms: float) -> str:
    """A duration as people say it: "less than a second", "12 s", "2 min 5 s"."""
    seconds = round(ms / 1000)
    if seconds < 1:
        return "less than a second"
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def grow(
    blocks: tuple[Reasoning, ...],
    *,
    text: str = "",
    signature: str = "",
    redacted_data: str = "",
    new_block: bool = False,
    source: str = "",
) -> tuple[Reasoning, ...]:
    """``blocks`` with one streamed piece added: to the last block, or as a new block.

    A new block starts when the piece says so, when there is none yet, or when the
    last one is already closed (timed: something else came in between).
    """
    last = blocks[-1] if blocks else None
    if new_block or last is None or last.duration_ms is not None or last.redacted:
        return (
            *blocks,
            Reasoning(text=text, signature=signature, redacted_data=redacted_data, source=source),
        )
    grown = replace(
        last,
        text=last.text + text,
        signature=last.signature + signature,
        redacted_data=last.redacted_data + redacted_data,
    )
    return (*blocks[:-1], grown)


def close_last(blocks: tuple[Reasoning, ...], duration_ms: float) -> tuple[Reasoning, ...]:
    """The last block timed (it ended ``duration_ms`` after it began); others unchanged."""
    if not blocks or blocks[-1].duration_ms is not None:
        return blocks
    return (*blocks[:-1], replace(blocks[-1], duration_ms=max(0.0, duration_ms)))
