"""The sign bits' copy in memory: the same neighbours as an exact scan, and never older than the index."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest
from tests.support.embedding_server import EmbeddingServer, embed_text
from tests.support.waiting import WAIT
from tests.support.waiting import until_sync as until

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.knowledge import KnowledgeIndex, index_base, search, vector_support
from threadline.knowledge.embedding import OpenAIEmbedder
from threadline.knowledge.index import _vector_table
from threadline.knowledge.sign_scan import _read_blocks, read_rows, read_signs
from threadline.knowledge.vectors import pack_bits

pytestmark = pytest.mark.skipif(bool(vector_support()), reason="needs sqlite-vec")


def _embedder(url: str) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        ProviderConfig("local", ProviderKind.OPENAI, base_url=url), "fake-embed", None, timeout=30
    )


def _hamming(a: bytes, b: bytes) -> int:
    return sum(bin(x ^ y).count("1") for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("dimensions", [64, 100, 768])
def test_the_scan_in_memory_finds_the_exact_nearest_by_bits_and_the_same_distances_as_vec0(
    tmp_path: Path, dimensions: int
) -> None:
    rng = random.Random(dimensions)
    index = KnowledgeIndex(tmp_path / "k.sqlite3")
    vectors = [[rng.gauss(0, 1) for _ in range(dimensions)] for _ in range(700)]
    index.store_vectors("kb", "m", [(i + 1, v) for i, v in enumerate(vectors)])
    assert index.read_vectors_into_memory("kb")
    db = index._vector_reader()
    signs = read_signs(db, _vector_table("kb"), 0)
    stored = {i + 1: pack_bits(v) for i, v in enumerate(vectors)}
    for trial in range(20):
        query = pack_bits([rng.gauss(0, 1) for _ in range(dimensions)])
        k = [1, 8, 24, 100][trial % 4]
        exact = sorted(stored, key=lambda i: (_hamming(stored[i], query), i))[:k]
        assert signs.nearest(query, k) == exact
        by_vec0 = [
            row[0]
            for row in db.execute(
                f"SELECT rowid FROM {_vector_table('kb')} WHERE embedding MATCH vec_bit(?) AND k = ?",
                (query, k),
            )
        ]
        assert sorted(_hamming(stored[i], query) for i in by_vec0) == [
            _hamming(stored[i], query) for i in exact
        ]
    assert signs.nearest(pack_bits(vectors[41]), 1) == [42]  # a stored vector finds itself
    assert len(signs.nearest(pack_bits(vectors[0]), 5000)) == 700
    index.close()


def test_vec0s_own_tables_give_the_rows_that_selecting_through_vec0_gives(tmp_path: Path) -> None:
    """Also after deletions (free slots in a block) and a replaced vector."""
    rng = random.Random(9)
    index = KnowledgeIndex(tmp_path / "k.sqlite3")
    index.store_vectors("kb", "m", [(i, [rng.gauss(0, 1) for _ in range(72)]) for i in range(1, 3000)])
    seventeen = [rng.gauss(0, 1) for _ in range(72)]
    index.store_vectors("kb", "m", [(17, seventeen)])  # into a later slot: the blocks' ids out of order
    table = _vector_table("kb")
    index._db.executemany(f"DELETE FROM {table} WHERE rowid = ?", [(i,) for i in range(100, 2500, 3)])
    db = index._vector_reader()
    read = _read_blocks(db, table)
    assert read is not None
    ids, columns = read
    slow_ids, slow_rows = read_rows(db, table)
    fast = {i: columns[:, n].astype("<u8").tobytes()[:9] for n, i in enumerate(ids.tolist())}
    assert fast == dict(zip(slow_ids.tolist(), map(bytes, slow_rows), strict=True))
    assert len(fast) == 2999 - len(range(100, 2500, 3))
    signs = read_signs(db, table, 0)
    assert signs.ids.tolist() == sorted(fast)
    assert signs.nearest(pack_bits(seventeen), 1) == [17]
    index.close()


def test_vector_search_finds_the_same_nearest_from_the_copy_in_memory_as_from_vec0(tmp_path: Path) -> None:
    """(Further down the lists may differ where several rows tie by bits at the prefilter's end:
    vec0 breaks such ties its own way.)"""
    rng = random.Random(5)
    index = KnowledgeIndex(tmp_path / "k.sqlite3")
    vectors = [[rng.gauss(0, 1) for _ in range(256)] for _ in range(2000)]
    index.store_vectors("kb", "m", [(i + 1, v) for i, v in enumerate(vectors)])
    queries = [[x + rng.gauss(0, 0.5) for x in vectors[n]] for n in range(0, 2000, 97)]
    assert not index.vectors_in_memory("kb")
    from_vec0 = [index.vector_ids("kb", q, 8) for q in queries]  # the first starts the read
    until(lambda: index.vectors_in_memory("kb"))
    from_memory = [index.vector_ids("kb", q, 8) for q in queries]
    assert [ids[0] for ids in from_memory] == [ids[0] for ids in from_vec0] == list(range(1, 2001, 97))
    index.close()


def test_a_reindexed_file_is_searched_with_its_new_vectors_not_the_copy_read_before(tmp_path: Path) -> None:
    """Fails if indexing a file does not mark the base's vectors changed: the copy read before would
    still be taken as current and answer with the chunk that is gone."""
    index = KnowledgeIndex(tmp_path / "k.sqlite3")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "other.md").write_text("Bicycles need oil and air.", encoding="utf-8")
    note = folder / "note.md"
    note.write_text("The albatross valve is torqued to ten newton.", encoding="utf-8")
    with EmbeddingServer() as server:
        embedder = _embedder(server.base_url)
        index_base(index, "kb", [folder], embedder=embedder)
        assert index.read_vectors_into_memory("kb") and index.vectors_in_memory("kb")
        before = index.vector_ids("kb", embed_text("albatross valve torqued newton", 64), 1)

        note.write_text("Tomatoes want sun and water.", encoding="utf-8")
        index_base(index, "kb", [folder], embedder=embedder)
        assert not index.vectors_in_memory("kb")
        tomatoes = embed_text("tomatoes want sun water", 64)
        first = index.vector_ids("kb", tomatoes, 1)  # vec0, while the copy is read again
        until(lambda: index.vectors_in_memory("kb"))
        again = index.vector_ids("kb", tomatoes, 1)
        hits = search(index, "kb", "tomatoes sun", embedder=embedder).hits
        embedder.close()
    new_id = index._db.execute("SELECT id FROM chunks WHERE text LIKE 'Tomatoes%'").fetchone()[0]
    assert before != [new_id]
    assert first == again == [new_id]
    assert hits[0].chunk.id == new_id
    index.close()


def test_a_deleted_file_and_another_writer_make_the_copy_outdated(tmp_path: Path) -> None:
    """The mark is in the index file, so a second connection (another process: the command line
    indexing while the app runs) outdates the copy too."""
    path = tmp_path / "k.sqlite3"
    index = KnowledgeIndex(path)
    folder = tmp_path / "docs"
    folder.mkdir()
    gone = folder / "gone.md"
    gone.write_text("Penguins cannot fly.", encoding="utf-8")
    (folder / "kept.md").write_text("Kites fly on windy days.", encoding="utf-8")
    with EmbeddingServer() as server:
        embedder = _embedder(server.base_url)
        index_base(index, "kb", [folder], embedder=embedder)
        assert index.read_vectors_into_memory("kb")
        gone.unlink()
        index_base(index, "kb", [folder], embedder=embedder)
        assert not index.vectors_in_memory("kb")
        assert index.read_vectors_into_memory("kb")
        assert index.vector_ids("kb", embed_text("penguins cannot fly", 64), 5) == [
            index._db.execute("SELECT id FROM chunks").fetchone()[0]
        ]

        other = KnowledgeIndex(path)
        (folder / "new.md").write_text("Penguins swim fast.", encoding="utf-8")
        index_base(other, "kb", [folder], embedder=embedder)
        other.close()
        embedder.close()
    assert not index.vectors_in_memory("kb")
    new_id = index._db.execute("SELECT id FROM chunks WHERE text LIKE 'Penguins%'").fetchone()[0]
    assert index.vector_ids("kb", embed_text("penguins swim fast", 64), 1) == [new_id]
    index.close()


def test_the_vector_half_does_not_wait_for_the_connection_the_keyword_half_holds(tmp_path: Path) -> None:
    """The keyword half holds the main connection's lock for its whole query; the vector half, run
    beside it, reads only on its own connection."""
    index = KnowledgeIndex(tmp_path / "k.sqlite3")
    index.store_vectors("kb", "m", [(1, [1.0, 0.5, -1.0, 0.2]), (2, [-1.0, 0.5, 1.0, 0.2])])
    found: list[list[int]] = []
    with index._lock:  # as a keyword search on the helper thread holds it
        beside = threading.Thread(
            target=lambda: found.append(index.vector_ids("kb", [1.0, 0.4, -1.0, 0.1], 1))
        )
        beside.start()
        beside.join(timeout=WAIT)
        finished = not beside.is_alive()
    beside.join()
    assert finished and found == [[1]]
    index.close()
