"""Every fault the replay server can inject, against both providers.

Each test checks the error type, whether it is retryable, and that the user
message is fit to show (names the provider/model, no traceback or SDK text).
Timeouts are half a second (``TEST_TIMEOUT``) so the suite stays fast.
"""

from __future__ import annotations

import asyncio
import socket

import pytest
from llm_helpers import ANTHROPIC, OPENAI, TEST_TIMEOUT, Api, assert_human, collect, simple_request
from tests.support import sse_streams as s
from tests.support.sse_server import ReplayServer

from threadline.core.config import ProviderConfig
from threadline.llm import errors
from threadline.llm.base import ChatParams, Provider
from threadline.llm.factory import make_provider


async def run(provider: Provider, api: Api, model: str | None = None):  # type: ignore[no-untyped-def]
    return await collect(provider.stream(simple_request(), ChatParams(model or api.model)))


@pytest.mark.asyncio
async def test_slow_first_byte_within_the_timeout_is_fine(api: Api, replay_server: ReplayServer) -> None:
    provider = api.make(replay_server, timeout=1.0)
    replay_server.enqueue(s.sse_response(api.text_stream(["late", " but fine"]), first_byte_delay=0.3))
    got = await run(provider, api)
    await provider.aclose()
    assert got.error is None
    assert got.text == "late but fine"


