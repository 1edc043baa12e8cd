"""The pieces of the MCP sign in that are Threadline's own: the loopback redirect and the token storage."""

from __future__ import annotations

import asyncio

import pytest
from mcp.shared.auth import OAuthToken
from tests.support.fixtures import memory_keyring, no_keyring  # noqa: F401  (fixtures)
from tests.support.memory_keyring import MemoryKeyring

from threadline.tools.mcp import oauth as mcp_oauth
from threadline.tools.mcp.oauth import KeychainTokenStorage, LoopbackRedirect, SignInError

pytestmark = pytest.mark.asyncio


async def _get(port: int, target: str) -> str:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    await writer.drain()
    response = await reader.read()
    writer.close()
    return response.decode()


async def test_the_redirect_brings_the_code_and_state() -> None:
    redirect = LoopbackRedirect("remote")
    try:
        assert redirect.redirect_uri == f"http://127.0.0.1:{redirect.port}/callback"
        waiting = asyncio.ensure_future(redirect.wait())
        assert (await _get(redirect.port, "/favicon.ico")).startswith("HTTP/1.1 404")
        page = await _get(redirect.port, "/callback?code=abc&state=xyz&iss=http%3A%2F%2Fauth")
        assert page.startswith("HTTP/1.1 200") and "Signed in" in page
        result = await waiting
        assert (result.code, result.state, result.iss) == ("abc", "xyz", "http://auth")
    finally:
        await redirect.aclose()


async def test_an_error_from_the_authorization_server_becomes_a_user_message() -> None:
    redirect = LoopbackRedirect("remote")
    try:
        waiting = asyncio.ensure_future(redirect.wait())
        page = await _get(redirect.port, "/callback?error=access_denied&state=xyz")
        assert "did not complete" in page
        with pytest.raises(SignInError, match="was declined in the browser"):
            await waiting
    finally:
        await redirect.aclose()


async def test_tokens_go_to_the_keychain_and_sign_out_deletes_them(memory_keyring: MemoryKeyring) -> None:  # noqa: F811
    storage = KeychainTokenStorage("HTTP://Example.COM/mcp#frag")
    await storage.set_tokens(OAuthToken(access_token="a-1", refresh_token="r-1", expires_in=600))
    assert set(memory_keyring.entries) == {(mcp_oauth.SERVICE, "http://example.com/mcp tokens")}
    stored = await storage.get_tokens()
    assert stored is not None and stored.access_token == "a-1"
    refresh_at = storage.refresh_at()
    assert refresh_at is not None  # a minute before the expiry
    assert storage.signed_in()
    storage.sign_out()
    assert memory_keyring.entries == {} and await storage.get_tokens() is None


async def test_without_a_keychain_tokens_stay_in_this_process(no_keyring: None) -> None:  # noqa: F811
    storage = KeychainTokenStorage("http://127.0.0.1:1/only-in-memory")
    await storage.set_tokens(OAuthToken(access_token="a-2"))
    assert (await storage.get_tokens()) is not None and storage.refresh_at() is None
    storage.forget()
    assert await storage.get_tokens() is None
