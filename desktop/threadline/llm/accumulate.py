"""Pure accumulators: stream chunks → ``StreamEvent``s (docs/design.md §4).

No I/O here. A provider feeds each chunk and yields what comes back; at the
end ``finish()`` assembles the tool calls and checks that the stream really
finished.

* OpenAI: chunks are the JSON objects of the stream as plain dicts (the provider
  decodes the SSE itself, see ``threadline.llm.openai_provider`` for why), read
  by key. A chunk of the wrong shape raises ``MalformedStreamError``.
* Anthropic: raw stream events as the SDK parsed them, read by attribute only,
  so any look-alike can be replayed in unit tests.

Tolerances for OpenAI-compatible servers seen in the wild: a missing tool-call
``index`` (taken as the position), an id repeated on every delta, the whole call
in one delta, no usage chunk, ``stop`` as the finish reason of a reply with tool
calls, and no tool-call id (one is made up).

Reasoning never becomes text: OpenAI-compatible ``reasoning_content`` / ``reasoning``
deltas and a leading ``<think>…</think>`` in the content (``threadline.llm.think_tags``)
become ``ReasoningDelta``s, as do Anthropic's ``thinking`` and ``redacted_thinking``
blocks with their signatures.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from threadline.core.messages import ToolCall
from threadline.core.reasoning import SOURCE_ANTHROPIC, SOURCE_OPENAI
from threadline.llm.errors import MalformedStreamError, malformed_stream
from threadline.llm.events import (
    STOP_MAX_TOKENS,
    ReasoningDelta,
    StreamEvent,
    StreamFinished,
    TextDelta,
    ToolCallDelta,
    Usage,
    normalise_stop_reason,
)
from threadline.llm.think_tags import ThinkTagSplitter


@dataclass(slots=True)
class _PartialCall:
    index: int
    id: str = ""
    name: str = ""
    arguments: str = ""


def _count(value: object) -> int | None:
    """A token count as reported (``None`` when missing or not a number)."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def assemble_tool_calls(
    calls: list[_PartialCall], *, provider: str, model: str, stop_reason: str
) -> tuple[ToolCall, ...]:
    """Final tool calls; arguments must be a complete JSON object."""
    out: list[ToolCall] = []
    for position, call in enumerate(sorted(calls, key=lambda c: c.index)):
        arguments = call.arguments if call.arguments.strip() else "{}"
        label = call.name or "a tool"
        try:
            value = json.loads(arguments)
        except json.JSONDecodeError as err:
            reason = (
                f"the arguments of the call to {label} were cut off at the max tokens limit "
                f"(raise max tokens for this agent)"
                if stop_reason == STOP_MAX_TOKENS
                else f"the arguments of the call to {label} are not valid JSON"
            )
            raise malformed_stream(provider, reason, model=model) from err
        if not isinstance(value, dict):
            raise malformed_stream(
                provider, f"the arguments of the call to {label} are not a JSON object", model=model
            )
        if not call.name:
            raise malformed_stream(provider, "a tool call came without a tool name", model=model)
        out.append(ToolCall(id=call.id or f"call_{position}", name=call.name, arguments=arguments))
    return tuple(out)


