"""OAuth 2.1 sign in to remote (streamable-HTTP) MCP servers, through the ``mcp`` SDK.

The SDK's ``OAuthClientProvider`` (an ``httpx`` auth) does the protocol: on a 401 it
discovers the protected-resource metadata (RFC 9728, from ``WWW-Authenticate`` or the
well-known paths) and the authorization server's metadata (RFC 8414, OpenID discovery,
the 2025-03-26 fallbacks), registers the client (client ID metadata document when the
server supports it and one is configured, else dynamic registration; a pre-registered
client is simply a stored client record), sends PKCE (S256), the ``resource`` parameter
(RFC 8707) and the scopes from ``WWW-Authenticate`` or ``scopes_supported``, re-authorizes
on a 403 ``insufficient_scope`` (step-up), and refreshes an expired token.

What Threadline adds here, and why the SDK does not do it:

- ``KeychainTokenStorage``: the SDK only defines the ``TokenStorage`` protocol. Tokens and
  the client record (which holds a client secret) go to the system keychain through
  ``keyring`` and nowhere else: not the database, a log, an export. They are keyed by the
  server's canonical URL (the resource they are for), so a renamed server stays signed in;
  the SDK drops a client record bound to another issuer by itself (SEP-2352). Without a
  keychain they are kept in this process only, so a sign in lasts until Threadline quits.
- The refresh time: the SDK considers a token valid up to its very expiry and forgets the
  expiry when tokens are loaded from storage (a restart then only finds out by a 401, which
  starts a whole new sign in). ``ThreadlineOAuthProvider`` stores the absolute expiry and
  refreshes ``refresh_margin`` before it.
- ``LoopbackRedirect``: the SDK leaves receiving the authorization code to the app. A
  listener on 127.0.0.1 takes the redirect (RFC 8252 §7.3), on the port the client
  registered with when it can have it again: many authorization servers (the SDK's own
  among them) accept only the redirect URI registered, port included. When that port is
  taken the client registers again, instead of sending the browser to a refusal.
- Opening the browser goes through the ``McpPerson`` the caller supplies (``mcp_person``):
  the window's, the terminal's, or the conformance client's, which follows the redirect
  with an HTTP GET. With no person, a server that needs a sign in fails with a message
  saying where to sign in.
- ``SignInError``: a failure a person can act on, with a ``user_message``.

docs/mcp.md describes the whole flow.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

from threadline.llm.credentials import keychain_available

if TYPE_CHECKING:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

    from threadline.tools.mcp.person import McpPerson

log = logging.getLogger("threadline.tools.mcp")

SERVICE = "threadline-mcp-oauth"
"""The keychain service of sign-in tokens and client records (``mcp_secrets`` uses its own)."""
SIGN_IN_TIMEOUT = 300.0
"""How long a sign in waits for the browser to come back before it gives up."""
REFRESH_MARGIN = 60.0
"""Refresh this long before a token expires (at most a tenth of its lifetime)."""
CLIENT_NAME = "Threadline"

_memory: dict[str, str] = {}
"""Where tokens live when there is no keychain: this process only, never a file."""


class _QuietFlowError(logging.Filter):
    """The SDK logs every failed sign in as an error with its traceback ("OAuth flow error"),
    a closed browser tab included; the connection reports it (a warning with the reason), so
    the SDK's record is demoted to debug: an expected failure is no crash to report."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage() == "OAuth flow error":
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


logging.getLogger("mcp.client.auth.oauth2").addFilter(_QuietFlowError())


class SignInError(Exception):
    """A sign in that did not complete; ``user_message`` says what happened and what to do."""

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message


def server_key(url: str) -> str:
    """The keychain key of a server: its canonical URL (lower-case scheme and host, no fragment)."""
    parts = urlsplit(url.strip())
    return urlunsplit(parts._replace(scheme=parts.scheme.lower(), netloc=parts.netloc.lower(), fragment=""))


def _keyring() -> Any:
    import keyring

    return keyring


