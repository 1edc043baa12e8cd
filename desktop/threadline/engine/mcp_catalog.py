"""``engine.mcp``: the prompts and resources of the MCP servers, for the composer and the command line.

Between the callers and ``tools/mcp`` (``tools/mcp/catalog.py`` speaks to the servers through
the SDK): widgets and ``cli/`` reach the servers' prompts and resources only here. The
prompts of every enabled server are kept once listed (``known_prompts``), so the
composer's ``/`` list shows them without waiting; a server's ``prompts/list_changed``
lists its prompts again, and every change (lists, a subscribed resource) is told to the
watchers (``watch``) as a ``CatalogChange``. docs/mcp.md, "Prompts and resources".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from threadline.core.mcp_catalog import (
    CatalogChange,
    PromptInfo,
    PromptTurn,
    ResourceInfo,
    ResourceTemplateInfo,
)
from threadline.core.messages import ContextFile, ImageBlock
from threadline.engine.errors import EngineError
from threadline.tools.mcp.state import McpServerError

if TYPE_CHECKING:
    from threadline.tools.mcp.client import McpConnection
    from threadline.tools.mcp.manager import McpServerManager

T = TypeVar("T")

log = logging.getLogger("threadline.engine.mcp")

NOTICES = {
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
    "notifications/resources/updated": "resource",
}


class McpCatalogError(EngineError):
    """A prompt or resource could not be had: no such server or prompt, or the server refused."""


class McpCatalog:
    def __init__(self, servers: McpServerManager) -> None:
        self._servers = servers
        self._prompts: dict[str, list[PromptInfo]] = {}
        self._watchers: list[Callable[[CatalogChange], None]] = []
        self._relisting: set[asyncio.Task[None]] = set()
        servers.watch_notices(self._noticed)

    # -- prompts -------------------------------------------------------------------------------

    def known_prompts(self) -> list[PromptInfo]:
        """The prompts of the servers listed so far (``refresh_prompts``), in server order."""
        return [p for prompts in self._prompts.values() for p in prompts]

    def known_prompt(self, server: str, name: str) -> PromptInfo | None:
        return next((p for p in self._prompts.get(server, ()) if p.name == name), None)

    async def servers(self) -> list[str]:
        """The enabled servers' names."""
        return [c.name for c in await self._servers.list_servers() if c.enabled]

    async def refresh_prompts(self) -> list[PromptInfo]:
        """List the prompts of every enabled server (started in the background way: a server that
        needs a sign in is skipped, never opens a browser); a server that fails is left out."""
        names = await self.servers()
        await asyncio.gather(*(self._list_prompts(name, interactive=False) for name in names))
        for gone in set(self._prompts) - set(names):
            del self._prompts[gone]
        return self.known_prompts()

    async def prompts(self, server: str) -> list[PromptInfo]:
        """The prompts of one server (started, signing in if it asks)."""
        from threadline.tools.mcp.catalog import list_prompts

        prompts = await self._ask(server, list_prompts)
        self._prompts[server] = prompts
        return prompts

    async def find_prompt(self, server: str, name: str) -> PromptInfo:
        known = self.known_prompt(server, name)
        if known is not None:
            return known
        for prompt in await self.prompts(server):
            if prompt.name == name:
                return prompt
        raise McpCatalogError(f"MCP server {server!r} has no prompt {name!r}.")

    async def get_prompt(self, server: str, name: str, arguments: dict[str, str]) -> PromptTurn:
        """The prompt's messages as the user's turn."""
        from threadline.tools.mcp.catalog import get_prompt

        return await self._ask(server, lambda c: get_prompt(c, name, arguments))

    async def complete_prompt(
        self, server: str, prompt: str, argument: str, value: str, context: dict[str, str] | None = None
    ) -> list[str]:
        """Suggestions for a prompt's argument as typed so far (``completion/complete``)."""
        from threadline.tools.mcp.catalog import complete

        return await self._ask(server, lambda c: complete(c, ("prompt", prompt), argument, value, context))

    # -- resources -----------------------------------------------------------------------------

    async def resources(self, server: str) -> list[ResourceInfo]:
        from threadline.tools.mcp.catalog import list_resources

        return await self._ask(server, list_resources)

    async def templates(self, server: str) -> list[ResourceTemplateInfo]:
        from threadline.tools.mcp.catalog import list_templates

        return await self._ask(server, list_templates)

    async def complete_template(
        self, server: str, template: str, variable: str, value: str, context: dict[str, str] | None = None
    ) -> list[str]:
        from threadline.tools.mcp.catalog import complete

        return await self._ask(
            server, lambda c: complete(c, ("template", template), variable, value, context)
        )

    async def read(self, server: str, uri: str) -> list[ContextFile | ImageBlock]:
        """The resource's contents as attachments (text as a context file, an image as an image)."""
        from threadline.tools.mcp.catalog import read_resource

        return await self._ask(server, lambda c: read_resource(c, uri))

    async def read_bytes(self, server: str, uri: str) -> bytes:
        """The resource's contents as bytes (text as UTF-8), to save to a file."""
        from threadline.tools.mcp.catalog import read_resource_bytes

        return await self._ask(server, lambda c: read_resource_bytes(c, uri))

    async def subscribe(self, server: str, uri: str, *, on: bool = True) -> bool:
        """Be told (``watch``, kind ``"resource"``) when ``uri`` changes; False when the server cannot."""
        from threadline.tools.mcp.catalog import subscribe

        return await self._ask(server, lambda c: subscribe(c, uri, on=on))

    # -- changes -------------------------------------------------------------------------------

    def watch(self, callback: Callable[[CatalogChange], None]) -> Callable[[], None]:
        """``callback(change)`` when a server's prompts or resources change (on the loop's thread)."""
        self._watchers.append(callback)

        def unwatch() -> None:
            if callback in self._watchers:
                self._watchers.remove(callback)

        return unwatch

    def _noticed(self, server: str, method: str, params: object) -> None:
        kind = NOTICES.get(method)
        if kind is None:
            return
        uri = str(getattr(params, "uri", "") or "")
        if kind == "prompts":  # listed again first, so the watchers find the new list
            task = asyncio.ensure_future(self._relist(server))
            self._relisting.add(task)
            task.add_done_callback(self._relisting.discard)
            return
        self._tell(CatalogChange(server, kind, uri))

    async def _relist(self, server: str) -> None:
        await self._list_prompts(server, interactive=False)
        self._tell(CatalogChange(server, "prompts"))

    def _tell(self, change: CatalogChange) -> None:
        for watcher in list(self._watchers):
            try:
                watcher(change)
            except Exception:
                log.exception("MCP catalog watcher failed")

    # -- internals -----------------------------------------------------------------------------

    async def _list_prompts(self, server: str, *, interactive: bool) -> None:
        from threadline.tools.mcp.catalog import list_prompts

        try:
            connection = await self._servers.connection(server)
            await connection.ensure_running(interactive=interactive)
            self._prompts[server] = await list_prompts(connection)
        except (McpServerError, KeyError) as err:
            log.info("the prompts of MCP server %s were not listed: %s", server, err)
            self._prompts.pop(server, None)

    async def _ask(self, server: str, request: Callable[[McpConnection], Awaitable[T]]) -> T:
        try:
            connection = await self._servers.connection(server)
        except KeyError:
            raise McpCatalogError(f"There is no MCP server named {server!r}.") from None
        try:
            return await request(connection)
        except McpServerError as err:
            raise McpCatalogError(str(err)) from err
