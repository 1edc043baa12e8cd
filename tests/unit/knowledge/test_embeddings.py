"""Embeddings from a real loopback ``/v1/embeddings`` server; keyword search when vectors cannot help."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.support.embedding_server import EmbeddingServer, embed_text
from tests.support.knowledge_folders import knowledge_folder

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.knowledge import EmbeddingError, KnowledgeIndex, fuse, index_base, search, vector_support
from threadline.knowledge.embedding import OpenAIEmbedder, WithinDeadline


def _embedder(url: str) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        ProviderConfig("local", ProviderKind.OPENAI, base_url=url), "fake-embed", None, timeout=30
    )


def test_the_embedder_sends_the_texts_and_returns_the_vectors_in_order() -> None:
    with EmbeddingServer() as server:
        embedder = _embedder(server.base_url)
        texts = [f"text number {i}" for i in range(70)]  # more than one batch
        vectors = embedder.embed(texts)
        embedder.close()
    assert vectors == [pytest.approx(embed_text(t, 64)) for t in texts]
    assert [len(r["input"]) for r in server.requests] == [64, 6]
    assert server.requests[0]["model"] == "fake-embed"


def test_a_server_that_is_down_or_refuses_is_an_embedding_error_naming_the_provider() -> None:
    with EmbeddingServer() as server:
        server.refuse = True
        embedder = _embedder(server.base_url)
        with pytest.raises(EmbeddingError, match="local refused the embedding request"):
            embedder.embed(["x"])
        embedder.close()
    gone = _embedder(server.base_url)
    with pytest.raises(EmbeddingError, match="local could not be reached"):
        gone.embed(["x"])
    gone.close()


def test_within_a_deadline_a_hanging_server_is_waited_for_once_per_send() -> None:
    """An edited file's chunks and then the query: the second call does not wait again."""
    with EmbeddingServer() as server:
        embedder = _embedder(server.base_url)  # the client's own timeout: 30 s
        server.hang = True
        bounded = WithinDeadline(embedder, 0.5)
        late = "local did not answer the embedding request within 0.5 s."
        with pytest.raises(EmbeddingError, match=f"^{re.escape(late)}$"):
            bounded.embed(["an edited file's chunk"])
        with pytest.raises(EmbeddingError, match=re.escape(late)):
            bounded.embed(["the query"])
        assert len(server.requests) == 1, "the second call failed without asking"
        server.hang = False
        assert WithinDeadline(embedder, 5).embed(["x"]) == [pytest.approx(embed_text("x", 64))]
        embedder.close()


def test_within_a_deadline_every_request_of_a_long_list_shares_it() -> None:
    """Two requests of 1 s each do not fit 1.5 s: the second waits only for what is left."""
    with EmbeddingServer() as server:
        embedder = _embedder(server.base_url)
        server.delay = 1.0
        with pytest.raises(EmbeddingError, match=re.escape("within 1.5 s")):
            WithinDeadline(embedder, 1.5).embed([f"chunk {i}" for i in range(70)])  # 64 + 6
        embedder.close()


def test_with_the_embedder_down_search_falls_back_to_keywords_and_says_so(tmp_path: Path) -> None:
    index = KnowledgeIndex(tmp_path / "k.sqlite3")
    folder = knowledge_folder(tmp_path / "docs")
    with EmbeddingServer() as server:
        embedder = _embedder(server.base_url)
        server.refuse = True
        report = index_base(index, "kb", [folder], embedder=embedder)
        result = search(index, "kb", "albatross valve", embedder=embedder)
        embedder.close()
    assert report.problems == [] and index.totals("kb")[0] == 5
    assert report.embedding_notice
    assert result.hits[0].chunk.page == 3
    assert "keyword" in result.notice.lower()
    index.close()


def test_without_an_embedding_model_search_is_keyword_only_and_says_so(tmp_path: Path) -> None:
    index = KnowledgeIndex(tmp_path / "k.sqlite3")
    index_base(index, "kb", [knowledge_folder(tmp_path / "docs")])
    result = search(index, "kb", "albatross")
    assert result.notice == "No embedding model for this knowledge base: keyword search only."
    assert result.hits[0].chunk.page == 3
    index.close()


def test_reciprocal_rank_fusion_lifts_what_both_lists_found() -> None:
    fused = fuse([[1, 2, 3], [3, 4, 1]])
    assert [item for item, _ in fused][:2] == [1, 3]
    assert fuse([[5], []]) == [(5, pytest.approx(1 / 61))]


