"""What the providers built on an official SDK share: client settings, error mapping, listing, closing.

``OpenAIProvider`` and ``AnthropicProvider`` differ in their request bodies and
stream reading; everything else about holding an SDK client is the same and
lives here once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from threadline.core.config import ProviderConfig
from threadline.llm._http import httpx_module
from threadline.llm.errors import ProviderError, timeout_error
from threadline.llm.sdk_errors import map_sdk_exception
from threadline.llm.timeouts import Timeouts

if TYPE_CHECKING:
    from types import ModuleType

T = TypeVar("T")

KEYLESS_PLACEHOLDER = "not-needed"
"""The SDKs refuse an empty key; local servers ignore whatever is sent."""


def client_options(config: ProviderConfig, api_key: str | None, timeouts: Timeouts) -> dict[str, Any]:
    """Keyword arguments both SDK clients take: no SDK retries (``threadline.llm.retry`` decides).

    httpx's read bound is the stall bound: it applies to every read, the first
    included, so the shorter first-byte bound is kept by ``SdkProvider.first_byte``.
    """
    return {
        "api_key": api_key or KEYLESS_PLACEHOLDER,
        "max_retries": 0,
        "timeout": httpx_module().Timeout(timeouts.stall, connect=timeouts.connect),
        "default_headers": dict(config.headers) or None,
    }


class SdkProvider:
    """Base of the SDK-backed providers; ``client`` is the SDK's async client."""

    def __init__(self, config: ProviderConfig, sdk: ModuleType, client: Any, *, timeouts: Timeouts) -> None:
        self.name = config.name
        self.config = config
        self.timeouts = timeouts
        self._sdk = sdk
        self._client = client

    async def first_byte(self, opening: Awaitable[T], model: str) -> T:
        """``opening`` (send the request, read up to the first bytes of the body) within the first-byte bound.

        Connecting counts too: the user waits for the first words, not for a socket.
        """
        try:
            async with asyncio.timeout(self.timeouts.first_byte):
                return await opening
        except TimeoutError as err:
            raise timeout_error(self.name, self.timeouts.first_byte, model=model) from err

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    async def aclose(self) -> None:
        await self._client.close()

    async def _sdk_models(self) -> list[Any]:
        """The SDK's model listing, its failures mapped to ``ProviderError``."""
        try:
            return [model async for model in self._client.models.list()]
        except Exception as err:
            mapped = self._map(err, "", during_stream=False)
            if mapped is None:
                raise
            raise mapped from err

    def _map(
        self,
        err: Exception,
        model: str,
        *,
        during_stream: bool,
        reading: bool = True,
        streaming: bool = False,
        answered: bool = False,
    ) -> ProviderError | None:
        """``streaming``: the first bytes had arrived, so a read timeout was the stall bound.
        ``answered``: the server had answered the request (a success status) when it failed."""
        return map_sdk_exception(
            err,
            self._sdk,
            provider=self.name,
            model=model,
            base_url=self.base_url,
            timeout=self.timeouts.stall if streaming else self.timeouts.first_byte,
            connect_timeout=self.timeouts.connect,
            during_stream=during_stream,
            reading=reading,
            answered=answered,
        )
