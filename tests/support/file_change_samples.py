"""A turn's file changes as a coding assistant makes them, with real diffs: for the changes UI's
tests and screenshots (``tests/ui/chat/changes``, ``.ci/screenshots_changes.py``).

The diffs are made by ``difflib`` from real before and after texts, as the workspace facet
makes them, so the line counts, hunks and line numbers agree with each other.
"""

from __future__ import annotations

import difflib
import hashlib
import os

from threadline.core.file_changes import (
    ABSENT,
    ChangeKind,
    ChangeSet,
    ChangeSource,
    FileChange,
    FileDiff,
    FileState,
    FileTotal,
    RestoreAction,
    RestorePlan,
    RestoreStep,
    TurnChanges,
)

ROOT = "/home/ana/project"
ODD_NAME = os.fsdecode(b"/home/ana/project/notes/r\xe9sum\xe9\xff.txt")
"""A Latin-1 file name: not UTF-8, so ``os.fsdecode`` keeps its bytes as surrogate escapes."""

CACHE_BEFORE = '''"""A small cache for the fetcher."""

from collections import OrderedDict


class Cache:
    def __init__(self, capacity):
        self.capacity = capacity
        self.data = OrderedDict()

    def get(self, key):
        return self.data.get(key)

    def put(self, key, value):
        self.data[key] = value
        if len(self.data) > self.capacity:
            self.data.popitem(last=False)


def make_cache():
    return Cache(128)
'''

CACHE_AFTER = '''"""A small LRU cache for the fetcher: the least recently used entry goes first."""

from __future__ import annotations

from collections import OrderedDict


class Cache:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.data: OrderedDict[str, bytes] = OrderedDict()

    def get(self, key: str) -> bytes | None:
        if key not in self.data:
            return None
        self.data.move_to_end(key)
        return self.data[key]

    def put(self, key: str, value: bytes) -> None:
        self.data[key] = value
        self.data.move_to_end(key)
        if len(self.data) > self.capacity:
            self.data.popitem(last=False)


def make_cache():
    return Cache(128)
'''

README_BEFORE = "# Fetcher\n\nDownloads pages.\n\n## Usage\n\n    fetch URL\n"
README_AFTER = (
    "# Fetcher\n\nDownloads pages and keeps the recent ones in an LRU cache.\n\n## Usage\n\n    fetch URL\n"
)
INIT_AFTER = '"""The LRU cache package."""\n\nfrom fetcher.cache import Cache\n\n__all__ = ["Cache"]\n'
NOTES_BEFORE = "old notes\nto be removed\n"
ODD_AFTER = "curriculum vitae\n"
HELPERS = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"

TEXTS: dict[str, tuple[str, str]] = {
    f"{ROOT}/src/fetcher/cache.py": (CACHE_BEFORE, CACHE_AFTER),
    f"{ROOT}/README.md": (README_BEFORE, README_AFTER),
    f"{ROOT}/src/fetcher/lru/__init__.py": ("", INIT_AFTER),
    f"{ROOT}/old_notes.txt": (NOTES_BEFORE, ""),
    f"{ROOT}/src/fetcher/helpers.py": (HELPERS, HELPERS),
    ODD_NAME: ("", ODD_AFTER),
}


def state(text: str, *, binary: bool = False) -> FileState:
    if not text:
        return ABSENT
    data = text.encode()
    return FileState(hashlib.sha256(data).hexdigest(), len(data), kept=True, binary=binary)


def unified(before: str, after: str, path: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), f"a{path}", f"b{path}"
        )
    )


def counted(path: str, kind: ChangeKind, renamed_from: str = "") -> FileChange:
    before, after = TEXTS[path]
    diff = unified(before, after, path).splitlines()
    added = sum(1 for line in diff if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in diff if line.startswith("-") and not line.startswith("---"))
    return FileChange(path, kind, state(before), state(after), renamed_from, added, removed)


LOGO = f"{ROOT}/assets/logo.png"


