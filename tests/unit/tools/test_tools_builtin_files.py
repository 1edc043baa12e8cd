"""Built-in file tools: confinement (``..``, absolute paths, links out), read, list, search, write + diff."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from threadline.tools.confine import OutsideAllowedFolders, resolve_path
from threadline.tools.context import tool_context
from threadline.tools.file_tools import (
    MAX_READ_BYTES,
    ListDirectoryTool,
    ReadFileTool,
    SearchFilesTool,
    WriteFileTool,
)
from threadline.tools.registry import ToolOutput

pytestmark = pytest.mark.asyncio


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[Path]:
    """allowed/ with files and links in and out; secret/ beside it."""
    allowed, secret = tmp_path / "allowed", tmp_path / "secret"
    (allowed / "src").mkdir(parents=True)
    secret.mkdir()
    (allowed / "readme.txt").write_text("hello\nworld\n")
    (allowed / "src" / "main.py").write_text("def main():\n    return 'needle'\n")
    (allowed / "blob.bin").write_bytes(b"\x00\x01\x02needle")
    (secret / "key.txt").write_text("needle: the secret\n")
    os.symlink(secret / "key.txt", allowed / "link-out.txt")
    os.symlink(secret, allowed / "dir-out")
    os.symlink(allowed / "readme.txt", allowed / "link-in.txt")
    with tool_context("s1", (), (str(allowed),)):
        yield allowed


async def run(tool: Any, **arguments: Any) -> ToolOutput:
    output: ToolOutput = await tool.call(arguments)
    return output


@pytest.mark.parametrize(
    "raw",
    ["../secret/key.txt", "src/../../secret/key.txt", "link-out.txt", "dir-out/key.txt", "/etc/passwd", "~"],
)
async def test_paths_outside_are_refused(tree: Path, raw: str) -> None:
    with pytest.raises(OutsideAllowedFolders, match="outside the folders"):
        resolve_path(raw)
    output = await run(ReadFileTool(), path=raw)
    assert output.is_error and "Refused" in output.text
    assert "the secret" not in output.text


async def test_paths_inside_are_resolved(tree: Path) -> None:
    assert resolve_path("src/../readme.txt") == tree / "readme.txt"
    assert resolve_path(str(tree / "src" / "main.py")) == tree / "src" / "main.py"
    assert resolve_path("link-in.txt") == tree / "readme.txt"


async def test_no_allowed_folder_means_no_file_access(tmp_path: Path) -> None:
    with tool_context("s1", (), ()):
        output = await run(ReadFileTool(), path=str(tmp_path))
    assert output.is_error and "No folder is allowed" in output.text


async def test_read_file_text_range_binary_and_limit(tree: Path) -> None:
    assert (await run(ReadFileTool(), path="readme.txt")).text == "hello\nworld\n"
    assert (await run(ReadFileTool(), path="readme.txt", start_line=2, end_line=2)).text == "world\n"
    binary = await run(ReadFileTool(), path="blob.bin")
    assert binary.is_error and "binary" in binary.text
    (tree / "big.txt").write_text("x" * (MAX_READ_BYTES + 10))
    big = await run(ReadFileTool(), path="big.txt")
    assert big.text.endswith(f"only the first {MAX_READ_BYTES} were read]")
    missing = await run(ReadFileTool(), path="nope.txt")
    assert missing.is_error and "does not exist" in missing.text


async def test_read_file_returns_images(tree: Path) -> None:
    (tree / "pixel.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    output = await run(ReadFileTool(), path="pixel.png")
    assert (
        output.images and output.images[0].media_type == "image/png" and output.images[0].name == "pixel.png"
    )


async def test_list_directory(tree: Path) -> None:
    output = await run(ListDirectoryTool())
    lines = output.text.splitlines()
    assert lines.index("src/") < lines.index("readme.txt\t12 bytes")  # folders first
    assert any(line.startswith("link-out.txt -> ") for line in lines)
    assert (await run(ListDirectoryTool(), path="dir-out")).is_error


async def test_search_text_stays_inside(tree: Path) -> None:
    output = await run(SearchFilesTool(), query="needle")
    assert output.text == "src/main.py:2: return 'needle'"  # not the binary file, not the linked secret
    regex = await run(SearchFilesTool(), query=r"^h\w+o$", regex=True)
    assert regex.text == "readme.txt:1: hello"
    assert (
        await run(SearchFilesTool(), query="HELLO", ignore_case=True, glob="*.txt")
    ).text == "readme.txt:1: hello"
    assert (await run(SearchFilesTool(), query="zzz")).text == "No matches."
    assert (await run(SearchFilesTool(), query="(", regex=True)).is_error
    outside = await run(SearchFilesTool(), query="needle", folder="../secret")
    assert outside.is_error and "outside" in outside.text


async def test_search_stops_at_max_results(tree: Path) -> None:
    (tree / "many.txt").write_text("hit\n" * 50)
    output = await run(SearchFilesTool(), query="hit", max_results=5)
    assert output.text.count("many.txt:") == 5 and output.text.endswith("[stopped at 5 results]")


async def test_write_file_preview_is_a_unified_diff(tree: Path) -> None:
    tool = WriteFileTool()
    assert tool.needs_trust
    diff = tool.preview({"path": "readme.txt", "content": "hello\nthere\n"})
    assert diff.splitlines()[:2] == ["--- a/readme.txt", "+++ b/readme.txt"]
    assert "-world\n" in diff and "+there\n" in diff and " hello\n" in diff
    new = tool.preview({"path": "docs/new.md", "content": "# New"})
    assert (
        new.startswith("--- /dev/null\n+++ b/docs/new.md") and "+# New\n\\ No newline at end of file" in new
    )
    assert "(no change" in tool.preview({"path": "readme.txt", "content": "hello\nworld\n"})
    with pytest.raises(OutsideAllowedFolders):
        tool.preview({"path": "../secret/key.txt", "content": ""})


async def test_write_file_writes_inside_only(tree: Path, tmp_path: Path) -> None:
    tool = WriteFileTool()
    created = await run(tool, path="docs/new.md", content="# New\n")
    assert not created.is_error and "Created" in created.text
    assert (tree / "docs" / "new.md").read_text() == "# New\n"
    replaced = await run(tool, path="link-in.txt", content="via link\n")  # a link inside stays inside
    assert "Replaced" in replaced.text and (tree / "readme.txt").read_text() == "via link\n"
    refused = await run(tool, path="link-out.txt", content="pwned")
    assert refused.is_error and (tmp_path / "secret" / "key.txt").read_text() == "needle: the secret\n"
    assert (await run(tool, path="src", content="x")).is_error
    assert not [p for p in tree.rglob(".*.tmp")]
