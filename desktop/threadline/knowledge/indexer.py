"""Bringing a base's index up to date with its folders: only what changed, with progress, stoppable.

A file is read again only when its size or modification time moved and its bytes
(SHA-256) differ; a file gone from the folders is removed from the index. Memory stays
bounded: one file's text and chunks at a time, vectors in small batches. Stopping
(``cancel``) leaves every file either fully indexed or as it was, so the next run
resumes where this one stopped. The embedding server being down or slow does not stop the
keyword index: the first batch of vectors is asked for as soon as there is one, so a server
that does not answer is known (``Progress.embed_down``) while the files are still read; after
them the run waits for it (up to ``patience`` seconds, trying again with growing pauses and
saying so in ``Progress.waiting``), then embeds every chunk left without a vector
(docs/knowledge.md, "When the embedding server does not answer").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from threadline.knowledge.chunking import chunk_text
from threadline.knowledge.index import KnowledgeIndex, StoredFile
from threadline.knowledge.reading import FileProblem, file_hash, read_file, reason_of, walk
from threadline.knowledge.vectors import Embedder, EmbeddingError

EMBED_BATCH = 64
RETRY_PAUSES = (1.0, 2.0, 5.0, 10.0, 30.0)
"""Seconds between tries while the embedding server is down; the last one repeats."""


@dataclass(slots=True)
class Progress:
    files_total: int = 0
    files_done: int = 0
    files_read: int = 0
    """Files whose text was (re)read this run; the rest were unchanged."""
    chunks: int = 0
    """Chunks written this run."""
    embedded: int = 0
    current: str = ""
    waiting: str = ""
    """Why the run is waiting (the embedding server down); "" while it works."""
    embed_down: str = ""
    """The embedding server that did not answer and why ("… at http://… (connection refused)"),
    while the files are read for keyword search without it; "" once it answers."""
    started: float = field(default_factory=time.monotonic)

    @property
    def files_per_second(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.files_done / elapsed if elapsed > 0 else 0.0

    @property
    def seconds_left(self) -> float | None:
        if not self.files_done or self.files_done >= self.files_total:
            return None
        elapsed = time.monotonic() - self.started
        return elapsed / self.files_done * (self.files_total - self.files_done)


@dataclass(slots=True)
class IndexReport:
    progress: Progress
    problems: list[FileProblem]
    removed: int = 0
    cancelled: bool = False
    embedding_notice: str = ""
    """Why vectors are missing (no model, server down, no sqlite-vec); "" when all are there."""


def index_base(
    index: KnowledgeIndex,
    base: str,
    roots: Sequence[Path],
    *,
    embedder: Embedder | None = None,
    cancel: threading.Event | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    patience: float = 0.0,
) -> IndexReport:
    """Bring ``base``'s index up to date with ``roots``; ``patience``: seconds to wait for a
    embedding server that is down before leaving the vectors to a later run."""
    cancel = cancel or threading.Event()
    progress = Progress()
    walked: list[FileProblem] = []
    found = list(walk(roots, walked))
    progress.files_total = len(found)
    report = IndexReport(progress, list(walked))
    stored = index.files(base)
    seen: set[str] = set()
    probe = _Probe(index, base, embedder)
    for item in found:
        if cancel.is_set():
            report.cancelled = True
            break
        key = str(item.path)
        seen.add(key)
        progress.current = key
        index_one(index, base, item.path, item.size, item.mtime_ns, stored.get(key), cancel, progress)
        probe.once(progress)
        progress.files_done += 1
        if on_progress is not None:
            on_progress(progress)
    if not report.cancelled:
        gone = [path for path in stored if path not in seen and not _still_there(path, roots)]
        index.remove_files(base, gone)
        report.removed = len(gone)
        report.embedding_notice = embed_missing(
            index, base, embedder, cancel, progress, on_progress, patience=patience
        )
        report.cancelled = cancel.is_set()
    if not report.embedding_notice and progress.embed_down and (missing := index.unembedded(base)):
        report.embedding_notice = (
            f"{missing:,} chunks have no vectors yet: {progress.embed_down} did not answer. "
            "Keyword search works; the vectors are made when indexing carries on and the server answers."
        )
    for path, reason in index.problems(base):
        if not any(problem.path == path for problem in report.problems):
            report.problems.append(FileProblem(path, reason))
    return report


def index_one(
    index: KnowledgeIndex,
    base: str,
    path: Path,
    size: int,
    mtime_ns: int,
    known: StoredFile | None,
    cancel: threading.Event,
    progress: Progress,
) -> None:
    key = str(path)
    if known is not None and (known.size, known.mtime_ns) == (size, mtime_ns):
        return
    try:
        if known is not None and known.sha256 and not known.problem and file_hash(path) == known.sha256:
            index.touch(known.id, size, mtime_ns)
            return
        read = read_file(path, cancel)
        chunks = chunk_text(read.text, read.kind, path.suffix)
    except Exception as err:  # every reader's failure is one file's problem, never the run's
        if cancel.is_set():
            return
        index.mark_problem(base, key, size=size, mtime_ns=mtime_ns, reason=reason_of(err, path))
        return
    index.replace_file(
        base, key, size=size, mtime_ns=mtime_ns, sha256=read.sha256, kind=read.kind, chunks=chunks
    )
    progress.files_read += 1
    progress.chunks += len(chunks)


class _Probe:
    """Asks for the first batch of vectors as soon as a run has one, so an embedding server that
    does not answer is told while the files are read, not only after the last one."""

    def __init__(self, index: KnowledgeIndex, base: str, embedder: Embedder | None) -> None:
        self._index = index
        self._base = base
        self._embedder = embedder if index.has_vectors else None
        self._done = embedder is None or not index.has_vectors

    def once(self, progress: Progress) -> None:
        if self._done or self._embedder is None:
            return
        batch = self._index.chunks_to_embed(self._base, EMBED_BATCH)
        if not batch:
            return
        self._done = True
        try:
            vectors = self._embedder.embed([text for _id, text in batch])
        except EmbeddingError as err:
            progress.embed_down = server_words(err)
            return
        self._index.store_vectors(
            self._base,
            self._embedder.model,
            [(chunk_id, vector) for (chunk_id, _), vector in zip(batch, vectors, strict=True)],
        )
        progress.embedded += len(batch)


def server_words(err: EmbeddingError) -> str:
    """``the embedding server at http://127.0.0.1:9/v1 (connection refused)``, or the error's own
    words when it names no server."""
    if not err.server:
        return str(err).rstrip(".")
    reason = f" ({err.reason})" if err.reason else ""
    return f"the embedding server at {err.server}{reason}"


def waiting_line(err: EmbeddingError, pause: float) -> str:
    """What a run waiting for the embedding server says, in the window and on the terminal."""
    return (
        f"Waiting for {server_words(err)}; indexing resumes when it answers. Trying again in {pause:.0f} s."
    )


def _still_there(path: str, roots: Sequence[Path]) -> bool:
    """Whether ``path`` is under a root that is missing right now (a drive not mounted, a share away).

    Its files are kept rather than dropped: they come back with the folder. A file
    outside every root (the base's folders changed) is gone like a deleted one.
    """
    return any(not root.exists() and Path(path).is_relative_to(root) for root in roots)


def embed_missing(
    index: KnowledgeIndex,
    base: str,
    embedder: Embedder | None,
    cancel: threading.Event,
    progress: Progress,
    on_progress: Callable[[Progress], None] | None,
    *,
    patience: float = 0.0,
) -> str:
    from threadline.knowledge.vectors import vector_support

    if embedder is None:
        return "No embedding model: search uses keywords only."
    if not index.has_vectors:
        return f"Keyword search only: {vector_support()}."
    while not cancel.is_set():
        batch = index.chunks_to_embed(base, EMBED_BATCH)
        if not batch:
            return ""
        try:
            vectors = _embed_waiting(embedder, batch, cancel, progress, on_progress, patience)
        except EmbeddingError as err:
            missing = index.unembedded(base)
            return (
                f"{missing:,} chunks have no vectors yet: {server_words(err)} did not answer. "
                "Keyword search works; the vectors are made at the next indexing."
            )
        if vectors is None:
            return ""  # stopped while waiting
        index.store_vectors(
            base,
            embedder.model,
            [(chunk_id, vector) for (chunk_id, _), vector in zip(batch, vectors, strict=True)],
        )
        progress.embedded += len(batch)
        if on_progress is not None:
            on_progress(progress)
    return ""


def _embed_waiting(
    embedder: Embedder,
    batch: list[tuple[int, str]],
    cancel: threading.Event,
    progress: Progress,
    on_progress: Callable[[Progress], None] | None,
    patience: float,
) -> list[list[float]] | None:
    """The batch's vectors, trying again while the server is down for up to ``patience`` seconds;
    ``None`` when stopped meanwhile. The last ``EmbeddingError`` when patience ran out."""
    deadline = time.monotonic() + patience
    attempt = 0
    while True:
        try:
            vectors = embedder.embed([text for _id, text in batch])
        except EmbeddingError as err:
            pause = RETRY_PAUSES[min(attempt, len(RETRY_PAUSES) - 1)]
            attempt += 1
            if time.monotonic() + pause > deadline:
                progress.waiting = ""
                raise
            progress.embed_down = server_words(err)
            progress.waiting = waiting_line(err, pause)
            if on_progress is not None:
                on_progress(progress)
            if cancel.wait(pause):
                progress.waiting = ""
                return None
            continue
        progress.waiting = ""
        progress.embed_down = ""
        return vectors
