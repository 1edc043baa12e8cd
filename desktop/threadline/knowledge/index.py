"""The knowledge index: one local SQLite file per machine, holding chunks, their keywords and vectors.

Derived local data stays local (docs/knowledge.md): the index is rebuilt from the
user's folders at any time, so it lives beside the database (or in the data folder
when chats are on PostgreSQL) and is never synced. One file holds every knowledge
base, keyed by the base's id.

A file's chunks are replaced in one transaction: a reader sees the old set or the new
one, never a part (an indexing stopped half way leaves whole files only). Keywords
are an FTS5 table ranked by BM25; vectors are kept whole in ``chunk_vectors`` and as one bit
per dimension in a ``vec0`` table per base, searched first (``vectors``), when ``sqlite-vec``
loads (``vectors.vector_support``). ``index_wishes`` remembers a base whose indexing is to be
finished, so an indexing paused or cut short by the app closing carries on at the next start.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from threadline.files.private import create_private_file, private_folder
from threadline.knowledge import driver
from threadline.knowledge.chunking import Chunk
from threadline.knowledge.reading import without_name
from threadline.knowledge.sign_scan import SignBits, SignCache, read_signs
from threadline.knowledge.vectors import bit_width, load_vectors, pack, pack_bits

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    base TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL DEFAULT '',
    chars INTEGER NOT NULL DEFAULT 0,
    problem TEXT NOT NULL DEFAULT '',
    UNIQUE (base, path)
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    page INTEGER,
    heading TEXT NOT NULL DEFAULT '',
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    embedded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks (file_id);
CREATE INDEX IF NOT EXISTS chunks_to_embed ON chunks (embedded) WHERE embedded = 0;
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_words USING fts5 (
    text, heading, tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO chunk_words (chunk_words, rank) VALUES ('rank', 'bm25(1.0, 2.0)');
CREATE TABLE IF NOT EXISTS vector_models (
    base TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    dimensions INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunk_vectors (
    id INTEGER PRIMARY KEY,
    embedding BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS vector_generations (
    base TEXT PRIMARY KEY,
    generation INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS index_wishes (
    base TEXT PRIMARY KEY,
    since REAL NOT NULL
);
"""

VECTOR_PREFILTER = 128
"""Vectors taken by Hamming distance before the cosine re-ranking, from the copy of the sign bits
in memory, whose scan costs about the same for any number taken: the more are re-ranked, the more
of the true nearest are found (docs/knowledge.md, "Vector search at scale")."""
VEC0_PREFILTER = 24
"""The same while the copy is being read and ``vec0`` scans instead: its cost grows with ``k``."""


COMMON_MATCHES = 5000
"""A word in this many chunks or more is common, and the words BM25 ranks hold fewer than this
many matches together: see ``KnowledgeIndex.keyword_ids``."""
RANKABLE_MATCHES = 100_000
"""A query of common words only is ranked by BM25 while its words' lists hold fewer entries than
this together: BM25 starts by counting every chunk holding each word, a walk of those lists."""
KEYWORD_OVERFETCH = 8
"""The keyword list is ranked over every base's chunks, then cut to the base's: taking this many
times the wanted number first keeps the join small (it runs once per kept row) while a base
sharing the file with larger ones still gets its best matches."""


@dataclass(frozen=True, slots=True)
class StoredFile:
    id: int
    path: str
    size: int
    mtime_ns: int
    sha256: str
    problem: str


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: int
    path: str
    text: str
    page: int | None
    heading: str
    line_start: int
    line_end: int


