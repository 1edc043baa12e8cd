"""A real snapshot store and recorder on a temporary data folder, around an allowed folder.

``Desk`` is what the workspace tests share: ``record(...)`` runs a piece of file work the
way the engine runs a tool call (a look before, the work, a look after) and returns its
change set; ``bytes_on_disk()`` reads every file under the folder byte-exact, names too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from threadline.core.file_changes import ChangeSet
from threadline.workspace.blobs import SnapshotStore
from threadline.workspace.limits import DEFAULT_LIMITS, Budget, Limits
from threadline.workspace.recorder import CallInfo, Recorder
from threadline.workspace.scan import ScanCache


@dataclass
class Desk:
    data_dir: Path
    folder: Path
    limits: Limits = DEFAULT_LIMITS
    machine: str = "this-machine"
    cache: ScanCache = field(default_factory=ScanCache)
    history: list[ChangeSet] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.store = SnapshotStore.in_data_dir(self.data_dir)
        self.recorder = Recorder(self.data_dir, self.store, self.machine, self.limits)

    @property
    def root(self) -> str:
        return os.fsdecode(os.path.realpath(self.folder))

    def record(
        self,
        work: Callable[[], object],
        paths: Sequence[str] | None = None,
        *,
        message_id: str = "m1",
        budget: Budget | None = None,
    ) -> ChangeSet | None:
        budget = budget or Budget(self.limits.max_turn_bytes)
        call = CallInfo(
            "s1", message_id, f"call-{len(self.history)}", "shell" if paths is None else "write_file"
        )
        recording = self.recorder.begin(call, [str(self.folder)], paths, self.cache, budget)
        work()
        change_set = self.recorder.finish(recording, self.cache, budget)
        self.recorder.forget(recording.id)
        if change_set is not None:
            self.history.append(change_set)
        return change_set

    def bytes_on_disk(self) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        top = os.fsencode(self.folder)
        for directory, _folders, files in os.walk(top):
            for name in files:
                path = os.path.join(directory, name)
                with open(path, "rb") as handle:
                    found[os.path.relpath(path, top)] = handle.read()
        return found
