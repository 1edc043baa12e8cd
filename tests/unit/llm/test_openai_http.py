"""The OpenAI-compatible request without the SDK: what is sent, and TLS for local servers."""

from __future__ import annotations

import ssl

import pytest
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.core.messages import Role
from threadline.core.request import BuiltRequest, SentMessage
from threadline.llm.base import ChatParams
from threadline.llm.factory import make_provider
from threadline.llm.openai_http import OPENAI_BASE_URL, base_url, request_headers, tls_context_for


def test_headers_carry_the_key_the_environments_organisation_and_the_providers_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    monkeypatch.delenv("OPENAI_PROJECT_ID", raising=False)
    config = ProviderConfig("p", ProviderKind.OPENAI, headers=(("X-Team", "blue"), ("User-Agent", "mine")))
    headers = request_headers(config, "sk-1")
    assert headers["Authorization"] == "Bearer sk-1"
    assert headers["OpenAI-Organization"] == "org-1" and "OpenAI-Project" not in headers
    assert headers["X-Team"] == "blue" and headers["User-Agent"] == "mine"  # the provider's own win
    assert request_headers(ProviderConfig("p", ProviderKind.OPENAI), None)["Authorization"].startswith(
        "Bearer "
    )


def test_the_base_url_falls_back_to_the_environment_then_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert base_url(ProviderConfig("p", ProviderKind.OPENAI)) == OPENAI_BASE_URL
    monkeypatch.setenv("OPENAI_BASE_URL", "http://proxy.test/v1")
    assert base_url(ProviderConfig("p", ProviderKind.OPENAI)) == "http://proxy.test/v1"
    assert base_url(ProviderConfig("p", ProviderKind.OPENAI, "http://own/v1")) == "http://own/v1"


def test_a_plain_http_server_gets_a_tls_context_that_trusts_nothing() -> None:
    context = tls_context_for("http://127.0.0.1:8080/v1/")
    assert context is not None
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0
    assert tls_context_for("https://api.openai.com/v1/") is None  # httpx's default verification


@pytest.mark.asyncio
async def test_the_stream_request_reaches_the_server_as_the_sdk_sent_it(replay_server: ReplayServer) -> None:
    config = ProviderConfig(
        "p", ProviderKind.OPENAI, replay_server.openai_base_url, headers=(("X-Team", "blue"),)
    )
    provider = make_provider(config, "sk-test")
    replay_server.enqueue(sse_response(openai_text_stream(["Hi"])))
    try:
        request = BuiltRequest("", (SentMessage(Role.USER, text="hello"),), 1)
        events = [e async for e in provider.stream(request, ChatParams("gpt-4o-mini"))]
    finally:
        await provider.aclose()
    assert events
    sent = replay_server.requests[-1]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.headers["x-team"] == "blue"
    assert sent.headers["content-type"] == "application/json"
    assert sent.body["stream"] is True and sent.body["model"] == "gpt-4o-mini"
