"""The built-in tools, registered with every engine and offered only when an agent enables them.

Names (wire and policy alike): ``read_file``, ``list_directory``,
``search_files``, ``write_file`` (asks unless trusted, shows a diff), ``shell``
(asks unless trusted; argument rules match its command line) and ``notes``.
"""

from __future__ import annotations

from threadline.tools.file_tools import ListDirectoryTool, ReadFileTool, SearchFilesTool, WriteFileTool
from threadline.tools.notes_tool import NotesTool
from threadline.tools.registry import Tool
from threadline.tools.shell_tool import ShellTool

BUILTIN_TOOL_NAMES = ("read_file", "list_directory", "search_files", "write_file", "shell", "notes")


def builtin_tools() -> list[Tool]:
    return [ReadFileTool(), ListDirectoryTool(), SearchFilesTool(), WriteFileTool(), ShellTool(), NotesTool()]
