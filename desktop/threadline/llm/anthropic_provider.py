"""Anthropic's Messages API through the official ``anthropic`` SDK (docs/design.md §4).

Raw stream events (``messages.create(stream=True)``) go through the pure
``AnthropicAccumulator``; the SDK's higher-level stream helper is not used, so
both providers share one shape. The SDK (slow to import; docs/performance.md) is
imported when a provider is created. ``max_retries=0``: retries are ours.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from threadline.core.config import ModelInfo, ProviderConfig
from threadline.core.reasoning import MIN_THINKING_BUDGET, THINKING_OUTPUT_ROOM
from threadline.core.request import BuiltRequest, ToolSpec
from threadline.core.unicode_text import scrub_value
from threadline.llm.accumulate import AnthropicAccumulator
from threadline.llm.base import DEFAULT_ANTHROPIC_MAX_TOKENS, ChatParams
from threadline.llm.convert import anthropic_messages, anthropic_tools, tools_to_send
from threadline.llm.errors import ProviderError
from threadline.llm.events import StreamEvent
from threadline.llm.sdk_provider import SdkProvider, client_options
from threadline.llm.timeouts import Timeouts

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

_END = object()


def _sdk_base_url(base_url: str) -> str | None:
    """The SDK appends ``/v1/messages`` itself; accept a base URL given with ``/v1``."""
    if not base_url:
        return None
    trimmed = base_url.rstrip("/")
    return trimmed[: -len("/v1")] if trimmed.endswith("/v1") else trimmed


def thinking_options(body: dict[str, Any], budget: int) -> dict[str, Any]:
    """Extended thinking for a request ``body`` (its ``max_tokens`` raised to leave room to answer).

    The API refuses a budget under 1,024 tokens, a ``max_tokens`` not above the budget, and
    a changed temperature or top-p while thinking, so those are left at the API's defaults.
    """
    budget = max(MIN_THINKING_BUDGET, budget)
    body["max_tokens"] = max(body["max_tokens"], budget + THINKING_OUTPUT_ROOM)
    return {"thinking": {"type": "enabled", "budget_tokens": budget}}


class AnthropicProvider(SdkProvider):
    """Streams messages from Anthropic (or a server speaking its API)."""

    _client: AsyncAnthropic

    def __init__(self, config: ProviderConfig, api_key: str | None, *, timeouts: Timeouts) -> None:
        import anthropic

        client = anthropic.AsyncAnthropic(
            base_url=_sdk_base_url(config.base_url), **client_options(config, api_key, timeouts)
        )
        super().__init__(config, anthropic, client, timeouts=timeouts)

    def request_body(
        self, request: BuiltRequest, params: ChatParams, tools: Sequence[ToolSpec] = ()
    ) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` (``extra_body`` merged into the JSON sent)."""
        body: dict[str, Any] = {
            "model": params.model,
            "max_tokens": params.max_tokens or DEFAULT_ANTHROPIC_MAX_TOKENS,
            "messages": anthropic_messages(request),
            "stream": True,
        }
        if request.system:
            body["system"] = request.system
        specs = tools_to_send(request, tools)
        if specs:
            body["tools"] = anthropic_tools(specs)
        # Sampling and thinking are passed through ``extra_body``: the API reads them from the
        # JSON body whatever the installed SDK's typed arguments are.
        sampling = {"temperature": params.temperature, "top_p": params.top_p}
        extra: dict[str, Any] = {k: v for k, v in sampling.items() if v is not None}
        if params.thinking_budget:
            extra = thinking_options(body, params.thinking_budget)
        if extra:
            body["extra_body"] = extra
        return body

    async def stream(
        self, request: BuiltRequest, params: ChatParams, tools: Sequence[ToolSpec] = ()
    ) -> AsyncIterator[StreamEvent]:
        body = scrub_value(self.request_body(request, params, tools))[0]  # UTF-8 must encode it
        accumulator = AnthropicAccumulator(provider=self.name, model=params.model)
        sdk_stream: Any = None
        reading = streaming = False

        async def open_stream() -> tuple[AsyncIterator[Any], Any]:
            nonlocal sdk_stream, reading
            sdk_stream = await cast(Any, self._client.messages).create(**body)
            reading = True
            events = aiter(sdk_stream)
            return events, await anext(events, _END)

        try:
            events, event = await self.first_byte(open_stream(), params.model)
            streaming = True
            accumulator.request_id = sdk_stream.response.headers.get("request-id") or ""
            while event is not _END:
                for out in accumulator.feed(event):
                    yield out
                event = await anext(events, _END)
            finished = accumulator.finish()
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
        finally:
            if sdk_stream is not None:
                await sdk_stream.close()
        yield finished

    async def list_models(self) -> list[ModelInfo]:
        return [
            ModelInfo(
                id=m.id,
                supports_images=True,  # every current Claude model accepts images
                owned_by="anthropic",
                extra={"display_name": getattr(m, "display_name", "") or m.id},
            )
            for m in await self._sdk_models()
        ]
