"""Byte-exact streams and error bodies in the OpenAI and Anthropic wire formats.

Everything here returns what a real server writes on the wire, so the official
SDKs parse it exactly as they parse the real services:

* OpenAI chat completions (``stream=True``): ``data: {chunk}\\n\\n`` per chunk,
  ``"usage": null`` on every chunk and one usage-only chunk with ``"choices": []``
  when ``stream_options.include_usage`` was asked for, then ``data: [DONE]\\n\\n``.
* Anthropic messages (``stream=True``): ``event: <type>\\ndata: {json}\\n\\n`` for
  ``message_start``, ``content_block_start``, ``ping``, ``content_block_delta``
  (``text_delta`` / ``input_json_delta``), ``content_block_stop``,
  ``message_delta`` (stop reason, usage) and ``message_stop``.
* Error bodies in each provider's shape: OpenAI ``{"error": {"message", "type",
  "param", "code"}}``; Anthropic ``{"type": "error", "error": {"type",
  "message"}, "request_id"}``.

The ``*_response`` helpers wrap these into ``ScriptedResponse``s for the replay
server (``tests.support.sse_server``), e.g. ``openai_rate_limited(retry_after=2)``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CREATED = 1_735_000_000


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass
class ScriptedResponse:
    """One scripted answer of the replay server.

    ``chunks`` are written exactly as given, each flushed on its own (as one HTTP
    chunk when ``chunked``). Faults:

    * ``first_byte_delay``: seconds before anything (even the status line) is sent;
    * ``chunk_delay``: seconds between chunks (``0.001`` ≈ 1,000 chunks/s);
    * ``stall_after`` / ``stall_for``: after writing that many chunks, send nothing
      for ``stall_for`` seconds, then go on (``None``: until the server stops, then drop);
    * ``disconnect_after``: after writing that many chunks, close the socket abruptly
      (no terminating chunk, so the client sees a truncated body);
    * ``broken_framing``: after writing that many chunks, write a chunk whose size line is
      not hexadecimal (a malformed chunked body), then close the socket.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    first_byte_delay: float = 0.0
    chunk_delay: float = 0.0
    stall_after: int | None = None
    stall_for: float | None = None
    disconnect_after: int | None = None
    broken_framing: int | None = None
    chunked: bool = True


def sse_response(
    chunks: Sequence[bytes], *, headers: Mapping[str, str] | None = None, **faults: Any
) -> ScriptedResponse:
    base = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
    base.update(headers or {})
    return ScriptedResponse(200, base, list(chunks), **faults)


def json_response(
    status: int, body: object, *, headers: Mapping[str, str] | None = None, **faults: Any
) -> ScriptedResponse:
    base = {"content-type": "application/json"}
    base.update(headers or {})
    return ScriptedResponse(status, base, [_json(body).encode()], chunked=False, **faults)


# -- OpenAI chat completions -----------------------------------------------------------------


def openai_event(payload: object) -> bytes:
    return f"data: {_json(payload)}\n\n".encode()


OPENAI_DONE = b"data: [DONE]\n\n"


@dataclass
class _OpenAIChunks:
    completion_id: str
    model: str
    with_usage: bool

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        payload: dict[str, Any] = {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model,
            "system_fingerprint": "fp_replay",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }
        if self.with_usage:
            payload["usage"] = None
        return openai_event(payload)

    def usage(self, usage: tuple[int, int]) -> bytes:
        prompt, completion = usage
        return openai_event(
            {
                "id": self.completion_id,
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": self.model,
                "system_fingerprint": "fp_replay",
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            }
        )


def openai_text_stream(
    pieces: Iterable[str],
    *,
    model: str = "gpt-4o-mini",
    usage: tuple[int, int] | None = (12, 7),
    finish_reason: str = "stop",
    completion_id: str = "chatcmpl-replay1",
    done: bool = True,
) -> list[bytes]:
    """A streamed text reply: role chunk, one chunk per piece, finish chunk, usage, ``[DONE]``."""
    b = _OpenAIChunks(completion_id, model, usage is not None)
    out = [b.chunk({"role": "assistant", "content": "", "refusal": None})]
    out += [b.chunk({"content": piece}) for piece in pieces]
    out.append(b.chunk({}, finish_reason))
    if usage is not None:
        out.append(b.usage(usage))
    if done:
        out.append(OPENAI_DONE)
    return out


