"""Per-provider connect and first-byte timeouts, the longer stall bound, and their messages."""

from __future__ import annotations

import asyncio

import pytest
from llm_helpers import OPENAI, Api, assert_human, collect, simple_request
from tests.support import sse_streams as s
from tests.support.sse_server import ReplayServer

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.llm import errors
from threadline.llm._http import httpx_module
from threadline.llm.base import ChatParams, Provider
from threadline.llm.factory import make_provider
from threadline.llm.sdk_errors import map_sdk_exception
from threadline.llm.timeouts import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_FIRST_BYTE_TIMEOUT,
    DEFAULT_STALL_TIMEOUT,
    Timeouts,
)

NEVER = 30.0
"""A first-byte delay no test waits for: the server sends nothing until it stops."""


def timed_config(
    api: Api, server: ReplayServer, *, first_byte: float, connect: float | None = None
) -> ProviderConfig:
    base = api.config(server)
    return ProviderConfig(
        base.name, base.kind, base_url=base.base_url, first_byte_timeout=first_byte, connect_timeout=connect
    )


def test_defaults_suit_local_and_cloud_servers() -> None:
    bounds = Timeouts.for_provider(ProviderConfig("p", ProviderKind.OPENAI))
    assert bounds == Timeouts(DEFAULT_CONNECT_TIMEOUT, DEFAULT_FIRST_BYTE_TIMEOUT, DEFAULT_STALL_TIMEOUT)
    assert (bounds.connect, bounds.first_byte, bounds.stall) == (10.0, 60.0, 120.0)
    assert bounds.retry_budget == 120.0


def test_a_providers_own_values_win_and_the_stall_bound_is_never_shorter() -> None:
    config = ProviderConfig("p", ProviderKind.OPENAI, connect_timeout=3.0, first_byte_timeout=300.0)
    bounds = Timeouts.for_provider(config)
    assert (bounds.connect, bounds.first_byte, bounds.stall) == (3.0, 300.0, 300.0)
    assert bounds.retry_budget == 600.0


def test_a_short_app_wide_bound_caps_the_defaults() -> None:
    bounds = Timeouts.for_provider(ProviderConfig("p", ProviderKind.OPENAI), stall=2.0)
    assert (bounds.connect, bounds.first_byte, bounds.stall) == (2.0, 2.0, 2.0)


@pytest.mark.asyncio
async def test_the_sdk_client_gets_the_connect_and_stall_bounds(
    api: Api, replay_server: ReplayServer
) -> None:
    provider = make_provider(timed_config(api, replay_server, first_byte=7.0, connect=3.0), "sk-test")
    try:
        sent = provider._client.timeout  # type: ignore[attr-defined]  # what every request is sent with
        assert isinstance(sent, httpx_module().Timeout)
        assert sent.connect == 3.0
        assert sent.read == DEFAULT_STALL_TIMEOUT  # reads after the first byte; the first byte has its own
        assert provider.timeouts == Timeouts(3.0, 7.0, DEFAULT_STALL_TIMEOUT)
    finally:
        await provider.aclose()


async def run(provider: Provider, api: Api):  # type: ignore[no-untyped-def]
    return await collect(provider.stream(simple_request(), ChatParams(api.model)))


@pytest.mark.asyncio
async def test_a_server_that_never_sends_headers_fails_at_the_first_byte_bound(
    api: Api, replay_server: ReplayServer
) -> None:
    provider = make_provider(timed_config(api, replay_server, first_byte=0.3), "sk-test", timeout=10)
    replay_server.enqueue(s.sse_response(api.text_stream(["never"]), first_byte_delay=NEVER))
    loop = asyncio.get_running_loop()
    started = loop.time()
    got = await run(provider, api)
    elapsed = loop.time() - started
    await provider.aclose()
    assert isinstance(got.error, errors.ProviderTimeoutError)
    assert 0.25 <= elapsed < 0.3 + 2.0  # the first-byte bound, not the 10 s read bound
    assert got.events == []
    assert_human(got.error, api.name)
    message = got.error.user_message
    assert f"{api.name} did not answer within 1 s" in message
    assert "“First reply within”" in message and "Settings → Providers" in message  # the real field
    assert f"threadline provider add {api.name} --timeout SECONDS" in message  # the real option
    assert got.error.reason == f"{api.name} did not answer within 1 s"


@pytest.mark.asyncio
async def test_after_the_first_byte_a_pause_longer_than_it_is_fine(
    api: Api, replay_server: ReplayServer
) -> None:
    provider = make_provider(timed_config(api, replay_server, first_byte=0.3), "sk-test", timeout=10)
    chunks = api.text_stream(["slow ", "thinker"])
    replay_server.enqueue(s.sse_response(chunks, stall_after=2, stall_for=0.8))
    got = await run(provider, api)
    await provider.aclose()
    assert got.error is None
    assert got.text == "slow thinker"


@pytest.mark.asyncio
async def test_a_long_first_byte_bound_also_lengthens_the_stall_bound(
    api: Api, replay_server: ReplayServer
) -> None:
    provider = make_provider(timed_config(api, replay_server, first_byte=5.0), "sk-test", timeout=0.4)
    assert provider.timeouts.stall == 5.0  # a provider's first-byte bound lengthens a short stall bound
    replay_server.enqueue(s.sse_response(api.text_stream(["one ", "two"]), stall_after=3, stall_for=0.6))
    got = await run(provider, api)
    await provider.aclose()
    assert got.error is None and got.text == "one two"


def test_a_connect_timeout_names_the_connect_setting() -> None:
    import openai

    httpx = httpx_module()
    request = httpx.Request("POST", "http://10.0.0.1:8080/v1/chat/completions")
    err = openai.APITimeoutError(request=request)
    err.__cause__ = httpx.ConnectTimeout("timed out", request=request)
    mapped = map_sdk_exception(
        err,
        openai,
        provider="Office GPU",
        model="m",
        base_url="http://10.0.0.1:8080/v1",
        timeout=60.0,
        connect_timeout=4.0,
        during_stream=False,
    )
    assert isinstance(mapped, errors.ProviderTimeoutError) and mapped.retryable
    assert_human(mapped, "Office GPU")
    assert mapped.reason == "Could not connect to Office GPU at http://10.0.0.1:8080/v1 within 4 s"
    assert "“Connect within”" in mapped.user_message
    assert "threadline provider add Office GPU --connect-timeout SECONDS" in mapped.user_message


def test_a_read_timeout_before_the_reply_names_the_first_byte_setting() -> None:
    import openai

    request = httpx_module().Request("POST", "http://127.0.0.1:1/v1/chat/completions")
    mapped = map_sdk_exception(
        openai.APITimeoutError(request=request),
        openai,
        provider=OPENAI.name,
        model="m",
        base_url="",
        timeout=45.0,
        during_stream=False,
    )
    assert isinstance(mapped, errors.ProviderTimeoutError)
    assert mapped.reason == f"{OPENAI.name} did not answer within 45 s"
    assert "--timeout SECONDS" in mapped.user_message
