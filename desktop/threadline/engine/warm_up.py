"""Work the first send would otherwise do, done in the background once the window is live.

The first prompt after launch must show at once, and its reply's waiting state with
it. What stood in the way was all first-use work on the turn's path: importing a
provider SDK, reading the API key from the keychain, importing the ``mcp`` SDK
(each import takes a noticeable part of a second; docs/performance.md) and starting the MCP servers the agent
uses. ``warm_up`` does all of it right after the engine is attached (which is after
the first paint), one piece at a time:

1. each configured provider's client is made on the stream worker's thread (the SDK
   import and the key lookup happen there, never on the GUI thread);
2. if MCP servers are configured, the servers the default agent's tools select are
   started (their SDK is imported on a worker thread first, see ``mcp_client``).
   A turn itself no longer starts them while their tools are cached
   (``tools.mcp.manager``): it offers the cached tools and a call starts the
   server. The window starts them here anyway, after the first paint, so that a
   call does not wait for the process; ``threadline ask`` does not, so an ask that
   uses no tool starts no server.

A thread import still holds the GIL in bursts (a large module body runs as one C
call); ``bench/ui_bench.py first-send`` prints the worst loop stall it causes.
Nothing here is required: a failure is logged and the first send does the work
itself, as before.
"""

from __future__ import annotations

import logging

from threadline.engine.engine import Engine

log = logging.getLogger("threadline.engine.warm_up")


async def warm_up(engine: Engine) -> None:
    """Make the provider clients and start the default agent's MCP servers; never raises."""
    try:
        for config in await engine.store.list_providers():
            await engine.hub.warm_up(config)
    except Exception as err:  # the first send makes the client itself and reports its errors
        log.info("warming up the providers failed: %s", err)
    try:
        if not await engine.tool_servers.list_servers():
            return  # no MCP server: the mcp SDK is never imported
        agent = await engine.agents.get_agent()
        await engine.tool_servers.start_selected(agent.enabled_tools)
    except Exception as err:
        log.info("starting the MCP servers in the background failed: %s", err)
