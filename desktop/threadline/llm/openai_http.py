"""The HTTP requests of an OpenAI-compatible server, made with ``httpx`` and no ``openai`` SDK.

Why not the SDK: since the stream body is decoded by ``threadline.llm.sse`` (see
``threadline.llm.openai_provider``), what the SDK still did was build one POST
(base URL, ``Authorization: Bearer``, headers, JSON body, timeouts) and raise a
status error for a non-2xx answer. For that, importing it cost time and memory on
every ``threadline ask`` and every window start (its package builds hundreds of
pydantic models at import) — a large share of ``ask``'s wall time against a local
server and most of the gap to the ``llm`` CLI (figures: docs/performance.md,
"Command line"). The request it sent is small and stable, so it is made here:

* base URL: the provider's, else ``OPENAI_BASE_URL``, else api.openai.com (as
  the SDK resolves it); paths are joined below it (``…/v1/chat/completions``);
* ``Authorization: Bearer <key>`` (a placeholder for keyless local servers),
  ``OpenAI-Organization``/``OpenAI-Project`` from ``OPENAI_ORG_ID`` /
  ``OPENAI_PROJECT_ID`` as the SDK reads them, then the provider's own headers;
* a non-2xx answer: its body is read (bounded) and mapped by
  ``threadline.llm.errors.map_status_error`` — the same function the SDK's
  ``APIStatusError`` went to; transport errors are the raw ``httpx`` ones that
  ``threadline.llm.sdk_errors`` already maps.

The Anthropic provider keeps its SDK (it is imported only for Anthropic).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator, Mapping
from types import ModuleType, SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from threadline.core.config import ProviderConfig
from threadline.llm._http import httpx_module
from threadline.llm.errors import map_status_error
from threadline.llm.sdk_provider import KEYLESS_PLACEHOLDER
from threadline.llm.timeouts import Timeouts

if TYPE_CHECKING:
    import ssl

OPENAI_BASE_URL = "https://api.openai.com/v1"
ERROR_BODY_LIMIT = 64 * 1024
"""Bytes of an error answer read for its message (a proxy may answer with a whole web page)."""


class _NeverRaised(Exception):
    """Stands for an SDK exception class this path cannot raise (see ``NO_SDK``)."""


NO_SDK = cast(
    ModuleType,  # read like the SDK module: only these four attributes are looked up
    SimpleNamespace(
        APIStatusError=_NeverRaised,
        APITimeoutError=_NeverRaised,
        APIConnectionError=_NeverRaised,
        APIError=_NeverRaised,
    ),
)
"""What ``map_sdk_exception`` takes as the SDK here: status errors are mapped before it sees them."""


def base_url(config: ProviderConfig) -> str:
    return config.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL


def request_headers(config: ProviderConfig, api_key: str | None) -> dict[str, str]:
    headers = {
        "Authorization": f"Bearer {api_key or KEYLESS_PLACEHOLDER}",
        "Accept": "application/json",
        "User-Agent": "Threadline",
    }
    from_environment = (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID"))
    for header, variable in from_environment:
        if os.environ.get(variable):
            headers[header] = os.environ[variable]
    headers.update(config.headers)
    return headers


def make_client(config: ProviderConfig, api_key: str | None, timeouts: Timeouts) -> Any:
    """An ``httpx.AsyncClient`` for the server; its read bound is the stall bound (as the SDK's was).

    A plain ``http://`` base URL (a local server) never negotiates TLS: requests go
    only to paths below it and redirects are not followed. Its client gets a TLS
    context that trusts no certificate rather than one loading the system's CA
    store (time and memory of every ``ask``; docs/performance.md); were TLS ever attempted it would
    fail closed, not open.
    """
    httpx = httpx_module()
    url = base_url(config).rstrip("/") + "/"
    context = tls_context_for(url)
    options: dict[str, Any] = {} if context is None else {"verify": context}
    return httpx.AsyncClient(
        base_url=url,
        headers=request_headers(config, api_key),
        timeout=httpx.Timeout(timeouts.stall, connect=timeouts.connect),
        follow_redirects=False,
        **options,
    )


def tls_context_for(url: str) -> ssl.SSLContext | None:
    """``None`` (httpx's default verification) for https; for plain http, a context that trusts nothing."""
    if not url.startswith("http://"):
        return None
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # certificate and host name checked, against no CA


async def raise_for_status(response: Any, *, provider: str, model: str) -> None:
    """A non-2xx answer → its ``ProviderError`` (status, body message, ``retry-after``)."""
    if response.status_code < 400:
        return
    raw = b""
    with contextlib.suppress(Exception):  # a body cut short still has a status to report
        async for chunk in response.aiter_bytes():
            raw += chunk
            if len(raw) >= ERROR_BODY_LIMIT:
                break
    text = raw[:ERROR_BODY_LIMIT].decode("utf-8", errors="replace").strip()
    body: object = text
    with contextlib.suppress(ValueError):
        body = json.loads(text)
    headers: Mapping[str, str] = dict(response.headers.items())
    cause = httpx_module().HTTPStatusError(
        f"HTTP {response.status_code}", request=response.request, response=response
    )
    raise map_status_error(response.status_code, body, headers, provider=provider, model=model) from cause


@contextlib.asynccontextmanager
async def open_stream(client: Any, body: dict[str, Any], *, provider: str, model: str) -> AsyncIterator[Any]:
    """POST ``chat/completions`` and yield the response once its status is a success; always closed."""
    async with client.stream("POST", "chat/completions", json=body) as response:
        await raise_for_status(response, provider=provider, model=model)
        yield response


async def get_json(client: Any, path: str, *, provider: str) -> Any:
    """GET ``path`` below the base URL; its JSON body (a non-2xx answer raises its ``ProviderError``)."""
    async with client.stream("GET", path) as response:
        await raise_for_status(response, provider=provider, model="")
        return json.loads(await response.aread())
