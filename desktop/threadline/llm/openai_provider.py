"""OpenAI-compatible servers: chat completions streamed over ``httpx`` (docs/design.md §4).

One class serves OpenAI, Ollama, LM Studio, llama.cpp server, vLLM, OpenRouter,
Groq and the rest: only the base URL and the key differ. The request is made by
``threadline.llm.openai_http`` with plain ``httpx`` and no ``openai`` SDK (why:
that module): ``open_stream`` POSTs the body ``request_body`` builds and turns a
non-2xx answer into a ``ProviderError`` before the stream is read. Retries are
ours (``threadline.llm.retry``); ``httpx`` makes none. The client's read timeout
is what catches a stream that stalls.

The body is read here as bytes (``response.aiter_bytes()``), split into events by
``threadline.llm.sse`` and decoded with ``json.loads`` into plain dicts for the
``OpenAIAccumulator``. No typed object is built per event: a pydantic object per
chunk (what the SDK's stream builds) costs CPU with the GIL held, enough, with a
few tabs streaming, for the GUI thread to miss its loop-stall budget
(docs/design.md §5) although streams are read on a worker thread. The figures,
before and after, and the benches that measure them are in docs/performance.md
("Figures behind code comments").

What the SDK's stream object did that is done here: stop at ``[DONE]`` and read
the rest of the body briefly (``DRAIN_SECONDS``) so the HTTP/1.1 connection goes
back to the pool; turn an error event (``{"error": …}``, ``event: error``,
llama.cpp's ``error:`` field) into the right ``ProviderError`` (``_chunk``); map
transport errors while reading (``sdk_errors`` maps the raw ``httpx`` ones). The
body is split into lines by ``threadline.llm.sse``, not ``response.aiter_lines()``:
that splits as ``str.splitlines`` does, also at U+2028, U+0085 and the like, which a
JSON string may hold raw, and would cut such an event in two.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any

from threadline.core.config import ModelInfo, ProviderConfig
from threadline.core.context_windows import served_window, window_from_listing
from threadline.core.request import BuiltRequest, ToolSpec
from threadline.core.unicode_text import scrub_value
from threadline.llm.accumulate import OpenAIAccumulator
from threadline.llm.base import ChatParams
from threadline.llm.convert import openai_messages, openai_tools, tools_to_send
from threadline.llm.errors import ProviderError, malformed_stream, map_status_error
from threadline.llm.events import StreamEvent
from threadline.llm.openai_host import is_official_openai
from threadline.llm.openai_http import NO_SDK, get_json, make_client, open_stream
from threadline.llm.sdk_provider import SdkProvider
from threadline.llm.sse import ServerSentEvent, SSEDecoder
from threadline.llm.timeouts import Timeouts

_VISION_HINTS = (
    "gpt-4o",
    "gpt-4.1",
    "gpt-4-turbo",
    "gpt-5",
    "o1",
    "o3",
    "o4",
    "vision",
    "llava",
    "bakllava",
    "gemma3",
    "-vl",
    "pixtral",
    "minicpm-v",
    "moondream",
    "claude",
    "gemini",
)


DRAIN_SECONDS = 0.1
"""How long the rest of a body after ``[DONE]`` is read (as the SDK does) before the response is closed."""


async def _drain(body_chunks: AsyncIterator[bytes]) -> None:
    """Read what follows ``[DONE]`` so an HTTP/1.1 connection goes back to the pool, not closed.

    Best effort: a server that keeps the body open, or breaks it now, costs at most
    ``DRAIN_SECONDS`` and no error (the reply is complete).
    """
    with contextlib.suppress(Exception):
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in body_chunks:
                pass


def guess_supports_images(model_id: str) -> bool:
    """Whether a model id names a model known to accept images (a hint for the UI only)."""
    lowered = model_id.lower()
    return any(hint in lowered for hint in _VISION_HINTS)


class OpenAIProvider(SdkProvider):
    """Streams chat completions from any OpenAI-compatible server."""

    def __init__(self, config: ProviderConfig, api_key: str | None, *, timeouts: Timeouts) -> None:
        super().__init__(config, NO_SDK, make_client(config, api_key, timeouts), timeouts=timeouts)

    async def aclose(self) -> None:
        await self._client.aclose()

    def request_body(
        self, request: BuiltRequest, params: ChatParams, tools: Sequence[ToolSpec] = ()
    ) -> dict[str, Any]:
        """The JSON body POSTed to ``chat/completions``."""
        body: dict[str, Any] = {
            "model": params.model,
            "messages": openai_messages(request),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        specs = tools_to_send(request, tools)
        if specs:
            body["tools"] = openai_tools(specs)
        if params.temperature is not None:
            body["temperature"] = params.temperature
        if params.top_p is not None:
            body["top_p"] = params.top_p
        if params.max_tokens is not None:
            key = "max_completion_tokens" if is_official_openai(self.config.base_url) else "max_tokens"
            body[key] = params.max_tokens
        if params.reasoning_effort:
            body["reasoning_effort"] = params.reasoning_effort
        return body

    async def stream(
        self, request: BuiltRequest, params: ChatParams, tools: Sequence[ToolSpec] = ()
    ) -> AsyncIterator[StreamEvent]:
        body = scrub_value(self.request_body(request, params, tools))[0]  # UTF-8 must encode it
        accumulator = OpenAIAccumulator(provider=self.name, model=params.model)
        reading = streaming = False
        try:
            opened = open_stream(self._client, body, provider=self.name, model=params.model)
            async with contextlib.AsyncExitStack() as stack:  # closes the response however this ends

                async def open_body() -> tuple[Any, AsyncIterator[bytes], bytes | None]:
                    nonlocal reading
                    response = await stack.enter_async_context(opened)
                    reading = True
                    chunks = await stack.enter_async_context(aclosing(response.aiter_bytes()))
                    return response, chunks, await anext(chunks, None)

                response, body_chunks, first = await self.first_byte(open_body(), params.model)
                streaming = True
                accumulator.request_id = response.headers.get("x-request-id") or ""
                decoder = SSEDecoder()
                done = False
                chunk = first
                while chunk is not None:
                    for sse in decoder.feed(chunk):
                        if sse.data.startswith(b"[DONE]"):
                            done = True
                            break
                        for event in accumulator.feed(self._chunk(sse, params.model)):
                            yield event
                    if done:
                        break
                    chunk = await anext(body_chunks, None)
                for event in accumulator.held_back():  # an undecided ``<think>`` start, an unclosed thought
                    yield event
                finished = accumulator.finish(done=done)
                if done:
                    await _drain(body_chunks)
        except ProviderError:
            raise
        except Exception as err:
            mapped = self._map(
                err,
                params.model,
                during_stream=accumulator.has_output,
                reading=reading,
                streaming=streaming,
                answered=reading,
            )
            if mapped is None:
                raise
            raise mapped from err
        yield finished

    def _chunk(self, sse: ServerSentEvent, model: str) -> dict[str, Any]:
        """One event's JSON object; an error event raises its ``ProviderError``."""
        try:
            data = json.loads(sse.data)
        except ValueError as err:  # JSONDecodeError, or bytes that are not UTF-8
            raise malformed_stream(self.name, "an event was not valid JSON", model=model) from err
        if not isinstance(data, dict):
            raise malformed_stream(self.name, "an event was not a JSON object", model=model)
        if data.get("error") or sse.event == "error":
            raise map_status_error(None, data, None, provider=self.name, model=model)
        return data

    async def list_models(self) -> list[ModelInfo]:
        try:
            listed = await get_json(self._client, "models", provider=self.name)
            models = [m for m in listed.get("data") or () if isinstance(m.get("id"), str)]
        except ProviderError:
            raise
        except Exception as err:
            mapped = self._map(err, "", during_stream=False)
            if mapped is None:
                raise
            raise mapped from err
        configured = await self._llama_cpp_window(models)
        return sorted(
            (
                ModelInfo(
                    id=m["id"],
                    context_window=configured or window_from_listing(m),
                    owned_by=str(m.get("owned_by") or ""),
                    supports_images=guess_supports_images(m["id"]),
                )
                for m in models
            ),
            key=lambda info: info.id,
        )

    async def _llama_cpp_window(self, models: Sequence[dict[str, Any]]) -> int | None:
        """The window a llama.cpp server was started with (``-c``, per slot), from its ``/props``.

        Its model listing states only the window the model was trained for, often far
        larger than the server's: a request over the real one gets an empty reply, not
        an error, so the true figure is what lets Threadline compact before sending. Any
        other server, or a ``/props`` that does not answer as expected: ``None``.
        """
        if not any(m.get("owned_by") == "llamacpp" for m in models):
            return None
        base = self._client.base_url
        root = base.path.rstrip("/").removesuffix("/v1")
        try:
            props = await get_json(
                self._client, str(base.copy_with(path=root + "/props")), provider=self.name
            )
        except Exception:  # an older server without /props: the listing's figure stands
            return None
        return served_window(props)
