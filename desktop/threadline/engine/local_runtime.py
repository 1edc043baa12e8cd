"""The provider "On this computer": the downloaded models, served by the managed runtime.

It is not stored with the other providers: the models folder and the runtime belong to this
computer, while the provider table may sit in a database several computers share. The
provider hub asks ``LocalModels`` for its config and client (``engine/providers.py``). Its
client, ``LocalProvider``, starts or swaps the runtime for the model a turn asks for
(``models/runtime.py``), then streams through the OpenAI-compatible client like any local
server; a runtime that died under a turn fails it with a message naming the model, and the
next turn starts a new one (docs/local-models.md, "The runtime").
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from threadline.core.config import ModelInfo, ProviderConfig, ProviderKind
from threadline.core.request import BuiltRequest, ToolSpec
from threadline.llm.base import ChatParams, Provider
from threadline.llm.errors import ModelNotFoundError, ProviderError
from threadline.llm.events import StreamEvent
from threadline.llm.timeouts import Timeouts
from threadline.models.errors import ModelError
from threadline.models.runtime import LOAD_TIMEOUT, Endpoint

if TYPE_CHECKING:
    from threadline.engine.models import Models

LOCAL_PROVIDER = "On this computer"
LOCAL_ALIAS = "threadline"
"""What the command line's ``--provider`` also accepts for it."""


CRASH_GRACE = 2.0
"""Seconds a cut stream waits to see whether the runtime died (then the turn says so)."""


class RuntimeStopped(ProviderError):
    """The runtime died under a turn (out of memory, killed). Not retried within the turn: the
    person is told, and the next send starts a new runtime."""

    kind = "runtime_stopped"


class LocalModels:
    """Where the provider hub finds the provider "On this computer"."""

    def __init__(self, models: Models) -> None:
        self._models = models

    @staticmethod
    def is_local(name: str) -> bool:
        return name in (LOCAL_PROVIDER, LOCAL_ALIAS)

    def config(self) -> ProviderConfig | None:
        """The provider while the models folder has a model, else ``None`` (nothing to offer)."""
        if not self._models.has_models():
            return None
        # The first byte waits for a model to load; the runtime has its own bound for that.
        return ProviderConfig(
            name=LOCAL_PROVIDER, kind=ProviderKind.OPENAI, base_url="", first_byte_timeout=LOAD_TIMEOUT
        )

    def make_provider(self, config: ProviderConfig, timeouts: Timeouts) -> Provider:
        return LocalProvider(self._models, config, timeouts)


class LocalProvider:
    """``Provider`` for the downloaded models: the runtime first, then the OpenAI-compatible stream."""

    def __init__(self, models: Models, config: ProviderConfig, timeouts: Timeouts) -> None:
        self.name = config.name
        self.timeouts = timeouts
        self._models = models
        self._config = config
        self._client: Provider | None = None
        self._client_for: Endpoint | None = None

    async def list_models(self) -> list[ModelInfo]:
        """The downloaded models; the window is the smaller of the model's own (GGUF header) and
        the context the runtime loads it with, so budgets never count on more than it holds."""
        context = self._models.runtime_settings().context
        found = []
        for model in await self._models.installed():
            trained = model.info.context_length
            extra = {"chat_template": "gguf"} if model.info.chat_template else {}
            window = min(trained, context) if trained else context
            found.append(
                ModelInfo(id=model.name, context_window=window, owned_by="this computer", extra=extra)
            )
        return found

    async def _endpoint(self, model_name: str) -> Endpoint:
        try:
            model = await asyncio.to_thread(self._models.library.get, model_name)
        except ModelError as err:
            raise ModelNotFoundError(err.user_message, provider=self.name, model=model_name) from err
        try:
            return await asyncio.to_thread(
                self._models.runtime.ensure, model, self._models.runtime_settings()
            )
        except ModelError as err:
            raise ProviderError(err.user_message, provider=self.name, model=model_name) from err

    async def _client_of(self, endpoint: Endpoint) -> Provider:
        if self._client is not None and self._client_for == endpoint:
            return self._client
        if self._client is not None:
            await self._client.aclose()
        from threadline.llm.factory import make_provider

        config = replace(self._config, base_url=endpoint.base_url)
        self._client = make_provider(config, endpoint.api_key, timeout=self.timeouts.stall)
        self._client_for = endpoint
        return self._client

    async def stream(
        self, request: BuiltRequest, params: ChatParams, tools: Sequence[ToolSpec] = ()
    ) -> AsyncIterator[StreamEvent]:
        endpoint = await self._endpoint(params.model)
        client = await self._client_of(endpoint)
        runtime = self._models.runtime
        try:
            with runtime.in_use():
                async with contextlib.aclosing(client.stream(request, params, tools)) as events:  # type: ignore[type-var]
                    async for event in events:
                        yield event
        except Exception as err:  # a ProviderError, or the HTTP client's own error for a cut stream
            cut = isinstance(err, ProviderError | OSError) or type(err).__name__.endswith("ProtocolError")
            if cut and not await asyncio.to_thread(runtime.alive, endpoint, CRASH_GRACE):
                raise RuntimeStopped(
                    f"The local runtime stopped while answering with {params.model} (it may have run "
                    f"out of memory). Send again to restart it; its log is {runtime.log_path}.",
                    provider=self.name,
                    model=params.model,
                ) from err
            raise

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
