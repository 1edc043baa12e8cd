"""Built-in file tools: read a file, list a folder, search text, write a file.

All are confined to the agent's allowed folders (``confine``) and off unless the
agent enables them. ``write_file`` needs the user's trust (it asks by default)
and offers ``preview(arguments)``: the unified diff the approval prompt shows.
Blocking file-system work runs in a worker thread so the event loop stays free.
"""

from __future__ import annotations

import asyncio
import base64
import fnmatch
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from threadline.core.messages import ImageBlock
from threadline.core.request import ToolSpec
from threadline.tools.confine import OutsideAllowedFolders, allowed_roots, display, inside, resolve_path
from threadline.tools.registry import ToolOutput

MAX_READ_BYTES = 256 * 1024
MAX_IMAGE_BYTES = 4 * 1024 * 1024
MAX_WRITE_BYTES = 4 * 1024 * 1024
MAX_LIST_ENTRIES = 1000
MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024
DEFAULT_SEARCH_RESULTS = 100
MAX_SEARCH_RESULTS = 1000
SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox"})
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, object]:
    return {"type": "object", "properties": properties, "required": required}


def _error(text: str) -> ToolOutput:
    return ToolOutput(text=text, is_error=True)


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head[:8192]


class ReadFileTool:
    spec = ToolSpec(
        "read_file",
        "Read a text file (or a PNG/JPEG/GIF image) inside the allowed folders. Relative paths start "
        "at the first allowed folder. Optional 1-based line range.",
        _schema(
            {
                "path": {"type": "string", "description": "File path"},
                "start_line": {"type": "integer", "minimum": 1},
                "end_line": {"type": "integer", "minimum": 1},
            },
            ["path"],
        ),
    )
    reads_only = True

    async def call(self, arguments: dict[str, Any]) -> ToolOutput:
        try:
            path = resolve_path(arguments.get("path", ""))
        except OutsideAllowedFolders as err:
            return _error(str(err))
        return await asyncio.to_thread(self._read, path, arguments)

    def _read(self, path: Path, arguments: dict[str, Any]) -> ToolOutput:
        if not path.is_file():
            return _error(f"{path} is not a file." if path.exists() else f"{path} does not exist.")
        size = path.stat().st_size
        media_type = IMAGE_TYPES.get(path.suffix.lower())
        if media_type:
            if size > MAX_IMAGE_BYTES:
                return _error(f"{path} is an image of {size} bytes; the limit is {MAX_IMAGE_BYTES}.")
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            return ToolOutput(f"Image {path.name} ({size} bytes)", (ImageBlock(media_type, data, path.name),))
        with path.open("rb") as handle:
            raw = handle.read(MAX_READ_BYTES + 1)
        if _is_binary(raw):
            return _error(f"{path} is a binary file; only text files and images can be read.")
        text = raw[:MAX_READ_BYTES].decode("utf-8", errors="replace")
        start, end = arguments.get("start_line"), arguments.get("end_line")
        if isinstance(start, int) or isinstance(end, int):
            lines = text.splitlines(keepends=True)
            first = max(1, start if isinstance(start, int) else 1)
            last = end if isinstance(end, int) else len(lines)
            text = "".join(lines[first - 1 : last])
        if len(raw) > MAX_READ_BYTES:
            text += f"\n[truncated: the file has {size} bytes, only the first {MAX_READ_BYTES} were read]"
        return ToolOutput(text)


class ListDirectoryTool:
    spec = ToolSpec(
        "list_directory",
        "List a folder inside the allowed folders: one entry per line, folders end with '/'.",
        _schema({"path": {"type": "string", "description": "Folder path (default: the allowed folder)"}}, []),
    )
    reads_only = True

    async def call(self, arguments: dict[str, Any]) -> ToolOutput:
        try:
            path = resolve_path(arguments.get("path") or ".")
        except OutsideAllowedFolders as err:
            return _error(str(err))
        return await asyncio.to_thread(self._list, path)

    @staticmethod
    def _list(path: Path) -> ToolOutput:
        if not path.is_dir():
            return _error(f"{path} is not a folder." if path.exists() else f"{path} does not exist.")
        entries = sorted(os.scandir(path), key=lambda e: (not e.is_dir(), e.name.lower()))
        lines = []
        for entry in entries[:MAX_LIST_ENTRIES]:
            if entry.is_symlink():
                lines.append(f"{entry.name} -> {os.readlink(entry.path)}")
            elif entry.is_dir():
                lines.append(f"{entry.name}/")
            else:
                lines.append(f"{entry.name}\t{entry.stat().st_size} bytes")
        if len(entries) > MAX_LIST_ENTRIES:
            lines.append(f"[{len(entries) - MAX_LIST_ENTRIES} more entries not shown]")
        return ToolOutput("\n".join(lines) if lines else "(empty folder)")


