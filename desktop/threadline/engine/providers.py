"""Which provider and model a turn uses, and the provider clients themselves.

Provider clients are created on first use (their SDKs are slow to import, and
the window must paint first) and cached per provider name until its settings or
key change. They live on the stream worker's loop (``stream_worker.py``): the
SDK import, the chunk parsing and the HTTP connections all stay off the loop
that runs the window.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

from threadline.core.config import AgentConfig, ModelInfo, ProviderConfig
from threadline.core.context_windows import known_window, user_window
from threadline.core.request import BuiltRequest, ToolSpec
from threadline.core.session import SessionInfo
from threadline.engine.events import ErrorAction, UserFacingError
from threadline.engine.local_runtime import LocalModels
from threadline.engine.stream_worker import StreamWorker
from threadline.llm import credentials
from threadline.llm.base import ChatParams, Provider
from threadline.llm.errors import ProviderError, timeout_error
from threadline.llm.events import StreamEvent
from threadline.llm.retry import OnRetry, RetryPolicy, stream_with_retries
from threadline.llm.timeouts import DEFAULT_STALL_TIMEOUT
from threadline.store.repository import Store

log = logging.getLogger("threadline.engine")

DEFAULT_PROVIDER_SETTING = "default_provider"
DEFAULT_MODEL_SETTING = "default_model"
CONTEXT_WINDOWS_SETTING = "context_windows"
"""The user's own context windows: ``{"provider/model": tokens}`` (they win over any report)."""


class SetupError(Exception):
    """The turn cannot start: no provider or model is configured. Carries what to tell the user."""

    def __init__(self, error: UserFacingError) -> None:
        super().__init__(error.message)
        self.error = error

    @property
    def user_message(self) -> str:
        return self.error.message


