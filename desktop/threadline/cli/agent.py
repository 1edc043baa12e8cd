"""``threadline agent list|show|add|edit|remove|export|import``, and ``ask --agent NAME``.

Agents are found by name (ignoring case) or id. ``add`` and ``edit`` take the same
options; an option left out keeps its value on ``edit``, and an empty value
(``--model ""``) clears it. ``export`` writes JSON with no secrets in it (agents
hold none); ``import`` checks every field and says which one is wrong.

Only ``argparse`` is imported at module level: the parser is built on every start.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from threadline.core.config import AgentConfig
    from threadline.engine.api import EngineApi


class AgentCommandError(Exception):
    """Bad arguments or an agent that cannot be found: reported in one line by the caller."""


def add_agent_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    agent = commands.add_parser(
        "agent", parents=[common], help="list, add, edit, remove, export or import agents"
    )
    actions = agent.add_subparsers(dest="agent_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", parents=[common], help="list agents")
    listing.add_argument("--json", action="store_true", help="print JSON (for scripts)")
    show = actions.add_parser("show", parents=[common], help="show one agent's settings as JSON")
    show.add_argument("name")
    add = actions.add_parser("add", parents=[common], help="add an agent")
    add.add_argument("name")
    _settings_options(add)
    edit = actions.add_parser(
        "edit", parents=[common], help="change an agent (options left out keep their value)"
    )
    edit.add_argument("name")
    edit.add_argument("--rename", metavar="NEW", help="a new name")
    _settings_options(edit)
    remove = actions.add_parser(
        "remove", parents=[common], help="delete an agent (its chats fall back to the default agent)"
    )
    remove.add_argument("name")
    export = actions.add_parser("export", parents=[common], help="write agents to a JSON file (or stdout)")
    export.add_argument("names", nargs="*", help="agents to export (default: all)")
    export.add_argument("--output", "-o", metavar="FILE", help="file to write (default: standard output)")
    imported = actions.add_parser("import", parents=[common], help="add the agents of a JSON file")
    imported.add_argument("file", help="the file ('-' for standard input)")


def _settings_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--system", metavar="TEXT", help="system prompt")
    parser.add_argument("--system-file", metavar="FILE", help="read the system prompt from a file")
    parser.add_argument("--provider", metavar="NAME", help="provider (empty: the chat's own)")
    parser.add_argument("--model", metavar="M", help="model of that provider")
    parser.add_argument("--temperature", metavar="T", help="0–2, or empty for the model's default")
    parser.add_argument("--top-p", metavar="P", help="0–1, or empty for the model's default")
    parser.add_argument("--max-tokens", metavar="N", help="maximum output tokens, or empty for the default")
    parser.add_argument(
        "--reasoning-effort",
        metavar="LEVEL",
        help="low, medium or high for models that take reasoning_effort; empty for the model's default",
    )
    parser.add_argument(
        "--thinking-budget",
        metavar="N",
        help="Anthropic extended thinking: tokens it may think (at least 1024); empty or 0 turns it off",
    )
    parser.add_argument(
        "--tool", action="append", default=None, metavar="PATTERN", help="enable a tool (repeat)"
    )


async def run(engine: EngineApi, args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    command = args.agent_command
    if command == "list":
        return await _list(engine, args.json, out)
    if command == "show":
        from threadline.core.agent_json import agent_to_json

        print(
            json.dumps(agent_to_json(await find(engine, args.name)), indent=2, ensure_ascii=False), file=out
        )
        return 0
    if command == "add":
        from threadline.core.config import AgentConfig

        agent = await engine.agents.create_agent(_apply(AgentConfig(id="", name=args.name), args))
        print(f"added agent {agent.name}", file=out)
        return 0
    if command == "edit":
        current = await find(engine, args.name)
        edited = _apply(current, args)
        if args.rename is not None:
            edited = replace(edited, name=args.rename)
        await engine.agents.save_agent(edited)
        print(f"saved agent {edited.name}", file=out)
        return 0
    if command == "remove":
        agent = await find(engine, args.name)
        moved = await engine.agents.delete_agent(agent.id)
        print(f"removed agent {agent.name}; {moved} chat(s) now use the default agent", file=out)
        return 0
    if command == "export":
        ids = [(await find(engine, name)).id for name in args.names] if args.names else None
        text = await engine.agents.export_agents(ids)
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")  # noqa: ASYNC240 (a CLI, nothing else runs)
            print(f"exported to {args.output}", file=out)
        else:
            out.write(text)
        return 0
    return await _import(engine, args.file, out)


async def find(engine: EngineApi, name: str) -> AgentConfig:
    agent = await engine.agents.find_agent(name)
    if agent is None:
        raise AgentCommandError(f"no agent named {name!r} (see `threadline agent list`)")
    return agent


async def _list(engine: EngineApi, as_json: bool, out: TextIO) -> int:
    agents = await engine.agents.list_agents()
    if as_json:
        rows = [{"id": a.id, "name": a.name, "provider": a.provider, "model": a.model} for a in agents]
        print(json.dumps(rows, indent=2, ensure_ascii=False), file=out)
        return 0
    for agent in agents:
        model = f"{agent.model} ({agent.provider})" if agent.model else "the chat's model"
        print(f"{agent.name}\t{model}", file=out)
    return 0


async def _import(engine: EngineApi, file: str, out: TextIO) -> int:
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")  # noqa: ASYNC240
    except (OSError, UnicodeDecodeError) as err:
        raise AgentCommandError(f"{file} cannot be read as a text file") from err
    agents = await engine.agents.import_agents(text)
    print(f"imported {len(agents)} agent(s): " + ", ".join(a.name for a in agents), file=out)
    return 0


def _apply(agent: AgentConfig, args: argparse.Namespace) -> AgentConfig:
    changes: dict[str, Any] = {}
    if args.system_file:
        try:
            changes["system_prompt"] = Path(args.system_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise AgentCommandError(f"{args.system_file} cannot be read as a text file") from err
    elif args.system is not None:
        changes["system_prompt"] = args.system
    if args.provider is not None:
        changes["provider"] = args.provider
    if args.model is not None:
        changes["model"] = args.model
    if args.temperature is not None:
        changes["temperature"] = _number(args.temperature, "--temperature", 0.0, 2.0)
    if args.top_p is not None:
        changes["top_p"] = _number(args.top_p, "--top-p", 0.0, 1.0)
    if args.max_tokens is not None:
        value = _number(args.max_tokens, "--max-tokens", 1, 10_000_000)
        changes["max_tokens"] = None if value is None else int(value)
    if args.tool is not None:
        changes["enabled_tools"] = tuple(args.tool)
    from threadline.core.reasoning import MIN_THINKING_BUDGET, REASONING_EFFORTS

    if args.reasoning_effort is not None:
        effort = args.reasoning_effort.strip().lower()
        if effort and effort not in REASONING_EFFORTS:
            raise AgentCommandError("--reasoning-effort must be low, medium or high (or empty)")
        changes["reasoning_effort"] = effort
    if args.thinking_budget is not None:
        budget = _number(args.thinking_budget, "--thinking-budget", 0, 10_000_000)
        if budget and budget < MIN_THINKING_BUDGET:
            raise AgentCommandError(f"--thinking-budget must be at least {MIN_THINKING_BUDGET}, or 0 for off")
        changes["thinking_budget"] = int(budget) if budget else None
    return replace(agent, **changes)


def _number(text: str, option: str, low: float, high: float) -> float | None:
    if not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        raise AgentCommandError(f"{option} must be a number") from None
    if not low <= value <= high:
        raise AgentCommandError(f"{option} must be between {low:g} and {high:g}")
    return value
