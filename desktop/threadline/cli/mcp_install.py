"""``threadline mcp install FILE.mcpb``: an MCP bundle installed (or updated) from the command line.

It shows what the install dialog shows (name, version, author, the command it will run, the
tools it declares), turns ``--set KEY=VALUE`` into answers of the bundle's type (a number, a
boolean, a list when repeated), reads ``--set-from KEY=ENVVAR`` from this environment, and asks
for a secret setting still missing on a terminal without echoing it. The answers go to the
engine's ``extensions`` facet, which keeps secret ones in the keychain only.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from threadline.cli.mcp import McpCommandError

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi
    from threadline.tools.mcp.bundle_manifest import ConfigOption

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _pairs(items: list[str], option: str) -> list[tuple[str, str]]:
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise McpCommandError(f"{option} takes KEY=VALUE, not {item.split('=')[0]!r}")
        pairs.append((key.strip(), value))
    return pairs


def _typed(option: ConfigOption, text: str) -> Any:
    if option.type == "boolean":
        if text.lower() in _TRUE | _FALSE:
            return text.lower() in _TRUE
        raise McpCommandError(f"--set {option.key}=…: give true or false")
    if option.type == "number":
        try:
            number = float(text)
        except ValueError:
            raise McpCommandError(f"--set {option.key}=…: give a number") from None
        return int(number) if number.is_integer() else number
    return text


def answers(options: tuple[ConfigOption, ...], args: argparse.Namespace) -> dict[str, Any]:
    by_key = {o.key: o for o in options}
    given: dict[str, Any] = {}
    raw = _pairs(args.set_values, "--set")
    for key, variable in _pairs(args.set_from, "--set-from"):
        if variable not in os.environ:
            raise McpCommandError(f"--set-from {key}=…: the environment has no {variable}")
        raw.append((key, os.environ[variable]))
    for key, text in raw:
        option = by_key.get(key)
        if option is None:
            known = ", ".join(by_key) or "none"
            raise McpCommandError(f"the bundle has no setting {key!r} (its settings: {known})")
        value = _typed(option, text)
        if option.multiple:
            given.setdefault(key, []).append(value)
        else:
            given[key] = value
    return given


async def install(engine: EngineApi, args: argparse.Namespace) -> None:
    from threadline.engine.errors import EngineError

    extensions = engine.extensions
    try:
        preview = await extensions.preview(Path(args.bundle))
    except EngineError as err:
        raise McpCommandError(err.user_message) from err
    manifest = preview.manifest
    print(f"{manifest.title} {manifest.version} by {manifest.author}")
    print(f"runs: {preview.command}")
    for key, value in preview.env.items():
        print(f"with: {key}={value}")
    for tool, _ in manifest.tools:
        print(f"tool: {tool}")
    if preview.needs:
        print(f"threadline: warning: {preview.needs}", file=sys.stderr)
    given = answers(manifest.user_config, args)
    kept = set(preview.installed.sensitive) if preview.installed is not None else set()
    for option in manifest.user_config:
        if option.sensitive and option.key not in given and option.key not in kept and option.default is None:
            if not sys.stdin.isatty():
                if option.required:
                    raise McpCommandError(
                        f"{option.title} is a secret setting: give it with --set-from {option.key}=ENVVAR"
                    )
                continue
            value = getpass.getpass(f"{option.title} (hidden, Enter to leave empty): ")
            if value:
                given[option.key] = value
    try:
        record = await extensions.install(Path(args.bundle), given)
    except EngineError as err:
        raise McpCommandError(err.user_message) from err
    change = preview.change
    if change == "install":
        print(f"{manifest.title} installed as MCP server {record.name}")
    elif change == "reinstall":
        print(f"{manifest.title} {record.version} installed again")
    else:
        print(f"{manifest.title} {'updated' if change == 'update' else 'changed back'} to {record.version}")
