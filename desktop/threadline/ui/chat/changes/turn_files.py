"""A turn's file changes as one row per file: the state before its first change to after its last.

A turn's tools may write the same file several times (or move it and then edit it); the
dialog lists the file once, as a reviewer reads a pull request, not once per tool call.
The merged ``FileChange`` keeps the first ``before`` and the last ``after`` (so the diff
asked for it is the turn's net change), the path it had before the turn as
``renamed_from`` when it moved, and the line counts added up as ``file_totals`` adds them
(the reply header shows the same sums).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from threadline.core.file_changes import ChangeKind, ChangeSet, FileChange, TurnChanges, file_totals


def merged_changes(change_sets: Iterable[ChangeSet]) -> list[FileChange]:
    """One ``FileChange`` per file in first-touched order, following renames to the last path."""
    sets = list(change_sets)
    first: dict[str, FileChange] = {}
    last: dict[str, FileChange] = {}
    origin: dict[str, str] = {}
    for change_set in sets:
        for change in change_set.changes:
            came_from = change.renamed_from if change.renamed_from in last else ""
            if came_from:
                first[change.path] = first.pop(came_from)
                origin[change.path] = origin.pop(came_from)
                del last[came_from]
            else:
                first.setdefault(change.path, change)
                origin.setdefault(change.path, change.renamed_from or change.path)
            last[change.path] = change
    merged: list[FileChange] = []
    for total in file_totals(sets):
        start, end = first[total.path], last[total.path]
        moved_from = origin[total.path] if origin[total.path] != total.path else ""
        kind = total.kind
        if kind is ChangeKind.MODIFIED and moved_from:
            kind = ChangeKind.RENAMED
        merged.append(
            FileChange(
                path=total.path,
                kind=kind,
                before=start.before,
                after=end.after,
                renamed_from=moved_from if kind is ChangeKind.RENAMED else "",
                added=total.added,
                removed=total.removed,
            )
        )
    return merged


def changes_of(source: TurnChanges | ChangeSet | Sequence[FileChange]) -> list[FileChange]:
    """The rows for a turn, one change set, or a list of changes given as they are."""
    if isinstance(source, TurnChanges):
        return merged_changes(source.change_sets)
    if isinstance(source, ChangeSet):
        return merged_changes([source])
    return list(source)
