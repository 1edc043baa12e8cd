"""Running a parsed command line: the damage check, then the command's module.

Each command's work is in its own module (``cli.ask``, ``cli.provider``, ``cli.db`` …);
here a command's own failure becomes one ``threadline:`` line and an exit code.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from threadline.cli.common import EXIT_FAILURE, EXIT_INTERRUPTED, CommandError, open_engine
from threadline.store.errors import StoreError

_READ_ONLY_ACTIONS = {
    "provider": {"list", "models"},
    "mcp": {"list", "tools", "prompts", "resources"},
    "agent": {"list", "show", "export"},
    "kb": {"list", "index", "search"},
    "memory": {"list"},
}
"""Actions of the writing commands that only read; ``list``, ``show``, ``usage``, ``export``
and ``db restore`` never write into the database in use."""


def writes(args: argparse.Namespace) -> bool:
    """Whether the command changes the database in use (so it must not run on a damaged one)."""
    command = args.command
    if command in ("ask", "import"):
        return True
    if command == "restore":
        return not args.dry_run
    if command == "db":
        return args.db_command == "copy" and args.to is None  # --from copies into the one in use
    if command in _READ_ONLY_ACTIONS:
        action = getattr(args, f"{command}_command", None)
        return action not in _READ_ONLY_ACTIONS[command]
    return False


def refuse_if_damaged(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> None:
    """A writing command stops here while damage of the SQLite file is recorded, unless the
    user said ``--ignore-damage`` (docs/storage.md, "Damage")."""
    if not writes(args) or getattr(args, "ignore_damage", False):
        return
    from threadline.engine.engine import DATABASE_FILENAME
    from threadline.store.db import sqlite_path

    database = sqlite_path(database_url) if database_url else data_dir / DATABASE_FILENAME
    if database is None:
        return
    from threadline.cli import db as cli_db

    reason = cli_db.refusal(database)
    if reason is not None:
        raise CommandError(reason)


def run_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    try:
        refuse_if_damaged(args, data_dir, database_url)
        if args.command == "ask":
            from threadline.cli.ask import ask

            return asyncio.run(ask(args, data_dir, database_url))
        if args.command == "mcp":
            return asyncio.run(mcp_command(args, data_dir, database_url))
        if args.command == "list":
            return asyncio.run(list_command(args, data_dir, database_url))
        if args.command == "usage":
            return asyncio.run(usage_command(args, data_dir, database_url))
        if args.command == "export":
            return asyncio.run(export_command(args, data_dir, database_url))
        if args.command in ("changes", "restore"):
            return asyncio.run(workspace_command(args, data_dir, database_url))
        if args.command == "agent":
            return asyncio.run(agent_command(args, data_dir, database_url))
        if args.command == "models":
            return asyncio.run(models_command(args, data_dir, database_url))
        if args.command == "kb":
            from threadline.cli.kb import kb_command

            return asyncio.run(kb_command(args, data_dir, database_url))
        if args.command in ("speak", "transcribe"):
            from threadline.cli.voice import voice_command

            return asyncio.run(voice_command(args, data_dir, database_url))
        if args.command == "memory":
            from threadline.cli.memory import memory_command

            return asyncio.run(memory_command(args, data_dir, database_url))
        if args.command == "show":
            from threadline.cli import show as cli_show

            try:
                return cli_show.run(args, cli_show.database_url(data_dir, database_url))
            except cli_show.ShowError as err:
                raise CommandError(str(err)) from err
        if args.command == "db":
            from threadline.cli import db as cli_db
            from threadline.engine.engine import DATABASE_FILENAME
            from threadline.store.repository import Store

            return cli_db.run(args, database_url or Store.sqlite_url(data_dir / DATABASE_FILENAME))
        if args.command == "import":
            from threadline.cli import import_ as cli_import

            return asyncio.run(cli_import.command(args, data_dir, database_url))
        from threadline.cli.provider import provider_command

        return asyncio.run(provider_command(args, data_dir, database_url))
    except KeyboardInterrupt:  # before the turn started (during the ask, Ctrl+C stops the turn)
        print("threadline: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except CommandError as err:
        print(f"threadline: {err}", file=sys.stderr)
        return EXIT_FAILURE


async def agent_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    """``threadline agent …`` (``cli.agent``); a refused change is one ``threadline:`` line."""
    from threadline.cli import agent as cli_agent
    from threadline.core.agent_json import AgentFormatError
    from threadline.engine.errors import EngineError

    engine = await open_engine(data_dir, database_url)
    try:
        return await cli_agent.run(engine, args)
    except cli_agent.AgentCommandError as err:
        raise CommandError(str(err)) from err
    except (AgentFormatError, EngineError, StoreError) as err:
        raise CommandError(err.user_message) from err
    finally:
        await engine.aclose()


async def models_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    """``threadline models …`` (``cli.models``); a refusal is one ``threadline:`` line."""
    from threadline.cli import models as cli_models
    from threadline.models.errors import ModelError

    engine = await open_engine(data_dir, database_url)
    try:
        return await cli_models.run(engine, args)
    except ModelError as err:
        raise CommandError(err.user_message) from err
    finally:
        await engine.aclose()


async def mcp_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    from threadline.cli import mcp as cli_mcp

    engine = await open_engine(data_dir, database_url)
    try:
        return await cli_mcp.run(engine, args)
    except cli_mcp.McpCommandError as err:
        raise CommandError(str(err)) from err
    finally:
        await engine.aclose()


async def list_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    from threadline.cli import list as cli_list

    engine = await open_engine(data_dir, database_url)
    try:
        return await cli_list.run(engine, args)
    except StoreError as err:
        raise CommandError(err.user_message) from err
    finally:
        await engine.aclose()


async def export_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    from threadline.cli import export as cli_export
    from threadline.engine.errors import EngineError

    engine = await open_engine(data_dir, database_url)
    try:
        return await cli_export.run(engine, args)
    except (EngineError, StoreError) as err:
        raise CommandError(err.user_message) from err
    finally:
        await engine.aclose()


async def usage_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    from threadline.cli import usage as cli_usage

    engine = await open_engine(data_dir, database_url)
    try:
        return await cli_usage.run(engine, args)
    except cli_usage.UsageError as err:
        raise CommandError(str(err)) from err
    except StoreError as err:
        raise CommandError(err.user_message) from err
    finally:
        await engine.aclose()


async def workspace_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    """``threadline changes`` and ``threadline restore`` (``cli.changes``, ``cli.restore``)."""
    from threadline.cli import changes as cli_changes
    from threadline.cli import restore as cli_restore

    engine = await open_engine(data_dir, database_url)
    try:
        if args.command == "changes":
            return await cli_changes.run(engine, args)
        return await cli_restore.run(engine, args)
    except (cli_changes.ChangesError, cli_restore.RestoreCommandError) as err:
        raise CommandError(str(err)) from err
    except StoreError as err:
        raise CommandError(err.user_message) from err
    finally:
        await engine.aclose()