def _read(user: str) -> str | None:
    if not keychain_available():
        return _memory.get(user)
    keyring = _keyring()
    try:
        value = keyring.get_password(SERVICE, user)
    except keyring.errors.KeyringError as err:
        log.warning("the system keychain refused to give an MCP sign in (%s)", type(err).__name__)
        return _memory.get(user)
    return str(value) if value is not None else _memory.get(user)


def _write(user: str, value: str) -> None:
    if not keychain_available():
        _memory[user] = value
        return
    keyring = _keyring()
    try:
        keyring.set_password(SERVICE, user, value)
    except keyring.errors.KeyringError as err:
        log.warning(
            "the system keychain refused to store an MCP sign in (%s); it lasts until Threadline quits",
            type(err).__name__,
        )
        _memory[user] = value
        return
    _memory.pop(user, None)


def _delete(user: str) -> None:
    _memory.pop(user, None)
    if not keychain_available():
        return
    keyring = _keyring()
    with contextlib.suppress(keyring.errors.KeyringError):  # already gone, or a locked keychain
        keyring.delete_password(SERVICE, user)


class KeychainTokenStorage:
    """The SDK's ``TokenStorage`` on the system keychain, for one server (``server_key``)."""

    def __init__(self, url: str, *, refresh_margin: float = REFRESH_MARGIN) -> None:
        self.key = server_key(url)
        self.refresh_margin = refresh_margin

    @property
    def _tokens_user(self) -> str:
        return f"{self.key} tokens"

    @property
    def _client_user(self) -> str:
        return f"{self.key} client"

    def _stored_tokens(self) -> dict[str, Any] | None:
        raw = _read(self._tokens_user)
        if not raw:
            return None
        try:
            data = json.loads(raw)
        except ValueError:
            return None
        return data if isinstance(data, dict) and isinstance(data.get("token"), dict) else None

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken
        from pydantic import ValidationError

        data = self._stored_tokens()
        if data is None:
            return None
        try:
            return OAuthToken.model_validate(data["token"])
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = time.time() + int(tokens.expires_in) if tokens.expires_in is not None else None
        record = {"token": tokens.model_dump(mode="json", exclude_none=True), "expires_at": expires_at}
        _write(self._tokens_user, json.dumps(record))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull
        from pydantic import ValidationError

        raw = _read(self._client_user)
        if not raw:
            return None
        try:
            return OAuthClientInformationFull.model_validate_json(raw)
        except ValidationError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        _write(self._client_user, client_info.model_dump_json(exclude_none=True))

    def registered_port(self) -> int:
        """The loopback port of the stored client's registered redirect URI (0: none)."""
        raw = _read(self._client_user)
        try:
            uris = json.loads(raw).get("redirect_uris") or [] if raw else []
        except (ValueError, AttributeError):
            return 0
        for uri in uris:
            parts = urlsplit(str(uri))
            if parts.hostname == "127.0.0.1" and parts.port:
                return int(parts.port)
        return 0

    def refresh_at(self) -> float | None:
        """When the stored token should be refreshed (``None``: it does not expire, or none stored)."""
        data = self._stored_tokens()
        expires_at = data.get("expires_at") if data else None
        if not isinstance(expires_at, int | float):
            return None
        lifetime = (data or {}).get("token", {}).get("expires_in") or 0
        return float(expires_at) - min(self.refresh_margin, max(0.0, float(lifetime)) / 10)

    def signed_in(self) -> bool:
        return self._stored_tokens() is not None

    def sign_out(self) -> None:
        """Forget the tokens (the client record stays: signing in again needs no new registration)."""
        _delete(self._tokens_user)

    def forget(self) -> None:
        """Forget everything stored for the server (it was removed)."""
        _delete(self._tokens_user)
        _delete(self._client_user)


