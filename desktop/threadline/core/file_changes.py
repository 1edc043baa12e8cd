"""What the tools changed on disk: the vocabulary shared by the workspace, store, engine and UI.

A *change set* is everything one tool call changed in the allowed folders (or one restore
did). Each of its *file changes* names the file and its state before and after: a content
digest, a size, and whether this machine's snapshot store kept the bytes (above the per-file
and per-turn limits it does not, and a restore says why). The conversation groups change
sets into *turns*: a prompt and every reply and tool round that followed it, numbered from 1
along the session's shown path, as ``threadline changes`` lists them.

Paths are absolute and carried as ``str`` the way ``os.fsdecode`` gives them: a name that is
not UTF-8 keeps its bytes as surrogate escapes, so ``os.fsencode(path)`` gives back exactly
the bytes on disk. Code that stores or prints a path must keep that round trip (see
docs/workspace.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from threadline.core.messages import Message, MessageKind


class ChangeKind(StrEnum):
    CREATED = "created"
    MODIFIED = "modified"
    DELETED = "deleted"
    RENAMED = "renamed"
    """The file moved (``renamed_from`` is where it was); its content may also have changed."""


class ChangeSource(StrEnum):
    TOOL = "tool"
    """One tool call's changes."""
    RESTORE = "restore"
    """A restore Threadline made on the user's request; undoing it is restoring again."""


@dataclass(frozen=True, slots=True)
class FileState:
    """One file's content at one moment, as far as Threadline knows it.

    ``digest`` is the SHA-256 of the content in hex, empty when there was no file. A state
    whose content was not kept (too large, unreadable, over the turn's limit) has ``kept``
    false and says why in ``not_kept``. ``unknown`` marks a state nobody observed: a tool's
    write that a crash cut off from its record is reconciled at the next start as a change
    from an unknown state.
    """

    digest: str = ""
    size: int = 0
    kept: bool = False
    binary: bool = False
    not_kept: str = ""
    unknown: bool = False

    @property
    def exists(self) -> bool:
        return bool(self.digest) or self.unknown

    @property
    def restorable(self) -> bool:
        """True when the bytes can be put back (or the file removed, when it did not exist)."""
        return not self.unknown and (not self.exists or self.kept)


ABSENT = FileState()
"""The state of a file that is not there."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's change within a change set; ``added``/``removed`` count text lines (0 for binary)."""

    path: str
    kind: ChangeKind
    before: FileState
    after: FileState
    renamed_from: str = ""
    added: int = 0
    removed: int = 0

    @property
    def binary(self) -> bool:
        return self.before.binary or self.after.binary


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """What one tool call (or one restore) changed, in the order the changes were found.

    ``message_id`` is the assistant message whose tool call it was (empty for a restore);
    ``machine`` names the computer whose files these are: with a server database another
    machine sees the list but cannot restore (its snapshot store does not have the bytes).
    ``skipped`` names what the scan did not look at (over the file-count or byte limits, an
    unreadable folder) so nothing is left out in silence.
    """

    id: str
    session_id: str
    source: ChangeSource
    created_at: float
    machine: str
    changes: tuple[FileChange, ...] = ()
    message_id: str = ""
    call_id: str = ""
    tool_name: str = ""
    note: str = ""
    skipped: tuple[str, ...] = ()

    @property
    def added(self) -> int:
        return sum(c.added for c in self.changes)

    @property
    def removed(self) -> int:
        return sum(c.removed for c in self.changes)


@dataclass(frozen=True, slots=True)
class FileTotal:
    """A file's changes added up over a turn or a session (the status line's per-file totals)."""

    path: str
    added: int = 0
    removed: int = 0
    changes: int = 0
    kind: ChangeKind = ChangeKind.MODIFIED
    """The net kind from the first change's before to the last change's after."""


@dataclass(frozen=True, slots=True)
class TurnChanges:
    """The change sets of one turn: a prompt and everything up to the next prompt.

    ``number`` counts turns from 1 along the shown path; ``reply_id`` is the turn's last
    assistant message, whose header shows the counts.
    """

    number: int
    prompt_id: str
    reply_id: str
    change_sets: tuple[ChangeSet, ...] = field(default=())

    @property
    def files(self) -> list[FileTotal]:
        return file_totals(self.change_sets)

    @property
    def added(self) -> int:
        return sum(s.added for s in self.change_sets)

    @property
    def removed(self) -> int:
        return sum(s.removed for s in self.change_sets)

    @property
    def summary(self) -> str:
        return change_summary(self.added, self.removed, len(self.files))


def change_summary(added: int, removed: int, files: int) -> str:
    """The reply header's words: "+12 −3 in 2 files" (a true minus sign, as diffs are read)."""
    noun = "file" if files == 1 else "files"
    return f"+{added} \u2212{removed} in {files} {noun}"


