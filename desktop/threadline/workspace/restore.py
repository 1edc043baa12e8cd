"""Planning a restore from the records and the disk, and running it (docs/workspace.md, "Restoring").

A plan names, per file, the state to give back (the state before the first change being
undone) and what the disk holds now. A file is a *conflict* when the disk is not what the
last recorded change left (the user or another program changed it after the tool's write,
or a later tool call not being undone changed it again): it is left alone unless the user
picks it. A file is *blocked* when it cannot be given back at all: its content was not
kept, the snapshots are on another computer, or a symbolic link now on the way leads out
of the allowed folders.

Running a plan writes each file atomically (a temporary file beside it, then a rename),
keeps what it overwrites, and returns its own change set (source ``RESTORE``), so undoing
a restore is restoring again.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

from threadline.core.file_changes import (
    ABSENT,
    ChangeKind,
    ChangeSet,
    ChangeSource,
    FileChange,
    FileState,
    RestoreAction,
    RestorePlan,
    RestoreStep,
)
from threadline.workspace.blobs import MissingSnapshot, SnapshotStore, digest_of
from threadline.workspace.changes import counted, shown
from threadline.workspace.limits import DEFAULT_LIMITS, Limits, size_words
from threadline.workspace.scan import root_index, scan_roots

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)
OTHER_MACHINE = "its snapshots are on another computer (restore it there)"
UNKNOWN_BEFORE = "its content before is not known (Threadline stopped during the tool call)"
CHANGED_ON_DISK = "changed on disk after Threadline recorded it"
CHANGED_LATER = "changed again by a later tool call that is not being undone"
LINK_OUT = "a symbolic link on its way leads out of the allowed folders"
DROPPED = "its content is no longer kept (its snapshot was dropped)"


def transitions(change_set: ChangeSet) -> Iterator[tuple[str, FileState, FileState]]:
    """(path, before, after) per path the set touched; a rename is its old path's removal and
    its new path's creation."""
    for change in change_set.changes:
        if change.kind is ChangeKind.RENAMED and change.renamed_from:
            yield change.renamed_from, change.before, ABSENT
            yield change.path, ABSENT, change.after
        else:
            yield change.path, change.before, change.after


@dataclass(frozen=True, slots=True)
class DiskState:
    state: FileState
    problem: str = ""
    """Why the path cannot be written (a link or a folder is there now)."""


