"""Which files a knowledge base holds, and reading each one's text, with a reason when it cannot be read.

A folder of a few thousand files always has some that cannot be read: an encrypted or
damaged PDF, a binary, a file too large, one without permission, a symlink that
loops, a name that is not valid UTF-8. Each is named with its reason in the
indexing report and left out whole; none stops the others and none leaves part of
its chunks behind (docs/knowledge.md).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from threadline.documents import DocumentError, DocumentKind, ExtractionCancelled, extract_document, kind_of
from threadline.documents.limits import DocumentLimits, OverLimit, describe_size

SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".idea"}
)
"""Folders that hold tools' data rather than the user's documents."""

LIMITS = DocumentLimits(max_chars=4_000_000)
"""Indexing cuts text into chunks, so a file may hold more text than one attached whole."""


@dataclass(frozen=True, slots=True)
class FileProblem:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class FoundFile:
    path: Path
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class ReadFile:
    kind: DocumentKind
    text: str
    sha256: str


def walk(roots: Sequence[Path], problems: list[FileProblem]) -> Iterator[FoundFile]:
    """The regular files under ``roots`` (folders walked, files taken as they are), each once.

    A symlinked folder is followed once: its real path is remembered, so a link that
    points back up the tree is named as a loop instead of walked for ever.
    """
    seen_dirs: set[str] = set()
    seen_files: set[str] = set()
    for root in roots:
        yield from _walk_one(root, seen_dirs, seen_files, problems)


def _walk_one(
    root: Path, seen_dirs: set[str], seen_files: set[str], problems: list[FileProblem]
) -> Iterator[FoundFile]:
    try:
        if root.is_file():
            found = _found(root, seen_files, problems)
            if found is not None:
                yield found
            return
        if not root.is_dir():
            problems.append(FileProblem(_shown(root), "not found"))
            return
    except OSError as err:
        problems.append(FileProblem(_shown(root), _os_reason(err)))
        return
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            real = os.path.realpath(folder)
        except OSError as err:  # a symlink loop on some systems
            problems.append(FileProblem(_shown(folder), _os_reason(err)))
            continue
        if real in seen_dirs:
            if folder.is_symlink():
                problems.append(
                    FileProblem(_shown(folder), "a link to a folder already indexed (a loop?); skipped")
                )
            continue
        seen_dirs.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as err:
            problems.append(FileProblem(_shown(folder), _os_reason(err)))
            continue
        subfolders: list[Path] = []
        for entry in entries:
            path = Path(entry.path)
            try:
                if entry.is_dir():
                    if entry.name not in SKIPPED_DIRS and not entry.name.startswith("."):
                        subfolders.append(path)
                elif entry.is_file():
                    if not entry.name.startswith("."):
                        found = _found(path, seen_files, problems)
                        if found is not None:
                            yield found
                elif entry.is_symlink():
                    problems.append(FileProblem(_shown(path), "a broken link or a link loop; skipped"))
            except OSError as err:
                problems.append(FileProblem(_shown(path), _os_reason(err)))
        stack.extend(reversed(subfolders))


def _found(path: Path, seen_files: set[str], problems: list[FileProblem]) -> FoundFile | None:
    if not _valid_name(path):
        problems.append(FileProblem(_shown(path), "its name is not valid UTF-8; rename it to index it"))
        return None
    try:
        real = os.path.realpath(path)
        stat = path.stat()
    except OSError as err:
        problems.append(FileProblem(_shown(path), _os_reason(err)))
        return None
    if real in seen_files:
        return None
    seen_files.add(real)
    return FoundFile(path, stat.st_size, stat.st_mtime_ns)


def read_file(path: Path, cancel: threading.Event) -> ReadFile:
    """The text of ``path``; ``DocumentError`` naming the reason when it cannot be indexed.

    The file is hashed from the same bytes the reader saw when possible; a file whose
    size or modification time moved while it was read is read once more, then refused.
    """
    for _attempt in range(2):
        before = path.stat()
        document = extract_document(path, limits=LIMITS, cancel=cancel)
        after = path.stat()
        if (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns):
            return ReadFile(document.kind, document.text, file_hash(path))
    raise DocumentError(f"{path.name} kept changing while it was read; it will be read at the next indexing.")


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def reason_of(err: BaseException, path: Path) -> str:
    """Why ``path`` could not be indexed, without its name (the report and table name it)."""
    if isinstance(err, DocumentError):
        if err.over is not None:  # the reader's words advise attaching a smaller file
            return over_limit_reason(err.over)
        return for_a_folder(without_name(err.user_message, str(path)))
    if isinstance(err, OSError):
        return _os_reason(err)
    if isinstance(err, ExtractionCancelled):
        return "cancelled"
    return f"could not be read ({type(err).__name__})"


def over_limit_reason(over: OverLimit) -> str:
    """Why a file past a reader's size limit is not in the base, without the attach dialog's
    advice: the file sits in an indexed folder, so only what happened to it is said."""
    if over.unit == "bytes":
        return f"is larger than the {describe_size(over.limit)} a knowledge base reads; it was skipped"
    return (
        f"has more than {over.limit:,} {over.unit}, more than a knowledge base reads of one file; "
        "it was skipped"
    )


FOLDER_ADVICE = (
    (" and attach that.", " in the folder; it is read at the next indexing."),
    (" and attach it again.", "; it is read again at the next indexing."),
    (" can attach.", " can read."),
)
"""The attach dialog's advice in the readers' sentences, and what it means for a file in a folder."""


def for_a_folder(reason: str) -> str:
    """``reason`` with the attach dialog's advice put as it applies to a file in an indexed folder
    (the same readers serve both; a file of a knowledge base is not attached again)."""
    for attach, folder in FOLDER_ADVICE:
        if reason.endswith(attach):
            return reason[: -len(attach)] + folder
    return reason


def without_name(reason: str, path: str) -> str:
    """``reason`` after the file's own name, which a document reader's sentence starts with.

    The readers' sentences name the file because a chat attachment's error stands alone;
    a knowledge base's problem is always shown beside its path, where the name would be
    said twice. Reasons stored before this was done are shown the same way.
    """
    name = os.path.basename(path)
    for lead in (f"{name}: ", f"{name} "):
        if name and reason.startswith(lead):
            return reason[len(lead) :]
    return reason


def _os_reason(err: OSError) -> str:
    return f"cannot be read ({err.strerror or err})"


def _valid_name(path: Path) -> bool:
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes come in as lone surrogates
        return False
    return True


def _shown(path: Path) -> str:
    return str(path).encode("utf-8", errors="backslashreplace").decode("utf-8")


__all__ = [
    "FileProblem",
    "FoundFile",
    "ReadFile",
    "file_hash",
    "kind_of",
    "read_file",
    "reason_of",
    "walk",
    "without_name",
]
