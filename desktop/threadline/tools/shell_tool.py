"""The built-in shell tool: one command line, in an allowed folder, with a timeout and an output cap.

It needs the user's trust (asks unless a rule names ``shell``; argument rules
match the command line, e.g. ``git status*``). The command runs in its own
process group so a timeout or a Stop kills everything it started: SIGTERM, then
SIGKILL a moment later, and the tool returns without waiting for the output pipe
to close (a child that escaped the group with ``setsid`` would hold it open).
The group also dies with Threadline, even a ``kill -9`` of it: a watcher rides
along in the group (``process_guard``; a job object on Windows).
Output beyond the cap is drained and dropped, so a chatty command cannot block
on a full pipe nor flood the conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from threadline.core.request import ToolSpec
from threadline.tools import process_guard
from threadline.tools.confine import OutsideAllowedFolders, allowed_roots, resolve_path
from threadline.tools.registry import ToolOutput

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
DEFAULT_OUTPUT_LIMIT = 64 * 1024
TERM_GRACE = 0.2
"""Seconds a stopped command has between SIGTERM and SIGKILL (Stop must settle within 0.5 s)."""
DRAIN_GRACE = 0.5
"""Seconds to read output left in the pipe after the command exited (a child may hold it open)."""
REAP_WAIT = 2.0
"""At most this long for asyncio to see a killed process gone (it takes milliseconds)."""


class ShellTool:
    needs_trust = True
    ends_with_threadline = True  # its process group dies with Threadline (``process_guard``)
    timeout = MAX_TIMEOUT + 10  # the registry's backstop; the command's own limit applies first

    def __init__(self, *, default_timeout: float = DEFAULT_TIMEOUT, output_limit: int = DEFAULT_OUTPUT_LIMIT):
        self.default_timeout = default_timeout
        self.output_limit = output_limit
        self.spec = ToolSpec(
            "shell",
            "Run a shell command in an allowed folder and return its combined stdout and stderr "
            f"(at most {output_limit} bytes) and exit code. The user approves commands first.",
            {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command line"},
                    "cwd": {"type": "string", "description": "Working folder (default: the allowed folder)"},
                    "timeout": {
                        "type": "number",
                        "description": f"Seconds before the command is killed (default {default_timeout:g}, "
                        f"at most {MAX_TIMEOUT:g})",
                    },
                },
                "required": ["command"],
            },
        )

    async def call(self, arguments: dict[str, Any]) -> ToolOutput:
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return ToolOutput("A non-empty 'command' is required.", is_error=True)
        try:
            cwd = resolve_path(arguments["cwd"]) if arguments.get("cwd") else allowed_roots()[0]
        except OutsideAllowedFolders as err:
            return ToolOutput(str(err), is_error=True)
        if not cwd.is_dir():
            return ToolOutput(f"{cwd} is not a folder.", is_error=True)
        requested = arguments.get("timeout")
        limit = (
            float(requested) if isinstance(requested, int | float) and requested > 0 else self.default_timeout
        )
        limit = min(limit, MAX_TIMEOUT)
        return await self._run(command, str(cwd), limit)

    async def _run(self, command: str, cwd: str, limit: float) -> ToolOutput:
        run = await run_shell_command(command, cwd, limit, self.output_limit)
        if run.timed_out:
            return ToolOutput(
                f"{run.output}\n[the command did not finish within {limit:g} s and was killed]".lstrip(),
                is_error=True,
            )
        footer = f"[exit code {run.exit_code}]"
        return ToolOutput(f"{run.output}\n{footer}" if run.output else footer, is_error=run.exit_code != 0)


@dataclass(frozen=True, slots=True)
class ShellRun:
    """How a command ended: its output (cut at the limit, the cut marked), exit code, timeout."""

    output: str
    exit_code: int | None
    timed_out: bool


async def run_shell_command(command: str, cwd: str, limit: float, output_limit: int) -> ShellRun:
    """Run ``command`` in a shell, in its own process group, for at most ``limit`` seconds.

    The environment is Threadline's own. A timeout or a cancel (Stop) ends the whole
    group at once (SIGTERM, SIGKILL ``TERM_GRACE`` later). Shared by the shell tool and
    context hooks, so both follow the same rules.
    """
    loop = asyncio.get_running_loop()
    starting = asyncio.ensure_future(_start(loop, command, cwd, output_limit))
    try:
        transport, collector = await asyncio.shield(starting)
    except asyncio.CancelledError:
        # Stop while the process starts: asyncio's own clean-up of a cancelled start kills
        # the shell alone and waits for every pipe (a child's ``sleep`` holds it). Let the
        # start finish (milliseconds), then stop the whole group like a running command.
        with contextlib.suppress(Exception):
            transport, collector = await starting
            await _stop(transport, collector)
        raise
    timed_out = False
    try:
        try:
            await asyncio.wait_for(asyncio.shield(collector.exited), limit)
        except TimeoutError:
            timed_out = True
        else:  # what it printed is in the pipe: read to the end unless an escaped child holds it
            _signal_group(transport, signal.SIGKILL)  # background jobs it left behind
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(collector.output_closed), DRAIN_GRACE)
    finally:
        await _stop(transport, collector)  # also on cancel (Stop): the turn moves on at once
    return ShellRun(collector.text(), None if timed_out else transport.get_returncode(), timed_out)


async def _start(
    loop: asyncio.AbstractEventLoop, command: str, cwd: str, output_limit: int
) -> tuple[asyncio.SubprocessTransport, _Collector]:
    """Start ``command`` in a new process group that ends with Threadline (``process_guard``).

    On POSIX the stdin pipe is the watcher's channel (Threadline never writes to it;
    the command itself reads ``/dev/null`` as before).
    """
    if sys.platform == "win32":  # pragma: no cover
        transport, collector = await loop.subprocess_shell(
            lambda: _Collector(loop, output_limit),
            command,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            creationflags=0x00000200,  # CREATE_NEW_PROCESS_GROUP
        )
        collector.job = process_guard.kill_on_close_job(transport.get_pid())
        return transport, collector
    argv = process_guard.guarded_argv([process_guard.SHELL, "-c", command], channel=0, stdin_to_null=True)
    return await loop.subprocess_exec(
        lambda: _Collector(loop, output_limit),
        *argv,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


class _Collector(asyncio.SubprocessProtocol):
    """Keeps the first ``limit`` bytes of output and counts the rest; tells exit and end of output.

    The process's exit and the end of its output are separate: a child that left
    the process group can hold the pipe open long after the command ended, and
    nobody should wait for it.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0
        self.exited: asyncio.Future[None] = loop.create_future()
        self.output_closed: asyncio.Future[None] = loop.create_future()
        self.finished: asyncio.Future[None] = loop.create_future()
        self.job: int | None = None
        """The Windows job object that ends the command's processes (``process_guard``)."""

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        room = max(self.limit - len(self.kept), 0)
        self.kept.extend(data[:room])
        self.dropped += max(len(data) - room, 0)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd != 0:  # stdin is the watcher's channel, not output
            _settle(self.output_closed)

    def process_exited(self) -> None:
        _settle(self.exited)

    def connection_lost(self, exc: Exception | None) -> None:
        _settle(self.output_closed)
        _settle(self.finished)

    def text(self) -> str:
        output = self.kept.decode("utf-8", errors="replace")
        if self.dropped:
            output += f"\n[output truncated: {self.dropped} more bytes were not kept (limit {self.limit})]"
        return output


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _stop(transport: asyncio.SubprocessTransport, collector: _Collector) -> None:
    """End the command and everything in its process group, without waiting on anyone's pipes.

    SIGTERM first so a command can clean up, SIGKILL after ``TERM_GRACE`` for what
    is left; then our end of the pipe is closed (a child that escaped the group
    keeps running but is no longer read). The last wait, for the transport to
    finish, only lets asyncio reap the process before the caller goes on.
    """
    try:
        if not collector.exited.done():
            _signal_group(transport, signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(collector.exited), TERM_GRACE)
    finally:
        _signal_group(transport, signal.SIGKILL)
        transport.close()  # closes the watcher's channel too: it kills what is left of the group
        if sys.platform == "win32":  # pragma: no cover
            process_guard.close_job(collector.job)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(collector.finished), REAP_WAIT)


def _signal_group(transport: asyncio.SubprocessTransport, signum: int) -> None:
    """Signal the command and everything it started (it leads its own process group)."""
    pid = transport.get_pid()
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if sys.platform == "win32":  # pragma: no cover
            if transport.get_returncode() is None:
                transport.kill()
        else:
            os.killpg(pid, signum)
