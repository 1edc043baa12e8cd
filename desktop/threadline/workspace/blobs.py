"""The snapshot store: file contents kept by their SHA-256, compressed, on this computer.

Each content is one file ``<root>/<first two hex digits>/<the rest>``, zlib-compressed,
written to a private temporary file and moved into place, so a reader never meets half a
blob and two processes storing the same content agree (the same bytes land under the same
name). Blobs are not synced one by one (a first scan stores thousands): one that a power
cut left empty or torn fails the digest check on reading and counts as not kept.
Contents are shared by every change set and session that saw them; ``collect`` removes the
ones nothing refers to any more. Why plain blobs and not a shadow git
repository: docs/workspace.md, "Snapshots".
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from threadline.files.private import PRIVATE_FILE, private_folder

SNAPSHOTS_FOLDER = "snapshots"
COMPRESSION_LEVEL = 1
"""Fast compression: the first scan of a folder stores every file once (docs/workspace.md)."""


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class SpaceUsed:
    blobs: int
    bytes: int
    """Bytes on disk (compressed)."""


class MissingSnapshot(LookupError):
    """The content is not in the store (never kept, dropped, or kept on another computer)."""


class SnapshotStore:
    """Blobs under ``root`` (``<data dir>/snapshots/blobs``); safe to share between threads."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._known: set[str] | None = None
        self._folders: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> SnapshotStore:
        return cls(Path(data_dir) / SNAPSHOTS_FOLDER / "blobs")

    def _path(self, digest: str) -> Path:
        return self.root / digest[:2] / digest[2:]

    def _known_digests(self) -> set[str]:
        with self._lock:
            if self._known is None:
                self._known = set(self._walk())
            return self._known

    def _walk(self) -> Iterable[str]:
        try:
            folders = list(os.scandir(self.root))
        except OSError:
            return
        for folder in folders:
            if len(folder.name) != 2 or not folder.is_dir(follow_symlinks=False):
                continue
            try:
                names = os.listdir(folder.path)
            except OSError:
                continue
            for name in names:
                if not name.startswith("."):
                    yield folder.name + name

    def has(self, digest: str) -> bool:
        """Whether the content is kept (from memory after the first call: scans ask per file)."""
        known = self._known if self._known is not None else self._known_digests()
        return digest in known

    def put(self, data: bytes, digest: str = "") -> str:
        """Keep ``data`` (if not kept yet); its digest."""
        digest = digest or digest_of(data)
        if self.has(digest):
            return digest
        path = self._path(digest)
        if path.parent.name not in self._folders:
            private_folder(path.parent)
            self._folders.add(path.parent.name)
        temporary = path.parent / f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        try:
            with os.fdopen(descriptor, "wb") as out:
                out.write(zlib.compress(data, COMPRESSION_LEVEL))
            os.replace(temporary, path)  # no fsync per blob: a torn one fails its digest check
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        self._known_digests().add(digest)
        return digest

    def get(self, digest: str) -> bytes:
        try:
            packed = self._path(digest).read_bytes()
        except FileNotFoundError:
            raise MissingSnapshot(digest) from None
        data = zlib.decompress(packed)
        if digest_of(data) != digest:
            raise MissingSnapshot(f"{digest} is damaged")
        return data

    def space_used(self) -> SpaceUsed:
        count = size = 0
        for digest in self._walk():
            try:
                size += self._path(digest).stat().st_size
            except OSError:
                continue
            count += 1
        return SpaceUsed(count, size)

    def collect(self, keep: Iterable[str], *, older_than: float | None = None) -> int:
        """Remove every blob not in ``keep`` (and, if given, last written before ``older_than``,
        a time in seconds since the epoch); how many were removed.

        ``older_than`` spares what a scan running meanwhile has just stored for a record not
        written yet.
        """
        keep = set(keep)
        removed = 0
        for digest in list(self._walk()):
            if digest in keep:
                continue
            path = self._path(digest)
            try:
                if older_than is not None and path.stat().st_mtime >= older_than:
                    continue
                path.unlink()
            except OSError:
                continue
            removed += 1
            with self._lock:
                if self._known is not None:
                    self._known.discard(digest)
        return removed


def days_ago(days: float) -> float:
    return time.time() - days * 86400