class SearchFilesTool:
    spec = ToolSpec(
        "search_files",
        "Search text in files under a folder inside the allowed folders. Returns 'path:line: text' "
        "lines. The query is plain text unless regex is true.",
        _schema(
            {
                "query": {"type": "string"},
                "folder": {"type": "string", "description": "Folder to search (default: allowed folder)"},
                "glob": {"type": "string", "description": "Only files whose name matches, e.g. *.py"},
                "regex": {"type": "boolean"},
                "ignore_case": {"type": "boolean"},
                "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS},
            },
            ["query"],
        ),
    )
    reads_only = True

    async def call(self, arguments: dict[str, Any]) -> ToolOutput:
        query = arguments.get("query")
        if not isinstance(query, str) or not query:
            return _error("A non-empty 'query' is required.")
        try:
            roots = allowed_roots()
            folder = resolve_path(arguments.get("folder") or ".")
        except OutsideAllowedFolders as err:
            return _error(str(err))
        flags = re.IGNORECASE if arguments.get("ignore_case") else 0
        try:
            pattern = re.compile(query if arguments.get("regex") else re.escape(query), flags)
        except re.error as err:
            return _error(f"The regular expression is not valid: {err}.")
        limit = arguments.get("max_results")
        limit = (
            min(limit, MAX_SEARCH_RESULTS) if isinstance(limit, int) and limit > 0 else DEFAULT_SEARCH_RESULTS
        )
        name_glob = arguments.get("glob") or "*"
        return await asyncio.to_thread(self._search, folder, roots, pattern, str(name_glob), limit)

    @staticmethod
    def _search(
        folder: Path, roots: list[Path], pattern: re.Pattern[str], name_glob: str, limit: int
    ) -> ToolOutput:
        if not folder.is_dir():
            return _error(f"{folder} is not a folder.")
        hits: list[str] = []
        seen: set[Path] = set()
        for directory, folders, files in os.walk(folder):
            folders[:] = sorted(f for f in folders if f not in SKIPPED_FOLDERS)
            for name in sorted(files):
                if not fnmatch.fnmatch(name, name_glob):
                    continue
                path = Path(directory, name).resolve()
                if path in seen or not inside(path, roots) or not path.is_file():
                    continue  # searched already (a link to it), or a symlink pointing out
                seen.add(path)
                if path.stat().st_size > MAX_SEARCH_FILE_BYTES:
                    continue
                data = path.read_bytes()
                if _is_binary(data):
                    continue
                text = data.decode("utf-8", errors="replace")
                for number, line in enumerate(text.splitlines(), 1):
                    if pattern.search(line):
                        hits.append(f"{display(path, roots)}:{number}: {line.strip()[:300]}")
                        if len(hits) >= limit:
                            hits.append(f"[stopped at {limit} results]")
                            return ToolOutput("\n".join(hits))
        return ToolOutput("\n".join(hits) if hits else "No matches.")


class WriteFileTool:
    """Writes a whole file; asks before running (``needs_trust``) and shows a diff first."""

    spec = ToolSpec(
        "write_file",
        "Write a text file inside the allowed folders, replacing its content (creates it and its "
        "folders if needed). The user sees a diff and approves it first.",
        _schema({"path": {"type": "string"}, "content": {"type": "string"}}, ["path", "content"]),
    )
    needs_trust = True

    def touched_paths(self, arguments: dict[str, Any]) -> list[str]:
        """The one file it writes (for recording what changed; docs/workspace.md)."""
        return [str(resolve_path(arguments.get("path", "")))]

    def preview(self, arguments: dict[str, Any]) -> str:
        """The unified diff between the file now and what the call would write."""
        path = resolve_path(arguments.get("path", ""))
        content = arguments.get("content")
        if not isinstance(content, str):
            raise ValueError("'content' must be a string")
        old = path.read_text("utf-8", errors="replace") if path.is_file() else ""
        label = display(path, allowed_roots())
        import difflib  # here: memory every start would hold for the first write's preview

        diff = difflib.unified_diff(
            old.splitlines(keepends=True),
            content.splitlines(keepends=True),
            fromfile="/dev/null" if not path.exists() else f"a/{label}",
            tofile=f"b/{label}",
        )
        text = "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff
        )
        return text or f"(no change to {label})\n"

    async def call(self, arguments: dict[str, Any]) -> ToolOutput:
        content = arguments.get("content")
        if not isinstance(content, str):
            return _error("'content' must be a string.")
        if len(content.encode("utf-8")) > MAX_WRITE_BYTES:
            return _error(f"The content is larger than {MAX_WRITE_BYTES} bytes.")
        try:
            path = resolve_path(arguments.get("path", ""))
        except OutsideAllowedFolders as err:
            return _error(str(err))
        return await asyncio.to_thread(self._write, path, content)

    @staticmethod
    def _write(path: Path, content: str) -> ToolOutput:
        if path.is_dir():
            return _error(f"{path} is a folder.")
        existed = path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
                handle.write(content)
            if existed:
                os.chmod(temporary, path.stat().st_mode & 0o7777)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        verb = "Replaced" if existed else "Created"
        return ToolOutput(f"{verb} {path} ({len(content.encode('utf-8'))} bytes).")
