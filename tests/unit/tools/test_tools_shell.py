"""The shell tool: runs in an allowed folder, times out (killing its children), caps output."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from threadline.tools.context import tool_context
from threadline.tools.registry import ToolOutput
from threadline.tools.shell_tool import ShellTool

pytestmark = pytest.mark.asyncio


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    allowed = tmp_path / "allowed"
    (allowed / "sub").mkdir(parents=True)
    with tool_context("s1", (), (str(allowed),)):
        yield allowed


async def test_runs_in_the_allowed_folder_with_exit_code(folder: Path) -> None:
    output = await ShellTool().call({"command": "pwd; echo oops >&2"})
    assert output.text == f"{folder}\noops\n\n[exit code 0]" and not output.is_error
    sub = await ShellTool().call({"command": "pwd", "cwd": "sub"})
    assert sub.text.startswith(str(folder / "sub"))
    failed = await ShellTool().call({"command": "exit 3"})
    assert failed.is_error and failed.text == "[exit code 3]"


async def test_cwd_outside_and_missing_command_are_refused(folder: Path) -> None:
    outside = await ShellTool().call({"command": "ls", "cwd": "../.."})
    assert outside.is_error and "outside the folders" in outside.text
    assert (await ShellTool().call({"command": "  "})).is_error


async def test_timeout_kills_the_command_and_its_children(folder: Path) -> None:
    started = time.monotonic()
    output: ToolOutput = await ShellTool().call(
        {"command": "echo before; (sleep 5; echo late > late.txt) & sleep 5", "timeout": 0.5}
    )
    assert time.monotonic() - started < 4
    assert output.is_error and "did not finish within 0.5 s and was killed" in output.text
    assert output.text.startswith("before")  # output so far is kept
    time.sleep(0.2)
    assert not (folder / "late.txt").exists()


async def test_stop_while_the_command_starts_settles_at_once(folder: Path) -> None:
    """Stop right after approval: the process is being started when the cancel arrives."""
    call = asyncio.create_task(ShellTool().call({"command": "sleep 30; echo late > late.txt"}))
    await asyncio.sleep(0)  # the call has forked the shell and waits for its pipes to connect
    started = time.monotonic()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    settle = time.monotonic() - started
    print(f"\nStop while a shell command starts: settled in {settle * 1000:.0f} ms")
    assert settle < 5  # 30 s when the shell alone was killed and its child's pipe waited for


async def test_output_is_capped(folder: Path) -> None:
    output = await ShellTool(output_limit=1000).call({"command": "yes abcdefghi | head -c 200000"})
    assert output.text.startswith("abcdefghi\n") and not output.is_error
    assert "[output truncated: 199000 more bytes were not kept (limit 1000)]" in output.text
    assert len(output.text) < 1200


async def test_no_allowed_folder(tmp_path: Path) -> None:
    with tool_context("s1", (), ()):
        output = await ShellTool().call({"command": "ls"})
    assert output.is_error and "No folder is allowed" in output.text
