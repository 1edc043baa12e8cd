"""Running a slash command (``core.slash_commands``) against the engine.

The window and ``threadline ask`` both come here, so a command does the same in
both. The result is a ``CommandOutcome``: text to show (a notice in the tab, a line
on standard output), whether the conversation changed, and, when it could not be
done, ``error`` holding what to tell the user. Expected failures (an unknown
checkpoint, a busy chat, a summary the model would not write, a refusing database)
come back as outcomes, never as exceptions; anything else is a bug and is raised.

The window opens its dialogs for the commands that have one (``/context``,
``/usage``, ``/export`` without a path, ``/model`` and ``/agent`` without an
argument, ``/help``) and runs only the rest here; ``ask`` runs all of them here and
prints what the dialogs would show.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from threadline.core.config import AgentConfig
from threadline.core.slash_commands import (
    CommandName,
    SlashCommand,
    export_request,
    help_text,
    model_request,
    tangent_request,
)
from threadline.core.tree import TreeError
from threadline.engine.errors import EngineError
from threadline.engine.events import ConversationEvent, TurnFailed
from threadline.engine.exporting import ExportFormat
from threadline.store.errors import StoreError

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi, LiveConversationApi

EXCERPT_CHARS = 48


@dataclass(frozen=True)
class CommandOutcome:
    """What a command did: ``text`` to show; ``error`` (a user message) when it was not done."""

    text: str = ""
    changed: bool = False
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


def failed(message: str) -> CommandOutcome:
    return CommandOutcome(error=message)


async def run_command(
    engine: EngineApi, session_id: str, command: SlashCommand, *, base_dir: Path | None = None
) -> CommandOutcome:
    """Run ``command`` in an open (or openable) session; relative export paths start at ``base_dir``
    (the working directory when ``None``)."""
    try:
        live = engine.sessions.live(session_id) or await engine.sessions.open_session(session_id)
        return await _HANDLERS[command.name](_Context(engine, live, command.argument, base_dir))
    except (EngineError, StoreError) as err:
        return failed(err.user_message)
    except TreeError as err:  # the tree refused (stale ids): say it without the internals
        return failed(f"That could not be done in this chat: {err}.")


@dataclass(frozen=True)
class _Context:
    engine: EngineApi
    live: LiveConversationApi
    argument: str
    base_dir: Path | None

    @property
    def session_id(self) -> str:
        return self.live.session_id


# -- the conversation ----------------------------------------------------------------------------


async def _compact(ctx: _Context) -> CommandOutcome:
    failures: list[str] = []

    def heard(event: ConversationEvent) -> None:
        if isinstance(event, TurnFailed):
            failures.append(event.error.message)

    unsubscribe = ctx.live.subscribe(heard)
    try:
        summary = await ctx.engine.turns.compact(ctx.session_id, ctx.argument)
    finally:
        unsubscribe()
    if summary is None:
        return failed(failures[-1] if failures else "The conversation was not compacted.")
    return CommandOutcome(f"Earlier messages summarised:\n{summary.text}", changed=True)


async def _clear(ctx: _Context) -> CommandOutcome:
    await ctx.engine.controls.clear_context(ctx.session_id)
    return CommandOutcome(
        "Context cleared: the next message starts afresh; earlier messages stay visible above.",
        changed=True,
    )


def _tangent_origin(live: LiveConversationApi) -> str | None:
    return live.conversation.tree.tangent_origin


async def _tangent(ctx: _Context) -> CommandOutcome:
    request = tangent_request(ctx.argument)
    in_tangent = _tangent_origin(ctx.live) is not None
    if not request.end:
        if in_tangent:
            return failed("This chat is already in a tangent; /tangent end returns to the main line.")
        await ctx.engine.controls.start_tangent(ctx.session_id)
        return CommandOutcome(
            "Tangent started: a side conversation from here. /tangent end returns to the main line.",
            changed=True,
        )
    if not in_tangent:
        return failed("This chat is not in a tangent; /tangent starts one.")
    await ctx.engine.controls.end_tangent(ctx.session_id, bring_last_exchange=request.bring_last_exchange)
    brought = " with the tangent's last exchange" if request.bring_last_exchange else ""
    return CommandOutcome(
        f"Back on the main line{brought}; the tangent stays in the branch map.", changed=True
    )


def checkpoints(live: LiveConversationApi) -> dict[str, str]:
    """The chat's named checkpoints (name → message id), without the tangent's own return point."""
    return dict(live.conversation.tree.named_checkpoints)


async def _checkpoint(ctx: _Context) -> CommandOutcome:
    """Name the current point; a name already used moves here, and the note says from where."""
    if not ctx.live.conversation.path_ids():
        return failed("An empty chat has nothing to mark; send a message first.")
    name = _name(ctx.argument)
    before = checkpoints(ctx.live).get(name)
    await ctx.engine.controls.set_checkpoint(ctx.session_id, name)
    if before is None:
        verb = "set"
    elif before == checkpoints(ctx.live).get(name):
        verb = "already names this point"
    else:
        verb = f"moved here (it named {_excerpt(ctx.live, before)})"
    return CommandOutcome(f"Checkpoint “{name}” {verb}. /restore {name} comes back to it.", True)


def _name(typed: str) -> str:
    """A checkpoint name as the conversation keeps it: inner runs of white space made one."""
    return " ".join(typed.split())


async def _restore(ctx: _Context) -> CommandOutcome:
    named = checkpoints(ctx.live)
    if not ctx.argument:
        if not named:
            return CommandOutcome("No checkpoints in this chat yet; /checkpoint NAME sets one.")
        lines = [
            f"{name} — {_excerpt(ctx.live, named[name])}" for name in _in_conversation_order(ctx.live, named)
        ]
        return CommandOutcome("Checkpoints (/restore NAME goes back):\n" + "\n".join(lines))
    name = _name(ctx.argument)
    if name not in named:
        known = ", ".join(sorted(named)) or "none yet"
        return failed(f"No checkpoint named “{name}” (checkpoints: {known}).")
    await ctx.engine.controls.restore_checkpoint(ctx.session_id, name)
    return CommandOutcome(
        f"Restored “{name}”: the chat continues from there; later messages stay in the branch map.",
        changed=True,
    )


def _in_conversation_order(live: LiveConversationApi, named: dict[str, str]) -> list[str]:
    """Checkpoint names by the place of their message (oldest first), as the tab's list shows
    them; a server database keeps no order of its own. Names of deleted messages come last."""
    tree = live.conversation.tree

    def key(name: str) -> tuple[bool, float, str]:
        target = named[name]
        when = tree.get(target).created_at.timestamp() if target in tree else 0.0
        return (target not in tree, when, name.casefold())

    return sorted(named, key=key)


def _excerpt(live: LiveConversationApi, message_id: str) -> str:
    tree = live.conversation.tree
    if message_id not in tree:
        return "(message deleted)"
    text = " ".join(tree.get(message_id).text.split())
    return f"“{text[:EXCERPT_CHARS]}…”" if len(text) > EXCERPT_CHARS else f"“{text}”"


# -- agent and model -----------------------------------------------------------------------------


async def _agent(ctx: _Context) -> CommandOutcome:
    agents = await ctx.engine.agents.list_agents()
    current = (await ctx.engine.agents.session_agent(ctx.session_id)).agent
    if not ctx.argument:
        lines = [f"{'*' if a.id == current.id else ' '} {a.name}" for a in agents]
        return CommandOutcome("Agents (/agent NAME switches):\n" + "\n".join(lines))
    agent = _find_agent(agents, ctx.argument)
    if agent is None:
        names = ", ".join(a.name for a in agents)
        return failed(f"No agent named “{ctx.argument}” (agents: {names}).")
    if agent.id == current.id:
        return CommandOutcome(f"This chat already uses the agent {agent.name}.")
    await ctx.engine.agents.set_session_agent(ctx.session_id, agent.id)
    return CommandOutcome(f"Agent: {agent.name}, from the next message on.", changed=True)


def _find_agent(agents: Sequence[AgentConfig], wanted: str) -> AgentConfig | None:
    folded = wanted.casefold()
    return next((a for a in agents if a.id == wanted or a.name.casefold() == folded), None)


async def _model(ctx: _Context) -> CommandOutcome:
    info = ctx.live.info
    if not ctx.argument:
        if not info.model:
            return CommandOutcome("No model chosen for this chat; /model PROVIDER/MODEL picks one.")
        return CommandOutcome(f"Model: {info.provider}/{info.model}")
    request = model_request(ctx.argument)
    names = {p.name for p in await ctx.engine.providers.list_providers()}
    provider, model = request.provider or info.provider, request.model
    if provider not in names:
        known = ", ".join(sorted(names)) or "none yet (add one in Settings)"
        return failed(
            f"No provider named “{provider}” (providers: {known}). Write /model PROVIDER/MODEL; "
            "a model id with a slash goes after its provider (/model router/vendor/model)."
        )
    if not model:
        return failed("Name the model after the provider, e.g. /model openai/gpt-4o-mini.")
    await ctx.engine.sessions.set_session_model(ctx.session_id, provider, model)
    return CommandOutcome(f"Model: {provider}/{model}, from the next message on.", changed=True)


# -- reports -------------------------------------------------------------------------------------


async def _context(ctx: _Context) -> CommandOutcome:
    meter = await ctx.engine.turns.context_meter(ctx.session_id)
    lines = [f"{part.value}: {tokens:,} tokens" for part, tokens in meter.parts if tokens]
    window = f" of {meter.window:,}" if meter.window else " (window unknown)"
    lines.append(f"Next request: about {meter.total:,} tokens{window}")
    sticky = ctx.live.info.context
    own = len(sticky.sources) + len(sticky.hooks)
    lines.append(
        f"Sticky context of this chat's own: {own} item(s)" if own else "No sticky context of its own."
    )
    return CommandOutcome("\n".join(lines))


async def _usage(ctx: _Context) -> CommandOutcome:
    from threadline.core.usage import format_cost, replies

    usage = await ctx.engine.library.usage(ctx.session_id)
    total = usage.total
    if not total.replies:
        text = "No replies in this chat yet."
    else:
        approx = "≈" if total.estimated else ""
        text = (
            f"{replies(total.replies)} (every version): {approx}{total.input_tokens:,} tokens in, "
            f"{approx}{total.output_tokens:,} out"
        )
        cost = format_cost(total.cost)
        if cost:
            text += f", {cost}"
        if total.unpriced:
            text += f" ({total.unpriced} without a known price)"
    meter = await ctx.engine.turns.context_meter(ctx.session_id)
    if meter.window:
        share = meter.total / meter.window
        text += f"\nContext: about {meter.total:,} of {meter.window:,} tokens ({share:.0%})"
    return CommandOutcome(text)


async def _export(ctx: _Context) -> CommandOutcome:
    request = export_request(ctx.argument)
    fmt = ExportFormat(request.fmt)
    if not request.path:
        if fmt is not ExportFormat.MARKDOWN:
            return failed(f"Give a file to write the {fmt.value} export to: /export {fmt.value} PATH.")
        return CommandOutcome(await ctx.engine.library.export_markdown(ctx.session_id))
    path = export_path(request.path, fmt, ctx.base_dir)
    await ctx.engine.library.export(path, fmt, [ctx.session_id])
    return CommandOutcome(f"Exported this chat to {path}")


def export_path(typed: str, fmt: ExportFormat, base_dir: Path | None) -> Path:
    """The file ``/export`` writes: ``~`` expanded, relative to ``base_dir``, the format's suffix if none."""
    path = Path(typed).expanduser()
    if not path.is_absolute():
        path = (base_dir or Path.cwd()) / path
    return path if path.suffix else path.with_suffix(fmt.suffix)


async def _compare(ctx: _Context) -> CommandOutcome:
    """Comparing needs the window's columns; the command line has its own way."""
    return CommandOutcome(
        error='/compare picks models in the window. Here, use threadline ask --models P/M1,P/M2 "prompt".'
    )


async def _help(ctx: _Context) -> CommandOutcome:
    return CommandOutcome(help_text())


_HANDLERS: dict[CommandName, Callable[[_Context], Awaitable[CommandOutcome]]] = {
    CommandName.COMPACT: _compact,
    CommandName.CLEAR: _clear,
    CommandName.TANGENT: _tangent,
    CommandName.CHECKPOINT: _checkpoint,
    CommandName.RESTORE: _restore,
    CommandName.AGENT: _agent,
    CommandName.MODEL: _model,
    CommandName.CONTEXT: _context,
    CommandName.USAGE: _usage,
    CommandName.EXPORT: _export,
    CommandName.COMPARE: _compare,
    CommandName.HELP: _help,
}
