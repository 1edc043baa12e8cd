"""``threadline memory``: the saved memories from the command line (docs/memory.md).

``list [--json]`` prints every memory with its id, scope and date; ``add TEXT [--project NAME |
--agent NAME]`` saves one (global without either); ``rm ID`` deletes one (a unique start of
its id will do). The same ``engine.memory`` as Settings → Memory.

Only ``argparse`` is imported at module level: the parser is built on every start.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from threadline.core.memory import Memory
    from threadline.engine.api import EngineApi

MIN_ID_PREFIX = 4


def add_memory_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    memory = commands.add_parser(
        "memory", parents=[common], help="saved memories: short facts that go into the system prompt"
    )
    actions = memory.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", parents=[common], help="list the saved memories")
    listing.add_argument("--json", action="store_true", help="print JSON (for scripts)")
    add = actions.add_parser("add", parents=[common], help="save a memory (for all chats unless scoped)")
    add.add_argument("text")
    scope = add.add_mutually_exclusive_group()
    scope.add_argument("--project", metavar="NAME", help="only for the chats of this project")
    scope.add_argument("--agent", metavar="NAME", help="only for the chats with this agent")
    remove = actions.add_parser("rm", parents=[common], help="delete a memory by its id")
    remove.add_argument("id")


class MemoryCommandError(Exception):
    """Bad arguments: reported in one line by the caller."""


async def run(engine: EngineApi, args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    from threadline.core.memory import MemoryScope

    action = args.memory_command
    if action == "list":
        memories = await engine.memory.memories()
        names = await _scope_names(engine)
        if args.json:
            json.dump([_as_json(m, names) for m in memories], out, ensure_ascii=False, indent=2)
            out.write("\n")
            return 0
        if not memories:
            out.write('No saved memories. Add one with: threadline memory add "TEXT"\n')
        for m in memories:
            out.write(f"{m.id}\t{_scope_words(m, names)}\t{m.created_at.date().isoformat()}\t{m.text}\n")
        if not engine.memory.enabled:
            out.write("(memory is turned off in Settings → Memory: none of these is sent)\n")
        return 0
    if action == "add":
        scope, target = MemoryScope.GLOBAL, ""
        if args.project:
            wanted = args.project.strip().lower()
            projects = await engine.projects.list_projects()
            project = next((p for p in projects if wanted in (p.id.lower(), p.name.lower())), None)
            if project is None:
                raise MemoryCommandError(f"no project named {args.project!r}")
            scope, target = MemoryScope.PROJECT, project.id
        elif args.agent:
            agent = await engine.agents.find_agent(args.agent)
            if agent is None:
                raise MemoryCommandError(f"no agent named {args.agent!r} (see: threadline agent list)")
            scope, target = MemoryScope.AGENT, agent.id
        saved = await engine.memory.add(args.text, scope, target)
        out.write(f"Saved memory {saved.id} ({_scope_words(saved, await _scope_names(engine))}).\n")
        return 0
    memories = await engine.memory.memories()
    wanted = args.id.strip()
    matches = [m for m in memories if m.id == wanted] or (
        [m for m in memories if m.id.startswith(wanted)] if len(wanted) >= MIN_ID_PREFIX else []
    )
    if len(matches) != 1:
        problem = "no memory has" if not matches else f"{len(matches)} memories have"
        raise MemoryCommandError(f"{problem} the id {wanted!r} (see: threadline memory list)")
    await engine.memory.delete(matches[0].id)
    out.write(f"Deleted memory {matches[0].id}: {matches[0].text}\n")
    return 0


async def _scope_names(engine: EngineApi) -> dict[str, str]:
    """Project and agent names by id, for showing scopes."""
    names = {p.id: p.name for p in await engine.projects.list_projects()}
    names.update({a.id: a.name for a in await engine.agents.list_agents()})
    return names


def _scope_words(memory: Memory, names: dict[str, str]) -> str:
    if memory.scope.value == "global":
        return "all chats"
    return f"{memory.scope.value} {names.get(memory.target, memory.target)}"


def _as_json(memory: Memory, names: dict[str, str]) -> dict[str, Any]:
    return {
        "id": memory.id,
        "text": memory.text,
        "scope": memory.scope.value,
        "target": memory.target,
        "target_name": names.get(memory.target, "") if memory.target else "",
        "created_at": memory.created_at.isoformat(),
        "updated_at": memory.updated_at.isoformat(),
    }


async def memory_command(args: argparse.Namespace, data_dir: Path, database_url: str | None) -> int:
    """Open the engine, run the action; a refusal is one ``threadline:`` line."""
    from threadline.cli.common import CommandError, open_engine
    from threadline.engine.errors import EngineError
    from threadline.store.errors import StoreError

    engine = await open_engine(data_dir, database_url)
    try:
        return await run(engine, args)
    except MemoryCommandError as err:
        raise CommandError(str(err)) from err
    except (EngineError, StoreError) as err:
        raise CommandError(err.user_message) from err
    finally:
        await engine.aclose()
