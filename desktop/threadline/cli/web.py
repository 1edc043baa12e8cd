"""``threadline web``: the web search provider and the local-address switch (docs/web.md).

``use searxng --url URL | brave --api-key-env VAR | tavily --api-key-env VAR | duckduckgo``
chooses the provider (a key is never taken on the command line: it is read from the variable
at each search, or typed once in Settings → Web and kept in the keychain), ``allow-local on|off``
lets ``fetch_page`` open addresses on this computer and the local network, ``show`` prints the
settings (never a key) and ``test`` makes one search.

Only ``argparse`` is imported at module level: the parser is built on every start.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi

PROVIDERS = ("searxng", "brave", "tavily", "duckduckgo")


def add_web_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    web = commands.add_parser("web", parents=[common], help="web search provider and page reading rules")
    actions = web.add_subparsers(dest="web_command", metavar="ACTION", required=True)
    use = actions.add_parser("use", parents=[common], help="choose the web search provider")
    use.add_argument("provider", choices=PROVIDERS)
    use.add_argument("--url", help="SearXNG's address, e.g. http://localhost:8888")
    use.add_argument(
        "--api-key-env", metavar="VAR", help="Brave or Tavily: the environment variable holding the key"
    )
    local = actions.add_parser(
        "allow-local",
        parents=[common],
        help="let fetch_page open this computer's and the local network's pages",
    )
    local.add_argument("state", choices=("on", "off"))
    show = actions.add_parser("show", parents=[common], help="show the web settings (never a key)")
    show.add_argument("--json", action="store_true", help="print JSON (for scripts)")
    actions.add_parser("test", parents=[common], help="make one search with the chosen provider")


class WebCommandError(Exception):
    """Bad arguments: reported in one line by the caller."""


async def run(engine: EngineApi, args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    from threadline.web.config import WebProvider

    web = engine.web
    action = args.web_command
    if action == "use":
        provider = WebProvider(args.provider)
        if provider is WebProvider.SEARXNG and not args.url:
            raise WebCommandError("searxng needs --url, e.g. --url http://localhost:8888")
        if args.url and provider is not WebProvider.SEARXNG:
            raise WebCommandError("--url is for searxng only")
        if args.api_key_env and not provider.needs_key:
            raise WebCommandError("--api-key-env is for brave and tavily only")
        config = await web.use(provider, searxng_url=args.url or "", api_key_env=args.api_key_env)
        out.write(f"Web search: {provider.label}{_where(config.searxng_url)}.\n")
        if config.api_key_env and not os.environ.get(config.api_key_env):
            out.write(
                f"Note: ${config.api_key_env} is not set here; searches need it where Threadline runs.\n"
            )
        return 0
    if action == "allow-local":
        config = await web.set_allow_local(args.state == "on")
        out.write(
            "fetch_page may now open addresses on this computer and the local network.\n"
            if config.allow_local
            else "fetch_page refuses addresses on this computer and the local network.\n"
        )
        return 0
    if action == "show":
        config = await web.config()
        key = await _key_text(engine, config.provider, config.api_key_env)
        if args.json:
            data = config.to_json() | {"key": key}
            out.write(json.dumps(data, indent=2) + "\n")
            return 0
        out.write(f"provider\t{config.provider.label}{_where(config.searxng_url)}\n")
        if config.provider.needs_key:
            out.write(f"key\t{key}\n")
        out.write(f"allow local addresses\t{'on' if config.allow_local else 'off'}\n")
        return 0
    if action == "test":
        out.write(await web.test(await web.config()) + "\n")
        return 0
    raise WebCommandError(f"unknown action {action!r}")


def _where(url: str) -> str:
    return f" at {url}" if url else ""


async def _key_text(engine: EngineApi, provider: Any, env: str) -> str:
    if not provider.needs_key:
        return ""
    if await engine.web.has_key(provider):
        return "in the system keychain"
    if env:
        return f"${env} ({'set' if os.environ.get(env) else 'not set here'})"
    return "none"


async def web_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    """Open the engine, run the action; a refusal is one ``threadline:`` line."""
    from threadline.cli.common import CommandError, open_engine
    from threadline.engine.errors import EngineError
    from threadline.store.errors import StoreError

    engine = await open_engine(data_dir, database_url)
    try:
        return await run(engine, args)
    except WebCommandError as err:
        raise CommandError(str(err)) from err
    except (EngineError, StoreError) as err:
        raise CommandError(err.user_message) from err
    finally:
        await engine.aclose()
