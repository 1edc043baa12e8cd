"""``threadline mcp …``: configure MCP tool servers without the window (a headless machine, a script).

The records go through the engine's server manager, as the Settings page's do,
so the same rule holds: ``--env`` and ``--header`` values go to the system
keychain and never reach the database; ``--env-from KEY=ENVVAR`` stores
``${ENVVAR}``, read from Threadline's environment when the server starts (the
way on a computer without a keychain); ``--public-env`` / ``--public-header``
mark values that are not secrets. ``mcp list`` masks every secret value. Those
options written after ``--`` belong to the server's command line, verbatim: ``mcp add``
warns about them (without echoing a value). ``mcp login NAME`` signs in to a remote server
(OAuth: the browser, then the tokens in the keychain); ``mcp logout NAME`` forgets them.
``mcp prompts NAME`` and ``mcp resources NAME`` list what a server offers (``cli.mcp_catalog``).
``mcp install FILE.mcpb`` installs an MCP bundle (``cli/mcp_install.py``).
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from typing import TYPE_CHECKING, Any

from threadline.tools.mcp.config import InvalidServerConfig, McpServerConfig, Transport

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi


_VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class McpCommandError(Exception):
    """A problem with the arguments or the server, to report in one line."""


def config_from_args(args: argparse.Namespace) -> McpServerConfig:
    """The record ``mcp add`` saves (validated; secrets still in it, the manager moves them)."""
    command: list[str] = list(args.server_command)
    if bool(args.url) == bool(command):
        raise McpCommandError("give either a command after -- (a local server) or --url URL (a remote one)")
    for key, variable in args.env_from:
        if not _VARIABLE_NAME.match(variable.strip()):
            raise McpCommandError(f"--env-from {key}=…: {variable!r} is not an environment variable name")
    env = dict(args.env)
    env.update({key: f"${{{variable.strip()}}}" for key, variable in args.env_from})
    env.update(dict(args.public_env))
    headers = dict(args.header) | dict(args.public_header)
    if args.url and (env or args.cwd):
        raise McpCommandError("--env, --env-from, --public-env and --cwd are for a command, not for --url")
    if command and headers:
        raise McpCommandError("--header and --public-header are for a --url server, not a command")
    try:
        return McpServerConfig(
            name=args.name,
            transport=Transport.HTTP if args.url else Transport.STDIO,
            command=command[0] if command else "",
            args=tuple(command[1:]),
            env=env,
            cwd=args.cwd,
            url=args.url or "",
            headers=headers,
            public_env=tuple(key for key, _ in args.public_env),
            public_headers=tuple(key for key, _ in args.public_header),
        ).validate()
    except InvalidServerConfig as err:
        raise McpCommandError(str(err)) from err


def describe(config: McpServerConfig) -> str:
    """One tab-separated line of ``mcp list``: name, kind, command or URL, values (secrets masked)."""
    from threadline.tools.mcp.secrets import masked

    if config.transport is Transport.STDIO:
        where = shlex.join([config.command, *config.args])
        values = " ".join(f"{k}={v}" for k, v in masked(config, "env").items())
    else:
        where = config.url
        values = " ".join(f"{k}: {v}" for k, v in masked(config, "header").items())
    state = "" if config.enabled else "disabled"
    return "\t".join(part for part in (config.name, config.transport.value, where, values, state) if part)


async def run(engine: EngineApi, args: argparse.Namespace) -> int:
    servers = engine.tool_servers
    names = {c.name for c in await servers.list_servers()}
    if args.mcp_command == "add":
        config = config_from_args(args)
        _warn_misplaced(args.server_command)
        try:
            await servers.save_server(config, previous_name=config.name if config.name in names else None)
        except InvalidServerConfig as err:
            raise McpCommandError(str(err)) from err
        print(f"MCP server {config.name} {'replaced' if config.name in names else 'added'}")
    elif args.mcp_command == "list":
        for config in await servers.list_servers():
            print(describe(config))
    elif args.mcp_command == "install":
        from threadline.cli.mcp_install import install

        await install(engine, args)
    elif args.mcp_command == "remove":
        _known(args.name, names)
        await engine.extensions.remove(args.name)
        print(f"MCP server {args.name} removed")
    elif args.mcp_command == "tools":
        _known(args.name, names)
        from threadline.tools.mcp.state import ServerStatus

        state = await servers.start(args.name)
        if state.status is not ServerStatus.READY:
            raise McpCommandError(state.error or f"MCP server {args.name} did not start")
        for tool in state.tools:
            summary = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
            print(f"{tool.policy_name}\t{summary}" if summary else tool.policy_name)
    elif args.mcp_command in ("prompts", "resources"):
        _known(args.name, names)
        from threadline.cli.mcp_catalog import print_prompts, print_resources

        await (print_prompts if args.mcp_command == "prompts" else print_resources)(engine, args.name)
    elif args.mcp_command in ("login", "logout"):
        _known(args.name, names)
        await _sign(servers, args.name, args.mcp_command == "login")
    return 0


async def _sign(servers: Any, name: str, sign_in: bool) -> None:
    """``mcp login``: sign in on this terminal and the browser; ``mcp logout``: forget the tokens."""
    from threadline.cli.mcp_person import TerminalPerson
    from threadline.tools.mcp.oauth import SignInError
    from threadline.tools.mcp.state import ServerStatus

    config = next(c for c in await servers.list_servers() if c.name == name)
    if config.transport is not Transport.HTTP:
        raise McpCommandError(f"MCP server {name} runs on this computer; there is nothing to sign in to")
    if not sign_in:
        await servers.sign_out(name)
        print(f"signed out of MCP server {name}")
        return
    servers.set_person(TerminalPerson.for_stdio())
    try:
        state = await servers.sign_in(name)
    except SignInError as err:
        raise McpCommandError(err.user_message) from err
    if state.status is not ServerStatus.READY:
        raise McpCommandError(state.error or f"MCP server {name} did not start")
    signed = await servers.signed_in(name)
    print(f"{'signed in to' if signed else 'connected to (no sign in needed)'} MCP server {name}")


def _warn_misplaced(server_command: list[str]) -> None:
    """Say when ``--env K=V`` and the like came after ``--``: the server gets them as plain words.

    They are stored with the command line, in the settings, and ``mcp list`` shows them, so a
    secret meant for the keychain would sit there in the clear. A server may take such words
    itself (``docker run --env``), so this warns rather than refuses; the values are never echoed.
    """
    from threadline.cli.options import misplaced_options

    for option in misplaced_options(server_command):
        print(
            f"threadline: warning: {option} after -- is part of the server's command line, stored "
            f"as written and shown by `mcp list`; to have Threadline take it, put {option} before --",
            file=sys.stderr,
        )


def _known(name: str, names: set[str]) -> None:
    if name not in names:
        listed = ", ".join(sorted(names)) or "none yet"
        raise McpCommandError(f"no MCP server named {name!r} (configured: {listed})")
