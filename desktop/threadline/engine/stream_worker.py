"""A background thread with its own asyncio loop, where provider streams are read.

Reading a stream costs CPU per chunk: HTTP, SSE decoding, JSON, the accumulator
(and, for Anthropic, the SDK's event objects). On the GUI's loop, four fast
streams would take turns with painting. Here the provider clients live and parse
on this worker loop, and their events reach the caller's loop in batches, with
one cross-thread wake-up per batch rather than per token. The GIL still
serialises Python code, but the GUI thread gets it back every switch interval
(5 ms) instead of waiting for whole bursts of chunks (bench/ui_bench.py stall:
p99 9 ms with 4 tabs at ~1,000 tokens/s each).

Clients are bound to the loop their connections were opened on, so everything
that touches a provider client (creating it, streaming, listing models,
closing) goes through ``call`` or ``stream``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")

_END = object()


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class StreamWorker:
    def __init__(self, name: str = "threadline-streams") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _ensure_started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=run, name=self._name, daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    async def call(self, factory: Callable[[], Awaitable[T]]) -> T:
        """Run ``factory()`` on the worker loop and wait for it; cancelling the caller cancels it."""
        loop = self._ensure_started()

        async def run() -> T:
            return await factory()

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(run(), loop))

    async def stream(self, factory: Callable[[], AsyncIterator[T]]) -> AsyncIterator[T]:
        """Iterate ``factory()`` on the worker loop, yielding its items here in order.

        Closing or cancelling the consumer cancels the worker side, which closes the
        underlying stream (and its HTTP response) on the loop that opened it.
        """
        loop = self._ensure_started()
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
            home.call_soon_threadsafe(deliver)

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

        future: Future[None] = asyncio.run_coroutine_threadsafe(pump(), loop)
        try:
            while True:
                for item in await queue.get():
                    if item is _END:
                        return
                    if isinstance(item, _Failure):
                        raise item.error
                    yield item  # type: ignore[misc]
        finally:
            if not future.done():
                future.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wrap_future(future)

    async def aclose(self) -> None:
        """Stop the worker loop (after its callers closed their clients)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        stopped = asyncio.get_running_loop().create_future()
        home = asyncio.get_running_loop()

        def stop() -> None:
            loop.stop()
            home.call_soon_threadsafe(stopped.set_result, None)

        loop.call_soon_threadsafe(stop)
        await stopped
        thread.join(1)  # run_forever has returned: the thread is ending
        if not thread.is_alive():
            loop.close()
