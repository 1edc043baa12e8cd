"""``engine.web``: the web settings (provider, its address or key, the local-address switch)
and the two web tools' work.

The settings are one JSON setting (``WebConfig``), the keys are in the system keychain
(``web/keys.py``); this facet registers ``web_search`` and ``fetch_page`` with the tool registry
and runs them with the settings as they are at each call, so a change in Settings → Web holds
from the next call on (docs/web.md).
"""

from __future__ import annotations

import asyncio
import re

from threadline.engine.errors import EngineError
from threadline.store.repository import Store
from threadline.tools.registry import ToolRegistry
from threadline.web import keys
from threadline.web.addresses import Resolve, resolve
from threadline.web.config import Endpoints, WebConfig, WebProvider, origin_of
from threadline.web.errors import WebError
from threadline.web.fetch import FetchLimits, Page, PageFetcher
from threadline.web.search import SearchResult, searcher_for
from threadline.web.tools import FetchPageTool, WebSearchTool

WEB_SETTING = "web"
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class WebSettingsError(EngineError):
    default_message = "The web settings could not be changed."


class WebService:
    def __init__(self, store: Store, tools: ToolRegistry) -> None:
        self._store = store
        self.limits = FetchLimits()
        """``fetch_page``'s limits (tests make the time limit small)."""
        self.endpoints = Endpoints()
        """Where Brave and Tavily answer; only tests point them elsewhere."""
        self.lookup: Resolve = resolve
        tools.register(WebSearchTool(self.search))
        tools.register(FetchPageTool(self.fetch))

    async def config(self) -> WebConfig:
        return WebConfig.from_json(await self._store.get_setting(WEB_SETTING))

    async def use(
        self,
        provider: WebProvider,
        *,
        searxng_url: str = "",
        api_key: str | None = None,
        api_key_env: str | None = None,
    ) -> WebConfig:
        """Choose the provider; a typed ``api_key`` goes to the keychain, never to the settings."""
        current = await self.config()
        url = searxng_url.strip()
        if provider is WebProvider.SEARXNG and origin_of(url) is None:
            raise WebSettingsError("Give SearXNG's address as http://host:port (or https://…).")
        env = current.api_key_env if api_key_env is None else api_key_env.strip()
        if env and not _VARIABLE.match(env):
            raise WebSettingsError(f"{env!r} is not an environment variable name (letters, digits and _).")
        if provider.needs_key:
            if api_key:
                try:
                    await asyncio.to_thread(keys.store_key, provider, api_key.strip())
                except WebError as err:
                    raise WebSettingsError(err.user_message) from err
            elif not env and not await self.has_key(provider):
                raise WebSettingsError(
                    f"{provider.label} needs an API key: type it in Settings → Web, or run "
                    f"`threadline web use {provider.value} --api-key-env VAR`."
                )
        config = WebConfig(
            provider=provider,
            searxng_url=url if provider is WebProvider.SEARXNG else "",
            api_key_env=env if provider.needs_key else "",
            allow_local=current.allow_local,
        )
        await self._store.set_setting(WEB_SETTING, config.to_json())
        return config

    async def set_allow_local(self, allowed: bool) -> WebConfig:
        config = await self.config()
        changed = WebConfig(config.provider, config.searxng_url, config.api_key_env, allowed)
        await self._store.set_setting(WEB_SETTING, changed.to_json())
        return changed

    async def has_key(self, provider: WebProvider) -> bool:
        """Whether the keychain holds a key for ``provider``."""
        return bool(await asyncio.to_thread(keys.stored_key, provider))

    async def test(self, config: WebConfig, api_key: str | None = None) -> str:
        """Search once with ``config`` (saved or not) and say how it went; ``WebSettingsError`` if not."""
        key = api_key or await asyncio.to_thread(keys.api_key, config)
        try:
            results = await searcher_for(config, key, self.endpoints).search("Threadline", 3)
        except WebError as err:
            raise WebSettingsError(err.user_message) from err
        if not results:
            return f"{config.provider.label} answered, but with no results for a test search."
        return f"{config.provider.label} works: {len(results)} results for a test search."

    async def search(self, query: str, limit: int) -> list[SearchResult]:
        config = await self.config()
        key = await asyncio.to_thread(keys.api_key, config)
        return await searcher_for(config, key, self.endpoints).search(query, limit)

    async def fetch(self, url: str) -> Page:
        config = await self.config()
        fetcher = PageFetcher(
            allow_local=config.allow_local,
            exempt_origin=config.provider_origin(),
            limits=self.limits,
            lookup=self.lookup,
        )
        return await fetcher.fetch(url)