def split_text(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


ToolCallScript = tuple[str, str, "str | Mapping[str, Any]"]
"""``(call id, tool name, arguments)``; arguments as a dict or as raw (maybe broken) JSON text."""


def _arguments(arguments: str | Mapping[str, Any]) -> str:
    return arguments if isinstance(arguments, str) else _json(arguments)


def openai_tool_call_stream(
    calls: Sequence[ToolCallScript],
    *,
    text_pieces: Iterable[str] = (),
    model: str = "gpt-4o-mini",
    usage: tuple[int, int] | None = (40, 18),
    piece_size: int = 7,
    finish_reason: str = "tool_calls",
    completion_id: str = "chatcmpl-replay2",
    done: bool = True,
) -> list[bytes]:
    """A reply asking for tools; each call's arguments are split over several deltas."""
    b = _OpenAIChunks(completion_id, model, usage is not None)
    out = [b.chunk({"role": "assistant", "content": None, "refusal": None})]
    out += [b.chunk({"content": piece}) for piece in text_pieces]
    for index, (call_id, name, arguments) in enumerate(calls):
        first = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        out.append(b.chunk({"tool_calls": [first]}))
        for piece in split_text(_arguments(arguments), piece_size):
            out.append(b.chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    out.append(b.chunk({}, finish_reason))
    if usage is not None:
        out.append(b.usage(usage))
    if done:
        out.append(OPENAI_DONE)
    return out


OPENAI_MALFORMED_EVENT = (
    b'data: {"id":"chatcmpl-replay1","object":"chat.completion.chunk","choices":[{"index":0,\n\n'
)


def openai_error_body(
    message: str, type: str, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def openai_error(
    status: int, body: dict[str, Any], headers: Mapping[str, str] | None = None, **faults: Any
) -> ScriptedResponse:
    base = {"x-request-id": "req_replay_openai"}
    base.update(headers or {})
    return json_response(status, body, headers=base, **faults)


def openai_auth_error() -> ScriptedResponse:
    return openai_error(
        401,
        openai_error_body(
            "Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            "invalid_api_key",
        ),
    )


def openai_model_not_found(model: str) -> ScriptedResponse:
    return openai_error(
        404,
        openai_error_body(
            f"The model `{model}` does not exist or you do not have access to it.",
            "invalid_request_error",
            "model_not_found",
        ),
    )


def openai_rate_limited(retry_after: float | None = 2) -> ScriptedResponse:
    headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
    return openai_error(
        429,
        openai_error_body(
            "Rate limit reached for gpt-4o-mini in organization org-replay on requests per min (RPM): "
            "Limit 3, Used 3, Requested 1. Please try again in 20s.",
            "requests",
            "rate_limit_exceeded",
        ),
        headers,
    )


def openai_server_error(status: int = 500) -> ScriptedResponse:
    if status == 503:
        body = openai_error_body(
            "The engine is currently overloaded, please try again later.", "server_error"
        )
    else:
        body = openai_error_body(
            "The server had an error while processing your request. Sorry about that!", "server_error"
        )
    return openai_error(status, body)


def openai_context_length_error(limit: int = 128000, requested: int = 130512) -> ScriptedResponse:
    return openai_error(
        400,
        openai_error_body(
            f"This model's maximum context length is {limit} tokens. However, your messages resulted in "
            f"{requested} tokens. Please reduce the length of the messages.",
            "invalid_request_error",
            "context_length_exceeded",
            "messages",
        ),
    )


def openai_models_body(models: Sequence[str]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": m, "object": "model", "created": CREATED, "owned_by": "replay"} for m in models],
    }


# -- Anthropic messages ------------------------------------------------------------------------


def anthropic_event(event: str, payload: object) -> bytes:
    return f"event: {event}\ndata: {_json(payload)}\n\n".encode()


def _message_start(message_id: str, model: str, input_tokens: int) -> bytes:
    return anthropic_event(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": model,
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": input_tokens,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 1,
                },
            },
        },
    )


def _text_block(index: int, pieces: Iterable[str]) -> list[bytes]:
    out = [
        anthropic_event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        )
    ]
    out += [
        anthropic_event(
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}},
        )
        for piece in pieces
    ]
    out.append(anthropic_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    return out


def _message_end(stop_reason: str, output_tokens: int) -> list[bytes]:
    return [
        anthropic_event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        ),
        anthropic_event("message_stop", {"type": "message_stop"}),
    ]


ANTHROPIC_PING = anthropic_event("ping", {"type": "ping"})


