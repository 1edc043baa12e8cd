"""Reasoning in foreign exports, read into ``Message.reasoning`` (never into the reply's text).

* **Claude** writes a reply's thinking as ``thinking`` content blocks (``thinking``: the
  text; newer exports add ``signature`` and ``start_timestamp``/``stop_timestamp``), and
  encrypted thinking as ``redacted_thinking`` (``data``). Each becomes one Anthropic block;
  the signature and the encrypted data are kept byte for byte, as a block made here would
  be, and the timestamps give the "Thought for N s".
* **ChatGPT** (o1, o3, GPT-5 thinking) writes the thinking as its own hidden node before
  the answer: ``content_type: "thoughts"`` with a list of thoughts (``summary`` and
  ``content``), usually followed by a ``reasoning_recap`` node ("Thought for 12 seconds").
  The thoughts become one block on the next message shown (the answer or a tool call),
  timed from ``metadata.finished_duration_sec`` or the recap's words. OpenAI never gets
  reasoning back, so the block's source is ``openai``.
"""

from __future__ import annotations

import re

from threadline.core.reasoning import SOURCE_ANTHROPIC, SOURCE_OPENAI, Reasoning
from threadline.interchange.common import as_dict, as_list, as_str, as_time, checked_text
from threadline.interchange.limits import ImportLimits

CLAUDE_REASONING_BLOCKS = frozenset({"thinking", "redacted_thinking"})
_RECAP = re.compile(r"(?:(\d+)\s*(?:m|min|minutes?)\b)?\s*(?:(\d+)\s*(?:s|sec|seconds?)\b)?", re.IGNORECASE)


def claude_block(block: dict[str, object], limits: ImportLimits) -> Reasoning | None:
    """A Claude ``thinking`` / ``redacted_thinking`` content block as a reasoning block
    (``None`` when it holds nothing to show or send back)."""
    kind = as_str(block.get("type"))
    if kind == "redacted_thinking":
        data = as_str(block.get("data"))
        return Reasoning(redacted_data=data, source=SOURCE_ANTHROPIC) if data else None
    text = as_str(block.get("thinking")) or as_str(block.get("text"))
    signature = as_str(block.get("signature"))
    if not (text or signature):
        return None
    return Reasoning(
        text=checked_text(text, limits),
        signature=signature,
        source=SOURCE_ANTHROPIC,
        duration_ms=_claude_duration(block),
    )


def _claude_duration(block: dict[str, object]) -> float | None:
    start, stop = as_time(block.get("start_timestamp")), as_time(block.get("stop_timestamp"))
    if start is None or stop is None or stop < start:
        return None
    return (stop - start).total_seconds() * 1000


def is_chatgpt_thoughts(message: dict[str, object]) -> bool:
    return as_str(as_dict(message.get("content")).get("content_type")) == "thoughts"


def is_chatgpt_recap(message: dict[str, object]) -> bool:
    return as_str(as_dict(message.get("content")).get("content_type")) == "reasoning_recap"


def chatgpt_thoughts(
    thoughts: dict[str, object], recap: dict[str, object] | None, limits: ImportLimits
) -> Reasoning | None:
    """A ChatGPT ``thoughts`` message (and the ``reasoning_recap`` after it, if any) as one
    reasoning block: each thought's summary on a line, its content below, a blank line between."""
    content = as_dict(thoughts.get("content"))
    pieces: list[str] = []
    for raw in as_list(content.get("thoughts")):
        thought = as_dict(raw)
        said = "\n".join(
            p for p in (as_str(thought.get("summary")).strip(), as_str(thought.get("content")).strip()) if p
        )
        if said:
            pieces.append(said)
    text = "\n\n".join(pieces)
    if not text:
        return None
    return Reasoning(
        text=checked_text(text, limits),
        source=SOURCE_OPENAI,
        duration_ms=_chatgpt_duration(thoughts, recap),
    )


def _chatgpt_duration(thoughts: dict[str, object], recap: dict[str, object] | None) -> float | None:
    for message in (recap, thoughts):
        seconds = as_dict((message or {}).get("metadata")).get("finished_duration_sec")
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds >= 0:
            return float(seconds) * 1000
    if recap is None:
        return None
    words = as_str(as_dict(recap.get("content")).get("content"))
    for match in _RECAP.finditer(words):
        minutes, seconds = match.group(1), match.group(2)
        if minutes or seconds:
            return (int(minutes or 0) * 60 + int(seconds or 0)) * 1000.0
    return None
