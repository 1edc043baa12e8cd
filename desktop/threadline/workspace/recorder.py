"""Recording one tool call's changes: a look before, a look after, the difference.

Before the call the recorder looks at what the call may change (the paths a built-in tool
declares, or the whole of the allowed folders for ``shell`` and MCP tools), keeps the
contents it has not kept yet, and writes a *pending record* naming the call and the
manifest. After the call it looks again and returns the change set; the caller stores it
and then ``forget``s the pending record. A pending record still there at the next start
means Threadline stopped between the call and its record: ``unfinished`` turns each into
a change set as well, with the states before taken from the manifest (or marked unknown
when even that is gone). See docs/workspace.md, "Recording".

Blocking file-system work: call these from a worker thread.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from threadline.core.file_changes import ABSENT, ChangeKind, ChangeSet, ChangeSource, FileChange, FileState
from threadline.files.private import PRIVATE_FILE, private_folder
from threadline.workspace.blobs import SNAPSHOTS_FOLDER, MissingSnapshot, SnapshotStore
from threadline.workspace.changes import diff_manifests, shown, state_of
from threadline.workspace.limits import DEFAULT_LIMITS, Budget, Limits
from threadline.workspace.scan import Manifest, ScanCache, Scanner

MAX_SKIPPED_NAMED = 50
RECONCILED_NOTE = (
    "Recorded at the next start: Threadline stopped during this tool call, so changes made "
    "before the restart are counted with it."
)


@dataclass(frozen=True, slots=True)
class CallInfo:
    session_id: str
    message_id: str
    call_id: str
    tool_name: str


@dataclass(frozen=True, slots=True)
class Recording:
    id: str
    call: CallInfo
    folders: tuple[str, ...]
    paths: tuple[str, ...] | None
    before: Manifest
    started_at: float


class Recorder:
    """Records tool calls on this computer's snapshot store."""

    def __init__(
        self, data_dir: Path, store: SnapshotStore, machine: str, limits: Limits = DEFAULT_LIMITS
    ) -> None:
        self.store = store
        self.machine = machine
        self.limits = limits
        self.pending_dir = Path(data_dir) / SNAPSHOTS_FOLDER / "pending"

    def begin(
        self,
        call: CallInfo,
        folders: Sequence[str],
        paths: Sequence[str] | None,
        cache: ScanCache,
        budget: Budget,
    ) -> Recording:
        """Look before the call (``paths`` alone when given, else every file in ``folders``)."""
        from threadline.core.ids import new_id

        scanner = Scanner(self.store, self.limits, cache)
        before = scanner.scan_paths(paths, budget) if paths is not None else scanner.scan(folders, budget)
        recording = Recording(
            new_id(), call, tuple(folders), tuple(paths) if paths is not None else None, before, time.time()
        )
        self._write_pending(recording, self._manifest_blob(before, cache))
        return recording

    def look_ahead(
        self, folders: Sequence[str], cache: ScanCache, budget: Budget, stop: threading.Event | None = None
    ) -> None:
        """A session's first look, before any call (``Workspace.prescan``): every file is read
        and kept into ``cache`` and the store, and the manifest kept as the blob the first call's
        pending record will name, so that call only stats the files."""
        manifest = Scanner(self.store, self.limits, cache, stop=stop).scan(folders, budget)
        if stop is None or not stop.is_set():
            self._manifest_blob(manifest, cache)

    def _manifest_blob(self, manifest: Manifest, cache: ScanCache) -> str:
        """The manifest kept as a blob; the same as the session's last one is not written again."""
        last = cache.last_manifest
        if last is not None and _same(last[0], manifest) and self.store.has(last[1]):
            return last[1]
        digest = self.store.put(manifest.to_json())
        cache.last_manifest = (manifest, digest)
        return digest

    def finish(self, recording: Recording, cache: ScanCache, budget: Budget) -> ChangeSet | None:
        """Look after the call: its change set, or None when it changed nothing."""
        after = self._look(recording.folders, recording.paths, cache, budget)
        changes = diff_manifests(recording.before, after, self.store)
        if not changes:
            return None
        return self._change_set(recording, changes, _skipped(recording.before, after))

    def forget(self, recording_id: str) -> None:
        """The change set is stored (or there was none): the pending record goes."""
        (self.pending_dir / f"{recording_id}.json").unlink(missing_ok=True)

    def unfinished(self) -> list[tuple[str, ChangeSet | None]]:
        """(recording id, change set or None) for each call a stop cut off from its record."""
        found: list[tuple[str, ChangeSet | None]] = []
        try:
            names = sorted(os.listdir(self.pending_dir))
        except OSError:
            return found
        for name in names:
            if not name.endswith(".json"):
                continue
            try:
                record = json.loads((self.pending_dir / name).read_bytes())
                if _alive(record.get("pid")):
                    continue  # a running Threadline's call: not cut off, only not finished yet
                found.append((record["id"], self._reconciled(record)))
            except (OSError, ValueError, KeyError, TypeError):
                found.append((name.removesuffix(".json"), None))
        return found

    def _reconciled(self, record: dict[str, Any]) -> ChangeSet | None:
        folders = tuple(str(f) for f in record["folders"])
        raw_paths = record.get("paths")
        paths = tuple(str(p) for p in raw_paths) if isinstance(raw_paths, list) else None
        call = CallInfo(
            str(record["session_id"]),
            str(record["message_id"]),
            str(record["call_id"]),
            str(record["tool_name"]),
        )
        budget = Budget(self.limits.max_turn_bytes)
        after = self._look(folders, paths, ScanCache(), budget)
        try:
            before: Manifest | None = Manifest.from_json(self.store.get(str(record["manifest"])))
        except (MissingSnapshot, ValueError, KeyError):
            before = None
        recording = Recording(
            str(record["id"]), call, folders, paths, before or after, float(record["started_at"])
        )
        if before is not None:
            changes = diff_manifests(before, after, self.store)
            skipped = _skipped(before, after)
        else:  # only what the tool declared can be named, each from an unknown state
            unknown = FileState(unknown=True)
            changes = [
                FileChange(
                    p,
                    ChangeKind.MODIFIED if p in after.entries else ChangeKind.DELETED,
                    unknown,
                    state_of(after.entries.get(p)) if p in after.entries else ABSENT,
                )
                for p in paths or ()
            ]
            skipped = (
                []
                if paths is not None
                else ["The folders' state before the call was lost; changes are not known."]
            )
        if not changes:
            return None
        return self._change_set(recording, changes, skipped, RECONCILED_NOTE)

    def _look(
        self, folders: Sequence[str], paths: Sequence[str] | None, cache: ScanCache, budget: Budget
    ) -> Manifest:
        scanner = Scanner(self.store, self.limits, cache)
        return scanner.scan_paths(paths, budget) if paths is not None else scanner.scan(folders, budget)

    def _change_set(
        self, recording: Recording, changes: Sequence[FileChange], skipped: Sequence[str], note: str = ""
    ) -> ChangeSet:
        call = recording.call
        return ChangeSet(
            id=recording.id,
            session_id=call.session_id,
            source=ChangeSource.TOOL,
            created_at=time.time(),
            machine=self.machine,
            changes=tuple(changes),
            message_id=call.message_id,
            call_id=call.call_id,
            tool_name=call.tool_name,
            note=note,
            skipped=tuple(skipped),
        )

    def _write_pending(self, recording: Recording, manifest: str) -> None:
        call = recording.call
        record = {
            "id": recording.id,
            "session_id": call.session_id,
            "message_id": call.message_id,
            "call_id": call.call_id,
            "tool_name": call.tool_name,
            "folders": list(recording.folders),
            "paths": list(recording.paths) if recording.paths is not None else None,
            "manifest": manifest,
            "started_at": recording.started_at,
            "pid": os.getpid(),
        }
        private_folder(self.pending_dir)
        path = self.pending_dir / f"{recording.id}.json"
        temporary = self.pending_dir / f".{recording.id}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        with os.fdopen(descriptor, "wb") as out:
            out.write(json.dumps(record, ensure_ascii=True).encode("ascii"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)


def _same(one: Manifest, other: Manifest) -> bool:
    return (
        one.entries == other.entries  # mostly the same objects: compared by identity first
        and one.roots == other.roots
        and one.skipped == other.skipped
        and one.cut == other.cut
        and one.only == other.only
        and one.notes == other.notes
    )


def _skipped(before: Manifest, after: Manifest) -> list[str]:
    """What either look did not see, named (the first ``MAX_SKIPPED_NAMED``, then a count)."""
    lines = list(dict.fromkeys([*before.notes, *after.notes]))
    named = {**before.skipped, **after.skipped}
    for path, reason in list(named.items())[:MAX_SKIPPED_NAMED]:
        lines.append(f"{shown(path)}: {reason}")
    if len(named) > MAX_SKIPPED_NAMED:
        lines.append(f"…and {len(named) - MAX_SKIPPED_NAMED} more files not looked at.")
    return lines


def _alive(pid: object) -> bool:
    """Whether process ``pid`` (of this computer: the data folder is) still runs."""
    if not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # there, but not ours to signal
    return True