@pytest.mark.asyncio
async def test_slow_first_byte_beyond_the_timeout(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(s.sse_response(api.text_stream(["never"]), first_byte_delay=3))
    loop = asyncio.get_running_loop()
    started = loop.time()
    got = await run(provider, api)
    assert loop.time() - started < TEST_TIMEOUT + 1.5
    assert isinstance(got.error, errors.ProviderTimeoutError)
    assert got.error.retryable
    assert got.events == []
    assert_human(got.error, api.name)
    assert "did not answer" in got.error.user_message


@pytest.mark.asyncio
async def test_a_stall_mid_stream_times_out_after_the_partial_deltas(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    chunks = api.text_stream(["one ", "two ", "three ", "four"])
    replay_server.enqueue(s.sse_response(chunks, stall_after=4))  # start, (ping,) some text, then silence
    got = await run(provider, api)
    assert isinstance(got.error, errors.ProviderTimeoutError)
    assert got.text.startswith("one ")
    assert "four" not in got.text
    assert_human(got.error, api.name)
    assert "partial reply was kept" in got.error.user_message


@pytest.mark.asyncio
async def test_a_short_stall_within_the_timeout_is_fine(api: Api, replay_server: ReplayServer) -> None:
    provider = api.make(replay_server, timeout=1.0)
    replay_server.enqueue(s.sse_response(api.text_stream(["a", "b", "c"]), stall_after=2, stall_for=0.3))
    got = await run(provider, api)
    await provider.aclose()
    assert got.error is None and got.text == "abc"


@pytest.mark.asyncio
async def test_a_disconnect_mid_stream(api: Api, provider: Provider, replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        s.sse_response(api.text_stream(["one ", "two ", "three ", "four"]), disconnect_after=4)
    )
    got = await run(provider, api)
    assert isinstance(got.error, errors.NetworkError | errors.MalformedStreamError)
    assert got.text.startswith("one ")
    assert "four" not in got.text
    assert_human(got.error, api.name)
    assert "closed before the reply finished. The partial reply was kept" in got.error.user_message


@pytest.mark.asyncio
@pytest.mark.parametrize("fault", ["disconnect_after", "broken_framing"])
async def test_a_connection_closed_after_the_answer_began_is_not_a_failure_to_connect(
    fault: str, api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    """The server was reached and had begun its reply (status and headers, then the first event)
    when it dropped the connection or broke the chunked framing: the raw ``httpx`` error becomes
    the provider's own, saying what happened, not "could not connect"."""
    replay_server.enqueue(s.sse_response(api.text_stream(["one ", "two"]), **{fault: 1}))
    got = await run(provider, api)
    assert isinstance(got.error, errors.NetworkError) and got.error.retryable
    assert_human(got.error, api.name)
    assert "closed before the reply finished" in got.error.user_message
    assert "Could not connect" not in got.error.user_message


@pytest.mark.asyncio
async def test_a_broken_chunked_body_mid_reply_keeps_the_partial_text(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(
        s.sse_response(api.text_stream(["one ", "two ", "three ", "four"]), broken_framing=4)
    )
    got = await run(provider, api)
    assert isinstance(got.error, errors.NetworkError) and got.text.startswith("one ")
    assert_human(got.error, api.name)
    assert "closed before the reply finished. The partial reply was kept" in got.error.user_message


@pytest.mark.asyncio
async def test_a_disconnect_before_the_headers_is_a_network_error(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(s.sse_response(api.text_stream(["x"]), disconnect_after=0))
    got = await run(provider, api)
    assert isinstance(got.error, errors.NetworkError)
    assert got.error.retryable
    assert_human(got.error, api.name)


@pytest.mark.asyncio
async def test_connection_refused_is_a_network_error(api: Api) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}" + ("/v1" if api is OPENAI else "")
    provider = make_provider(ProviderConfig(api.name, api.kind, base_url=base), "k", timeout=TEST_TIMEOUT)
    got = await run(provider, api)
    await provider.aclose()
    assert isinstance(got.error, errors.NetworkError)
    assert got.error.retryable
    assert_human(got.error, api.name)
    assert "Could not connect" in got.error.user_message


@pytest.mark.asyncio
async def test_401_is_an_authentication_error(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(api.auth_error())
    got = await run(provider, api)
    assert isinstance(got.error, errors.AuthenticationError)
    assert not got.error.retryable
    assert got.error.status_code == 401
    assert_human(got.error, api.name)
    assert f"Check the API key for provider {api.name} in Settings" in got.error.user_message
    assert "sk-test" not in got.error.user_message


@pytest.mark.asyncio
async def test_404_model_is_model_not_found(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(api.model_not_found("no-such-model"))
    got = await run(provider, api, "no-such-model")
    assert isinstance(got.error, errors.ModelNotFoundError)
    assert not got.error.retryable
    assert_human(got.error, api.name, model="no-such-model")
    assert "pick another model" in got.error.user_message


@pytest.mark.asyncio
async def test_429_is_a_rate_limit_with_retry_after(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(api.rate_limited(7))
    got = await run(provider, api)
    assert isinstance(got.error, errors.RateLimitError)
    assert got.error.retryable
    assert got.error.retry_after == 7
    assert_human(got.error, api.name)
    assert "7 s" in got.error.user_message


@pytest.mark.asyncio
async def test_429_without_retry_after(api: Api, provider: Provider, replay_server: ReplayServer) -> None:
    replay_server.enqueue(api.rate_limited(None))
    got = await run(provider, api)
    assert isinstance(got.error, errors.RateLimitError)
    assert got.error.retry_after is None


@pytest.mark.asyncio
async def test_openai_insufficient_quota_is_not_retried(replay_server: ReplayServer) -> None:
    provider = OPENAI.make(replay_server)
    body = s.openai_error_body("You exceeded your current quota.", "insufficient_quota", "insufficient_quota")
    replay_server.enqueue(s.openai_error(429, body))
    got = await run(provider, OPENAI)
    await provider.aclose()
    assert isinstance(got.error, errors.QuotaExceededError)
    assert not got.error.retryable
    assert_human(got.error, OPENAI.name)


@pytest.mark.asyncio
@pytest.mark.parametrize("status", [500, 502])
async def test_500_is_a_retryable_server_error(
    api: Api, provider: Provider, replay_server: ReplayServer, status: int
) -> None:
    replay_server.enqueue(api.server_error(status))
    got = await run(provider, api)
    assert isinstance(got.error, errors.ServerError)
    assert got.error.retryable
    assert got.error.status_code == status
    assert_human(got.error, api.name)


@pytest.mark.asyncio
async def test_503_is_retryable_overload(api: Api, provider: Provider, replay_server: ReplayServer) -> None:
    replay_server.enqueue(
        s.openai_server_error(503)
        if api is OPENAI
        else s.anthropic_error(503, "api_error", "Service unavailable")
    )
    got = await run(provider, api)
    assert isinstance(got.error, errors.OverloadedError)
    assert got.error.retryable
    assert_human(got.error, api.name)


@pytest.mark.asyncio
async def test_anthropic_529_is_overloaded(replay_server: ReplayServer) -> None:
    provider = ANTHROPIC.make(replay_server)
    replay_server.enqueue(s.anthropic_overloaded())
    got = await run(provider, ANTHROPIC)
    await provider.aclose()
    assert isinstance(got.error, errors.OverloadedError)
    assert got.error.retryable
    assert got.error.status_code == 529
    assert_human(got.error, ANTHROPIC.name)


@pytest.mark.asyncio
async def test_anthropic_overloaded_error_event_mid_stream(replay_server: ReplayServer) -> None:
    provider = ANTHROPIC.make(replay_server)
    chunks = [*s.anthropic_text_stream(["Hel", "lo"], stop=False), s.anthropic_stream_error_event()]
    replay_server.enqueue(s.sse_response(chunks))
    got = await run(provider, ANTHROPIC)
    await provider.aclose()
    assert got.text == "Hello"
    assert isinstance(got.error, errors.OverloadedError)
    assert_human(got.error, ANTHROPIC.name)


@pytest.mark.asyncio
async def test_openai_error_payload_mid_stream(replay_server: ReplayServer) -> None:
    provider = OPENAI.make(replay_server)
    chunks = s.openai_text_stream(["Hel"], done=False)[:2]
    chunks.append(s.openai_event({"error": {"message": "The server had an error", "type": "server_error"}}))
    replay_server.enqueue(s.sse_response(chunks))
    got = await run(provider, OPENAI)
    await provider.aclose()
    assert got.text == "Hel"
    assert isinstance(got.error, errors.ServerError)
    assert_human(got.error, OPENAI.name)


@pytest.mark.asyncio
async def test_context_length_is_context_overflow(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(api.context_length())
    got = await run(provider, api)
    assert isinstance(got.error, errors.ContextOverflowError)
    assert not got.error.retryable
    assert_human(got.error, api.name, model=api.model)
    assert "Compact" in got.error.user_message


@pytest.mark.asyncio
async def test_other_400_is_a_bad_request_with_the_providers_words(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    if api is OPENAI:
        body = s.openai_error_body("Invalid value for 'temperature': must be <= 2.", "invalid_request_error")
        replay_server.enqueue(s.openai_error(400, body))
    else:
        replay_server.enqueue(s.anthropic_error(400, "invalid_request_error", "temperature: must be <= 1.0"))
    got = await run(provider, api)
    assert isinstance(got.error, errors.BadRequestError)
    assert not got.error.retryable
    assert "temperature" in got.error.user_message
    assert_human(got.error, api.name, model=api.model)


@pytest.mark.asyncio
async def test_403_is_permission_denied(api: Api, provider: Provider, replay_server: ReplayServer) -> None:
    if api is OPENAI:
        replay_server.enqueue(
            s.openai_error(403, s.openai_error_body("Project does not have access", "forbidden"))
        )
    else:
        replay_server.enqueue(
            s.anthropic_error(403, "permission_error", "Your API key does not have permission")
        )
    got = await run(provider, api)
    assert isinstance(got.error, errors.PermissionDeniedError)
    assert_human(got.error, api.name, model=api.model)


@pytest.mark.asyncio
async def test_a_malformed_event_is_a_malformed_stream(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    chunks = api.text_stream(["fine"])
    chunks.insert(3, api.malformed_event)
    replay_server.enqueue(s.sse_response(chunks))
    got = await run(provider, api)
    assert isinstance(got.error, errors.MalformedStreamError)
    assert not got.error.retryable
    assert_human(got.error, api.name)


@pytest.mark.asyncio
async def test_truncated_tool_call_json_is_a_malformed_stream(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(s.sse_response(api.tool_stream([("call_t", "get_weather", '{"city": "Par')])))
    got = await run(provider, api)
    assert isinstance(got.error, errors.MalformedStreamError)
    assert "get_weather" in got.error.user_message
    assert got.tool_deltas  # the pieces were yielded before the check at the end
    assert_human(got.error, api.name)


@pytest.mark.asyncio
async def test_a_stream_that_ends_without_finishing_is_malformed(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    if api is OPENAI:
        chunks = s.openai_text_stream(["half"], usage=None, done=False)[:-1]  # no finish chunk, no [DONE]
    else:
        chunks = s.anthropic_text_stream(["half"], stop=False)
    replay_server.enqueue(s.sse_response(chunks))
    got = await run(provider, api)
    assert got.text == "half"
    assert isinstance(got.error, errors.MalformedStreamError)
    assert "ended before the reply was finished" in got.error.user_message
    assert_human(got.error, api.name)


@pytest.mark.asyncio
async def test_an_empty_queue_answers_500_instead_of_hanging(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    got = await run(provider, api)
    assert isinstance(got.error, errors.ServerError)
    assert "no scripted response" in got.error.detail


@pytest.mark.asyncio
async def test_list_models_failure_is_mapped(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    replay_server.models_response = api.auth_error()
    with pytest.raises(errors.AuthenticationError) as caught:
        await provider.list_models()
    assert_human(caught.value, api.name)
    assert isinstance(caught.value.__cause__, Exception)  # chained from the SDK error
