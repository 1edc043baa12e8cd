"""Ending every task on a loop without cancelling one that has not started.

A task cancelled before its first step never runs its coroutine's body. For most
coroutines that is harmless, but a task that wraps another coroutine — anyio's task
groups do: each child task runs ``TaskHandle._run_coro``, which awaits the coroutine it
was given only once it runs — drops the wrapped coroutine unawaited, and Python warns
"coroutine 'connect_tcp.<locals>.try_connect' was never awaited" (httpx connects through
anyio's ``connect_tcp``, which starts one such child per address). Cancelled through its
owner instead, such a child is let go properly: the owner's cancel scope waits until the
child has started. So a sweep over the loop's tasks cancels the tasks that have started,
lets the others take their first step, and repeats until none is left.
"""

from __future__ import annotations

import asyncio
import inspect

MAX_ROUNDS = 100
"""Rounds before the sweep cancels whatever is left, started or not (tasks that keep starting tasks)."""


def has_started(task: asyncio.Task[object]) -> bool:
    """Whether the task's coroutine has taken its first step (or is not a plain coroutine)."""
    coro = task.get_coro()
    return not inspect.iscoroutine(coro) or inspect.getcoroutinestate(coro) != inspect.CORO_CREATED


async def cancel_other_tasks() -> None:
    """Cancel every other task on the running loop and wait until all have ended (see above)."""
    me = asyncio.current_task()
    for round_ in range(MAX_ROUNDS + 1):
        pending = [t for t in asyncio.all_tasks() if t is not me and not t.done()]
        if not pending:
            return
        started = [t for t in pending if has_started(t) or round_ == MAX_ROUNDS]
        for task in started:
            task.cancel()
        if started:
            await asyncio.gather(*started, return_exceptions=True)
        else:
            await asyncio.sleep(0)  # the new tasks take their first step
