"""SDK exceptions → ``ProviderError`` (shared by both providers).

The two official SDKs are generated from the same template, so their exception
classes have the same names and attributes (``APIStatusError`` with
``status_code``/``body``/``response``, ``APITimeoutError``, ``APIConnectionError``,
``APIError`` for an error payload inside a stream). The SDK module is passed in,
so this module imports neither SDK. Transport errors the SDKs let through while
a body is being read (``httpx``/``httpx2`` timeouts, a peer that closed mid-body) and
undecodable events (``json.JSONDecodeError``) are mapped here too.
"""

from __future__ import annotations

import json
from types import ModuleType

from threadline.llm._http import httpx_module
from threadline.llm.errors import (
    ProviderError,
    connect_timeout_error,
    malformed_stream,
    map_status_error,
    network_error,
    timeout_error,
)


def map_sdk_exception(
    err: Exception,
    sdk: ModuleType,
    *,
    provider: str,
    model: str,
    base_url: str,
    timeout: float | None,
    during_stream: bool,
    reading: bool = True,
    connect_timeout: float | None = None,
    answered: bool = False,
) -> ProviderError | None:
    """The ``ProviderError`` for ``err`` (the caller raises it ``from err``).

    ``None`` when ``err`` is no provider failure but a bug on our side (a wrong
    argument before anything was sent, ``reading=False``): it must surface as is.
    ``timeout`` is the bound that applied to the wait that ran out (first byte
    or stall), ``connect_timeout`` the one for opening the connection. ``answered``: the
    server's reply had begun (its first bytes arrived) when the connection failed.
    """
    httpx = httpx_module()

    if isinstance(err, ProviderError):
        return err
    if isinstance(err, sdk.APIStatusError):
        headers = dict(err.response.headers.items())
        return map_status_error(err.status_code, err.body, headers, provider=provider, model=model)
    if isinstance(err, httpx.ConnectTimeout) or isinstance(err.__cause__, httpx.ConnectTimeout):
        return connect_timeout_error(provider, base_url, connect_timeout, model=model)
    if isinstance(err, sdk.APITimeoutError | httpx.TimeoutException):
        return timeout_error(provider, timeout, model=model, during_stream=during_stream)
    if isinstance(err, sdk.APIConnectionError | httpx.TransportError):
        return network_error(provider, base_url, model=model, during_stream=during_stream, answered=answered)
    if isinstance(err, sdk.APIError):  # an error payload inside a 200 stream
        return map_status_error(None, err.body, None, provider=provider, model=model)
    if isinstance(err, json.JSONDecodeError):
        return malformed_stream(provider, "an event was not valid JSON", model=model)
    if isinstance(err, ValueError | TypeError | KeyError | AttributeError):
        return malformed_stream(
            provider, f"an event had an unexpected shape ({type(err).__name__})", model=model
        )
    return ProviderError(
        f"The request to {provider} failed unexpectedly ({type(err).__name__}). Try again.",
        provider=provider,
        model=model,
        detail=str(err)[:300],
    )
