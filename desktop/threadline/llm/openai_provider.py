"""OpenAI-compatible servers through the official ``openai`` SDK (DESIGN.md §4).

One class serves OpenAI, Ollama, LM Studio, llama.cpp server, vLLM, OpenRouter,
Groq and the rest: only the base URL and the key differ. The SDK is imported
when a provider is created, not when this module is, so the window paints
before the 0.5 s import. Retries are ours (``threadline.llm.retry``): the client
is made with ``max_retries=0``. The httpx timeout's read part is what catches
a stream that stalls.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from threadline.core.config import ModelInfo, ProviderConfig
from threadline.core.request import BuiltRequest, ToolSpec
from threadline.llm._http import httpx_module
from threadline.llm.accumulate import OpenAIAccumulator
from threadline.llm.base import ChatParams
from threadline.llm.convert import openai_messages, openai_tools, tools_to_send
from threadline.llm.errors import ProviderError
from threadline.llm.events import StreamEvent
from threadline.llm.sdk_errors import map_sdk_exception

if TYPE_CHECKING:
    from types import ModuleType

    from openai import AsyncOpenAI

KEYLESS_PLACEHOLDER = "not-needed"
"""Sent as the key to servers that need none (the SDK insists on one)."""

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


def guess_supports_images(model_id: str) -> bool:
    """Whether a model id names a model known to accept images (a hint for the UI only)."""
    lowered = model_id.lower()
    return any(hint in lowered for hint in _VISION_HINTS)


def is_official_openai(base_url: str) -> bool:
    return not base_url or "api.openai.com" in base_url


class OpenAIProvider:
    """Streams chat completions from any OpenAI-compatible server."""

    def __init__(
        self,
        config: ProviderConfig,
        api_key: str | None,
        *,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
    ) -> None:
        httpx = httpx_module()
        import openai

        self.name = config.name
        self.config = config
        self.timeout = timeout
        self._sdk: ModuleType = openai
        self._client: AsyncOpenAI = openai.AsyncOpenAI(
            api_key=api_key or KEYLESS_PLACEHOLDER,
            base_url=config.base_url or None,
            max_retries=0,
            timeout=httpx.Timeout(timeout, connect=connect_timeout),
            default_headers=dict(config.headers) or None,
        )

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    def request_body(
        self, request: BuiltRequest, params: ChatParams, tools: Sequence[ToolSpec] = ()
    ) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` (also the JSON body sent)."""
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
        if params.max_tokens is not None:
            key = "max_completion_tokens" if is_official_openai(self.config.base_url) else "max_tokens"
            body[key] = params.max_tokens
        return body

    async def stream(
        self, request: BuiltRequest, params: ChatParams, tools: Sequence[ToolSpec] = ()
    ) -> AsyncIterator[StreamEvent]:
        body = self.request_body(request, params, tools)
        accumulator = OpenAIAccumulator(provider=self.name, model=params.model)
        sdk_stream: Any = None
        reading = False
        try:
            sdk_stream = await cast(Any, self._client.chat.completions).create(**body)
            reading = True
            accumulator.request_id = sdk_stream.response.headers.get("x-request-id") or ""
            async for chunk in sdk_stream:
                for event in accumulator.feed(chunk):
                    yield event
            finished = accumulator.finish()
        except ProviderError:
            raise
        except Exception as err:
            mapped = self._map(err, params.model, during_stream=accumulator.has_output, reading=reading)
            if mapped is None:
                raise
            raise mapped from err
        finally:
            if sdk_stream is not None:
                await sdk_stream.close()
        yield finished

    async def list_models(self) -> list[ModelInfo]:
        try:
            models = [model async for model in self._client.models.list()]
        except Exception as err:
            mapped = self._map(err, "", during_stream=False)
            if mapped is None:
                raise
            raise mapped from err
        return sorted(
            (
                ModelInfo(
                    id=m.id,
                    owned_by=getattr(m, "owned_by", "") or "",
                    supports_images=guess_supports_images(m.id),
                )
                for m in models
            ),
            key=lambda info: info.id,
        )

    async def aclose(self) -> None:
        await self._client.close()

    def _map(
        self, err: Exception, model: str, *, during_stream: bool, reading: bool = True
    ) -> ProviderError | None:
        return map_sdk_exception(
            err,
            self._sdk,
            provider=self.name,
            model=model,
            base_url=self.base_url,
            timeout=self.timeout,
            during_stream=during_stream,
            reading=reading,
        )