PARAPHRASE = {"seabird": "albatross", "tap": "valve", "fastening": "torqued", "force": "newton"}
"""The fake server's meaning: these words embed as the answer's words, sharing no keyword with them."""


def test_vectors_find_a_paraphrase_that_keyword_search_cannot(tmp_path: Path) -> None:
    index = KnowledgeIndex(tmp_path / "k.sqlite3")
    assert index.has_vectors, vector_support()  # sqlean's SQLite loads sqlite-vec on every Python
    folder = knowledge_folder(tmp_path / "docs")
    query = "seabird tap fastening force"
    with EmbeddingServer(synonyms=PARAPHRASE) as server:
        embedder = _embedder(server.base_url)
        report = index_base(index, "kb", [folder], embedder=embedder)
        assert report.embedding_notice == ""
        assert index.vector_model("kb") == ("fake-embed", 64)
        keyword_only = search(index, "kb", query)
        hybrid = search(index, "kb", query, embedder=embedder)
        embedder.close()
    assert keyword_only.hits == []
    assert hybrid.notice == "" and hybrid.hits[0].chunk.page == 3
    assert hybrid.hits[0].chunk.path.endswith("manual.pdf")
    index.close()


def test_a_changed_file_takes_its_old_vectors_with_it(tmp_path: Path) -> None:
    index = KnowledgeIndex(tmp_path / "k.sqlite3")
    folder = tmp_path / "docs"
    folder.mkdir()
    note = folder / "note.md"
    note.write_text("The seabird tap needs fastening force.", encoding="utf-8")
    with EmbeddingServer(synonyms=PARAPHRASE) as server:
        embedder = _embedder(server.base_url)
        index_base(index, "kb", [folder], embedder=embedder)
        note.write_text("Tomatoes want sun and water.", encoding="utf-8")
        index_base(index, "kb", [folder], embedder=embedder)
        hits = search(index, "kb", "albatross valve torqued newton", embedder=embedder).hits
        embedder.close()
    assert [hit.chunk.text for hit in hits] == ["Tomatoes want sun and water."]  # the only chunk left
    rows = index._db.execute("SELECT COUNT(*) FROM chunk_vectors").fetchone()
    assert rows[0] == 1
    index.close()


def test_this_machine_says_why_vectors_are_missing_when_they_are() -> None:
    reason = vector_support()
    assert reason == "" or "sqlite-vec" in reason


def test_an_index_with_whole_vector_tables_is_embedded_again_in_the_new_layout(tmp_path: Path) -> None:
    path = tmp_path / "k.sqlite3"
    index = KnowledgeIndex(path)
    folder = knowledge_folder(tmp_path / "docs")
    index_base(index, "kb", [folder])
    old = "vectors_" + b"kb".hex()  # as an index written before sign bits had it
    index._db.execute(f"CREATE VIRTUAL TABLE {old} USING vec0(embedding float[4])")
    index._db.execute("INSERT INTO vector_models VALUES ('kb', 'old-model', 4)")
    index._db.execute("UPDATE chunks SET embedded = 1")
    index.close()

    reopened = KnowledgeIndex(path)
    names = {row[0] for row in reopened._db.execute("SELECT name FROM sqlite_master")}
    assert old not in names and reopened.vector_model("kb") is None
    assert len(reopened.chunks_to_embed("kb", 100)) == reopened.totals("kb")[1] > 0
    reopened.close()


def test_a_refused_embedding_server_is_told_while_the_files_are_read_and_after(tmp_path: Path) -> None:
    """The first batch is asked for at once, so the run says vectors wait before its last file."""
    from tests.support.embedding_server import closed_port

    if vector_support():
        pytest.skip(vector_support())
    index = KnowledgeIndex(tmp_path / "k.sqlite3")
    folder = knowledge_folder(tmp_path / "docs")
    address = f"http://127.0.0.1:{closed_port()}/v1"
    embedder = _embedder(address)
    said: list[tuple[int, int, str]] = []
    report = index_base(
        index,
        "kb",
        [folder],
        embedder=embedder,
        on_progress=lambda p: said.append((p.files_done, p.files_total, p.embed_down)),
    )
    embedder.close()
    down = f"the embedding server at {address} (connection refused)"
    assert any(done < total and why == down for done, total, why in said), said
    chunks = index.totals("kb")[1]
    assert index.unembedded("kb") == chunks > 0
    assert report.embedding_notice.startswith(
        f"{chunks:,} chunks have no vectors yet: {down} did not answer."
    )
    index.close()
