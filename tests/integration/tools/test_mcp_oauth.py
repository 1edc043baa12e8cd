"""OAuth sign in to a protected MCP server on 127.0.0.1 (the SDK's own auth server pieces).

Sign in through the loopback redirect, tokens in the (memory) keychain, refresh before
expiry also after a restart, sign out; the failures a person meets (declined, timed out,
nobody to sign in) as ``SignInError``/``McpServerError`` messages; and no token or client
secret in the database, the logs or an export.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import keyring
import pytest
from tests.support.mcp_people import FollowingPerson
from tests.support.oauth_servers import ServerFactory
from tests.support.waiting import until

from threadline.engine.engine import Engine
from threadline.engine.exporting import ExportFormat
from threadline.tools.mcp import oauth as mcp_oauth
from threadline.tools.mcp.client import McpConnection
from threadline.tools.mcp.config import McpServerConfig, Transport
from threadline.tools.mcp.oauth import KeychainTokenStorage, SignInError, preregister, signed_in
from threadline.tools.mcp.person import DefaultsPerson
from threadline.tools.mcp.state import McpServerError, ServerStatus

pytestmark = pytest.mark.asyncio


def _config(url: str, **extra: float) -> McpServerConfig:
    return McpServerConfig("secured", transport=Transport.HTTP, url=url, **extra)  # type: ignore[arg-type]


def _entries() -> dict[tuple[str, str], str]:
    return dict(keyring.get_keyring().entries)  # type: ignore[attr-defined]


def _oauth_entries() -> dict[str, str]:
    return {user: value for (service, user), value in _entries().items() if service == mcp_oauth.SERVICE}


async def _whoami(connection: McpConnection) -> dict[str, object]:
    output = await connection.call("whoami", {})
    assert not output.is_error, output.text
    result: dict[str, object] = json.loads(output.text)
    return result


@pytest.mark.expected_log_warnings("needs you to sign in")
async def test_sign_in_keeps_tokens_in_the_keychain_refreshes_before_expiry_and_signs_out(
    oauth_server: ServerFactory,
) -> None:
    url = oauth_server("--token-seconds", "8")
    person = FollowingPerson()
    connection = McpConnection(_config(url), person=person)
    await connection.start()
    assert connection.status is ServerStatus.READY, connection.error
    assert len(person.opened) == 1 and person.opened[0].startswith(url.removesuffix("/mcp"))
    assert connection.instructions == "Call whoami to see who you are."
    assert connection.state().instructions == connection.instructions
    first = await _whoami(connection)
    assert first["grants"] == ["authorization_code"] or first["grants"][0] == "authorization_code"  # type: ignore[index]
    assert first["resource"] == url  # RFC 8707: the token is for this server
    stored = _oauth_entries()
    assert set(stored) == {f"{url} tokens", f"{url} client"}
    assert signed_in(url)

    storage = KeychainTokenStorage(url)
    refresh_at = storage.refresh_at()
    assert refresh_at is not None
    await until(lambda: time.time() > refresh_at, "the token nearing its expiry")
    second = await _whoami(connection)
    assert second["grants"][-1] == "refresh_token"  # type: ignore[index]
    assert len(person.opened) == 1  # refreshed, no new sign in
    await connection.stop()

    # After a restart the stored token's expiry is known: refreshed, not found out by a 401
    # (which would start a whole new sign in in the browser).
    expires_at = json.loads(_oauth_entries()[f"{url} tokens"])["expires_at"]
    await until(lambda: time.time() > expires_at + 1, "the stored token expiring")
    again = McpConnection(_config(url), person=person)
    await again.start()
    third = await _whoami(again)
    assert third["grants"].count("authorization_code") == 1  # type: ignore[union-attr]
    assert third["grants"][-1] == "refresh_token"  # type: ignore[index]
    assert len(person.opened) == 1

    await again.sign_out()
    assert not signed_in(url) and f"{url} tokens" not in _oauth_entries()
    nobody = McpConnection(_config(url), person=None)
    with pytest.raises(McpServerError, match="needs you to sign in"):
        await nobody.start(interactive=False)


async def test_signing_in_again_reuses_the_registration_or_registers_anew_when_its_port_is_taken(
    oauth_server: ServerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_oauth, "SIGN_IN_TIMEOUT", 30.0)  # a refused redirect fails in time
    url = oauth_server()
    person = FollowingPerson()
    connection = McpConnection(_config(url), person=person)
    await connection.sign_in()
    client = json.loads(_oauth_entries()[f"{url} client"])
    await connection.sign_out()

    await connection.sign_in()  # the registered port is free: same client, same redirect URI
    assert json.loads(_oauth_entries()[f"{url} client"])["client_id"] == client["client_id"]
    await connection.sign_out()

    port = KeychainTokenStorage(url).registered_port()
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("127.0.0.1", port))
        taken.listen()
        await connection.sign_in()  # another port: registered anew, or the server would refuse it
    assert connection.status is ServerStatus.READY
    assert json.loads(_oauth_entries()[f"{url} client"])["client_id"] != client["client_id"]
    assert len(person.opened) == 3 and all(status != 400 for status in person.statuses)
    await connection.stop()


@pytest.mark.expected_log_warnings("needs you to sign in")
async def test_a_background_start_never_opens_the_sign_in_page(oauth_server: ServerFactory) -> None:
    url = oauth_server()
    person = DefaultsPerson()
    connection = McpConnection(_config(url), person=person)
    with pytest.raises(McpServerError, match="Sign in from Settings"):
        await connection.start(interactive=False)
    assert person.opened == []


@pytest.mark.expected_log_warnings("was declined in the browser")
async def test_a_declined_sign_in_says_so(oauth_server: ServerFactory) -> None:
    url = oauth_server("--deny")
    connection = McpConnection(_config(url), person=FollowingPerson())
    with pytest.raises(SignInError) as raised:
        await connection.sign_in()
    assert "was declined in the browser" in raised.value.user_message
    assert connection.status is ServerStatus.FAILED
    assert not signed_in(url)


@pytest.mark.expected_log_warnings("did not finish within")
async def test_a_sign_in_nobody_finishes_times_out_with_a_message(
    oauth_server: ServerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_oauth, "SIGN_IN_TIMEOUT", 1.0)  # the limit under test
    url = oauth_server()
    person = DefaultsPerson()  # "opens" the page, then closes the browser: nothing comes back
    connection = McpConnection(_config(url, startup_timeout=30), person=person)
    with pytest.raises(SignInError) as raised:
        await connection.sign_in()
    assert (
        "did not finish" in raised.value.user_message and "browser page closed" in raised.value.user_message
    )
    assert len(person.opened) == 1


async def test_no_token_or_client_secret_reaches_the_database_logs_or_exports(
    engine: Engine, oauth_server: ServerFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    secret = "client-secret-4f1b9a0c7e"
    url = oauth_server("--client-id", "threadline-test", "--client-secret", secret, "--token-seconds", "3600")
    preregister(url, "threadline-test", secret)
    engine.tool_servers.set_person(FollowingPerson())
    await engine.tool_servers.save_server(_config(url))
    state = await engine.tool_servers.sign_in("secured")
    assert state.status is ServerStatus.READY, state.error
    record = json.loads(_oauth_entries()[f"{url} tokens"])
    values = [secret, record["token"]["access_token"], record["token"]["refresh_token"]]
    assert json.loads(_oauth_entries()[f"{url} client"])["client_secret"] == secret

    assert (await _whoami(engine.tool_servers._get("secured")))["resource"] == url
    await engine.tool_servers.stop("secured")
    await engine.library.export(tmp_path / "export.json", ExportFormat.JSON)
    texts = [caplog.text, await engine.agents.export_agents(), (tmp_path / "export.json").read_text()]
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            texts.append(path.read_bytes().decode("latin-1"))
    for value in values:
        assert not any(value in text for text in texts)