def sample_changes() -> list[FileChange]:
    """Modified, created, deleted, renamed, binary and a non-UTF-8 name: every row the list can show."""
    return [
        counted(f"{ROOT}/src/fetcher/cache.py", ChangeKind.MODIFIED),
        counted(f"{ROOT}/README.md", ChangeKind.MODIFIED),
        counted(f"{ROOT}/src/fetcher/lru/__init__.py", ChangeKind.CREATED),
        counted(f"{ROOT}/old_notes.txt", ChangeKind.DELETED),
        counted(f"{ROOT}/src/fetcher/helpers.py", ChangeKind.RENAMED, f"{ROOT}/src/fetcher/util.py"),
        FileChange(
            LOGO,
            ChangeKind.MODIFIED,
            FileState("d1" * 32, 14_203, kept=True, binary=True),
            FileState("d2" * 32, 15_880, kept=True, binary=True),
        ),
        counted(ODD_NAME, ChangeKind.CREATED),
    ]


def sample_turn(number: int = 3) -> TurnChanges:
    """The sample changes as one turn of two tool calls."""
    changes = sample_changes()
    first = ChangeSet(
        "cs1", "s1", ChangeSource.TOOL, 1.0, "laptop", tuple(changes[:3]), "m1", "c1", "write_file"
    )
    second = ChangeSet("cs2", "s1", ChangeSource.TOOL, 2.0, "laptop", tuple(changes[3:]), "m1", "c2", "shell")
    return TurnChanges(number, "p1", "m1", (first, second))


def sample_diff(change: FileChange) -> FileDiff:
    """What the workspace facet answers for ``change``: a diff, or a note when there is none to show."""
    if change.binary:
        return FileDiff(change.path, note="Binary file changed")
    before, after = TEXTS[change.path]
    if change.kind is ChangeKind.RENAMED and before == after:
        return FileDiff(change.path, note=f"Renamed from {change.renamed_from}, content unchanged")
    return FileDiff(change.path, text=unified(before, after, change.path))


def sample_totals() -> list[FileTotal]:
    return [
        FileTotal(f"{ROOT}/src/fetcher/cache.py", 28, 9, 3, ChangeKind.MODIFIED),
        FileTotal(f"{ROOT}/README.md", 4, 1, 2, ChangeKind.MODIFIED),
        FileTotal(f"{ROOT}/src/fetcher/lru/__init__.py", 5, 0, 1, ChangeKind.CREATED),
        FileTotal(f"{ROOT}/old_notes.txt", 0, 2, 1, ChangeKind.DELETED),
        FileTotal(ODD_NAME, 3, 0, 1, ChangeKind.CREATED),
    ]


def sample_plan() -> RestorePlan:
    """Files as they were before turn 3: clean steps of each kind, two conflicts, one blocked."""
    kept = FileState("aa", 10, kept=True)
    now = FileState("bb", 12, kept=True)
    return RestorePlan(
        "s1",
        "Files as they were before turn 3",
        (
            RestoreStep(f"{ROOT}/src/fetcher/cache.py", RestoreAction.CHANGE, kept, now),
            RestoreStep(f"{ROOT}/old_notes.txt", RestoreAction.CREATE, kept, ABSENT),
            RestoreStep(f"{ROOT}/src/fetcher/lru/__init__.py", RestoreAction.DELETE, ABSENT, now),
            RestoreStep(
                f"{ROOT}/README.md",
                RestoreAction.CHANGE,
                kept,
                now,
                conflict="Changed after the tool wrote it (you or another program edited it at 14:02)",
            ),
            RestoreStep(
                ODD_NAME,
                RestoreAction.DELETE,
                ABSENT,
                now,
                conflict="Changed after the tool wrote it",
            ),
            RestoreStep(
                LOGO,
                RestoreAction.CHANGE,
                FileState("cc", 4_000_000, kept=False, binary=True, not_kept="larger than 2 MB"),
                now,
                blocked="Content not kept: larger than 2 MB",
            ),
        ),
    )
