"""The providers and settings facets (``engine.providers``, ``engine.settings``).

Both are small, but each has a rule a caller must not skip: a provider's key and
typed header values go to the keychain before the provider is saved, and are
forgotten with it (``llm/credentials.py``); a changed context-window table reaches
the provider hub at once, so the next budget uses it. Keeping them here leaves the
engine's core to the turns and the session registry.
"""

from __future__ import annotations

import contextlib
from typing import Any

from threadline.core.config import AgentConfig, ModelInfo, ProviderConfig
from threadline.core.session import SessionInfo
from threadline.engine.providers import CONTEXT_WINDOWS_SETTING, ProviderHub
from threadline.llm import credentials
from threadline.store.errors import NotFoundError
from threadline.store.key_values import NOTICES_SETTING
from threadline.store.repository import Store


class Providers:
    """``ProvidersApi``: the configured providers, their keys and their model lists."""

    def __init__(self, store: Store, hub: ProviderHub) -> None:
        self._store = store
        self._hub = hub

    async def list_providers(self) -> list[ProviderConfig]:
        """The stored ones, and "On this computer" while there are downloaded models."""
        return await self._hub.configs()

    async def get_provider(self, name: str) -> ProviderConfig | None:
        """The provider with this name, or ``None`` (the command line's ``--provider``; ``threadline``
        names "On this computer")."""
        return await self._hub.config(name)

    async def model_for(self, session: SessionInfo, agent: AgentConfig) -> str:
        """The model a turn of ``session`` would use with ``agent``: session, then agent, then
        defaults, as the turn resolves it (``SetupError`` when nothing names one)."""
        _, model = await self._hub.resolve(session, agent)
        return model

    async def save_provider(
        self, config: ProviderConfig, api_key: str | None = None, *, previous_name: str | None = None
    ) -> None:
        """Save ``config``; its key and typed header values go to the keychain first.

        ``previous_name``: the provider is renamed from that one (its header values move along,
        then the old provider is removed). Raises ``CredentialsError`` when a secret cannot be
        kept (no keychain: the message says how to use an environment variable).
        """
        previous = await self._store.get_provider(previous_name or config.name)
        config = credentials.store_headers(config, previous)  # raises before anything is saved
        if api_key:
            credentials.set_api_key(config.name, api_key)  # raises when there is no keychain
        await self._store.save_provider(config)
        await self._hub.forget(config.name)
        if previous is not None and previous.name != config.name:
            await self.remove_provider(previous.name)
        elif previous is not None:
            credentials.forget_headers(previous, config)

    async def remove_provider(self, name: str) -> None:
        stored = await self._store.get_provider(name)
        await self._store.remove_provider(name)
        await self._hub.forget(name)
        if stored is not None:
            credentials.forget_headers(stored, None)
        with contextlib.suppress(credentials.KeychainUnavailableError):
            credentials.delete_api_key(name)

    async def list_models(self, provider: str) -> list[ModelInfo]:
        config = await self._hub.config(provider)
        if config is None:
            raise NotFoundError(
                f"no provider {provider!r}",
                user_message=f"The provider {provider!r} no longer exists. Pick another model.",
            )
        return await self._hub.list_models(config)

    def remember_models(self, provider: str, models: list[ModelInfo]) -> None:
        """Take a listing saved by an earlier run, so its context windows guide budgets and
        compaction from the first turn, before the server is asked again."""
        self._hub.remember_models(provider, models)

    async def detect_local_servers(self) -> list[ProviderConfig]:
        from threadline.llm.local import detect_local_servers

        return await detect_local_servers()

    def has_api_key(self, provider: str) -> bool:
        return credentials.has_keychain_entry(provider)


class Settings:
    """``SettingsApi``: the stored settings, and what an upgrade has to tell the user."""

    def __init__(self, store: Store, hub: ProviderHub) -> None:
        self._store = store
        self._hub = hub

    async def get_setting(self, key: str, default: Any = None) -> Any:
        return await self._store.get_setting(key, default)

    async def set_setting(self, key: str, value: Any) -> None:
        await self._store.set_setting(key, value)
        if key == CONTEXT_WINDOWS_SETTING:
            self._hub.set_user_windows(value)

    async def take_notices(self) -> list[str]:
        """What an upgrade has to tell the user (``NOTICES_SETTING``), once: read and cleared."""
        notices = await self._store.get_setting(NOTICES_SETTING, None)
        if not notices:
            return []
        await self._store.set_setting(NOTICES_SETTING, None)
        return [str(n) for n in notices] if isinstance(notices, list) else [str(notices)]
