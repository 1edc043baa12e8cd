"""An MCP server (stdio) whose prompts change while it runs: ``add_farewell`` adds a prompt
and tells the client (``notifications/prompts/list_changed``)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("prompting")


@server.prompt(name="greet", description="Say hello")
def greet(name: str) -> str:
    return f"Hello, {name}!"


@server.tool()
async def add_farewell(ctx: Context) -> str:
    """Add the ``farewell`` prompt."""

    def farewell() -> str:
        return "Goodbye!"

    server.prompt(name="farewell", description="Say goodbye")(farewell)
    await ctx.session.send_prompt_list_changed()
    return "added"


if __name__ == "__main__":
    server.run("stdio")