def preregister(url: str, client_id: str, client_secret: str = "") -> None:
    """Store a client the user registered with the server's authorization server beforehand.

    The SDK takes a stored client record as registered, so this is all pre-registration
    needs; its secret goes to the keychain with the tokens.
    """
    from mcp.shared.auth import OAuthClientInformationFull

    record = OAuthClientInformationFull(
        client_id=client_id,
        client_secret=client_secret or None,
        token_endpoint_auth_method="client_secret_basic" if client_secret else "none",
    )
    _write(f"{server_key(url)} client", record.model_dump_json(exclude_none=True))


def signed_in(url: str) -> bool:
    return KeychainTokenStorage(url).signed_in()


def sign_out(url: str) -> None:
    """Delete the server's tokens from the keychain; its next connection asks to sign in again."""
    KeychainTokenStorage(url).sign_out()


def forget(url: str) -> None:
    KeychainTokenStorage(url).forget()


# -- the redirect -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Callback:
    code: str
    state: str | None
    iss: str | None


_DONE_PAGE = (
    "<!doctype html><meta charset=utf-8><title>Threadline</title>"
    "<p style='font:16px sans-serif;margin:3em'>{text}</p>"
)


class LoopbackRedirect:
    """The redirect target of a sign in: ``http://127.0.0.1:PORT/callback`` on this computer only.

    The socket listens from when the object is made (the redirect URI must be known when
    the client registers, and a fast browser may come back before ``wait`` runs: its
    connection waits in the backlog); it is served while a sign in waits (``wait``).
    """

    PATH = "/callback"

    def __init__(self, server: str, *, port: int = 0, wait_limit: float | None = None) -> None:
        """``port``: the one the client registered with, when there is one (else any): an
        authorization server may accept only the redirect URI registered, to the port."""
        self.server = server
        self.wait_limit = SIGN_IN_TIMEOUT if wait_limit is None else wait_limit
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if sys.platform != "win32":  # the last sign in's closed connections must not keep its port
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._socket.bind(("127.0.0.1", port))
        except OSError:  # taken meanwhile: another port, and the client registers again
            self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(8)
        self._socket.setblocking(False)
        self.port = int(self._socket.getsockname()[1])
        self._listener: asyncio.Server | None = None
        self._result: asyncio.Future[_Callback] | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.PATH}"

    async def wait(self) -> AuthorizationCodeResult:
        """The code the browser brings back; ``SignInError`` when it does not come in ``wait_limit`` s."""
        from mcp.shared.auth import AuthorizationCodeResult

        loop = asyncio.get_running_loop()
        self._result = loop.create_future()
        if self._listener is None:
            self._listener = await asyncio.start_server(self._handle, sock=self._socket)
        try:
            callback = await asyncio.wait_for(self._result, self.wait_limit)
        except TimeoutError:
            raise SignInError(
                f"The sign in to MCP server {self.server!r} did not finish within "
                f"{self.wait_limit / 60:g} minutes (was the browser page closed?). Sign in again to retry."
            ) from None
        finally:
            self._result = None
        return AuthorizationCodeResult(code=callback.code, state=callback.state, iss=callback.iss)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = request_line.split(" ")
            target = urlsplit(parts[1]) if len(parts) >= 2 else urlsplit("/")
            if parts[0] != "GET" or target.path != self.PATH:
                await _respond(writer, 404, "Not found.")
                return
            query = {k: v[0] for k, v in parse_qs(target.query).items()}
            text = self._deliver(query)
            await _respond(writer, 200, text)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _deliver(self, query: dict[str, str]) -> str:
        result = self._result
        if result is None or result.done():
            return "This sign in is over. Go back to Threadline."
        error = query.get("error")
        if error:
            reason = query.get("error_description") or error
            if error == "access_denied":
                message = f"The sign in to MCP server {self.server!r} was declined in the browser."
            else:
                message = f"The sign in to MCP server {self.server!r} failed: {reason}."
            result.set_exception(SignInError(message + " Sign in again to retry."))
            return f"The sign in did not complete ({_escape(reason)}). You can close this tab."
        code = query.get("code")
        if not code:
            result.set_exception(
                SignInError(f"The sign in page of MCP server {self.server!r} sent no authorization code.")
            )
            return "The sign in did not complete. You can close this tab."
        result.set_result(_Callback(code, query.get("state"), query.get("iss")))
        return "Signed in. You can close this tab and go back to Threadline."

    async def aclose(self) -> None:
        if self._listener is not None:
            self._listener.close()
            with contextlib.suppress(Exception):
                await self._listener.wait_closed()
            self._listener = None
        self._socket.close()