def anthropic_text_stream(
    pieces: Iterable[str],
    *,
    model: str = "claude-sonnet-4-5",
    usage: tuple[int, int] = (25, 15),
    stop_reason: str = "end_turn",
    message_id: str = "msg_replay1",
    stop: bool = True,
) -> list[bytes]:
    """message_start, a text block (a delta per piece, then a ping), message_delta, message_stop."""
    blocks = _text_block(0, pieces)
    out = [_message_start(message_id, model, usage[0]), blocks[0], ANTHROPIC_PING, *blocks[1:]]
    if stop:
        out += _message_end(stop_reason, usage[1])
    return out


def anthropic_tool_use_stream(
    calls: Sequence[ToolCallScript],
    *,
    text_pieces: Iterable[str] = (),
    model: str = "claude-sonnet-4-5",
    usage: tuple[int, int] = (380, 70),
    piece_size: int = 7,
    stop_reason: str = "tool_use",
    message_id: str = "msg_replay2",
) -> list[bytes]:
    """An optional text block, then one tool_use block per call with ``input_json_delta`` pieces."""
    out = [_message_start(message_id, model, usage[0]), ANTHROPIC_PING]
    index = 0
    pieces = list(text_pieces)
    if pieces:
        out += _text_block(0, pieces)
        index = 1
    for call_id, name, arguments in calls:
        out.append(
            anthropic_event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
                },
            )
        )
        for piece in split_text(_arguments(arguments), piece_size):
            out.append(
                anthropic_event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                )
            )
        out.append(anthropic_event("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    out += _message_end(stop_reason, usage[1])
    return out


ANTHROPIC_MALFORMED_EVENT = (
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{\n\n'
)


def anthropic_error_body(type: str, message: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": type, "message": message},
        "request_id": "req_replay_anthropic",
    }


def anthropic_stream_error_event(type: str = "overloaded_error", message: str = "Overloaded") -> bytes:
    """An ``error`` event inside a 200 stream (how Anthropic reports overload mid-stream)."""
    return anthropic_event("error", {"type": "error", "error": {"type": type, "message": message}})


def anthropic_error(
    status: int, type: str, message: str, headers: Mapping[str, str] | None = None, **faults: Any
) -> ScriptedResponse:
    base = {"request-id": "req_replay_anthropic"}
    base.update(headers or {})
    return json_response(status, anthropic_error_body(type, message), headers=base, **faults)


def anthropic_auth_error() -> ScriptedResponse:
    return anthropic_error(401, "authentication_error", "invalid x-api-key")


def anthropic_model_not_found(model: str) -> ScriptedResponse:
    return anthropic_error(404, "not_found_error", f"model: {model}")


def anthropic_rate_limited(retry_after: float | None = 2) -> ScriptedResponse:
    headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
    return anthropic_error(
        429,
        "rate_limit_error",
        "This request would exceed the rate limit for your organization of 50 input tokens per minute.",
        headers,
    )


def anthropic_server_error(status: int = 500) -> ScriptedResponse:
    return anthropic_error(status, "api_error", "Internal server error")


def anthropic_overloaded(status: int = 529) -> ScriptedResponse:
    return anthropic_error(status, "overloaded_error", "Overloaded")


def anthropic_context_length_error(tokens: int = 208310, limit: int = 200000) -> ScriptedResponse:
    return anthropic_error(
        400, "invalid_request_error", f"prompt is too long: {tokens} tokens > {limit} maximum"
    )


def anthropic_models_body(models: Sequence[str]) -> dict[str, Any]:
    data = [
        {
            "type": "model",
            "id": m,
            "display_name": m.replace("-", " ").title(),
            "created_at": "2025-02-19T00:00:00Z",
        }
        for m in models
    ]
    return {
        "data": data,
        "has_more": False,
        "first_id": models[0] if models else None,
        "last_id": models[-1] if models else None,
    }


# -- recorded streams ---------------------------------------------------------------------------

SSE_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sse"


def split_events(raw: bytes) -> list[bytes]:
    """A recorded stream cut into its events, each ending in its blank line (byte-exact)."""
    events = [part + b"\n\n" for part in raw.replace(b"\r\n", b"\n").split(b"\n\n") if part.strip()]
    return events


def load_sse_fixture(name: str) -> list[bytes]:
    """The events of ``tests/fixtures/sse/<name>``, for ``sse_response``."""
    return split_events((SSE_FIXTURES / name).read_bytes())


def parse_sse(chunks: Iterable[bytes]) -> list[tuple[str | None, str]]:
    """``(event, data)`` pairs of a stream, as an SSE client reads them (for unit tests)."""
    out: list[tuple[str | None, str]] = []
    for block in split_events(b"".join(chunks)):
        event: str | None = None
        data: list[str] = []
        for line in block.decode().splitlines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
        out.append((event, "\n".join(data)))
    return out
