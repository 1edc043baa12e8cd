"""The built-in shell tool: one command line, in an allowed folder, with a timeout and an output cap.

It needs the user's trust (asks unless a rule names ``shell``; argument rules
match the command line, e.g. ``git status*``). The command runs in its own
process group so a timeout or an interrupt kills everything it started.
Output beyond the cap is drained and dropped, so a chatty command cannot block
on a full pipe nor flood the conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from typing import Any

from threadline.core.request import ToolSpec
from threadline.tools.confine import OutsideAllowedFolders, allowed_roots, resolve_path
from threadline.tools.registry import ToolOutput

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
DEFAULT_OUTPUT_LIMIT = 64 * 1024


class ShellTool:
    needs_trust = True
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
        options: dict[str, Any] = {}
        if sys.platform == "win32":  # pragma: no cover
            options["creationflags"] = 0x00000200  # CREATE_NEW_PROCESS_GROUP
        else:
            options["start_new_session"] = True
        process = await asyncio.create_subprocess_shell(
            command,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            **options,
        )
        kept = bytearray()
        dropped = 0

        async def collect() -> None:
            nonlocal dropped
            assert process.stdout is not None
            while chunk := await process.stdout.read(65536):
                room = self.output_limit - len(kept)
                kept.extend(chunk[: max(room, 0)])
                dropped += max(len(chunk) - max(room, 0), 0)
            await process.wait()

        timed_out = False
        try:
            await asyncio.wait_for(collect(), limit)
        except TimeoutError:
            timed_out = True
        finally:
            _kill_group(process)
            with contextlib.suppress(ProcessLookupError, TimeoutError):
                await asyncio.shield(asyncio.wait_for(process.wait(), 5))
        output = kept.decode("utf-8", errors="replace")
        if dropped:
            output += f"\n[output truncated: {dropped} more bytes were not kept (limit {self.output_limit})]"
        if timed_out:
            return ToolOutput(
                f"{output}\n[the command did not finish within {limit:g} s and was killed]".lstrip(),
                is_error=True,
            )
        code = process.returncode
        footer = f"[exit code {code}]"
        return ToolOutput(f"{output}\n{footer}" if output else footer, is_error=code != 0)


def _kill_group(process: asyncio.subprocess.Process) -> None:
    """Kill the command and everything it started (it leads its own process group)."""
    if process.returncode is not None and sys.platform == "win32":  # pragma: no cover
        return
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if sys.platform == "win32":  # pragma: no cover
            process.kill()
        else:
            os.killpg(process.pid, signal.SIGKILL)