class ProviderHub:
    def __init__(
        self, store: Store, *, timeout: float = DEFAULT_STALL_TIMEOUT, connect_timeout: float | None = None
    ) -> None:
        """``timeout`` is the app-wide stall bound, which also caps the default first-byte wait.

        Each provider's own connect and first-byte timeouts (Settings, ``provider
        add --timeout``) win over these defaults; see ``threadline.llm.timeouts``.
        """
        self._store = store
        self._timeout = timeout
        self._connect_timeout = connect_timeout
        self._clients: dict[str, Provider] = {}
        self._models: dict[str, list[ModelInfo]] = {}
        self._user_windows: Any = None
        self._generations: dict[str, int] = {}
        """Bumped by ``forget``: a client made across a bump is from old settings."""
        self._worker = StreamWorker()
        self.local: LocalModels | None = None
        """The provider "On this computer" (``engine/local_runtime.py``), beside the stored ones."""

    async def configs(self) -> list[ProviderConfig]:
        """The stored providers, then "On this computer" while the models folder has a model."""
        stored = await self._store.list_providers()
        local = self.local.config() if self.local is not None else None
        if local is None:
            return stored
        return [c for c in stored if c.name != local.name] + [local]

    async def config(self, name: str) -> ProviderConfig | None:
        """The provider ``name`` (``threadline`` also names "On this computer"), or ``None``."""
        if self.local is not None and self.local.is_local(name):
            return self.local.config()
        return await self._store.get_provider(name)

    async def resolve(self, session: SessionInfo, agent: AgentConfig) -> tuple[ProviderConfig, str]:
        """The provider config and model for a turn: session, then agent, then defaults."""
        configs = {c.name: c for c in await self.configs()}
        if not configs:
            raise SetupError(
                UserFacingError(
                    "no_provider",
                    "No model provider is set up yet. Add one in Settings (a local server such as "
                    "Ollama or LM Studio, or a cloud provider with its API key).",
                    (ErrorAction.SETTINGS,),
                )
            )
        name = (
            session.provider or agent.provider or await self._store.get_setting(DEFAULT_PROVIDER_SETTING, "")
        )
        if name not in configs:
            if name:
                raise SetupError(
                    UserFacingError(
                        "provider_missing",
                        f"The provider {name!r} chosen for this chat no longer exists. Pick another model.",
                        (ErrorAction.PICK_MODEL, ErrorAction.SETTINGS),
                    )
                )
            # A session with no provider (made before any existed) asks; it never takes
            # "the first provider", which would change whenever a provider is added.
            raise SetupError(
                UserFacingError(
                    "no_model",
                    "No model is chosen for this chat. Pick one in the model menu below the message box.",
                    (ErrorAction.PICK_MODEL,),
                )
            )
        config = configs[name]
        model = (
            (session.model if session.provider in ("", name) else "")
            or (agent.model if agent.provider in ("", name) else "")
            or config.default_model
            or await self._store.get_setting(DEFAULT_MODEL_SETTING, "")
        )
        if not model:
            raise SetupError(
                UserFacingError(
                    "no_model",
                    f"No model is chosen for provider {name!r}. Pick a model for this chat.",
                    (ErrorAction.PICK_MODEL,),
                )
            )
        return config, model

    async def client(self, config: ProviderConfig) -> Provider:
        """The cached client of ``config``'s provider, made on the worker loop on first use.

        A client made while another call made one too, or while ``forget`` dropped
        the provider (its settings changed), is closed rather than cached: a client
        left to the garbage collector closes itself in a task nobody awaits, and one
        made from old settings would keep old timeouts. After a ``forget`` the
        provider's settings are read again.
        """
        while True:
            cached = self._clients.get(config.name)
            if cached is not None:
                return cached
            generation = self._generations.get(config.name, 0)
            made = await self._worker.call(self._maker(config))
            if self._generations.get(config.name, 0) == generation and config.name not in self._clients:
                self._clients[config.name] = made
                return made
            await self._worker.call(made.aclose)
            if self._generations.get(config.name, 0) != generation:
                config = await self._store.get_provider(config.name) or config

    async def warm_up(self, config: ProviderConfig) -> None:
        """Make ``config``'s client now, before the first send needs it (``engine.warm_up``)."""
        await self.client(config)

    def has_client(self, name: str) -> bool:
        """Whether provider ``name``'s client is made (the next turn starts without an SDK import)."""
        return name in self._clients

    def _maker(self, config: ProviderConfig) -> Callable[[], Awaitable[Provider]]:
        async def create() -> Provider:
            # Both on the worker's thread: the SDK import is slow (docs/performance.md), and the keychain
            # lookup imports keyring and may ask D-Bus; neither may hold up the window.
            from threadline.llm.factory import make_provider
            from threadline.llm.timeouts import Timeouts

            if self.local is not None and self.local.is_local(config.name):
                timeouts = Timeouts.for_provider(config, stall=self._timeout, connect=self._connect_timeout)
                return self.local.make_provider(config, timeouts)
            key = credentials.get_api_key(config)
            try:
                resolved = credentials.resolve_headers(config)
            except credentials.CredentialsError as err:
                raise SetupError(
                    UserFacingError("credentials", err.user_message, (ErrorAction.SETTINGS,))
                ) from err
            return make_provider(resolved, key, timeout=self._timeout, connect_timeout=self._connect_timeout)

        return create

    def stream(
        self,
        provider: Provider,
        request: BuiltRequest,
        params: ChatParams,
        tools: Sequence[ToolSpec],
        policy: RetryPolicy,
        on_retry: OnRetry | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """The provider's events (with retries) read on the worker, delivered on this loop."""
        home = asyncio.get_running_loop()

        def retry_noted(attempt: int, delay: float, err: ProviderError, most: int) -> None:
            if on_retry is not None:
                home.call_soon_threadsafe(_call_soon, home, on_retry, attempt, delay, err, most)

        def budget_spent(seconds: float) -> ProviderError:
            return timeout_error(provider.name, seconds, model=params.model)

        if policy.budget is None:  # the wait before the first words follows this provider's timeout
            policy = replace(policy, budget=provider.timeouts.retry_budget)
        return self._worker.stream(
            lambda: stream_with_retries(
                lambda: provider.stream(request, params, tools),
                policy,
                retry_noted,
                budget_spent=budget_spent,
            )
        )

    async def list_models(self, config: ProviderConfig) -> list[ModelInfo]:
        client = await self.client(config)
        models = await self._worker.call(client.list_models)
        self.remember_models(config.name, models)
        return models

    def remember_models(self, provider: str, models: list[ModelInfo]) -> None:
        """Keep a provider's model listing: it tells context windows for budgets and compaction."""
        self._models[provider] = models

    def set_user_windows(self, setting: Any) -> None:
        """The user's own windows (the ``context_windows`` setting), which win over everything else."""
        self._user_windows = setting

    def context_window(self, provider: str, model: str) -> int | None:
        """The model's window: the user's figure, else the server's listing, else the published one.

        ``None`` when none of them knows (see ``threadline.core.context_windows``).
        """
        own = user_window(self._user_windows, provider, model)
        if own is not None:
            return own
        for info in self._models.get(provider, []):
            if info.id == model and info.context_window:
                return info.context_window
        return known_window(model)

    async def forget(self, name: str) -> None:
        """Drop a cached client after its settings or key changed."""
        self._generations[name] = self._generations.get(name, 0) + 1
        client = self._clients.pop(name, None)
        self._models.pop(name, None)
        if client is not None:
            await self._worker.call(client.aclose)

    async def aclose(self) -> None:
        """Close the clients on the loop they live on, then stop that loop (even if a close failed)."""
        try:
            for name in list(self._clients):
                await self.forget(name)
        finally:
            await self._worker.aclose()


def _call_soon(loop: asyncio.AbstractEventLoop, callback: OnRetry, *args: object) -> None:
    """Run a sync or async retry callback on ``loop``."""
    result = callback(*args)  # type: ignore[arg-type]
    if asyncio.iscoroutine(result):
        loop.create_task(result)
