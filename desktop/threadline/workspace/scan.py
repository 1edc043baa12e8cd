"""A manifest of the allowed folders: every file's size, mtime, inode and content digest.

The scanner walks each folder in a fixed order (names compared as bytes), never follows a
symbolic link (a link is not a file of the folder, and one leading out must not be read),
keeps names that are not UTF-8 byte-exact (``os.fsdecode`` with surrogate escapes), and
names what it did not look at: files past the count or byte bounds, unreadable or locked
files, files that vanished while it looked. It keeps each file's content in the snapshot
store as it hashes it, so a later change can be undone (within ``Limits``).

Cheap when repeated: the ``ScanCache`` remembers (size, mtime_ns, inode) → digest per path,
so a second scan of an unchanged folder only stats (docs/workspace.md, "Scanning";
figures in docs/performance.md).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from threadline.workspace.blobs import SnapshotStore
from threadline.workspace.limits import DEFAULT_LIMITS, Budget, Limits, size_words

VCS_FOLDERS = frozenset({".git", ".hg", ".svn"})
"""Version-control folders: their own history, not the user's files (not scanned)."""
_READ_CHUNK = 1024 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


@dataclass(frozen=True, slots=True)
class Entry:
    size: int
    mtime_ns: int
    inode: int
    digest: str
    kept: bool = False
    binary: bool = False
    not_kept: str = ""


@dataclass(slots=True)
class Manifest:
    """What a scan saw. ``skipped`` maps paths it could not read to why; ``cut`` is where a
    bound stopped the walk (root index, path key): paths after it were not looked at."""

    roots: tuple[str, ...]
    entries: dict[str, Entry] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    cut: tuple[int, tuple[str, ...]] | None = None
    only: tuple[str, ...] | None = None
    """Set when the scan looked at these paths alone (a tool that declares what it writes)."""

    def covers(self, path: str) -> bool:
        """Whether this scan looked at ``path`` (so its absence means the file was not there)."""
        if path in self.skipped:
            return False
        if self.only is not None:
            return path in self.only
        index = root_index(self.roots, path)
        if index < 0:
            return False
        if self.cut is None:
            return True
        cut_root, cut_key = self.cut
        return index < cut_root or (index == cut_root and path_key(path) <= cut_key)

    def to_json(self) -> bytes:
        """For the pending record of a tool call (surrogate escapes survive ``ensure_ascii``)."""
        return json.dumps(
            {
                "roots": list(self.roots),
                "entries": {
                    p: [e.size, e.mtime_ns, e.inode, e.digest, e.kept, e.binary, e.not_kept]
                    for p, e in self.entries.items()
                },
                "skipped": self.skipped,
                "notes": self.notes,
                "cut": [self.cut[0], list(self.cut[1])] if self.cut else None,
                "only": list(self.only) if self.only is not None else None,
            },
            ensure_ascii=True,
        ).encode("ascii")

    @classmethod
    def from_json(cls, raw: bytes) -> Manifest:
        data = json.loads(raw)
        cut = data.get("cut")
        only = data.get("only")
        return cls(
            roots=tuple(data["roots"]),
            entries={p: Entry(*values) for p, values in data["entries"].items()},
            skipped=dict(data["skipped"]),
            notes=list(data["notes"]),
            cut=(int(cut[0]), tuple(cut[1])) if cut else None,
            only=tuple(only) if only is not None else None,
        )


def path_key(path: str) -> tuple[str, ...]:
    """The walk's order: component by component (a folder's files before its next sibling),
    names compared as ``os.fsdecode`` gives them (their code points, surrogate escapes too)."""
    return tuple(path.split(os.sep))


def root_index(roots: Sequence[str], path: str) -> int:
    for index, root in enumerate(roots):
        if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
            return index
    return -1


def scan_roots(folders: Sequence[str]) -> tuple[str, ...]:
    """The allowed folders as the scan names them: absolute, links in them resolved, nested
    folders dropped (their files belong to the outer one), in the order given."""
    resolved: list[str] = []
    for folder in folders:
        if not folder:
            continue
        path = os.fsdecode(os.path.realpath(os.path.expanduser(os.fsencode(folder))))
        if path not in resolved:
            resolved.append(path)
    return tuple(r for r in resolved if not any(o != r and root_index((o,), r) == 0 for o in resolved))


class ScanCache:
    """What earlier scans of a session saw, per path: a file whose size, mtime and inode are
    the same is taken as unchanged, its entry reused without reading it."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.last_manifest: tuple[Manifest, str] | None = None
        """The last manifest a pending record named, and its blob's digest (``Recorder``)."""

    def __len__(self) -> int:
        return len(self.entries)


