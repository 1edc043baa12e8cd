"""Ending a loop's tasks: never a task that has not started, so nothing is dropped unawaited.

httpx connects through anyio's ``connect_tcp``, which starts a child task per address. Cancelled
directly before its first step, that child drops its coroutine unawaited ("coroutine
'connect_tcp.<locals>.try_connect' was never awaited"): the stream worker's shut-down and the
UI tests' teardown cancelled every task at once and met it when a model listing had just begun.
"""

from __future__ import annotations

import asyncio
import gc
import socket
import warnings

import anyio
import pytest

from threadline.engine.task_ends import cancel_other_tasks, has_started

pytestmark = pytest.mark.asyncio
WAIT = 30.0
"""Seconds any condition may take on a busy machine."""


async def test_a_connection_just_begun_ends_without_dropping_its_child_unawaited() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    me = asyncio.current_task()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        connecting = asyncio.get_running_loop().create_task(anyio.connect_tcp("127.0.0.1", port))
        async with asyncio.timeout(WAIT):
            # The connect has started its child for 127.0.0.1, which has not run yet.
            while not any(t is not me and t is not connecting for t in asyncio.all_tasks()):
                await asyncio.sleep(0)
        child = next(t for t in asyncio.all_tasks() if t is not me and t is not connecting)
        assert not has_started(child)
        async with asyncio.timeout(WAIT):
            await cancel_other_tasks()
        assert connecting.done() and child.done()
        del connecting, child
        gc.collect()
    listener.close()
    unawaited = [str(w.message) for w in caught if "never awaited" in str(w.message)]
    assert not unawaited


async def test_tasks_that_start_tasks_when_cancelled_are_ended_too() -> None:
    ended: list[str] = []

    async def clean_up() -> None:
        try:
            await asyncio.sleep(WAIT)
        finally:
            ended.append("clean-up")

    async def job() -> None:
        try:
            await asyncio.sleep(WAIT)
        finally:
            ended.append("job")
            asyncio.get_running_loop().create_task(clean_up())  # begun while being cancelled

    asyncio.get_running_loop().create_task(job())
    await asyncio.sleep(0)
    async with asyncio.timeout(WAIT):
        await cancel_other_tasks()
    assert ended == ["job", "clean-up"]
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []
