"""A background thread with its own asyncio loop, where provider streams are read.

Reading a stream costs CPU per chunk: HTTP, SSE decoding, JSON, the accumulator
(and, for Anthropic, the SDK's event objects). On the GUI's loop, four fast
streams would take turns with painting. Here the provider clients live and parse
on this worker loop, and their events reach the caller's loop in batches, with
one cross-thread wake-up per batch rather than per token. The GIL still
serialises Python code, but the GUI thread gets it back every switch interval
instead of waiting for whole bursts of chunks (``bench/ui_bench.py stall``; figures in
docs/performance.md).

Clients are bound to the loop their connections were opened on, so everything
that touches a provider client (creating it, streaming, listing models,
closing) goes through ``call`` or ``stream``.

Two loops, two threads, so every hand-over is guarded: work is posted to the
other loop with ``call_soon_threadsafe`` only while that loop is open (a closed
loop means its owner has gone and nobody waits for the answer), every
coroutine run here is a task this worker tracks, and ``aclose`` cancels those
tasks and waits for them on this loop before stopping it, closing it in its
own thread and joining the thread. Nothing is left pending and no callback
runs on a closed loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, Generic, TypeVar

from threadline.engine.task_ends import cancel_other_tasks

T = TypeVar("T")

_END = object()
JOIN_TIMEOUT = 5.0
"""Seconds ``aclose`` waits for the thread once its loop has stopped (it only has to return)."""


class StreamWorkerClosed(RuntimeError):
    """The worker was closed (the engine is shutting down); nothing more runs on it."""


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _post(loop: asyncio.AbstractEventLoop, callback: Callable[..., object], *args: object) -> bool:
    """Run ``callback`` on ``loop`` from any thread; ``False`` when that loop is already closed."""
    try:
        loop.call_soon_threadsafe(callback, *args)
    except RuntimeError:  # "Event loop is closed": its owner has gone, nobody waits for this
        return False
    return True


class _Job(Generic[T]):
    """A coroutine running as a task on the worker loop, and its outcome on the caller's loop."""

    def __init__(self, home: asyncio.AbstractEventLoop) -> None:
        self.home = home
        self.outcome: asyncio.Future[T] = home.create_future()
        self.task: asyncio.Task[T] | None = None  # set and read on the worker loop only

    def finished(self, task: asyncio.Task[T]) -> None:
        """Worker loop: hand the task's outcome to the caller's loop (if it is still open)."""
        if task.cancelled():
            _post(self.home, self._cancel)
        elif (error := task.exception()) is not None:
            _post(self.home, self._fail, error)
        else:
            _post(self.home, self._succeed, task.result())

    def _cancel(self) -> None:
        self.outcome.cancel()

    def _fail(self, error: BaseException) -> None:
        if not self.outcome.done():
            self.outcome.set_exception(error)

    def _succeed(self, value: T) -> None:
        if not self.outcome.done():
            self.outcome.set_result(value)

    def cancel(self) -> None:
        """Worker loop: cancel the task (the caller stopped waiting)."""
        if self.task is not None:
            self.task.cancel()


class StreamWorker:
    def __init__(self, name: str = "threadline-streams") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._tasks: set[asyncio.Task[Any]] = set()
        """Strong references to the running jobs (a loop keeps only weak ones); worker loop only."""

    def _ensure_started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise StreamWorkerClosed("the stream worker is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    try:
                        loop.run_forever()
                    finally:
                        loop.close()  # in its own thread, after aclose's tasks have ended

                self._thread = threading.Thread(target=run, name=self._name, daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    def _submit(self, make: Callable[[], Coroutine[Any, Any, T]]) -> _Job[T]:
        """Start ``make()`` as a tracked task on the worker loop; its outcome arrives on this loop."""
        loop = self._ensure_started()
        job: _Job[T] = _Job(asyncio.get_running_loop())

        def start() -> None:
            task = loop.create_task(make())
            job.task = task
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            task.add_done_callback(job.finished)

        if not _post(loop, start):
            raise StreamWorkerClosed("the stream worker is closed")
        return job

    async def call(self, factory: Callable[[], Awaitable[T]]) -> T:
        """Run ``factory()`` on the worker loop and wait for it; cancelling the caller cancels it."""

        async def run() -> T:
            return await factory()

        job = self._submit(run)
        try:
            return await job.outcome
        except asyncio.CancelledError:
            if self._loop is not None:
                _post(self._loop, job.cancel)
            raise

    async def stream(self, factory: Callable[[], AsyncIterator[T]]) -> AsyncIterator[T]:
        """Iterate ``factory()`` on the worker loop, yielding its items here in order.

        Closing or cancelling the consumer cancels the worker side, which closes the
        underlying stream (and its HTTP response) on the loop that opened it.
        """
        home = asyncio.get_running_loop()
        queue: asyncio.Queue[list[object]] = asyncio.Queue()
        pending: list[object] = []
        lock = threading.Lock()
        scheduled = False

        def deliver() -> None:
            nonlocal scheduled
            with lock:
                batch = pending[:]
                pending.clear()
                scheduled = False
            queue.put_nowait(batch)

        def push(item: object) -> None:
            nonlocal scheduled
            with lock:
                pending.append(item)
                if scheduled:
                    return
                scheduled = True
            _post(home, deliver)  # a closed home loop has no consumer left

        async def pump() -> None:
            try:
                async for item in factory():
                    push(item)
            except BaseException as err:  # delivered to the consumer, which re-raises it
                push(_Failure(err))
                if isinstance(err, asyncio.CancelledError):
                    raise
            else:
                push(_END)

        job = self._submit(pump)
        try:
            while True:
                for item in await queue.get():
                    if item is _END:
                        return
                    if isinstance(item, _Failure):
                        raise item.error
                    yield item  # type: ignore[misc]
        finally:
            loop = self._loop
            if not job.outcome.done() and loop is not None and _post(loop, job.cancel):
                with contextlib.suppress(BaseException):
                    await job.outcome  # the response is closed on its own loop before we go on

    async def aclose(self) -> None:
        """Stop the worker (after its callers closed their clients), in order.

        Its tasks are cancelled and awaited on its own loop, async generators are
        finalised, then the loop stops, closes in its thread, and the thread is joined.
        """
        with self._lock:
            self._closed = True
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        home = asyncio.get_running_loop()
        stopped = home.create_future()

        async def shutdown() -> None:
            await cancel_other_tasks()  # never one not yet started (``task_ends``)
            await loop.shutdown_asyncgens()

        def begin() -> None:
            def end(_: object) -> None:
                loop.stop()
                _post(home, _settle, stopped)

            loop.create_task(shutdown()).add_done_callback(end)

        if _post(loop, begin):
            await stopped
        thread.join(JOIN_TIMEOUT)  # run_forever has returned: the thread only closes its loop


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
