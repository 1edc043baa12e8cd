"""Running engine coroutines from Qt slots, and where their errors go.

A slot cannot ``await``; it spawns a task on the qasync loop. What happens to an
error depends on one thing only: whether it carries a ``user_message``. Store,
engine, provider and keychain errors do — they are *expected* (a session that
vanished, a busy session, a network failure, a full disk) and go to the message
bridge named by ``tell``, which decides where they show (docs/ui-layout.md, "Telling
the user"); a site says only what failed (``context``) and which chat it is about
(``session_id``). ``tell`` is required, so a new site cannot pick a sink of its own;
tasks whose failure nobody needs to see (saving at shut-down, background reads) say
so with :class:`LogOnly`. ``on_failed`` lets a site put its own state back (enable a
button, restore a list); it never shows text. Anything else is a bug: it goes to
``sys.excepthook``, which the app points at its crash handler (it logs the traceback
and tells the user). Matching by class or module name is deliberately
gone: a ``ValueError`` from deep inside a library is not something the user caused
or can fix, and its text is not fit to show.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine
from typing import Any, NamedTuple, TypeVar

from PySide6.QtCore import QObject

from threadline.ui.common.message_bridge import MessageBridge, bridge_of, user_message_of

log = logging.getLogger("threadline.ui.common.tasks")

T = TypeVar("T")

FailedCallback = Callable[[BaseException], None]


class LogOnly(NamedTuple):
    """Tell nobody, only the log: for shut-down and background tasks the user need not hear of."""

    what: str
    """What failed, for the log line ("could not save the draft")."""
    level: int = logging.WARNING


Teller = MessageBridge | QObject | LogOnly
"""The bridge, a widget that reaches one (``bridge_of``), or ``LogOnly``."""

GENERIC_MESSAGE = "Threadline could not do that. The details are in the log."
"""Shown by ``describe`` for an error without a user message (it is also sent to the crash handler)."""

_running: set[asyncio.Task[Any]] = set()


def is_expected(err: BaseException) -> bool:
    """True when ``err`` carries a ``user_message``: the user is told, nothing crashed."""
    return user_message_of(err) is not None


def describe(err: BaseException) -> str:
    """The sentence to show for ``err``: its ``user_message``, never its driver text or class."""
    return user_message_of(err) or GENERIC_MESSAGE


def report_unexpected(err: BaseException) -> None:
    """Hand a bug to the crash handler (``sys.excepthook``), which logs it with its traceback."""
    sys.excepthook(type(err), err, err.__traceback__)


def spawn(
    coro: Coroutine[Any, Any, T],
    *,
    tell: Teller,
    on_done: Callable[[T], None] | None = None,
    on_failed: FailedCallback | None = None,
    context: str = "",
    session_id: str | None = None,
    name: str = "",
) -> asyncio.Task[T]:
    """Run ``coro`` on the running loop; its result and errors come back through callbacks.

    An expected error first goes to ``on_failed`` (the site puts its state back), then to
    the bridge ``tell`` reaches (after ``context``, about ``session_id``), or to the log for
    ``LogOnly``. An unexpected one always goes to the crash handler.
    """
    loop = asyncio.get_event_loop()
    task = loop.create_task(coro, name=name or getattr(coro, "__qualname__", "ui-task"))
    _running.add(task)

    def done(t: asyncio.Task[T]) -> None:
        _running.discard(t)
        if t.cancelled():
            return
        err = t.exception()
        if err is None:
            if on_done is not None:
                on_done(t.result())
            return
        if not is_expected(err):
            report_unexpected(err)
            return
        if on_failed is not None:
            on_failed(err)
        if isinstance(tell, LogOnly):
            log.log(tell.level, "%s: %s", tell.what, user_message_of(err))
            return
        bridge = bridge_of(tell)
        if bridge is not None:
            bridge.report(err, context=context, session_id=session_id)
        else:
            log.warning("expected error in %s, shown to nobody: %s", t.get_name(), user_message_of(err))

    task.add_done_callback(done)
    return task


def running_tasks() -> set[asyncio.Task[Any]]:
    return set(_running)


async def cancel_running(limit_s: float = 5.0) -> None:
    """Cancel every task spawned here and wait (at most ``limit_s``) until they have ended.

    Shut-down calls it so no task is left pending when the loop closes.
    """
    tasks = [t for t in _running if not t.done() and t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=limit_s)
