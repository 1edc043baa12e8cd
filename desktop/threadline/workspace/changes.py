"""From two manifests to file changes, and from a change to the diff a user reads.

A file only in the later manifest was created, only in the earlier one deleted, in both
with another digest modified. A deleted and a created file with the same (non-empty)
content are one rename. Paths either scan did not look at (skipped, or past a bound) are
left out: their absence says nothing. Lines are counted and diffs made with ``difflib``
on the kept contents (docs/workspace.md, "Diffs").
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable

from threadline.core.file_changes import ABSENT, ChangeKind, FileChange, FileDiff, FileState
from threadline.workspace.blobs import MissingSnapshot, SnapshotStore
from threadline.workspace.scan import Entry, Manifest, path_key

BINARY_NOTE = "Binary file changed"
MAX_COUNTED_LINES = 20_000
"""Above this many lines a side's line count is not matched line by line (too slow)."""


def shown(path: str) -> str:
    """``path`` for reading: bytes that are not UTF-8 as ``\\xNN`` escapes, never a bare surrogate."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def state_of(entry: Entry | None) -> FileState:
    if entry is None:
        return ABSENT
    return FileState(entry.digest, entry.size, entry.kept, entry.binary, entry.not_kept)


def diff_manifests(before: Manifest, after: Manifest, store: SnapshotStore) -> list[FileChange]:
    """The changes from ``before`` to ``after``, renames paired, in path order."""
    old_entries, new_entries = before.entries, after.entries
    differing = [p for p, e in old_entries.items() if (n := new_entries.get(p)) is not e and n != e]
    differing += [p for p in new_entries if p not in old_entries]
    deleted: list[str] = []
    created: list[str] = []
    changes: dict[str, FileChange] = {}
    for path in sorted(differing, key=path_key):
        if not (before.covers(path) and after.covers(path)):
            continue
        old, new = old_entries.get(path), new_entries.get(path)
        if old is not None and new is not None:
            if old.digest != new.digest:
                changes[path] = FileChange(path, ChangeKind.MODIFIED, state_of(old), state_of(new))
        elif old is not None:
            deleted.append(path)
            changes[path] = FileChange(path, ChangeKind.DELETED, state_of(old), ABSENT)
        elif new is not None:
            created.append(path)
            changes[path] = FileChange(path, ChangeKind.CREATED, ABSENT, state_of(new))
    for gone in deleted:
        old = before.entries[gone]
        if not old.size:
            continue
        for made in created:
            change = changes.get(made)
            if change is not None and change.kind is ChangeKind.CREATED and change.after.digest == old.digest:
                del changes[gone]
                changes[made] = FileChange(made, ChangeKind.RENAMED, state_of(old), change.after, gone)
                break
    ordered = sorted(changes.values(), key=lambda c: path_key(c.path))
    return [counted(c, store.get) for c in ordered]


def counted(change: FileChange, read: Callable[[str], bytes]) -> FileChange:
    """``change`` with its added and removed lines (0 for binary or content not kept)."""
    if change.binary or change.before.digest == change.after.digest:
        return change
    old, new = _content(change.before, read), _content(change.after, read)
    if old is None or new is None:
        return change
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    if not old_lines or not new_lines or max(len(old_lines), len(new_lines)) > MAX_COUNTED_LINES:
        added, removed = _rough_counts(old_lines, new_lines)
    else:
        added = removed = 0
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                removed += i2 - i1
                added += j2 - j1
    return FileChange(
        change.path, change.kind, change.before, change.after, change.renamed_from, added, removed
    )


def _rough_counts(old: list[bytes], new: list[bytes]) -> tuple[int, int]:
    """Lines only one side has, counted as multisets (exact when a side is empty)."""
    from collections import Counter

    left, right = Counter(old), Counter(new)
    return sum((right - left).values()), sum((left - right).values())


def _content(state: FileState, read: Callable[[str], bytes]) -> bytes | None:
    if not state.exists:
        return b""
    if not state.kept or state.unknown:
        return None
    try:
        return read(state.digest)
    except MissingSnapshot:
        return None


def file_diff(change: FileChange, store: SnapshotStore) -> FileDiff:
    """The unified diff of one change, or the sentence that stands in for it."""
    notes: list[str] = []
    if change.renamed_from:
        notes.append(f"Renamed from {shown(change.renamed_from)}")
    if change.before.digest == change.after.digest and change.before.exists and change.after.exists:
        return FileDiff(change.path, note="; ".join(notes) or "Content unchanged")
    if change.binary:
        return FileDiff(change.path, note="; ".join([*notes, BINARY_NOTE]))
    old, new = _content(change.before, store.get), _content(change.after, store.get)
    if old is None or new is None:
        missing = change.before if old is None else change.after
        if missing.unknown:
            reason = "the content before is not known (Threadline stopped during the tool call)"
        else:
            reason = missing.not_kept or "no longer kept"
        return FileDiff(change.path, note="; ".join([*notes, f"Content not kept: {reason}"]))
    before_label = (
        "/dev/null" if not change.before.exists else f"a/{shown(change.renamed_from or change.path)}"
    )
    after_label = "/dev/null" if not change.after.exists else f"b/{shown(change.path)}"
    lines = difflib.unified_diff(
        old.decode("utf-8", "replace").splitlines(keepends=True),
        new.decode("utf-8", "replace").splitlines(keepends=True),
        fromfile=before_label,
        tofile=after_label,
    )
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return FileDiff(change.path, text=text, note="; ".join(notes))