class OpenAIAccumulator:
    """Chat-completions chunks (``stream=True``, ``include_usage``), as decoded JSON → events."""

    def __init__(self, *, provider: str, model: str, request_id: str = "") -> None:
        self.provider = provider
        self.model = model
        self.request_id = request_id
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self._calls: dict[int, _PartialCall] = {}
        self._text_seen = False
        self._reasoning_seen = False
        self._think_tags = ThinkTagSplitter()

    @property
    def has_output(self) -> bool:
        return self._text_seen or self._reasoning_seen or bool(self._calls)

    def feed(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        try:
            return self._feed(chunk)
        except (AttributeError, TypeError, ValueError) as err:  # a list where an object belongs, …
            raise malformed_stream(
                self.provider, "a chunk did not have the chat-completions shape", model=self.model
            ) from err

    def _feed(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        model = chunk.get("model")
        if model and isinstance(model, str):
            self.model = model
        if not self.request_id:
            chunk_id = chunk.get("id")
            if chunk_id and isinstance(chunk_id, str):
                self.request_id = chunk_id
        for choice in chunk.get("choices") or ():
            if (choice.get("index") or 0) != 0:
                continue
            delta = choice.get("delta")
            if delta:
                thought = delta.get("reasoning_content") or delta.get("reasoning")
                if thought:
                    if not isinstance(thought, str):
                        raise TypeError("reasoning is not text")
                    events.append(
                        ReasoningDelta(thought, new_block=not self._reasoning_seen, source=SOURCE_OPENAI)
                    )
                    self._reasoning_seen = True
                text = delta.get("content")
                if text:
                    if not isinstance(text, str):
                        raise TypeError("content is not text")
                    self._text_seen = True
                    events.extend(self._think_tags.feed(text))
                for position, call_delta in enumerate(delta.get("tool_calls") or ()):
                    events.append(self._feed_call(position, call_delta))
            reason = choice.get("finish_reason")
            if reason:
                self.finish_reason = str(reason)
        usage = chunk.get("usage")
        if usage:
            self.usage = Usage(_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")))
            events.append(self.usage)
        return events

    def _feed_call(self, position: int, call_delta: Mapping[str, Any]) -> ToolCallDelta:
        index = call_delta.get("index")
        index = position if index is None else int(index)
        function = call_delta.get("function") or {}
        name = function.get("name") or ""
        arguments = function.get("arguments") or ""
        call_id = call_delta.get("id") or ""
        if not isinstance(name, str) or not isinstance(arguments, str) or not isinstance(call_id, str):
            raise TypeError("a tool-call field is not text")
        partial = self._calls.get(index)
        first = partial is None
        if partial is None:
            partial = self._calls[index] = _PartialCall(index)
        if call_id and not partial.id:
            partial.id = call_id
        if name and not partial.name:
            partial.name = name
        partial.arguments += arguments
        if first:
            return ToolCallDelta(index, partial.id, partial.name, arguments)
        return ToolCallDelta(index, "", "", arguments)

    def finish(self, *, done: bool = False) -> StreamFinished:
        """The end of the reply; ``done``: the stream's ``data: [DONE]`` arrived.

        Some servers (older llama.cpp and vLLM builds, proxies that rewrite chunks)
        never send a ``finish_reason``. ``[DONE]`` is the server saying the reply is
        over, so it completes the reply with the ordinary stop reason. Without
        either, the body simply ended: a cut connection, reported as incomplete.
        """
        if self.finish_reason is None and not done:
            raise malformed_stream(
                self.provider, "the stream ended before the reply was finished", model=self.model
            )
        stop = normalise_stop_reason(self.finish_reason, has_tool_calls=bool(self._calls))
        calls = assemble_tool_calls(
            list(self._calls.values()), provider=self.provider, model=self.model, stop_reason=stop
        )
        return StreamFinished(stop, calls, self.request_id, self.model, self.usage)

    def held_back(self) -> list[StreamEvent]:
        """Content held while a ``<think>`` tag was undecided; yield it before ``finish()``'s event."""
        return list(self._think_tags.finish())


class AnthropicAccumulator:
    """Messages-API raw stream events → events."""

    def __init__(self, *, provider: str, model: str, request_id: str = "") -> None:
        self.provider = provider
        self.model = model
        self.request_id = request_id
        self.stop_reason: str | None = None
        self.stopped = False
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self._calls: dict[int, _PartialCall] = {}
        """Tool-use blocks by content-block index."""
        self._text_seen = False
        self._reasoning_seen = False

    @property
    def has_output(self) -> bool:
        return self._text_seen or self._reasoning_seen or bool(self._calls)

    @property
    def usage(self) -> Usage | None:
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return Usage(self.input_tokens, self.output_tokens)

    def feed(self, event: Any) -> list[StreamEvent]:
        kind = getattr(event, "type", "")
        if kind == "message_start":
            message = event.message
            self.model = getattr(message, "model", None) or self.model
            if not self.request_id:
                self.request_id = getattr(message, "id", "") or ""
            self._read_usage(getattr(message, "usage", None))
            return []
        if kind == "content_block_start":
            return self._block_start(event.index, event.content_block)
        if kind == "content_block_delta":
            return self._block_delta(event.index, event.delta)
        if kind == "message_delta":
            reason = getattr(event.delta, "stop_reason", None)
            if reason:
                self.stop_reason = reason
            self._read_usage(getattr(event, "usage", None))
            usage = self.usage
            return [usage] if usage is not None else []
        if kind == "message_stop":
            self.stopped = True
        return []  # content_block_stop, ping, and event types added later

    def _read_usage(self, usage: Any) -> None:
        if usage is None:
            return
        input_tokens = getattr(usage, "input_tokens", None)
        if input_tokens is not None:
            cached = (getattr(usage, "cache_read_input_tokens", None) or 0) + (
                getattr(usage, "cache_creation_input_tokens", None) or 0
            )
            self.input_tokens = int(input_tokens) + int(cached)
        output_tokens = getattr(usage, "output_tokens", None)
        if output_tokens is not None:
            self.output_tokens = int(output_tokens)

    def _block_start(self, index: int, block: Any) -> list[StreamEvent]:
        kind = getattr(block, "type", "")
        if kind == "text":
            text = getattr(block, "text", "") or ""
            if text:
                self._text_seen = True
                return [TextDelta(text)]
            return []
        if kind == "tool_use":
            call = _PartialCall(
                len(self._calls), getattr(block, "id", "") or "", getattr(block, "name", "") or ""
            )
            self._calls[index] = call
            initial = getattr(block, "input", None)
            if initial:  # a complete input given up front (no deltas will follow)
                call.arguments = json.dumps(initial)
            return [ToolCallDelta(call.index, call.id, call.name, call.arguments)]
        if kind == "thinking":
            self._reasoning_seen = True
            return [
                ReasoningDelta(
                    getattr(block, "thinking", "") or "",
                    signature=getattr(block, "signature", "") or "",
                    new_block=True,
                    source=SOURCE_ANTHROPIC,
                )
            ]
        if kind == "redacted_thinking":
            self._reasoning_seen = True
            data = getattr(block, "data", "") or ""
            return [ReasoningDelta(redacted_data=data, new_block=True, source=SOURCE_ANTHROPIC)]
        return []  # server-tool blocks and block types added later are not part of the reply

    def _block_delta(self, index: int, delta: Any) -> list[StreamEvent]:
        kind = getattr(delta, "type", "")
        if kind == "text_delta":
            text = getattr(delta, "text", "") or ""
            if text:
                self._text_seen = True
                return [TextDelta(text)]
            return []
        if kind == "input_json_delta":
            call = self._calls.get(index)
            if call is None:
                raise malformed_stream(
                    self.provider, "tool input arrived for an unknown content block", model=self.model
                )
            piece = getattr(delta, "partial_json", "") or ""
            call.arguments += piece
            return [ToolCallDelta(call.index, "", "", piece)] if piece else []
        if kind == "thinking_delta":
            thought = getattr(delta, "thinking", "") or ""
            return [ReasoningDelta(thought, source=SOURCE_ANTHROPIC)] if thought else []
        if kind == "signature_delta":
            signature = getattr(delta, "signature", "") or ""
            return [ReasoningDelta(signature=signature, source=SOURCE_ANTHROPIC)] if signature else []
        return []

    def finish(self) -> StreamFinished:
        if not self.stopped and self.stop_reason is None:
            raise malformed_stream(
                self.provider, "the stream ended before the reply was finished", model=self.model
            )
        stop = normalise_stop_reason(self.stop_reason, has_tool_calls=bool(self._calls))
        calls = assemble_tool_calls(
            list(self._calls.values()), provider=self.provider, model=self.model, stop_reason=stop
        )
        return StreamFinished(stop, calls, self.request_id, self.model, self.usage)


__all__ = ["AnthropicAccumulator", "MalformedStreamError", "OpenAIAccumulator", "assemble_tool_calls"]
