"""MCP server configurations the user edits, kept as JSON in the store's settings.

One record per server: a stdio server is a command (args, env, cwd) Threadline
starts; a streamable-HTTP server is a URL (headers). ``name`` becomes the
namespace of its tools (``name/tool`` for approval rules, ``name__tool`` on the
wire), so it is restricted to letters, digits, ``-`` and single ``_``.
Values in ``env`` or ``headers`` never reach this JSON, whatever their name:
the server manager moves each one to the system keychain first and keeps a
marker (``mcp_secrets``). Two exceptions, both chosen by the user: a
``${VAR}`` value (read from Threadline's environment when the server starts)
is stored as written, and a name listed in ``public_env`` / ``public_headers``
("not a secret") keeps its value here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Protocol

MCP_SERVERS_SETTING = "mcp_servers"
SERVER_NAME_PATTERN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$")
MAX_SERVER_NAME = 32
DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_STARTUP_TIMEOUT = 60.0


class Transport(StrEnum):
    STDIO = "stdio"
    HTTP = "http"
    """Streamable HTTP."""


class InvalidServerConfig(ValueError):
    """A server record the user entered cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    name: str
    transport: Transport = Transport.STDIO
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    public_env: tuple[str, ...] = ()
    """Names in ``env`` the user marked "not a secret": their values stay in the settings."""
    public_headers: tuple[str, ...] = ()
    """Names in ``headers`` the user marked "not a secret"."""
    enabled: bool = True
    autostart: bool = False
    """Start with the app instead of when a turn first needs the server's tools."""
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT

    def __post_init__(self) -> None:
        # One spelling of the "not a secret" lists (sorted, only names present) so records compare equal.
        object.__setattr__(self, "public_env", tuple(sorted({n for n in self.public_env if n in self.env})))
        public_headers = tuple(sorted({n for n in self.public_headers if n in self.headers}))
        object.__setattr__(self, "public_headers", public_headers)

    def validate(self) -> McpServerConfig:
        if not SERVER_NAME_PATTERN.match(self.name) or len(self.name) > MAX_SERVER_NAME:
            raise InvalidServerConfig(
                f"Server name {self.name!r} must be 1–{MAX_SERVER_NAME} letters, digits, '-' or single '_', "
                "starting with a letter or digit."
            )
        if self.transport is Transport.STDIO and not self.command.strip():
            raise InvalidServerConfig(f"Server {self.name!r} needs a command to start.")
        if self.transport is Transport.HTTP and not self.url.startswith(("http://", "https://")):
            raise InvalidServerConfig(f"Server {self.name!r} needs an http:// or https:// URL.")
        if self.call_timeout <= 0 or self.startup_timeout <= 0:
            raise InvalidServerConfig("Timeouts must be positive.")
        return self

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["transport"] = self.transport.value
        data["args"] = list(self.args)
        data["public_env"] = list(self.public_env)
        data["public_headers"] = list(self.public_headers)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> McpServerConfig:
        try:
            return cls(
                name=str(data["name"]),
                transport=Transport(data.get("transport", Transport.STDIO)),
                command=str(data.get("command", "")),
                args=tuple(str(a) for a in data.get("args", ())),
                env={str(k): str(v) for k, v in dict(data.get("env") or {}).items()},
                cwd=str(data.get("cwd", "")),
                url=str(data.get("url", "")),
                headers={str(k): str(v) for k, v in dict(data.get("headers") or {}).items()},
                public_env=tuple(str(n) for n in data.get("public_env") or ()),
                public_headers=tuple(str(n) for n in data.get("public_headers") or ()),
                enabled=bool(data.get("enabled", True)),
                autostart=bool(data.get("autostart", False)),
                call_timeout=float(data.get("call_timeout", DEFAULT_CALL_TIMEOUT)),
                startup_timeout=float(data.get("startup_timeout", DEFAULT_STARTUP_TIMEOUT)),
            ).validate()
        except (KeyError, TypeError, ValueError) as err:
            raise InvalidServerConfig(f"A stored MCP server record is not valid: {err}") from err


class SettingsStore(Protocol):
    async def get_setting(self, key: str, default: Any = None) -> Any: ...

    async def set_setting(self, key: str, value: Any) -> None: ...


async def load_configs(store: SettingsStore) -> list[McpServerConfig]:
    """The stored servers; a broken record is skipped (and logged), never fatal."""
    import logging

    raw = await store.get_setting(MCP_SERVERS_SETTING, [])
    configs: list[McpServerConfig] = []
    for item in raw if isinstance(raw, list) else []:
        try:
            configs.append(McpServerConfig.from_json(item))
        except InvalidServerConfig as err:
            logging.getLogger("threadline.tools.mcp").warning("%s", err)
    return configs


async def save_configs(store: SettingsStore, configs: list[McpServerConfig]) -> None:
    await store.set_setting(MCP_SERVERS_SETTING, [c.to_json() for c in configs])
