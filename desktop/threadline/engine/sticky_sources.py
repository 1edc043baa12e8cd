"""Reading sticky context sources from disk (blocking; the gatherer calls it on a worker thread).

A source is a file, a folder (read recursively) or a glob pattern (``**`` crosses folders);
``~`` is expanded and a relative path is taken from the source's ``base``, else the home
folder. Nothing is skipped silently: a missing or unreadable file, a pattern that matches
nothing, a binary file (a NUL byte, or not UTF-8 text) and a file over ``MAX_FILE_BYTES``
each become a ``ContextProblem`` naming the reason. Within folders, hidden entries and
well-known tool folders (``node_modules``, ``__pycache__`` …) are not entered, and at most
``MAX_FILES_PER_SOURCE`` files are read, in path order; a folder with more says so.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from threadline.core.gathered_context import ContextCandidate, ContextOrigin, ContextProblem
from threadline.core.sticky import ContextSource

MAX_FILE_BYTES = 256 * 1024
"""A file larger than this is refused (about 64,000 tokens: more belongs in a tool call)."""
MAX_FILES_PER_SOURCE = 200
"""Files read from one folder or pattern at most."""
SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", "venv", "dist", "build", "target"})
"""Folders not entered when a folder is read recursively (hidden ones neither)."""
_GLOB_CHARS = frozenset("*?[")


def read_sources(
    sources: Iterable[ContextSource], origin: ContextOrigin
) -> tuple[list[ContextCandidate], list[ContextProblem]]:
    """Every file of ``sources``, read now; the files that could not be used, with the reason."""
    found: list[ContextCandidate] = []
    problems: list[ContextProblem] = []
    seen: set[Path] = set()
    for source in sources:
        paths, source_problems = expand(source)
        problems.extend(source_problems)
        for path in paths:
            resolved = path.resolve()
            if resolved in seen:
                continue
            seen.add(resolved)
            outcome = read_file(path, origin)
            if isinstance(outcome, ContextCandidate):
                found.append(outcome)
            else:
                problems.append(outcome)
    return found, problems


def expand(source: ContextSource) -> tuple[list[Path], list[ContextProblem]]:
    """The files a source names now, in a stable order, and what is wrong with it."""
    raw = source.pattern.strip()
    label = raw or "(empty)"
    if not raw:
        return [], [ContextProblem(label, "the entry is empty")]
    path = _absolute(raw, source.base)
    if any(c in _GLOB_CHARS for c in raw):
        matches = sorted(Path(m) for m in glob.glob(str(path), recursive=True))
        files = [m for m in matches if m.is_file()]
        if not files:
            return [], [ContextProblem(label, "the pattern matches no file")]
        return _capped(label, files)
    if path.is_dir():
        return _capped(label, _walk(path))
    if not path.exists() and not path.is_symlink():
        return [], [ContextProblem(display(path), "missing: the file does not exist (moved or deleted?)")]
    return [path], []


def read_file(path: Path, origin: ContextOrigin) -> ContextCandidate | ContextProblem:
    """The text of ``path``, or why it is refused or cannot be read."""
    label = display(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            return ContextProblem(label, "not a regular file")
        if size > MAX_FILE_BYTES:
            return ContextProblem(
                label,
                f"refused: {size:,} bytes, more than the {_kib(MAX_FILE_BYTES)} a context file may have",
            )
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return ContextProblem(label, "missing: the file does not exist (moved or deleted?)")
    except PermissionError:
        return ContextProblem(label, "unreadable: permission denied")
    except OSError as err:
        return ContextProblem(label, f"unreadable: {err.strerror or err}")
    if len(data) > MAX_FILE_BYTES:  # grew since the stat
        return ContextProblem(label, f"refused: more than the {_kib(MAX_FILE_BYTES)} a context file may have")
    if b"\x00" in data:
        return ContextProblem(label, "refused: a binary file (it contains NUL bytes)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return ContextProblem(label, "refused: not UTF-8 text (a binary file?)")
    return ContextCandidate(label, text, origin, kind="file", source=str(path))


def display(path: Path) -> str:
    """``path`` as the user sees it: ``~`` for the home folder."""
    home = Path.home()
    try:
        return f"~/{path.relative_to(home)}" if path != home else "~"
    except ValueError:
        return str(path)


def _absolute(raw: str, base: str) -> Path:
    path = Path(os.path.expanduser(raw))
    if path.is_absolute():
        return path
    root = Path(os.path.expanduser(base)) if base else Path.home()
    return root / path


def _walk(folder: Path) -> Iterator[Path]:
    """Files under ``folder`` in path order, without hidden entries or tool folders."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(root) / name


def _capped(label: str, paths: Iterable[Path]) -> tuple[list[Path], list[ContextProblem]]:
    kept: list[Path] = []
    for path in paths:
        if len(kept) == MAX_FILES_PER_SOURCE:
            return kept, [
                ContextProblem(
                    label,
                    f"more than {MAX_FILES_PER_SOURCE} files: only the first "
                    f"{MAX_FILES_PER_SOURCE} (by path) were read",
                )
            ]
        kept.append(path)
    if not kept:
        return [], [ContextProblem(label, "the folder has no files to read")]
    return kept, []


def _kib(size: int) -> str:
    return f"{size / 1024:,.0f} KB"