def disk_state(path: str) -> DiskState:
    """What is at ``path`` now, without following a link."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return DiskState(ABSENT)
    except OSError as err:
        return DiskState(ABSENT, f"not readable ({err.strerror or err})")
    if stat.S_ISLNK(st.st_mode):
        return DiskState(ABSENT, "a symbolic link is there now")
    if not stat.S_ISREG(st.st_mode):
        return DiskState(ABSENT, "something other than a file is there now")
    try:
        data = _read(path)
    except OSError as err:
        return DiskState(ABSENT, f"not readable ({err.strerror or err})")
    return DiskState(FileState(digest_of(data), len(data), binary=b"\0" in data[:8192]))


def _read(path: str) -> bytes:
    descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read()


def plan_restore(
    session_id: str,
    description: str,
    undo: Sequence[ChangeSet],
    history: Sequence[ChangeSet],
    store: SnapshotStore,
    machine: str,
    allowed_folders: Sequence[str] = (),
) -> RestorePlan:
    """What undoing the change sets ``undo`` would do, given the session's ``history`` (every
    change set, oldest first) and the disk now."""
    undo_ids = {s.id for s in undo}
    known = {s.id for s in history}
    ordered = [*history, *(s for s in undo if s.id not in known)]
    targets: dict[str, FileState] = {}
    expected: dict[str, FileState] = {}
    later: set[str] = set()
    elsewhere: set[str] = set()
    for change_set in ordered:
        for path, before, after in transitions(change_set):
            if change_set.id in undo_ids:
                targets.setdefault(path, before)
                if change_set.machine != machine:
                    elsewhere.add(path)
            elif path in targets:
                later.add(path)
            expected[path] = after
    roots = scan_roots(allowed_folders)
    steps: list[RestoreStep] = []
    for path, target in targets.items():
        now = disk_state(path)
        current = now.state
        if not now.problem and current.digest == target.digest and not target.unknown:
            continue  # already as it was
        if not target.exists and not target.unknown:
            action = RestoreAction.DELETE
        elif current.exists:
            action = RestoreAction.CHANGE
        else:
            action = RestoreAction.CREATE
        blocked = _blocked(path, target, now, path in elsewhere, store, roots)
        conflict = ""
        if path in later:
            conflict = CHANGED_LATER
        elif now.problem or current.digest != expected[path].digest:
            conflict = CHANGED_ON_DISK
        steps.append(RestoreStep(path, action, target, current, conflict, blocked))
    return RestorePlan(session_id, description, tuple(steps))


def _blocked(
    path: str, target: FileState, now: DiskState, elsewhere: bool, store: SnapshotStore, roots: Sequence[str]
) -> str:
    if elsewhere:
        return OTHER_MACHINE
    if target.unknown:
        return UNKNOWN_BEFORE
    if target.exists and not target.kept:
        return f"its content was not kept: {target.not_kept or 'unknown reason'}"
    if target.exists and not store.has(target.digest):
        return DROPPED
    if now.problem:
        return now.problem
    if _link_out(path, roots):
        return LINK_OUT
    return ""


def _link_out(path: str, roots: Sequence[str]) -> bool:
    """Whether the nearest existing folder above ``path`` is reached through a link leading
    out of ``roots`` (any link at all when no roots are known)."""
    folder = os.path.dirname(path)
    while folder and not os.path.lexists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    real = os.fsdecode(os.path.realpath(os.fsencode(folder)))
    if real == folder:
        return False
    return not roots or root_index(roots, real) < 0


def run_restore(
    plan: RestorePlan,
    store: SnapshotStore,
    machine: str,
    *,
    forced: Collection[str] = (),
    limits: Limits = DEFAULT_LIMITS,
    change_set_id: str = "",
) -> ChangeSet:
    """Apply the plan's clean steps and the conflicts named in ``forced``; the restore's own
    change set (what it overwrote is kept, so it can be undone)."""
    forced = set(forced)
    changes: list[FileChange] = []
    skipped: list[str] = []
    for step in plan.steps:
        if step.blocked:
            skipped.append(f"{shown(step.path)}: {step.blocked}")
            continue
        if step.conflict and step.path not in forced:
            skipped.append(f"{shown(step.path)}: {step.conflict}")
            continue
        now = disk_state(step.path)
        if now.problem:
            skipped.append(f"{shown(step.path)}: {now.problem}")
            continue
        if now.state.digest != step.current.digest and step.path not in forced:
            skipped.append(f"{shown(step.path)}: changed on disk while the restore was being decided")
            continue
        try:
            before = _keep_current(step.path, now.state, store, limits)
            _apply(step, store)
        except (OSError, MissingSnapshot) as err:
            skipped.append(f"{shown(step.path)}: not restored ({err})")
            continue
        after = FileState(step.target.digest, step.target.size, bool(step.target.digest), step.target.binary)
        kind = (
            ChangeKind.CREATED
            if not before.exists
            else ChangeKind.DELETED
            if not after.exists
            else ChangeKind.MODIFIED
        )
        changes.append(counted(FileChange(step.path, kind, before, after), store.get))
    from threadline.core.ids import new_id

    return ChangeSet(
        id=change_set_id or new_id(),
        session_id=plan.session_id,
        source=ChangeSource.RESTORE,
        created_at=time.time(),
        machine=machine,
        changes=tuple(changes),
        note=plan.description,
        skipped=tuple(skipped),
    )


def _keep_current(path: str, current: FileState, store: SnapshotStore, limits: Limits) -> FileState:
    if not current.exists:
        return ABSENT
    if current.size > limits.max_file_bytes:
        return FileState(
            current.digest,
            current.size,
            False,
            current.binary,
            f"larger than {size_words(limits.max_file_bytes)}",
        )
    data = _read(path)
    digest = store.put(data)
    return FileState(digest, len(data), True, b"\0" in data[:8192])


def _apply(step: RestoreStep, store: SnapshotStore) -> None:
    if not step.target.exists:
        os.unlink(step.path)
        return
    data = store.get(step.target.digest)
    write_atomically(step.path, data)


def write_atomically(path: str, data: bytes) -> None:
    """``data`` at ``path`` through a temporary file beside it; an existing file keeps its mode."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(os.lstat(path).st_mode)
    except FileNotFoundError:
        mode = None
    import secrets

    temporary = os.path.join(folder, f".threadline-restore.{secrets.token_hex(6)}.tmp")
    descriptor = os.open(
        temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, 0o666
    )  # the umask applies
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
