"""The Hamming scan over a base's sign bits, held in memory as a numpy array.

``vec0`` reads every row of the base for each query and keeps the ``k`` best of each block in
a sorted list; numpy XORs the query's bits with all rows at once, counts the differing bits
with a popcount and picks the nearest with one partial selection (``partition``), several times faster
and almost flat in ``k`` (docs/knowledge.md, "Vector search at scale"). The array is a copy of
the ``vec0`` table, read once and then kept: ``SignCache`` holds one per base with the base's
*vector generation* (a counter the index bumps in the same transaction as every change to the
base's vectors, by any process), so a copy is used only while it is exactly what the table
holds. A missing or outdated copy is read again on a worker thread; until it is ready the
query scans with ``vec0`` as before, so no search waits for the copy to be read.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from threadline.knowledge import driver

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class SignBits:
    """One base's chunk ids and their sign bits, as 64-bit words: ``words[j]`` holds word ``j`` of
    every chunk, one after the other, so each pass of the scan reads one contiguous column."""

    generation: int
    ids: npt.NDArray[np.int64]
    words: npt.NDArray[np.uint64]

    def nearest(self, bits: bytes, k: int) -> list[int]:
        """The ``k`` ids whose bits differ least from ``bits``, nearest first (ties by id)."""
        import numpy as np

        count = len(self.ids)
        if count == 0 or k <= 0:
            return []
        query = as_words(bits, self.words.shape[0])
        distances = np.zeros(count, dtype=np.uint16)
        for column, word in zip(self.words, query, strict=True):
            distances += np.bitwise_count(np.bitwise_xor(column, word))
        k = min(k, count)
        # Only the k-th smallest distance is selected over every row (no sort); the rows at or
        # under it are few. Rows are in id order, so ties at that bound go to the lowest ids and
        # the answer is the same at every call.
        bound = np.partition(distances, k - 1)[k - 1]
        near = np.flatnonzero(distances <= bound)
        below = near[distances[near] < bound]
        chosen = np.concatenate((below, near[distances[near] == bound][: k - len(below)]))
        order = np.argsort(distances[chosen], kind="stable")
        return [int(i) for i in self.ids[chosen[order]]]


def as_words(bits: bytes, width: int) -> npt.NDArray[np.uint64]:
    """``bits`` zero-padded to ``width`` little-endian 64-bit words."""
    import numpy as np

    padded = bits.ljust(width * 8, b"\0")
    return np.frombuffer(padded, dtype="<u8").astype(np.uint64)


def read_signs(db: sqlite3.Connection, table: str, generation: int) -> SignBits:
    """Every row of the ``vec0`` table ``table`` (bits stored as ``bit[n]``) as a ``SignBits``.

    Selecting the rows through ``vec0`` hands them over one by one (seconds for a million), so
    its storage is read directly when it has the layout of ``sqlite-vec`` 0.1 (blocks of rows:
    ids, a bitmap of the used slots, the vectors side by side), checked against the row count and
    a few rows read through ``vec0``; any other layout is read the slow way.
    """
    import numpy as np

    failures: tuple[type[Exception], ...] = (*driver.errors(), ValueError)
    try:
        read = _read_blocks(db, table)
    except failures:
        read = None
    if read is None:
        ids, rows = read_rows(db, table)
        words = -(-rows.shape[1] // 8)
        padded = np.zeros((len(ids), words * 8), dtype=np.uint8)
        padded[:, : rows.shape[1]] = rows
        read = ids, np.ascontiguousarray(padded.view("<u8").astype(np.uint64).T)
    ids, columns = read
    if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):
        order = np.argsort(ids, kind="stable")  # id order: see ``SignBits.nearest``
        ids, columns = ids[order], columns[:, order]
    return SignBits(generation, ids, columns)


def _read_blocks(
    db: sqlite3.Connection, table: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]] | None:
    """The ids and bit columns from ``vec0``'s own tables, block by block into arrays made to size
    (a base of a million 768-dimension rows holds 96 MB of bits: no copy of them is made whole
    but the one kept); None when the tables are not as expected."""
    import numpy as np

    count = int(db.execute(f'SELECT COUNT(*) FROM "{table}_rowids"').fetchone()[0])
    ids = np.zeros(count, dtype=np.int64)
    columns: npt.NDArray[np.uint64] | None = None
    width = filled = 0
    blocks = db.execute(
        f'SELECT c.size, c.validity, c.rowids, v.vectors FROM "{table}_chunks" AS c'
        f' JOIN "{table}_vector_chunks00" AS v ON v.rowid = c.chunk_id ORDER BY c.chunk_id'
    )
    for size, validity, rowids, vectors in blocks:
        if size <= 0 or len(rowids) != size * 8 or len(validity) * 8 < size or len(vectors) % size:
            return None
        width = width or len(vectors) // size
        if len(vectors) != size * width:
            return None
        if columns is None:
            columns = np.zeros((-(-width // 8), count), dtype=np.uint64)
        used = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[:size].astype(bool)
        taken = int(used.sum())
        if filled + taken > count:
            return None
        ids[filled : filled + taken] = np.frombuffer(rowids, dtype="<i8")[used]
        block = np.zeros((taken, columns.shape[0] * 8), dtype=np.uint8)
        block[:, :width] = np.frombuffer(vectors, dtype=np.uint8).reshape(size, width)[used]
        columns[:, filled : filled + taken] = block.view("<u8").T
        filled += taken
    if filled != count:
        return None
    if columns is None:
        return ids, np.zeros((1, 0), dtype=np.uint64)
    for position in np.linspace(0, count - 1, num=min(5, count), dtype=np.int64):
        row = db.execute(f"SELECT embedding FROM {table} WHERE rowid = ?", (int(ids[position]),)).fetchone()
        stored = columns[:, position].astype("<u8").tobytes()[:width]
        if row is None or bytes(row[0]) != stored:
            return None
    return ids, columns


def read_rows(db: sqlite3.Connection, table: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """The ids and bit rows selected through ``vec0``, one row at a time (any layout)."""
    import numpy as np

    found = db.execute(f"SELECT rowid, embedding FROM {table}").fetchall()
    ids = np.fromiter((row[0] for row in found), dtype=np.int64, count=len(found))
    width = max((len(row[1]) for row in found[:1]), default=8)
    raw = b"".join(bytes(row[1]) for row in found)
    return ids, np.frombuffer(raw, dtype=np.uint8).reshape(len(found), width)


class SignCache:
    """Each base's ``SignBits`` with the generation they were read at; reads run on one worker."""

    def __init__(self, read: Callable[[str], SignBits | None]) -> None:
        """``read(base)`` opens its own connection and returns the base's bits (None: no vectors)."""
        self._read = read
        self._lock = threading.Lock()
        self._held: dict[str, SignBits] = {}
        self._reading: set[str] = set()
        self._worker: ThreadPoolExecutor | None = None
        self._closed = False

    def fresh(self, base: str, generation: int, *, read: bool = True) -> SignBits | None:
        """The base's bits when they are those of ``generation``; otherwise None, and (with ``read``)
        a read of the current ones is started unless one is under way."""
        with self._lock:
            held = self._held.get(base)
            if held is not None and held.generation == generation:
                return held
            if held is not None:
                del self._held[base]  # outdated: let its memory go now
            if read and base not in self._reading and not self._closed:
                self._reading.add(base)
                if self._worker is None:
                    self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="knowledge-signs")
                self._worker.submit(self._refresh, base)
        return None

    def refresh(self, base: str) -> SignBits | None:
        """Reads the base's bits now (on the calling thread) and keeps them."""
        bits = self._read(base)
        with self._lock:
            if bits is None:
                self._held.pop(base, None)
            elif not self._closed:
                self._held[base] = bits
        return bits

    def _refresh(self, base: str) -> None:
        try:
            self.refresh(base)
        finally:
            with self._lock:
                self._reading.discard(base)

    def idle(self) -> bool:
        """Whether no read is under way (tests wait for this)."""
        with self._lock:
            return not self._reading

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._held.clear()
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=True)
