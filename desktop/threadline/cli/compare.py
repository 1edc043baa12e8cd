"""``threadline ask --models P/M1,P/M2 "prompt"``: one prompt to several models, each reply labelled.

A bare model name (``--models m1,m2``) is a model of the chat's provider — for a new
chat the provider a new chat would use — as with ``--model`` and ``/model``.

An entry ``agent:NAME`` is an agent instead of a model: it answers with its own
instructions, tools and model (the chat's model if it names none).

The replies stream at once (``engine.turns.send_compare``); stdout gets each one whole, in
the order the models were given, under a ``=== provider/model · state ===`` line
(``=== agent:NAME · state ===`` for an agent),
so a script can split them. Progress (a worker starting, its tools, retries) goes to
stderr as it happens. Exit 0 when every model answered, 1 when any failed (its
block says why) or the compare was turned away before it began (one ``threadline:``
line, nothing printed on stdout), 130 when stopped with Ctrl+C (partial replies are
stored). With ``--session``, a chat replying elsewhere is waited for first, as plain
``ask`` does (``cli.wait``).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from typing import TYPE_CHECKING, TextIO

from threadline.core.compare import AGENT_PREFIX, CompareTarget, WorkerState, check_targets
from threadline.core.messages import NOT_ASKED_RESULT_TEXT, ContextFile, MessageKind
from threadline.core.tree import TreeError
from threadline.engine.events import (
    CompareWorkerChanged,
    CompareWorkerEvent,
    ConversationEvent,
    MessageAdded,
    TextDelta,
    TurnFailed,
)

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi

EXIT_FAILURE = 1
EXIT_INTERRUPTED = 130


def refusal(failed: TurnFailed) -> str:
    """Why a compare turned away before it began, as a script's reader needs it (no message box)."""
    if failed.error.kind == "busy_elsewhere":
        return (
            "this chat started replying elsewhere, so the compare was not sent and nothing was "
            "stored; try again when that reply ends"
        )
    return failed.error.message


def parse_models(spec: str) -> tuple[CompareTarget, ...]:
    """``--models`` as targets; ``ValueError`` with a message for the person otherwise.

    A bare model name (no ``/``) gets its provider later, from the chat
    (``resolve_bare_models``), as ``--model`` and ``/model`` do.
    """
    targets = tuple(_target(part) for part in spec.split(",") if part.strip())
    try:
        check_targets(targets)
    except TreeError as err:
        raise ValueError(str(err)) from None
    return targets


def _target(part: str) -> CompareTarget:
    text = part.strip()
    if "/" in text or text[:6].casefold() == AGENT_PREFIX:
        return CompareTarget.parse(text)
    return CompareTarget(model=text)


async def resolve_bare_models(
    engine: EngineApi, session_id: str, targets: tuple[CompareTarget, ...]
) -> tuple[CompareTarget, ...]:
    """Bare model names with the chat's provider (a new chat's: the one a new chat would use)."""
    if all(t.provider or t.agent_id for t in targets):
        return targets
    info = await engine.sessions.get_session(session_id)
    provider = info.provider if info is not None else ""
    if not provider:
        bare = next(t.model for t in targets if not (t.provider or t.agent_id))
        raise ValueError(
            f"“{bare}” names no provider and this chat has none yet; write PROVIDER/{bare} "
            "(see `threadline provider list`)"
        )
    return tuple(
        t if t.provider or t.agent_id else CompareTarget(provider=provider, model=t.model) for t in targets
    )


async def run(
    engine: EngineApi,
    session_id: str,
    prompt: str,
    targets: tuple[CompareTarget, ...],
    *,
    context: tuple[ContextFile, ...] = (),
) -> int:
    """Send the compare, wait for every worker, print each reply labelled; the exit code."""
    for target in targets:  # an unknown agent is refused before anything is stored or sent
        if target.agent_id and await engine.agents.find_agent(target.agent_id) is None:
            print(
                f"threadline: no agent named {target.agent_id!r} (see `threadline agent list`); "
                "nothing was sent",
                file=sys.stderr,
            )
            return EXIT_FAILURE
    live = await engine.sessions.open_session(session_id)
    progress = _Progress(targets, sys.stderr)
    unsubscribe = live.subscribe(progress)
    loop = asyncio.get_running_loop()
    stopped = False

    def stop() -> None:
        nonlocal stopped
        stopped = True
        engine.turns.cancel(session_id)

    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, stop)
    try:
        print(f"session {session_id}", file=sys.stderr)
        engine.turns.send_compare(session_id, prompt, targets, context=context)
        compare = live.conversation.compare
        assert compare is not None
        workers = compare.workers
        await engine.turns.wait_idle(session_id)
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
        unsubscribe()
    if progress.unsent is not None:  # refused before any model was asked (busy elsewhere, store)
        print(f"threadline: {refusal(progress.unsent)}", file=sys.stderr)
        return EXIT_FAILURE
    out = sys.stdout
    for worker in workers:
        state = progress.states.get(worker.index, worker.state)
        out.write(f"=== {worker.target.display} · {state.label.lower()} ===\n")
        text = "\n\n".join(m.text for m in worker.messages() if m.is_assistant and m.text)
        if text:
            out.write(text.rstrip("\n") + "\n")
        if worker.index in progress.errors:
            out.write(f"threadline: {progress.errors[worker.index]}\n")
        out.write("\n")
    out.flush()
    if stopped:
        print("threadline: stopped; the partial replies are saved", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_FAILURE if any(s is WorkerState.FAILED for s in progress.states.values()) else 0


class _Progress:
    """Says on stderr when each model starts writing, uses tools, retries, ends."""

    def __init__(self, targets: tuple[CompareTarget, ...], err: TextIO) -> None:
        self._targets = targets
        self._err = err
        self._writing: set[int] = set()
        self.states: dict[int, WorkerState] = {}
        self.errors: dict[int, str] = {}
        self.unsent: TurnFailed | None = None
        """The compare was turned away before it began: nothing was stored or sent."""

    def __call__(self, event: ConversationEvent) -> None:
        if isinstance(event, TurnFailed) and event.unsent_prompt is not None:
            self.unsent = event
        elif isinstance(event, CompareWorkerEvent):
            inner = event.event
            if isinstance(inner, TextDelta) and event.index not in self._writing:
                self._writing.add(event.index)
                self._say(event.index, "writing")
            elif isinstance(inner, MessageAdded) and inner.message.kind in (
                MessageKind.TOOL_RESULTS,
                MessageKind.CANCELLED_TOOL_USES,
            ):
                results = inner.message.tool_results
                if any(NOT_ASKED_RESULT_TEXT in r.text for r in results):
                    self._say(event.index, "a tool needing approval was not run (--yes allows such calls)")
                else:
                    self._say(event.index, "tools ran")
        elif isinstance(event, CompareWorkerChanged):
            self.states[event.index] = event.state
            if event.error is not None:
                self.errors[event.index] = event.error.message
            if event.note:
                self._say(event.index, event.note)
            elif event.state.ended:
                self._say(event.index, event.state.label.lower())

    def _say(self, index: int, what: str) -> None:
        self._err.write(f"[{self._targets[index].display}: {what}]\n")
        self._err.flush()
