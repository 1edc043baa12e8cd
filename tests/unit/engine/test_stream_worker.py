"""The stream worker: results cross loops, cancellation reaches the worker, shut-down is ordered.

Teardown under load used to show two errors: "Task was destroyed but it is
pending" for a job still running when the worker loop stopped, and "Event loop
is closed" from a callback aimed at a loop that had already gone. Both are
logged by asyncio at ERROR level, so the suite's log guard fails these tests if
they come back.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import AsyncIterator

import pytest

from threadline.engine.stream_worker import StreamWorker, StreamWorkerClosed

pytestmark = pytest.mark.asyncio
WAIT = 30.0
"""Seconds any condition may take on a busy machine."""


async def wait_for_event(event: threading.Event) -> None:
    assert await asyncio.to_thread(event.wait, WAIT), "the worker side never got there"


async def test_call_runs_on_the_worker_thread_and_returns_or_raises() -> None:
    worker = StreamWorker()
    try:

        async def where() -> str:
            return threading.current_thread().name

        assert await worker.call(where) == "threadline-streams"

        async def broken() -> None:
            raise ValueError("no")

        with pytest.raises(ValueError, match="no"):
            await worker.call(broken)
    finally:
        await worker.aclose()


async def test_cancelling_the_caller_cancels_the_job_on_the_worker() -> None:
    worker = StreamWorker()
    started, cancelled = threading.Event(), threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    try:
        caller = asyncio.create_task(worker.call(forever))
        await wait_for_event(started)
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        await wait_for_event(cancelled)
    finally:
        await worker.aclose()


async def test_aclose_ends_running_jobs_on_their_loop_then_stops_it() -> None:
    worker = StreamWorker()
    started = threading.Event()
    cleaned_up: list[str] = []

    async def forever() -> None:
        started.set()
        try:
            await asyncio.sleep(3600)
        finally:
            cleaned_up.append(threading.current_thread().name)

    caller = asyncio.create_task(worker.call(forever))
    await wait_for_event(started)
    thread = worker._thread
    assert thread is not None

    await worker.aclose()

    assert cleaned_up == ["threadline-streams"]  # the job's own clean-up ran, on its own loop
    assert not thread.is_alive()
    with pytest.raises(asyncio.CancelledError):
        await caller
    gc.collect()  # a job destroyed while pending would be reported here (and fail the log guard)
    with pytest.raises(StreamWorkerClosed):
        await worker.call(asyncio.sleep)  # type: ignore[arg-type]


async def test_a_job_finishing_after_its_callers_loop_closed_is_dropped_quietly() -> None:
    """The caller's loop went away (a window closed) while the job ran: its answer has nowhere to go."""
    worker = StreamWorker()
    release, finished = threading.Event(), threading.Event()

    async def slow() -> str:
        await asyncio.to_thread(release.wait, WAIT)
        finished.set()
        return "late"

    def caller_on_a_loop_that_then_closes() -> None:
        loop = asyncio.new_event_loop()

        async def submit() -> None:
            worker._submit(slow)  # what ``call`` does before it waits

        try:
            loop.run_until_complete(submit())
        finally:
            loop.close()

    try:
        await asyncio.to_thread(caller_on_a_loop_that_then_closes)
        release.set()
        await wait_for_event(finished)

        async def answer() -> int:
            return 42

        assert await worker.call(answer) == 42  # the worker carries on
    finally:
        await worker.aclose()


async def test_stream_yields_in_order_and_closing_early_closes_the_source() -> None:
    worker = StreamWorker()
    closed = threading.Event()

    async def numbers() -> AsyncIterator[int]:
        try:
            for n in range(1000):
                yield n
                await asyncio.sleep(0)
        finally:
            closed.set()

    try:
        seen = [n async for n in worker.stream(numbers)]
        assert seen == list(range(1000))
        closed.clear()

        stream = worker.stream(numbers)
        assert [await anext(stream) for _ in range(3)] == [0, 1, 2]
        await stream.aclose()  # type: ignore[attr-defined]
        await wait_for_event(closed)
    finally:
        await worker.aclose()
