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
import logging
import threading
from collections.abc import AsyncIterator, Callable, Sequence
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

log = logging.getLogger(__name__)

LOCAL_PROVIDER = "On this computer"
LOCAL_ALIAS = "threadline"
"""What the command line's ``--provider`` also accepts for it."""


CRASH_GRACE = 2.0
"""Seconds a cut stream waits to see whether the runtime died (then the turn says so)."""


class RuntimeStopped(ProviderError):
    """The runtime died under a turn (out of memory, killed). Not retried within the turn: the
    person is told, and the next send starts a new runtime."""

    kind = "runtime_stopped"


LoadingListener = Callable[[str, bool], None]
"""Told ``(model, True)`` as the runtime starts to load a model, ``(model, False)`` once it
answers (or failed); called on the thread that waits for the runtime."""


class LocalModels:
    """Where the provider hub finds the provider "On this computer"."""

    def __init__(self, models: Models) -> None:
        self._models = models
        self._lock = threading.Lock()
        self._listeners: list[LoadingListener] = []

    def watch_loading(self, listener: LoadingListener) -> Callable[[], None]:
        """Hear when a turn's model is being loaded (a first reply waits for it); returns the
        unsubscribe. The turn runner tells its chat ("Loading MODEL…", docs/local-models.md)."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def _tell_loading(self, model: str, loading: bool) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(model, loading)
            except Exception:  # a chat that cannot be told must not stop the model loading
                log.exception("a listener failed on the loading of %s", model)

    def watch_turn(
        self, provider: str, model: str, tell: Callable[[bool], None]
    ) -> Callable[[], None] | None:
        """For one request of a turn: ``tell(True)`` when ``model`` of ``provider`` starts loading,
        ``tell(False)`` once it is loaded. Returns what ends the watch (saying ``False`` if the
        model was still said to be loading), or ``None`` for another provider."""
        if not self.is_local(provider):
            return None
        told = [False]

        def heard(name: str, loading: bool) -> None:
            if name == model and loading != told[0]:
                told[0] = loading
                tell(loading)

        unsubscribe = self.watch_loading(heard)

        def end() -> None:
            unsubscribe()
            if told[0]:
                told[0] = False
                tell(False)

        return end

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
        return LocalProvider(self._models, config, timeouts, self._tell_loading)


class LocalProvider:
    """``Provider`` for the downloaded models: the runtime first, then the OpenAI-compatible stream."""

    def __init__(
        self,
        models: Models,
        config: ProviderConfig,
        timeouts: Timeouts,
        tell_loading: LoadingListener | None = None,
    ) -> None:
        self.name = config.name
        self._tell_loading = tell_loading
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
        tell = self._tell_loading
        started = threading.Event()

        def starting() -> None:
            started.set()
            if tell is not None:
                tell(model_name, True)

        try:
            return await asyncio.to_thread(
                self._models.runtime.ensure, model, self._models.runtime_settings(), starting
            )
        except ModelError as err:
            raise ProviderError(err.user_message, provider=self.name, model=model_name) from err
        finally:
            if started.is_set() and tell is not None:
                tell(model_name, False)

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
