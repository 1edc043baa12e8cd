"""One file's download that a person can trust: resumed with HTTP Range, checked by SHA-256.

``huggingface_hub`` starts over in a new process, so the transfer is our own, with plain
``httpx`` against the Hub's resolve address (redirects followed). The bytes go to
``.partial/NAME.part`` beside a note of what they are (repo, size, SHA-256); whatever is on
disk is kept when the connection drops, the app stops or the disk fills, and the next try
asks for the rest with ``Range: bytes=N-``. The file is used only once its SHA-256 equals
the Hub's (its LFS oid): a mismatch deletes the part and says so (docs/local-models.md,
"Downloads").
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import importlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO

from threadline.models.errors import DownloadError, ModelError
from threadline.models.fit import human_size
from threadline.models.hub import HubFile
from threadline.models.library import InstalledModel, ModelLibrary, check_space

log = logging.getLogger("threadline.models")

RETRIES = 5
"""Reconnects in a row without a byte gained before a download pauses (each waits longer)."""
RETRY_WAIT = 0.5


def httpx_module() -> ModuleType:
    """``httpx2`` (what ``huggingface_hub`` 2.x uses), or ``httpx`` on older installs."""
    try:
        return importlib.import_module("httpx2")
    except ImportError:
        return importlib.import_module("httpx")


class State(Enum):
    QUEUED = "queued"
    RUNNING = "downloading"
    CHECKING = "checking"
    PAUSED = "paused"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class DiskFullError(ModelError):
    """The disk filled during the download; the part is kept."""


@dataclass
class DownloadJob:
    """A download's state as the window and the command line show it."""

    file: HubFile
    url: str
    state: State = State.QUEUED
    done: int = 0
    speed: float = 0.0
    message: str | None = None
    model: InstalledModel | None = None
    _window: list[tuple[float, int]] = field(default_factory=list, repr=False)

    @property
    def id(self) -> str:
        return f"{self.file.repo}/{self.file.name}"

    @property
    def total(self) -> int:
        return self.file.size

    @property
    def eta(self) -> float | None:
        """Seconds left at the recent speed, or ``None`` while there is no speed yet."""
        if self.speed <= 0 or not self.total:
            return None
        return max(0.0, (self.total - self.done) / self.speed)

    def note_progress(self, now: float) -> None:
        """Speed over the last few seconds (a moving window, so a stall shows at once)."""
        self._window.append((now, self.done))
        while len(self._window) > 2 and now - self._window[0][0] > 5.0:
            self._window.pop(0)
        first_t, first_done = self._window[0]
        if now - first_t > 0.2:
            self.speed = (self.done - first_done) / (now - first_t)

    def reset_speed(self) -> None:
        self._window.clear()
        self.speed = 0.0


def part_paths(library: ModelLibrary, name: str) -> tuple[Path, Path]:
    part = library.partial_dir / (name + ".part")
    return part, part.with_name(part.name + ".json")


def read_part_note(note: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(note.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def discard_part(library: ModelLibrary, name: str) -> None:
    for path in part_paths(library, name):
        path.unlink(missing_ok=True)


def _write_all(f: BinaryIO, chunk: bytes) -> int:
    """Write ``chunk`` unbuffered; on a full disk raise with what did get written."""
    view = memoryview(chunk)
    written = 0
    while written < len(view):
        try:
            n = f.write(view[written:])
        except OSError as err:
            if err.errno in (errno.ENOSPC, errno.EDQUOT):
                raise DiskFullError(str(written)) from err
            raise
        written += n or 0
    return written


def _hash_file(path: Path) -> Any:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h


async def transfer(
    job: DownloadJob,
    library: ModelLibrary,
    client: Any,
    changed: Callable[[DownloadJob], None],
    retry_wait: float = RETRY_WAIT,
) -> InstalledModel:
    """Bring the file to disk, check it and put it in the models folder (raises on failure)."""
    httpx = httpx_module()
    name = job.file.name
    library.ensure()
    part, note = part_paths(library, name)
    wanted = {"repo": job.file.repo, "name": name, "size": job.file.size, "sha256": job.file.sha256}
    old = read_part_note(note)
    if old is None or any(old.get(k) != v for k, v in wanted.items()):
        part.unlink(missing_ok=True)  # another file (or revision) of that name: not ours to extend
        note.write_text(json.dumps(wanted), encoding="utf-8")
    have = part.stat().st_size if part.exists() else 0
    if job.total and have > job.total:
        part.unlink()
        have = 0
    check_space(library.folder, max(0, job.total - have), name)
    digest = await asyncio.to_thread(_hash_file, part) if have else hashlib.sha256()
    job.done = have
    job.reset_speed()
    failures = 0
    last_tell = 0.0
    while not (job.total and have >= job.total):
        headers = {"Range": f"bytes={have}-"} if have else {}
        gained = False
        try:
            async with client.stream("GET", job.url, headers=headers) as response:
                status = response.status_code
                if status == 416 and have:  # nothing after `have`: the part is all there is
                    break
                if have and status == 200:  # the server ignored Range: start over
                    part.unlink(missing_ok=True)
                    have, job.done, digest = 0, 0, hashlib.sha256()
                elif status not in (200, 206):
                    raise DownloadError(f"The Hub answered {status} for {name}. Try again later.")
                with part.open("ab", buffering=0) as f:
                    async for chunk in response.aiter_bytes():
                        try:
                            n = _write_all(f, chunk)
                        except DiskFullError as full:
                            n = int(str(full))
                            digest.update(chunk[:n])
                            job.done = have = have + n
                            raise
                        digest.update(chunk)
                        job.done = have = have + n
                        gained = True
                        now = time.monotonic()
                        job.note_progress(now)
                        if now - last_tell > 0.2:
                            last_tell = now
                            changed(job)
            if not job.total:
                break
            if have < job.total and not gained:
                raise DownloadError(f"The Hub sent no more of {name}. Try again later.")
        except httpx.TransportError as err:
            failures = 0 if gained else failures + 1
            if failures > RETRIES:
                raise DownloadError(
                    f"The connection was lost while downloading {name} ({human_size(have)} kept). "
                    "Resume when you are back online."
                ) from err
            log.info("download of %s interrupted (%s); resuming from byte %d", name, err, have)
            job.message = "Connection lost; resuming…"
            changed(job)
            await asyncio.sleep(retry_wait * (2 ** max(0, failures - 1)))
            job.message = None
    job.state = State.CHECKING
    job.speed = 0.0
    changed(job)
    if (job.total and have != job.total) or (job.file.sha256 and digest.hexdigest() != job.file.sha256):
        discard_part(library, name)
        raise DownloadError(
            f"{name} did not match the checksum the Hub gives for it, so it was deleted and will not "
            "be used. Download it again; if it fails again, the file on the server may be damaged."
        )
    model = await asyncio.to_thread(library.add_verified, part, name, job.file.repo, job.file.sha256)
    note.unlink(missing_ok=True)
    return model
