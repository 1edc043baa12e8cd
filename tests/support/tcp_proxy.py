"""A TCP relay between one client and a server whose link a test can cut: a network drop.

Stopping the server cuts every client at once; a network drop cuts only the ones behind
it. The relay listens on a free loopback port and forwards to the target; ``cut()``
aborts every relayed connection and refuses new ones (accepted, then closed at once) until
``restore()``. It runs its own event loop on a thread, so clients blocking in driver calls
on other threads are served whatever the test's loop is doing.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading


class TcpProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self._target = (target_host, target_port)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="tcp-proxy", daemon=True)
        self._links: set[asyncio.StreamWriter] = set()
        self._cut = False
        self._server: asyncio.Server | None = None
        self.port = 0
        self.cuts = 0
        """How many relayed connections ``cut`` aborted."""

    def start(self) -> TcpProxy:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(10)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    def cut(self) -> None:
        """Drop the network: every relayed connection is aborted, new ones are refused."""
        asyncio.run_coroutine_threadsafe(self._cut_all(), self._loop).result(10)

    def restore(self) -> None:
        """The network is back: new connections are relayed again."""
        self._cut = False

    def close(self) -> None:
        async def shut() -> None:
            await self._cut_all()
            if self._server is not None:
                self._server.close()

        asyncio.run_coroutine_threadsafe(shut(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _listen(self) -> asyncio.Server:
        return await asyncio.start_server(self._relay, "127.0.0.1", 0)

    async def _cut_all(self) -> None:
        self._cut = True
        for writer in list(self._links):
            self.cuts += 1
            writer.transport.abort()
        self._links.clear()

    async def _relay(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        if self._cut:
            client_writer.transport.abort()
            return
        try:
            server_reader, server_writer = await asyncio.open_connection(*self._target)
        except OSError:
            client_writer.transport.abort()
            return
        self._links.update((client_writer, server_writer))
        await asyncio.gather(
            self._pipe(client_reader, server_writer), self._pipe(server_reader, client_writer)
        )
        self._links.difference_update((client_writer, server_writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        with contextlib.suppress(OSError, RuntimeError):
            writer.close()
