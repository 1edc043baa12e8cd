"""The MCP servers the user configured: stored, started on demand, listed for settings, stopped on exit.

The engine owns one ``McpServerManager`` (``engine.tool_servers``). It is a
``ToolSource`` of the engine's ``ToolRegistry``: when a turn starts, the
registry asks it to prepare the agent's ``enabled_tools`` patterns.

Servers start lazily, their tools are known early. Every server's tool list is
cached with a hash of its record (``tool_cache``); loading the records registers
the cached tools of each enabled server whose record is unchanged, so a turn
offers them without starting anything. ``prepare`` starts only the selected
servers it knows no tools of (first use, or a record changed since); the others
start when the model calls one of their tools (``McpConnection.call``). A start
and a server's ``tools/list_changed`` refresh the cache. The window starts the
default agent's servers in the background after its first paint anyway
(``start_selected``, from ``engine.warm_up``), so its first call does not wait.
A server's tools stay registered while it is stopped or failed, so a call to one
restarts it; removing or disabling a server, or changing its record,
unregisters them.

The settings UI uses ``list_servers``, ``states``, ``save_server``,
``remove_server``, ``start``/``restart``/``stop``, ``sign_in``/``sign_out`` and
``subscribe`` (a callback per status change).

``person`` (``set_person``) answers the servers' questions (elicitation) and opens
their sign-in pages (OAuth, ``mcp_oauth``): the window's, or the terminal's in
``threadline ask``. Background starts (autostart, the window's warm-up) never open a
sign-in page: a server that needs one fails with a message saying where to sign in.

Every ``env`` and ``headers`` value goes to the system keychain when a record is
saved, unless the user marked it "not a secret" or wrote it as ``${VAR}``
(``mcp_secrets``); the records here, and the JSON in the store, hold a marker
in its place, and a connection reads the real values when it starts. Renaming
a server moves its keychain entries, removing it deletes them. Loading the
records moves values an older version left in plain text to the keychain.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from threadline.tools.mcp.config import (
    InvalidServerConfig,
    McpServerConfig,
    SettingsStore,
    Transport,
    load_configs,
    save_configs,
)
from threadline.tools.mcp.secrets import forget_stale, has_plain_secrets, store_secrets
from threadline.tools.mcp.state import McpServerError, ServerState, ServerStatus, wire_names
from threadline.tools.registry import ToolRegistry
from threadline.tools.tool_cache import ToolDescription, ToolListCache

if TYPE_CHECKING:
    from threadline.tools.mcp.calls import CallProgress
    from threadline.tools.mcp.client import McpConnection
    from threadline.tools.mcp.person import McpPerson

log = logging.getLogger("threadline.tools.mcp")

StateObserver = Callable[[ServerState], None]


def pattern_selects_server(pattern: str, server: str) -> bool:
    """Whether an ``enabled_tools`` pattern can match some tool ``server/...``."""
    if "/" in pattern:
        return fnmatch.fnmatchcase(server, pattern.split("/", 1)[0])
    return fnmatch.fnmatchcase(f"{server}/x", pattern)


class McpServerManager:
    def __init__(self, store: SettingsStore, registry: ToolRegistry, *, log_dir: Path | None = None) -> None:
        self._store = store
        self._registry = registry
        self._log_dir = log_dir
        self._connections: dict[str, McpConnection] = {}
        self._registered: dict[str, list[str]] = {}
        self._observers: list[StateObserver] = []
        self._loaded = False
        self._load_lock = asyncio.Lock()
        self._cache = ToolListCache(store)
        self._cache_writes: set[asyncio.Task[None]] = set()
        self.person: McpPerson | None = None
        self._progress_observers: list[Callable[[CallProgress], None]] = []
        self._notice_observers: list[Callable[[str, str, object], None]] = []
        registry.add_source(self)

    def set_person(self, person: McpPerson | None) -> None:
        """Who answers the servers' questions and signs in (``None``: nobody; they are declined)."""
        self.person = person
        for connection in self._connections.values():
            connection.person = person

    # -- configuration ------------------------------------------------------------------------------

    async def load(self) -> None:
        """Read the stored server records (once; later edits go through this object)."""
        async with self._load_lock:
            if self._loaded:
                return
            configs = await load_configs(self._store)
            migrated = False
            for config in configs:
                if has_plain_secrets(config):  # saved by a version that kept (some) values in plain text
                    try:
                        config = store_secrets(config)
                        migrated = True
                    except InvalidServerConfig:
                        log.warning(
                            "MCP server %s has values stored in plain text and there is no usable keychain "
                            "to move them to; edit the server and write them as ${VAR}, or mark the ones "
                            "that are not secrets.",
                            config.name,
                        )
                self._connections[config.name] = self._connection(config)
            if migrated:
                await save_configs(self._store, [c.config for c in self._connections.values()])
            await self._cache.load()
            for connection in self._connections.values():
                self._register_cached(connection)
            self._loaded = True

    async def list_servers(self) -> list[McpServerConfig]:
        await self.load()
        return [c.config for c in self._connections.values()]

    def runs_locally(self, wire_name: str) -> bool:
        """Whether ``wire_name`` is a tool of a configured stdio server (loaded records; its tools
        need not be listed): its processes end with Threadline, a remote server's work does not."""
        return any(
            wire_name.startswith(f"{name}__") and connection.config.transport is Transport.STDIO
            for name, connection in self._connections.items()
        )

    async def states(self) -> list[ServerState]:
        """Status, last error and tools of every configured server (tools once it has run)."""
        await self.load()
        return [c.state() for c in self._connections.values()]

    async def connection(self, name: str) -> McpConnection:
        """The connection of ``name`` (``engine.mcp_servers`` reads its details and log)."""
        return await self._loaded_get(name)

    async def state(self, name: str) -> ServerState:
        return self._get(name).state() if self._loaded else (await self._loaded_get(name)).state()

    async def save_server(self, config: McpServerConfig, *, previous_name: str | None = None) -> None:
        """Add or replace a server record (validated, persisted); a changed server is stopped."""
        config.validate()
        await self.load()
        old_name = previous_name or config.name
        old = self._connections.get(old_name)
        if old_name != config.name and config.name in self._connections:
            raise ValueError(f"There is already an MCP server named {config.name!r}.")
        new_secrets = has_plain_secrets(config)  # typed in: the markers compare equal, the values may not
        config = store_secrets(config, old.config if old is not None else None)
        if old is not None:
            if old.config == config and not new_secrets:
                return
            await self._drop(old)
        records = [c.config for c in self._connections.values()] + [config]
        await save_configs(self._store, records)
        if old is not None:
            forget_stale(old.config, config)
        self._connections[config.name] = self._connection(config)
        self._register_cached(self._connections[config.name])  # e.g. enabled again, unchanged otherwise
        self._notify(self._connections[config.name].state())

    async def remove_server(self, name: str) -> None:
        await self.load()
        connection = self._connections.get(name)
        if connection is None:
            return
        await self._drop(connection)
        await save_configs(self._store, [c.config for c in self._connections.values()])
        forget_stale(connection.config, None)
        if connection.config.transport is Transport.HTTP and not any(
            c.config.url == connection.config.url for c in self._connections.values()
        ):
            from threadline.tools.mcp.oauth import forget

            forget(connection.config.url)  # its sign in (tokens, client record) leaves the keychain too
        await self._cache.forget(name)

    async def _drop(self, connection: McpConnection) -> None:
        self._connections.pop(connection.name, None)
        self._unregister(connection.name)
        await connection.stop()

    # -- running ----------------------------------------------------------------------------------------

    async def start(self, name: str) -> ServerState:
        """Start a server now (the settings UI's "connect" / "show tools"); failure shows in the state."""
        connection = await self._loaded_get(name)
        with contextlib.suppress(McpServerError):
            await connection.start()
        return connection.state()

    async def restart(self, name: str) -> ServerState:
        connection = await self._loaded_get(name)
        with contextlib.suppress(McpServerError):
            await connection.restart()
        return connection.state()

    async def stop(self, name: str) -> None:
        await (await self._loaded_get(name)).stop()

    async def sign_in(self, name: str) -> ServerState:
        """Connect to a remote server now, signing in through ``person`` if it asks.

        Raises ``SignInError`` (``mcp_oauth``, with a ``user_message``) when the sign in
        fails, times out or is declined; any other failure shows in the returned state.
        """
        connection = await self._loaded_get(name)
        connection.restarts = 0
        with contextlib.suppress(McpServerError):
            await connection.sign_in()
        return connection.state()

    async def sign_out(self, name: str) -> ServerState:
        """Forget a remote server's tokens (keychain) and disconnect it."""
        connection = await self._loaded_get(name)
        await connection.sign_out()
        self._notify(connection.state())
        return connection.state()

    async def signed_in(self, name: str) -> bool:
        return (await self._loaded_get(name)).signed_in()

    def instructions(self) -> dict[str, str]:
        """The ``instructions`` of each running server that gave some (for the system prompt)."""
        return {c.name: c.instructions for c in self._connections.values() if c.instructions}

    async def start_autostart(self) -> None:
        """Start the servers marked to start with the app."""
        await self.load()
        wanted = [c for c in self._connections.values() if c.config.enabled and c.config.autostart]
        await asyncio.gather(*(self._try_start(c, interactive=False) for c in wanted))

    async def prepare(self, patterns: Sequence[str]) -> None:
        """``ToolSource``: make the tools of the servers these patterns select known to the registry.

        A server whose tools are registered (cached, or it ran) is left alone: a call
        starts it. Only one whose tools are unknown is started now, to learn them.
        """
        await self.load()
        unknown = [c for c in self._selected(patterns) if c.name not in self._registered]
        await asyncio.gather(*(self._try_start(c) for c in unknown))

    async def start_selected(self, patterns: Sequence[str]) -> None:
        """Start every enabled server these patterns select (the window's background warm-up)."""
        await self.load()
        await asyncio.gather(*(self._try_start(c, interactive=False) for c in self._selected(patterns)))

    def running(self) -> list[str]:
        """Names of the servers whose process or connection is up (starting or ready)."""
        return [
            c.name
            for c in self._connections.values()
            if c.status in (ServerStatus.STARTING, ServerStatus.READY)
        ]

    def _selected(self, patterns: Sequence[str]) -> list[McpConnection]:
        return [
            c
            for c in self._connections.values()
            if c.config.enabled and any(pattern_selects_server(p, c.name) for p in patterns)
        ]

    async def _try_start(self, connection: McpConnection, *, interactive: bool = True) -> None:
        try:
            await connection.ensure_running(interactive=interactive)
        except McpServerError as err:
            log.warning("%s", err)

    async def aclose(self) -> None:
        """Stop every server (on exit); each gets its transport's graceful shutdown."""
        connections = list(self._connections.values())
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)
        await asyncio.gather(*self._cache_writes, return_exceptions=True)

    # -- observers ---------------------------------------------------------------------------------------

    def subscribe(self, callback: StateObserver) -> Callable[[], None]:
        """``callback(state)`` on every status change (called on the event loop's thread)."""
        self._observers.append(callback)

        def unsubscribe() -> None:
            if callback in self._observers:
                self._observers.remove(callback)

        return unsubscribe

    def subscribe_progress(self, callback: Callable[[CallProgress], None]) -> Callable[[], None]:
        """``callback(progress)`` as running tool calls report progress, and once as each ends."""
        self._progress_observers.append(callback)
        return lambda: (
            self._progress_observers.remove(callback) if callback in self._progress_observers else None
        )

    def _progressed(self, progress: CallProgress) -> None:
        for observer in list(self._progress_observers):
            observer(progress)  # each failure is logged by the connection's tracker

    def _notify(self, state: ServerState) -> None:
        for observer in list(self._observers):
            try:
                observer(state)
            except Exception:
                log.exception("MCP state observer failed")

    # -- prompts and resources (``engine.mcp``, ``mcp_catalog``) ---------------------------------------

    def watch_notices(self, callback: Callable[[str, str, object], None]) -> Callable[[], None]:
        """``callback(server, method, params)`` for each notification besides the tool list's."""
        self._notice_observers.append(callback)
        return lambda: self._notice_observers.remove(callback) if callback in self._notice_observers else None

    def _noticed(self, connection: McpConnection, method: str, params: object) -> None:
        if self._connections.get(connection.name) is not connection:
            return
        for observer in list(self._notice_observers):
            try:
                observer(connection.name, method, params)
            except Exception:
                log.exception("MCP notice observer failed")

    # -- internals ---------------------------------------------------------------------------------------

    def _connection(self, config: McpServerConfig) -> McpConnection:
        # The connection's code loads with the first server configured: a start with none
        # never imports it (docs/performance.md, "Memory after start with the engine open").
        from threadline.tools.mcp.client import McpConnection

        connection = McpConnection(config, log_dir=self._log_dir, on_change=self._changed, person=self.person)
        connection.calls.observer = self._progressed
        connection.on_notice = self._noticed
        return connection

    def _changed(self, connection: McpConnection) -> None:
        if connection.status is ServerStatus.READY and self._connections.get(connection.name) is connection:
            self._register(connection, connection.tools)
            self._spawn_remember(connection)
        self._notify(connection.state())

    def _register_cached(self, connection: McpConnection) -> None:
        """Register the cached tools of an enabled server whose record is unchanged (nothing starts)."""
        if not connection.config.enabled or connection.name in self._registered:
            return
        cached = self._cache.tools_for(connection.config)
        if cached is not None:
            self._register(connection, cached)

    def _register(self, connection: McpConnection, tools: Sequence[ToolDescription]) -> None:
        from threadline.tools.mcp.client import McpTool  # loaded with the connection already

        self._unregister(connection.name)
        names = []
        for tool, wire in zip(tools, wire_names(connection.name, tools), strict=True):
            self._registry.register(McpTool(connection, tool, wire))
            names.append(wire)
        self._registered[connection.name] = names

    def _spawn_remember(self, connection: McpConnection) -> None:
        """Write the tools the server just reported to the cache (in the background; a failure is logged)."""
        task = asyncio.ensure_future(self._cache.remember(connection.config, connection.tools))
        self._cache_writes.add(task)
        task.add_done_callback(self._cache_written)

    def _cache_written(self, task: asyncio.Task[None]) -> None:
        self._cache_writes.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.info("the MCP tool cache was not updated: %s", task.exception())

    def _unregister(self, server: str) -> None:
        for wire in self._registered.pop(server, []):
            self._registry.unregister(wire)

    def _get(self, name: str) -> McpConnection:
        connection = self._connections.get(name)
        if connection is None:
            raise KeyError(f"no MCP server {name!r}")
        return connection

    async def _loaded_get(self, name: str) -> McpConnection:
        await self.load()
        return self._get(name)
