"""Gathering sticky context for a request: files read from disk, hooks run, the budget applied.

For every request the agent's and the session's sources are read again (``sources.py``
rules: files, folders, ``**`` patterns, ``~``), so an edit shows up on the next request.
Reading runs on a worker thread, never on the event loop. Hooks run with the shell tool's
rules (``tools/shell_tool.run_shell_command``): Threadline's environment, their own
process group, killed at their time limit or at once on Stop; the working folder is the
agent's first allowed folder, else the home folder. A hook the agent's rules deny for the
shell tool is not run and is reported. A hook that fails, or runs past its limit, is
reported and the request goes on without its output.

Hooks timed ``EVERY_PROMPT`` run once per turn (a turn's tool rounds reuse the output:
they answer the same prompt). Hooks timed ``SESSION_START`` run for the first request of
the session in this process and their output is kept in memory for the session. It is not
stored: after a restart they run again, which gives the model the state of things when the
conversation was taken up again — as true as the first run, and a hook's output is derived
context, not something said in the conversation, so keeping it out of the history is the
same rule as for files. A failed run is not kept, so the next request tries again.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from threadline.core.config import AgentConfig, Approval
from threadline.core.gathered_context import (
    ContextCandidate,
    ContextOrigin,
    ContextProblem,
    GatheredContext,
    budget_for,
    fit,
    render_block,
)
from threadline.core.sticky import ContextHook, HookTiming, StickyContext
from threadline.engine.sticky_sources import read_sources
from threadline.tools.shell_tool import run_shell_command

log = logging.getLogger("threadline.engine")

DEFAULT_WINDOW_SETTING = "sticky_context_window"
"""Setting: the context window (tokens) assumed for the budget when the model's is not known."""
DEFAULT_ASSUMED_WINDOW = 32_000
"""Tokens assumed when neither the provider's model listing nor the setting gives a window:
small enough that the budget never lets sticky context alone overflow a common model."""


@dataclass
class TurnHooks:
    """Hook outcomes of one turn, so its tool rounds do not run the every-prompt hooks again."""

    outcomes: dict[ContextHook, ContextCandidate | ContextProblem] = field(default_factory=dict)


class StickyContextGatherer:
    """Reads sources, runs hooks and fits them into the budget; one instance serves every session."""

    def __init__(self) -> None:
        self._started: dict[str, dict[ContextHook, ContextCandidate]] = {}

    def forget(self, session_id: str) -> None:
        """The session is closed: drop the outputs of its session-start hooks."""
        self._started.pop(session_id, None)

    async def gather(
        self,
        session_id: str,
        agent: AgentConfig,
        session_context: StickyContext,
        *,
        window: int | None,
        default_window: int = DEFAULT_ASSUMED_WINDOW,
        room: int | None = None,
        turn: TurnHooks | None = None,
    ) -> GatheredContext:
        """The sticky context of one request of ``session_id``.

        ``window`` is the model's context window when known; otherwise ``default_window``
        is assumed (and the result says so). ``room`` caps the budget below the agent's
        share (what the rest of the request leaves). Cancelling stops a running hook at once.
        """
        turn = turn or TurnHooks()
        if not agent.context and not session_context:  # the budget still says what knowledge may take
            return GatheredContext(
                budget_tokens=budget_for(window or default_window, agent.context_share, room),
                window_tokens=window or default_window,
                window_known=window is not None,
            )
        agent_files, agent_problems = await asyncio.to_thread(
            read_sources, agent.context.sources, ContextOrigin.AGENT
        )
        session_files, session_problems = await asyncio.to_thread(
            read_sources, session_context.sources, ContextOrigin.SESSION
        )
        agent_hooks, agent_hook_problems = await self._run_hooks(session_id, agent, agent.context.hooks, turn)
        session_hooks, session_hook_problems = await self._run_hooks(
            session_id, agent, session_context.hooks, turn
        )
        candidates = _unique([*agent_files, *agent_hooks, *session_files, *session_hooks])
        effective_window = window or default_window
        budget = budget_for(effective_window, agent.context_share, room)
        pieces, left_out = fit(candidates, budget)
        return GatheredContext(
            pieces=pieces,
            left_out=left_out,
            problems=(*agent_problems, *agent_hook_problems, *session_problems, *session_hook_problems),
            budget_tokens=budget,
            window_tokens=effective_window,
            window_known=window is not None,
            block=render_block(pieces),
        )

    async def _run_hooks(
        self, session_id: str, agent: AgentConfig, hooks: Iterable[ContextHook], turn: TurnHooks
    ) -> tuple[list[ContextCandidate], list[ContextProblem]]:
        found: list[ContextCandidate] = []
        problems: list[ContextProblem] = []
        started = self._started.setdefault(session_id, {})
        for hook in hooks:
            if hook.timing is HookTiming.SESSION_START and hook in started:
                outcome: ContextCandidate | ContextProblem = started[hook]
            elif hook in turn.outcomes:
                outcome = turn.outcomes[hook]
            else:
                outcome = await run_hook(hook, agent)
                turn.outcomes[hook] = outcome
                if hook.timing is HookTiming.SESSION_START and isinstance(outcome, ContextCandidate):
                    started[hook] = outcome
            if isinstance(outcome, ContextCandidate):
                found.append(outcome)
            else:
                problems.append(outcome)
        return found, problems


async def run_hook(hook: ContextHook, agent: AgentConfig) -> ContextCandidate | ContextProblem:
    """Run one hook under the shell tool's rules; its output, or what went wrong."""
    label = f"Hook: {hook.label}"
    if agent.approval_for("shell", hook.command) is Approval.DENY:
        return ContextProblem(label, "not run: this agent's rules deny this command for the shell tool")
    cwd = _hook_folder(agent)
    try:
        run = await run_shell_command(hook.command, cwd, hook.timeout, hook.output_cap)
    except OSError as err:
        return ContextProblem(label, f"could not start: {err.strerror or err}")
    if run.timed_out:
        return ContextProblem(label, f"did not finish within {hook.timeout:g} s and was stopped")
    if run.exit_code != 0:
        first_line = next((line for line in run.output.splitlines() if line.strip()), "")
        detail = f": {first_line[:200]}" if first_line else ""
        return ContextProblem(label, f"failed with exit code {run.exit_code}{detail}")
    return ContextCandidate(
        label, run.output.rstrip("\n"), ContextOrigin.HOOK, kind="hook", source=hook.command
    )


def _hook_folder(agent: AgentConfig) -> str:
    for folder in agent.allowed_folders:
        path = Path(folder).expanduser()
        if path.is_dir():
            return str(path)
    return os.path.expanduser("~")


def _unique(candidates: list[ContextCandidate]) -> list[ContextCandidate]:
    """A file named by both the agent and the session is sent once, where it first appears."""
    seen: set[tuple[str, str]] = set()
    out = []
    for candidate in candidates:
        key = (candidate.kind, candidate.source or candidate.label)
        if candidate.kind == "file" and key in seen:
            continue
        seen.add(key)
        out.append(candidate)
    return out