async def _respond(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    body = _DONE_PAGE.format(text=_escape(text)).encode("utf-8")
    reason = "OK" if status == 200 else "Not Found"
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("latin-1")
        + body
    )
    await writer.drain()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# -- the provider ------------------------------------------------------------------------------------------


def build_provider(
    server: str,
    url: str,
    *,
    person: McpPerson | None,
    redirect: LoopbackRedirect,
    client_metadata_url: str | None = None,
    storage: KeychainTokenStorage | None = None,
    pause: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext,
) -> OAuthClientProvider:
    """The SDK's OAuth provider for ``server`` at ``url``, storing in the keychain.

    ``person`` opens the authorization page (``None``: a sign in is refused with a message);
    ``redirect`` receives the code; ``pause`` stops the caller's time limits while the
    person is on the sign-in page. ``client_metadata_url`` is the HTTPS address of
    Threadline's client ID metadata document, where one is published.
    """
    from mcp.shared.auth import OAuthClientMetadata
    from pydantic import AnyUrl

    storage = storage or KeychainTokenStorage(url)

    async def open_page(authorization_url: str) -> None:
        if person is None:
            raise SignInError(
                f"MCP server {server!r} needs you to sign in. Sign in from Settings → MCP, or run "
                f"`threadline mcp login {server}`."
            )
        with pause():
            await person.open_sign_in(server, authorization_url)

    async def receive_code() -> AuthorizationCodeResult:
        with pause():
            return await redirect.wait()

    metadata = OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[AnyUrl(redirect.redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    provider_class = _provider_class()
    return provider_class(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=open_page,
        callback_handler=receive_code,
        client_metadata_url=client_metadata_url,
    )


_PROVIDER_CLASS: type[OAuthClientProvider] | None = None


def _provider_class() -> type[OAuthClientProvider]:
    """``ThreadlineOAuthProvider``, defined on first use (the SDK is imported late: mcp_client)."""
    global _PROVIDER_CLASS
    if _PROVIDER_CLASS is not None:
        return _PROVIDER_CLASS
    from mcp.client.auth import OAuthClientProvider

    class ThreadlineOAuthProvider(OAuthClientProvider):
        """The SDK's provider, refreshing before expiry, also after a restart (see the module doc).

        Overrides three private hooks of the SDK's flow; tests/integration/tools/test_mcp_oauth.py
        notices when an SDK update changes them. ``_initialize`` also drops a client record
        registered for a loopback port this sign in does not listen on (see the module doc).
        """

        async def _initialize(self) -> None:
            await super()._initialize()
            client = self.context.client_info
            redirect_uris = self.context.client_metadata.redirect_uris or []
            if client is not None and client.redirect_uris and redirect_uris[0] not in client.redirect_uris:
                # Registered with a loopback port that could not be had again: register anew,
                # or the authorization server refuses the redirect (and the browser never returns).
                self.context.client_info = None
            storage = self.context.storage
            if isinstance(storage, KeychainTokenStorage) and self.context.current_tokens is not None:
                self.context.token_expiry_time = storage.refresh_at()

        async def _handle_token_response(self, response: Any) -> None:
            await super()._handle_token_response(response)
            self._refresh_early()

        async def _handle_refresh_response(self, response: Any) -> bool:
            refreshed = await super()._handle_refresh_response(response)
            if refreshed:
                self._refresh_early()
            return refreshed

        def _refresh_early(self) -> None:
            storage = self.context.storage
            if isinstance(storage, KeychainTokenStorage):
                self.context.token_expiry_time = storage.refresh_at()

    _PROVIDER_CLASS = ThreadlineOAuthProvider
    return ThreadlineOAuthProvider
