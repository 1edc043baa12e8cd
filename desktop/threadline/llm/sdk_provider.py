"""What the providers built on an official SDK share: client settings, error mapping, listing, closing.

``OpenAIProvider`` and ``AnthropicProvider`` differ in their request bodies and
stream reading; everything else about holding an SDK client is the same and
lives here once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from threadline.core.config import ProviderConfig
from threadline.llm._http import httpx_module
from threadline.llm.errors import ProviderError
from threadline.llm.sdk_errors import map_sdk_exception

if TYPE_CHECKING:
    from types import ModuleType

KEYLESS_PLACEHOLDER = "not-needed"
"""The SDKs refuse an empty key; local servers ignore whatever is sent."""


def client_options(
    config: ProviderConfig, api_key: str | None, *, timeout: float, connect_timeout: float
) -> dict[str, Any]:
    """Keyword arguments both SDK clients take: no SDK retries (``threadline.llm.retry`` decides)."""
    return {
        "api_key": api_key or KEYLESS_PLACEHOLDER,
        "max_retries": 0,
        "timeout": httpx_module().Timeout(timeout, connect=connect_timeout),
        "default_headers": dict(config.headers) or None,
    }


class SdkProvider:
    """Base of the SDK-backed providers; ``client`` is the SDK's async client."""

    def __init__(self, config: ProviderConfig, sdk: ModuleType, client: Any, *, timeout: float) -> None:
        self.name = config.name
        self.config = config
        self.timeout = timeout
        self._sdk = sdk
        self._client = client

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
