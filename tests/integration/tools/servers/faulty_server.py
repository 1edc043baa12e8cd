"""A tiny MCP server (the SDK's MCPServer, formerly FastMCP) that misbehaves on request.

Run over stdio (default) or streamable HTTP (``--http PORT``; requests must carry
``X-Test-Token: secret``, which proves configured headers are sent).
Tools: echo, pid, crash (the process exits mid-call), hang (never answers),
wait (writes a file when it starts, and another when it is cancelled),
fail (a tool error), picture (an image), weather (structured content only),
wipe (annotated ``destructiveHint``; does nothing), grow (adds a tool and sends
``notifications/tools/list_changed``). ``--started-file PATH`` appends the process id
to PATH when the server starts (to count starts). ``--child-file PATH`` starts a
``sleep`` child and writes its process id to PATH; ``--print-env`` writes the
server's environment to stderr at start (as a careless server might).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel

# A 1x1 transparent PNG.
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

server = MCPServer("faulty")


class Weather(BaseModel):
    city: str
    celsius: float


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return f"echo: {text}"


@server.tool()
def pid() -> str:
    """The server's process id (to see restarts)."""
    return str(os.getpid())


@server.tool()
async def crash() -> str:
    """Exit the process in the middle of the call."""
    sys.stderr.write("faulty: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Never answer."""
    await asyncio.sleep(3600)
    return "too late"


@server.tool()
async def wait(started: str, seconds: float = 3600) -> str:
    """Write ``started`` (a file path), then sleep; a cancellation writes ``started``.cancelled."""
    Path(started).write_text(str(os.getpid()))
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        Path(f"{started}.cancelled").write_text("cancelled")
        raise
    return "waited"


@server.tool()
def fail(reason: str = "the disk is on fire") -> str:
    """Report an error."""
    raise ToolError(f"cannot do that: {reason}")


@server.tool()
def picture() -> Image:
    """A tiny PNG."""
    return Image(data=PIXEL_PNG, format="png")


@server.tool(structured_output=True)
def weather(city: str) -> Weather:
    """Structured weather."""
    return Weather(city=city, celsius=21.5)


@server.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def wipe() -> str:
    """Claims to erase everything (it does nothing)."""
    return "wiped nothing"


@server.tool()
async def grow(name: str, ctx: Context) -> str:  # type: ignore[type-arg]
    """Add a tool called ``name`` and tell the client the tool list changed."""
    server.add_tool(lambda: f"{name} grown", name=name, description=f"A tool added at run time: {name}.")
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--fail-start", action="store_true")
    parser.add_argument("--started-file", default="")
    parser.add_argument("--child-file", default="")
    parser.add_argument("--print-env", action="store_true")
    args = parser.parse_args()
    if args.print_env:
        for name, value in sorted(os.environ.items()):
            sys.stderr.write(f"{name}={value}\n")
        sys.stderr.flush()
    if args.child_file:
        import subprocess

        child = subprocess.Popen(["sleep", "3600"])
        Path(args.child_file).write_text(str(child.pid))
    if args.started_file:
        with open(args.started_file, "a", encoding="utf-8") as started:
            started.write(f"{os.getpid()}\n")
    if args.fail_start:
        sys.stderr.write("faulty: missing configuration, giving up\n")
        sys.exit(2)
    if not args.http:
        server.run()
        return
    import uvicorn
    from starlette.responses import PlainTextResponse

    app = server.streamable_http_app()

    async def guarded(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] == "http" and dict(scope["headers"]).get(b"x-test-token") != b"secret":
            await PlainTextResponse("missing token", status_code=401)(scope, receive, send)
            return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=args.http, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
