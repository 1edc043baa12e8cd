"""An OAuth-protected MCP server on 127.0.0.1, built from the SDK's own auth server pieces.

``MCPServer`` with ``AuthSettings`` serves the protected-resource metadata, the
authorization server's metadata, dynamic registration, ``/authorize`` and ``/token``,
and requires a bearer token on ``/mcp``. The provider below keeps everything in memory
and approves every authorization at once (where a real one would show a login page), or
declines it with ``--deny``. Tokens live ``--token-seconds``; ``--client-id`` /
``--client-secret`` add a pre-registered client.

Tools: ``whoami`` answers JSON with the grants the token endpoint saw (in order), the
``resource`` the token was issued for and its scopes.

Usage: python oauth_server.py --port PORT [--token-seconds N] [--deny] [--client-id ID --client-secret S]
"""

from __future__ import annotations

import argparse
import json
import secrets
import time
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

SCOPE = "mcp"


class LoopbackClient(OAuthClientInformationFull):
    """A pre-registered native client: any port of 127.0.0.1 is its redirect (RFC 8252 §7.3)."""

    def validate_redirect_uri(self, redirect_uri: Any) -> Any:
        if redirect_uri is not None and str(redirect_uri).startswith("http://127.0.0.1:"):
            return redirect_uri
        return super().validate_redirect_uri(redirect_uri)


class MemoryProvider:
    def __init__(self, token_seconds: int, deny: bool) -> None:
        self.token_seconds = token_seconds
        self.deny = deny
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.grants: list[str] = []
        self.expiry: dict[str, float] = {}
        """Each access token's exact expiry (``AccessToken.expires_at`` is whole seconds)."""

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id or ""] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if self.deny:
            return construct_redirect_uri(str(params.redirect_uri), error="access_denied", state=params.state)
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + self.token_seconds
        self.expiry[access] = time.time() + self.token_seconds
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access, expires_in=self.token_seconds, scope=" ".join(scopes), refresh_token=refresh
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        self.grants.append("authorization_code")
        return self._issue(
            authorization_code.client_id, authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        self.grants.append("refresh_token")
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or self.expiry.get(token, 0.0) < time.time():
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(getattr(token, "token", ""), None)
        self.refresh.pop(getattr(token, "token", ""), None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token-seconds", type=int, default=3600)
    parser.add_argument("--deny", action="store_true")
    parser.add_argument("--client-id", default="")
    parser.add_argument("--client-secret", default="")
    args = parser.parse_args()

    base = f"http://127.0.0.1:{args.port}"
    provider = MemoryProvider(args.token_seconds, args.deny)
    if args.client_id:
        provider.clients[args.client_id] = LoopbackClient(
            client_id=args.client_id,
            client_secret=args.client_secret or None,
            token_endpoint_auth_method="client_secret_basic" if args.client_secret else "none",
            redirect_uris=None,
            scope=SCOPE,
        )
    server = MCPServer(
        "oauth-test",
        instructions="Call whoami to see who you are.",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
            ),
            required_scopes=[SCOPE],
            validate_token_resource=True,
        ),
    )

    @server.tool()
    def whoami() -> str:
        """Who the token says you are, and the token endpoint's grants so far."""
        token = get_access_token()
        return json.dumps(
            {
                "grants": provider.grants,
                "resource": token.resource if token else None,
                "scopes": token.scopes if token else [],
            }
        )

    import uvicorn

    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