class Scanner:
    """Scans with one snapshot store, its limits and a session's cache."""

    def __init__(
        self,
        store: SnapshotStore,
        limits: Limits = DEFAULT_LIMITS,
        cache: ScanCache | None = None,
        *,
        stop: threading.Event | None = None,
    ) -> None:
        self.store = store
        self.limits = limits
        self.cache = cache if cache is not None else ScanCache()
        self.stop = stop
        """Set: a look ahead is given up (the app closes); what was seen stays in the cache."""

    def scan(self, folders: Sequence[str], budget: Budget | None = None) -> Manifest:
        """Every file under ``folders`` (see ``scan_roots``)."""
        roots = scan_roots(folders)
        manifest = Manifest(roots)
        state = _ScanState(budget or Budget(self.limits.max_turn_bytes))
        for index, root in enumerate(roots):
            last = ""
            for path, st in _walk(root, manifest):
                if len(manifest.entries) >= self.limits.max_files:
                    manifest.cut = (index, path_key(last) if last else ())
                    manifest.notes.append(
                        f"Files from {path} on were not looked at: over the limit of "
                        f"{self.limits.max_files:,} files."
                    )
                    return manifest
                if self.stop is not None and self.stop.is_set():
                    manifest.notes.append("The look was stopped before its end.")
                    return manifest
                self._look(path, st, manifest, state)
                if state.read_over:
                    manifest.cut = (index, path_key(last) if last else ())
                    manifest.notes.append(
                        f"Files from {path} on were not looked at: over the limit of "
                        f"{size_words(self.limits.max_scan_bytes)} read per scan."
                    )
                    return manifest
                last = path
        return manifest

    def scan_paths(self, paths: Sequence[str], budget: Budget | None = None) -> Manifest:
        """These files alone (what a tool declares it writes); a missing one is simply absent."""
        wanted = tuple(dict.fromkeys(paths))
        manifest = Manifest(roots=(), only=wanted)
        state = _ScanState(budget or Budget(self.limits.max_turn_bytes))
        for path in wanted:
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            except OSError as err:
                manifest.skipped[path] = _reason(err)
                continue
            if stat.S_ISLNK(st.st_mode):
                manifest.skipped[path] = "a symbolic link (not followed)"
            elif stat.S_ISREG(st.st_mode):
                self._look(path, st, manifest, state)
        return manifest

    def _look(self, path: str, st: os.stat_result, manifest: Manifest, state: _ScanState) -> None:
        known = self.cache.entries.get(path)
        small = st.st_size <= self.limits.max_file_bytes
        if (
            known is not None
            and known.mtime_ns == st.st_mtime_ns
            and known.size == st.st_size
            and known.inode == st.st_ino
            and (not known.kept or self.store.has(known.digest))
        ):
            # The same object, so the diff passes it by identity. A content not kept (too large,
            # over a turn's limit) stays not kept until the file changes: reading it at every
            # scan would make each call pay for it again.
            manifest.entries[path] = known
            return
        if state.read + st.st_size > self.limits.max_scan_bytes and state.read:
            state.read_over = True
            return
        try:
            digest, binary, data = _read(path, small)
        except OSError as err:
            manifest.skipped[path] = _reason(err)
            return
        state.read += st.st_size
        kept, not_kept = False, ""
        if data is None:
            not_kept = f"larger than {size_words(self.limits.max_file_bytes)}"
        elif self.store.has(digest):
            kept = True
        elif state.budget.take(len(data)):
            self.store.put(data, digest)
            kept = True
        else:
            not_kept = state.budget.refusal
        entry = Entry(st.st_size, st.st_mtime_ns, st.st_ino, digest, kept, binary, not_kept)
        self.cache.entries[path] = manifest.entries[path] = entry


@dataclass(slots=True)
class _ScanState:
    budget: Budget
    read: int = 0
    read_over: bool = False


def _walk(root: str, manifest: Manifest) -> Iterator[tuple[str, os.stat_result]]:
    """Regular files under ``root`` in ``path_key`` order, links not followed."""
    try:
        entries = sorted(os.scandir(root), key=_name)
    except FileNotFoundError:
        return
    except OSError as err:
        manifest.skipped[root] = f"folder {_reason(err)}"
        return
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue  # gone between the listing and the look: it is not there
        except OSError as err:
            manifest.skipped[entry.path] = _reason(err)
            continue
        if stat.S_ISDIR(st.st_mode):
            if entry.name not in VCS_FOLDERS:
                yield from _walk(entry.path, manifest)
        elif stat.S_ISREG(st.st_mode):
            yield entry.path, st


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _read(path: str, keep: bool) -> tuple[str, bool, bytes | None]:
    """(digest, binary, content if ``keep``); opened without following a link swapped in."""
    descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    with os.fdopen(descriptor, "rb") as handle:
        if keep:
            data = handle.read()
            return hashlib.sha256(data).hexdigest(), b"\0" in data[:8192], data
        hasher = hashlib.sha256()
        head = handle.read(_READ_CHUNK)
        binary = b"\0" in head[:8192]
        while head:
            hasher.update(head)
            head = handle.read(_READ_CHUNK)
        return hasher.hexdigest(), binary, None


def _reason(err: OSError) -> str:
    if isinstance(err, FileNotFoundError):
        return "vanished while it was read"
    if isinstance(err, PermissionError):
        return "not readable (permission denied)"
    if err.errno in (errno.EBUSY, errno.ETXTBSY, getattr(errno, "EDEADLK", -1)):
        return "locked by another program"
    if err.errno == errno.ELOOP:
        return "a symbolic link (not followed)"
    return f"not readable ({err.strerror or err})"