def file_totals(change_sets: Iterable[ChangeSet]) -> list[FileTotal]:
    """Per-file totals in first-touched order; a rename carries the file's history to its new path.

    A file that ends as it began (a turn's changes undone by a restore, a scratch file created
    and deleted again) has not changed, whatever happened in between: it is left out, so after
    "Undo" the status line no longer counts files that are back as they were.
    """
    totals: dict[str, FileTotal] = {}
    first_before: dict[str, FileState] = {}
    last_after: dict[str, FileState] = {}
    origin: dict[str, str] = {}
    for change_set in change_sets:
        for change in change_set.changes:
            key = change.path
            earlier = totals.pop(change.renamed_from, None) if change.renamed_from else None
            start = first_before.pop(change.renamed_from, None) if change.renamed_from else None
            known = totals.get(key) or earlier
            if change.renamed_from:
                last_after.pop(change.renamed_from, None)
                origin[key] = origin.pop(change.renamed_from, change.renamed_from)
            origin.setdefault(key, key)
            if key not in first_before:
                first_before[key] = start if start is not None else change.before
            last_after[key] = change.after
            totals[key] = FileTotal(
                path=key,
                added=(known.added if known else 0) + change.added,
                removed=(known.removed if known else 0) + change.removed,
                changes=(known.changes if known else 0) + 1,
                kind=_net_kind(first_before[key], change),
            )
    return [
        t
        for t in totals.values()
        if not _unchanged(first_before[t.path], last_after[t.path], origin[t.path] != t.path)
    ]


def _unchanged(first: FileState, last: FileState, moved: bool) -> bool:
    if moved or first.unknown or last.unknown:
        return False
    return first.digest == last.digest


def _net_kind(first: FileState, last: FileChange) -> ChangeKind:
    if not last.after.exists:
        return ChangeKind.DELETED
    if not first.exists:
        return ChangeKind.CREATED
    if last.kind is ChangeKind.RENAMED:
        return ChangeKind.RENAMED
    return ChangeKind.MODIFIED


def turns_with_changes(path: Sequence[Message], change_sets: Iterable[ChangeSet]) -> list[TurnChanges]:
    """Group tool change sets by the turn of the shown ``path`` their call belongs to.

    Every prompt on the path starts a turn (numbered from 1, also when it changed nothing);
    only turns with at least one change set are returned. Change sets whose message is not
    on the path (another branch) and restores are left out: the caller lists those apart.
    """
    by_message: dict[str, list[ChangeSet]] = {}
    for change_set in change_sets:
        if change_set.source is ChangeSource.TOOL and change_set.message_id:
            by_message.setdefault(change_set.message_id, []).append(change_set)
    turns: list[TurnChanges] = []
    number = 0
    prompt_id = reply_id = ""
    found: list[ChangeSet] = []

    def close() -> None:
        if found and prompt_id:
            turns.append(TurnChanges(number, prompt_id, reply_id, tuple(found)))

    for message in path:
        if message.kind is MessageKind.PROMPT:
            close()
            number += 1
            prompt_id, reply_id, found = message.id, "", []
        elif message.kind in (MessageKind.RESPONSE, MessageKind.TOOL_CALLS):
            reply_id = message.id
            found.extend(by_message.get(message.id, ()))
    close()
    return turns


class RestoreAction(StrEnum):
    CHANGE = "change"
    """The file is there and gets its earlier content back."""
    CREATE = "create"
    """The file is gone (a tool deleted or moved it) and is written again."""
    DELETE = "delete"
    """The file did not exist before (a tool created it) and is removed."""


@dataclass(frozen=True, slots=True)
class RestoreStep:
    """One file of a restore: what will happen to it, shown before anything is touched.

    ``conflict`` says why the file on disk is not what the tools left (someone else changed
    it after the tool's write): such a step is skipped unless the user picks that file.
    ``blocked`` says why it cannot be restored at all (content not kept, the snapshots are on
    another machine, a symlink leading out of the allowed folders).
    """

    path: str
    action: RestoreAction
    target: FileState
    current: FileState
    conflict: str = ""
    blocked: str = ""


@dataclass(frozen=True, slots=True)
class RestorePlan:
    """Everything a restore would do, computed from the records and the disk as it is now."""

    session_id: str
    description: str
    """What it gives back, in the user's words: "Files as they were before turn 3"."""
    steps: tuple[RestoreStep, ...] = ()

    @property
    def conflicts(self) -> list[RestoreStep]:
        return [s for s in self.steps if s.conflict and not s.blocked]

    @property
    def blocked(self) -> list[RestoreStep]:
        return [s for s in self.steps if s.blocked]

    @property
    def clean(self) -> list[RestoreStep]:
        return [s for s in self.steps if not s.conflict and not s.blocked]


@dataclass(frozen=True, slots=True)
class FileDiff:
    """A change as the user reads it: a unified diff, or a sentence when there is none to show."""

    path: str
    text: str = ""
    """Unified diff (``---``/``+++`` headers, ``@@`` hunks); empty for binary or unkept content."""
    note: str = ""
    """"Binary file changed", "Renamed from …", "Content not kept: larger than 2 MB"…"""
