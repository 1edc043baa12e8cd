"""Applying what changed in a base's folders without walking them: a watcher's batch, or a send.

A watcher (``watching``) reports paths that were added, changed or deleted. Each changed file is
indexed alone (``indexer.index_one``: unchanged bytes cost a hash, not a parse), a deleted one is
removed, and a rename — which the operating system reports as a deletion and an addition — is
recognised by its bytes: a new path whose SHA-256 is that of a path just gone takes over its
chunks and vectors (``KnowledgeIndex.move_file``), so nothing is read or embedded again
(docs/knowledge.md, "Staying current").

``refresh_changed`` is the check before a send: the base's known files whose size or time moved
since they were indexed are indexed again, so a file edited a moment ago is sent as it is now,
whether or not the watcher has caught up with it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from threadline.knowledge.index import KnowledgeIndex, StoredFile
from threadline.knowledge.indexer import Progress, embed_missing, index_one
from threadline.knowledge.reading import SKIPPED_DIRS, file_hash, walk
from threadline.knowledge.vectors import Embedder


@dataclass(slots=True)
class Applied:
    """What a batch did: paths read again, moved (old → new), removed."""

    read: list[str] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.read or self.moved or self.removed)


def apply_changes(
    index: KnowledgeIndex,
    base: str,
    roots: Sequence[Path],
    paths: Iterable[str],
    *,
    embedder: Embedder | None = None,
    cancel: threading.Event | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> Applied:
    """Bring ``base`` up to date for ``paths`` (files or folders, existing or gone)."""
    cancel = cancel or threading.Event()
    stored = index.files(base)
    present: dict[str, tuple[int, int]] = {}
    gone: set[str] = set()
    for raw in sorted(set(paths)):
        path = Path(raw)
        if not _inside(path, roots) or _left_out(path, roots):
            continue
        if path.exists():  # a file or a folder (moved in, say): walked as an indexing would
            for found in walk([path], []):
                present[str(found.path)] = (found.size, found.mtime_ns)
        else:
            gone.update(known for known in stored if known == raw or Path(known).is_relative_to(path))
    applied = Applied()
    _move_renamed(index, base, stored, present, gone, applied)
    progress = Progress(files_total=len(present))
    for key, (size, mtime_ns) in present.items():
        if cancel.is_set():
            break
        before = progress.files_read
        index_one(index, base, Path(key), size, mtime_ns, stored.get(key), cancel, progress)
        progress.files_done += 1
        if progress.files_read > before or key not in stored:
            applied.read.append(key)
    if gone:
        index.remove_files(base, sorted(gone))
        applied.removed.extend(sorted(gone))
    if applied.read and not cancel.is_set():
        embed_missing(index, base, embedder, cancel, progress, on_progress)
    return applied


def refresh_changed(
    index: KnowledgeIndex,
    base: str,
    *,
    embedder: Embedder | None = None,
    cancel: threading.Event | None = None,
) -> list[str]:
    """Index again the base's files whose size or time moved since they were indexed (see above)."""
    cancel = cancel or threading.Event()
    progress = Progress()
    changed: list[str] = []
    for key, known in index.files(base).items():
        try:
            stat = os.stat(key)
        except OSError:
            continue  # gone or renamed: the watcher or the next indexing sees to it
        if (stat.st_size, stat.st_mtime_ns) != (known.size, known.mtime_ns):
            index_one(index, base, Path(key), stat.st_size, stat.st_mtime_ns, known, cancel, progress)
            changed.append(key)
    if progress.files_read:
        embed_missing(index, base, embedder, cancel, progress, None)
    return changed


def _move_renamed(
    index: KnowledgeIndex,
    base: str,
    stored: dict[str, StoredFile],
    present: dict[str, tuple[int, int]],
    gone: set[str],
    applied: Applied,
) -> None:
    """A gone path and a new one with the same bytes are one file renamed: its chunks move."""
    by_size: dict[int, list[StoredFile]] = {}
    for key in gone:
        known = stored[key]
        if known.sha256 and not known.problem:
            by_size.setdefault(known.size, []).append(known)
    if not by_size:
        return
    for key, (size, mtime_ns) in list(present.items()):
        if key in stored or not by_size.get(size):
            continue
        try:
            digest = file_hash(Path(key))
        except OSError:
            continue
        match = next((old for old in by_size[size] if old.sha256 == digest), None)
        if match is None:
            continue
        by_size[size].remove(match)
        if index.move_file(base, match.path, key, size=size, mtime_ns=mtime_ns):
            gone.discard(match.path)
            del present[key]
            stored[key] = match
            applied.moved.append((match.path, key))


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def _left_out(path: Path, roots: Sequence[Path]) -> bool:
    """Hidden files and tools' folders are not indexed by a walk, so not by a watcher either."""
    root = next((r for r in roots if path == r or path.is_relative_to(r)), None)
    if root is None or path == root:
        return False
    parts = path.relative_to(root).parts
    return any(part.startswith(".") or part in SKIPPED_DIRS for part in parts)
