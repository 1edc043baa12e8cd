"""Subprocesses a test starts on its event loop, each ended and closed before that loop closes.

An asyncio subprocess transport closes itself only once the process has exited *and*
its pipes have reached end of file. One left open (a test failed or stopped reading
mid-output) is closed by its finaliser whenever garbage collection reaches it — often
in a later test, after its own loop has closed, where closing it fails with "Event loop
is closed" and fails that test instead. ``Processes.aclose`` ends what is still running,
reads what is left of each pipe and waits until each transport is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping


class Processes:
    """The subprocesses of one test; ``aclose`` (a fixture's teardown) leaves none open."""

    def __init__(self) -> None:
        self._started: list[asyncio.subprocess.Process] = []

    async def start(self, *command: str, env: Mapping[str, str]) -> asyncio.subprocess.Process:
        """``command`` with its stdout and stderr piped, remembered for ``aclose``."""
        process = await asyncio.create_subprocess_exec(
            *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=dict(env)
        )
        self._started.append(process)
        return process

    async def aclose(self, timeout: float = 60.0) -> None:
        """Kill what still runs, drain every pipe, and wait until every transport is closed."""
        async with asyncio.timeout(timeout):
            for process in self._started:
                if process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
                await process.communicate()  # reads each pipe to its end and waits for the exit
                transport = process._transport  # type: ignore[attr-defined]
                while not transport.is_closing():  # its protocol closes it a callback later
                    await asyncio.sleep(0.01)
        self._started.clear()