class KnowledgeIndex:
    """The index file, opened for one thread at a time (a lock guards it for the others)."""

    def __init__(self, path: Path) -> None:
        private_folder(path.parent)
        create_private_file(path)  # passages of the user's documents: theirs alone (WAL files follow)
        self.path = path
        self._lock = threading.RLock()
        self._counts: dict[str, tuple[int, int]] = {}
        """Chunks found by each word lately searched for, and how far they were counted (``keyword_ids``)."""
        self._counted_at = -1
        self._db = driver.connect(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self.has_vectors = load_vectors(self._db)
        self._db.executescript(SCHEMA)
        if self.has_vectors:
            self._drop_old_vector_tables()
        self._reader_lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None
        """A second connection for vector searches, so one runs beside a keyword search (WAL lets a
        reader see every committed write): docs/knowledge.md, "Vector search at scale"."""
        self._signs = SignCache(self._read_signs)

    def _drop_old_vector_tables(self) -> None:
        """Vectors of an index written before the two-step layout are embedded again."""
        with self._transaction() as db:
            old = [
                str(row[0])
                for row in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                    " AND name LIKE 'vectors\\_%' ESCAPE '\\' AND sql LIKE '%vec0%'"
                )
            ]
            for name in old:
                db.execute(f"DROP TABLE IF EXISTS {name}")
            if old:
                db.execute("UPDATE vector_generations SET generation = generation + 1")
                db.execute("DELETE FROM vector_models")
                db.execute("UPDATE chunks SET embedded = 0")

    def close(self) -> None:
        self._signs.close()
        with self._reader_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        with self._lock:
            self._db.close()

    def _vector_reader(self) -> sqlite3.Connection:
        """Opened on first use, with sqlite-vec; used under ``_reader_lock`` only."""
        if self._reader is None:
            reader = driver.connect(self.path, check_same_thread=False)
            load_vectors(reader)
            self._reader = reader
        return self._reader

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            finally:
                self._counts.clear()  # this connection's own writes do not move its data_version
            self._db.execute("COMMIT")

    # -- the wish to finish an indexing --------------------------------------------------

    def want_index(self, base: str, wanted: bool = True) -> None:
        """Remember (or forget) that ``base``'s indexing is to be finished, across restarts."""
        with self._transaction() as db:
            if wanted:
                db.execute("INSERT OR IGNORE INTO index_wishes VALUES (?, ?)", (base, time.time()))
            else:
                db.execute("DELETE FROM index_wishes WHERE base = ?", (base,))

    def wanted(self) -> list[str]:
        """The bases whose indexing was asked for and not finished."""
        with self._lock:
            rows = self._db.execute("SELECT base FROM index_wishes ORDER BY since").fetchall()
        return [str(row[0]) for row in rows]

    # -- files ---------------------------------------------------------------------------

    def files(self, base: str) -> dict[str, StoredFile]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, path, size, mtime_ns, sha256, problem FROM files WHERE base = ?", (base,)
            ).fetchall()
        return {row[1]: StoredFile(*row) for row in rows}

    def problems(self, base: str) -> list[tuple[str, str]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT path, problem FROM files WHERE base = ? AND problem != '' ORDER BY path", (base,)
            ).fetchall()
        return [(row[0], without_name(row[1], row[0])) for row in rows]

    def touch(self, file_id: int, size: int, mtime_ns: int) -> None:
        """A file whose size or time changed but whose bytes did not: only its facts move."""
        with self._transaction() as db:
            db.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?", (size, mtime_ns, file_id))

    def replace_file(
        self,
        base: str,
        path: str,
        *,
        size: int,
        mtime_ns: int,
        sha256: str,
        kind: str,
        chunks: Sequence[Chunk],
    ) -> None:
        """``path``'s chunks become ``chunks``, all at once."""
        with self._transaction() as db:
            file_id = self._upsert(
                db, base, path, size, mtime_ns, sha256, kind, "", sum(len(c.text) for c in chunks)
            )
            for ordinal, chunk in enumerate(chunks):
                cursor = db.execute(
                    "INSERT INTO chunks (file_id, ordinal, text, page, heading, line_start, line_end)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        file_id,
                        ordinal,
                        chunk.text,
                        chunk.page,
                        chunk.heading,
                        chunk.line_start,
                        chunk.line_end,
                    ),
                )
                db.execute(
                    "INSERT INTO chunk_words (rowid, text, heading) VALUES (?, ?, ?)",
                    (cursor.lastrowid, chunk.text, chunk.heading),
                )

    def mark_problem(self, base: str, path: str, *, size: int, mtime_ns: int, reason: str) -> None:
        """``path`` cannot be indexed: no chunks of it stay, and the reason is kept for the report."""
        with self._transaction() as db:
            self._upsert(db, base, path, size, mtime_ns, "", "", reason, 0)

    def move_file(self, base: str, old: str, new: str, *, size: int, mtime_ns: int) -> bool:
        """A renamed file keeps its chunks and vectors under its new path; whether ``old`` was known."""
        with self._transaction() as db:
            row = db.execute("SELECT id FROM files WHERE base = ? AND path = ?", (base, old)).fetchone()
            if row is None:
                return False
            taken = db.execute("SELECT id FROM files WHERE base = ? AND path = ?", (base, new)).fetchone()
            if taken is not None:
                self._drop_chunks(db, base, taken[0])
                db.execute("DELETE FROM files WHERE id = ?", (taken[0],))
            db.execute(
                "UPDATE files SET path = ?, size = ?, mtime_ns = ? WHERE id = ?",
                (new, size, mtime_ns, row[0]),
            )
        return True

    def remove_files(self, base: str, paths: Sequence[str]) -> None:
        with self._transaction() as db:
            for path in paths:
                row = db.execute("SELECT id FROM files WHERE base = ? AND path = ?", (base, path)).fetchone()
                if row is not None:
                    self._drop_chunks(db, base, row[0])
                    db.execute("DELETE FROM files WHERE id = ?", (row[0],))

    def drop_base(self, base: str) -> None:
        """Everything of ``base`` gone (the base was removed, or is to be rebuilt)."""
        self.remove_files(base, list(self.files(base)))
        with self._transaction() as db:
            db.execute("DELETE FROM vector_models WHERE base = ?", (base,))
            db.execute("DELETE FROM index_wishes WHERE base = ?", (base,))
            if self.has_vectors:
                db.execute(f"DROP TABLE IF EXISTS {_vector_table(base)}")
                _bump_vectors(db, base)

    def _upsert(
        self,
        db: sqlite3.Connection,
        base: str,
        path: str,
        size: int,
        mtime_ns: int,
        sha: str,
        kind: str,
        problem: str,
        chars: int,
    ) -> int:
        row = db.execute("SELECT id FROM files WHERE base = ? AND path = ?", (base, path)).fetchone()
        if row is None:
            cursor = db.execute(
                "INSERT INTO files (base, path, size, mtime_ns, sha256, kind, problem, chars)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (base, path, size, mtime_ns, sha, kind, problem, chars),
            )
            assert cursor.lastrowid is not None
            return cursor.lastrowid
        file_id = int(row[0])
        self._drop_chunks(db, base, file_id)
        db.execute(
            "UPDATE files SET size = ?, mtime_ns = ?, sha256 = ?, kind = ?, problem = ?, chars = ?"
            " WHERE id = ?",
            (size, mtime_ns, sha, kind, problem, chars, file_id),
        )
        return file_id

    def _drop_chunks(self, db: sqlite3.Connection, base: str, file_id: int) -> None:
        ids = [row[0] for row in db.execute("SELECT id FROM chunks WHERE file_id = ?", (file_id,))]
        db.executemany("DELETE FROM chunk_words WHERE rowid = ?", [(i,) for i in ids])
        db.executemany("DELETE FROM chunk_vectors WHERE id = ?", [(i,) for i in ids])
        if self.has_vectors and self._vector_dimensions(db, base) and ids:
            db.executemany(f"DELETE FROM {_vector_table(base)} WHERE rowid = ?", [(i,) for i in ids])
            _bump_vectors(db, base)
        db.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))

    # -- counts ----------------------------------------------------------------------------

    def totals(self, base: str) -> tuple[int, int, int]:
        """(files indexed, chunks, characters) of ``base``."""
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*), COALESCE(SUM(chars), 0) FROM files WHERE base = ? AND problem = ''", (base,)
            ).fetchone()
            chunks = self._db.execute(
                "SELECT COUNT(*) FROM chunks JOIN files ON files.id = chunks.file_id WHERE files.base = ?",
                (base,),
            ).fetchone()
        return int(row[0]), int(chunks[0]), int(row[1])

    # -- vectors ---------------------------------------------------------------------------

    def vector_model(self, base: str) -> tuple[str, int] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT model, dimensions FROM vector_models WHERE base = ?", (base,)
            ).fetchone()
        return None if row is None else (str(row[0]), int(row[1]))

    def _vector_dimensions(self, db: sqlite3.Connection, base: str) -> int:
        row = db.execute("SELECT dimensions FROM vector_models WHERE base = ?", (base,)).fetchone()
        return 0 if row is None else int(row[0])

    def chunks_to_embed(self, base: str, limit: int) -> list[tuple[int, str]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT chunks.id, chunks.text FROM chunks JOIN files ON files.id = chunks.file_id"
                " WHERE files.base = ? AND chunks.embedded = 0 ORDER BY chunks.id LIMIT ?",
                (base, limit),
            ).fetchall()
        return [(int(row[0]), str(row[1])) for row in rows]

    def unembedded(self, base: str) -> int:
        """How many of ``base``'s chunks have no vector yet (each gets one when the server answers)."""
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*) FROM chunks JOIN files ON files.id = chunks.file_id"
                " WHERE files.base = ? AND chunks.embedded = 0",
                (base,),
            ).fetchone()
        return int(row[0])

    def store_vectors(self, base: str, model: str, items: Sequence[tuple[int, list[float]]]) -> None:
        """Vectors of chunks; a different model or size than the base's starts its vectors over."""
        if not items or not self.has_vectors:
            return
        dimensions = len(items[0][1])
        with self._transaction() as db:
            known = db.execute(
                "SELECT model, dimensions FROM vector_models WHERE base = ?", (base,)
            ).fetchone()
            if known is None or tuple(known) != (model, dimensions):
                db.execute(f"DROP TABLE IF EXISTS {_vector_table(base)}")
                db.execute(
                    f"CREATE VIRTUAL TABLE {_vector_table(base)}"
                    f" USING vec0(embedding bit[{bit_width(dimensions)}])"
                )
                db.execute("INSERT OR REPLACE INTO vector_models VALUES (?, ?, ?)", (base, model, dimensions))
                db.execute(
                    "UPDATE chunks SET embedded = 0 WHERE file_id IN (SELECT id FROM files WHERE base = ?)",
                    (base,),
                )
            _bump_vectors(db, base)
            for chunk_id, vector in items:
                db.execute(f"DELETE FROM {_vector_table(base)} WHERE rowid = ?", (chunk_id,))
                db.execute(
                    f"INSERT INTO {_vector_table(base)} (rowid, embedding) VALUES (?, vec_bit(?))",
                    (chunk_id, pack_bits(vector)),
                )
                db.execute("INSERT OR REPLACE INTO chunk_vectors VALUES (?, ?)", (chunk_id, pack(vector)))
                db.execute("UPDATE chunks SET embedded = 1 WHERE id = ?", (chunk_id,))

    # -- search ----------------------------------------------------------------------------

    def keyword_ids(self, base: str, query: str, limit: int) -> list[int]:
        """The base's chunks best matching ``query`` by BM25, best first.

        BM25 must score every chunk a query matches before it can sort them, and it first counts
        every chunk holding each word, so a word found in a large share of the chunks ("the",
        "data") would make a query over a million chunks take a second. Such words add next to
        nothing to the ranking (their inverse document frequency is near zero), so the query's
        rarest words are ranked, taken while their matches together stay under ``COMMON_MATCHES``
        and always at least one word found in fewer chunks than that. A query of common words only
        is ranked over its first ``COMMON_MATCHES`` matches while its words' lists hold fewer than
        ``RANKABLE_MATCHES`` entries together; past that, where BM25 cannot tell the chunks apart
        anyway (every one scores about the same), its matches come in index order. How many chunks
        hold a word is remembered until the index changes
        (docs/knowledge.md, "Keyword search at scale").
        """
        words = query_words(query)
        if not words:
            return []
        with self._lock:
            counts = {word: self._matches_up_to(_any_of([word]), COMMON_MATCHES) for word in words}
            ranked: list[str] = []
            total = 0
            for word in sorted(words, key=lambda w: counts[w]):
                if counts[word] >= COMMON_MATCHES or (ranked and total + counts[word] > COMMON_MATCHES):
                    break
                ranked.append(word)
                total += counts[word]
            if ranked:
                return self._in_base(
                    base,
                    "SELECT rowid AS id, rank FROM chunk_words WHERE chunk_words MATCH ?"
                    " ORDER BY rank LIMIT ?",
                    (_any_of(ranked), limit * KEYWORD_OVERFETCH),
                    limit,
                )
            any_word = _any_of(words)
            total = 0
            for word in words:
                total += self._matches_up_to(_any_of([word]), RANKABLE_MATCHES - total)
                if total >= RANKABLE_MATCHES:
                    break
            if total < RANKABLE_MATCHES:
                return self._in_base(
                    base,
                    "SELECT id, rank FROM (SELECT rowid AS id, rank FROM chunk_words"
                    " WHERE chunk_words MATCH ? LIMIT ?) ORDER BY rank LIMIT ?",
                    (any_word, COMMON_MATCHES, limit * KEYWORD_OVERFETCH),
                    limit,
                )
            return self._in_base(
                base,
                "SELECT rowid AS id, rowid AS rank FROM chunk_words WHERE chunk_words MATCH ? LIMIT ?",
                (any_word, limit * KEYWORD_OVERFETCH),
                limit,
            )

    def _in_base(self, base: str, inner: str, values: tuple[object, ...], limit: int) -> list[int]:
        """The ids ``inner`` (giving ``id`` and ``rank``) lists, kept to the base's, in that order."""
        rows = self._db.execute(
            f"SELECT ranked.id FROM ({inner}) AS ranked JOIN chunks ON chunks.id = ranked.id"
            " JOIN files ON files.id = chunks.file_id WHERE files.base = ? ORDER BY ranked.rank LIMIT ?",
            (*values, base, limit),
        ).fetchall()
        return [int(row[0]) for row in rows]

    def _matches_up_to(self, match: str, bound: int) -> int:
        """How many chunks ``match`` finds, counted up to ``bound`` (the walk stops there);
        remembered until the index file changes (a write here, or another connection's)."""
        version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
        if version != self._counted_at or len(self._counts) > 20_000:
            self._counts.clear()
            self._counted_at = version
        known = self._counts.get(match)
        if known is not None and (known[0] < known[1] or known[1] >= bound):
            return min(known[0], bound)  # counted whole, or at least as far
        row = self._db.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM chunk_words WHERE chunk_words MATCH ? LIMIT ?)",
            (match, bound),
        ).fetchone()
        self._counts[match] = (int(row[0]), bound)
        return int(row[0])

    def vector_ids(self, base: str, vector: list[float], limit: int) -> list[int]:
        """The base's chunks nearest ``vector``, best first: the nearest ``VECTOR_PREFILTER`` by
        their signs (Hamming distance), re-ranked by cosine distance on the full vectors. Everything
        is read on the second connection, never under the main one's lock, which the keyword half
        holds meanwhile (docs/knowledge.md, "Vector search at scale")."""
        if not self.has_vectors:
            return []
        bits = pack_bits(vector)
        with self._reader_lock:
            db = self._vector_reader()
            if self._vector_dimensions(db, base) != len(vector):
                return []
            held = self._signs.fresh(base, _vector_generation(db, base))
            if held is not None:
                near = held.nearest(bits, max(limit, VECTOR_PREFILTER))
            else:  # the copy in memory is being read: vec0 scans the table itself meanwhile
                near = [
                    int(row[0])
                    for row in db.execute(
                        f"SELECT rowid FROM {_vector_table(base)} WHERE embedding MATCH vec_bit(?) AND k = ?",
                        (bits, max(limit, VEC0_PREFILTER)),
                    )
                ]
            if not near:
                return []
            marks = ",".join("?" * len(near))
            rows = db.execute(
                f"SELECT id FROM chunk_vectors WHERE id IN ({marks})"
                " ORDER BY vec_distance_cosine(embedding, ?), id LIMIT ?",
                (*near, pack(vector), limit),
            ).fetchall()
        return [int(row[0]) for row in rows]

    def read_vectors_into_memory(self, base: str) -> bool:
        """Reads the base's sign bits into memory now, on this thread, instead of on a worker at its
        first search; whether the base has vectors."""
        return self._signs.refresh(base) is not None

    def vectors_in_memory(self, base: str) -> bool:
        """Whether the base's vector searches scan the copy in memory (read, and current)."""
        with self._reader_lock:
            generation = _vector_generation(self._vector_reader(), base)
            return self._signs.fresh(base, generation, read=False) is not None

    def _read_signs(self, base: str) -> SignBits | None:
        """The base's sign bits as they are now, read on a connection of their own (the cache's
        worker thread), with the generation they belong to read in the same transaction."""
        if not self.has_vectors:
            return None
        db = driver.connect(self.path)
        try:
            load_vectors(db)
            db.execute("BEGIN")
            try:
                generation = _vector_generation(db, base)
                if not self._vector_dimensions(db, base):
                    return None
                return read_signs(db, _vector_table(base), generation)
            finally:
                db.execute("COMMIT")
        finally:
            db.close()

    def chunks(self, ids: Sequence[int]) -> dict[int, StoredChunk]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self._db.execute(
                "SELECT chunks.id, files.path, chunks.text, chunks.page, chunks.heading, chunks.line_start,"
                " chunks.line_end FROM chunks JOIN files ON files.id = chunks.file_id"
                f" WHERE chunks.id IN ({marks})",
                list(ids),
            ).fetchall()
        return {int(row[0]): StoredChunk(*row) for row in rows}

    def all_chunks(self, base: str, limit_chars: int) -> list[StoredChunk] | None:
        """Every chunk of ``base`` in file order, or ``None`` when they hold more than ``limit_chars``."""
        _files, _count, chars = self.totals(base)
        if chars > limit_chars:
            return None
        with self._lock:
            rows = self._db.execute(
                "SELECT chunks.id, files.path, chunks.text, chunks.page, chunks.heading, chunks.line_start,"
                " chunks.line_end FROM chunks JOIN files ON files.id = chunks.file_id"
                " WHERE files.base = ? ORDER BY files.path, chunks.ordinal",
                (base,),
            ).fetchall()
        return [StoredChunk(*row) for row in rows]


def _vector_generation(db: sqlite3.Connection, base: str) -> int:
    row = db.execute("SELECT generation FROM vector_generations WHERE base = ?", (base,)).fetchone()
    return 0 if row is None else int(row[0])


def _bump_vectors(db: sqlite3.Connection, base: str) -> None:
    """Marks the base's vectors changed, in the writing transaction: a copy of them held in memory
    (``sign_scan.SignCache``, in this process or another) is read again before it is used."""
    db.execute(
        "INSERT INTO vector_generations VALUES (?, 1)"
        " ON CONFLICT (base) DO UPDATE SET generation = generation + 1",
        (base,),
    )


def _vector_table(base: str) -> str:
    """The base's table of vector signs; its name is made of hex digits only, never of user text."""
    return "vector_bits_" + base.encode("utf-8").hex()


def query_words(text: str) -> list[str]:
    """The distinct words of ``text`` worth searching for (single characters left out)."""
    import re

    return [word for word in dict.fromkeys(re.findall(r"\w+", text.lower())) if len(word) > 1]


def _any_of(words: list[str]) -> str:
    """An FTS5 query matching any of ``words``, each quoted so no query syntax comes through."""
    return " OR ".join(f'"{word}"' for word in words)
