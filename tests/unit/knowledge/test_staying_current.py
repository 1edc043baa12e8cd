"""Staying current: a watcher's batch applied alone, renames moved without re-embedding, a real watch,
the check before a send, and an indexing that waits for a down embedding server."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from tests.support.embedding_server import EmbeddingServer
from tests.support.waiting import until

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.knowledge import KnowledgeIndex, Progress, index_base, search
from threadline.knowledge.changes import apply_changes, refresh_changed
from threadline.knowledge.embedding import OpenAIEmbedder
from threadline.knowledge.watching import FolderWatch


def _embedder(url: str) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        ProviderConfig("local", ProviderKind.OPENAI, base_url=url), "fake-embed", None, timeout=30
    )


def _folder(root: Path) -> Path:
    root.mkdir(parents=True)
    for name, word in (("a.md", "apricot"), ("b.md", "blueberry"), ("c.md", "cherry")):
        (root / name).write_text(f"# {name}\n\nAll about the {word} tree and its fruit.\n", encoding="utf-8")
    return root


@pytest.fixture
def index(tmp_path: Path) -> KnowledgeIndex:
    opened = KnowledgeIndex(tmp_path / "index" / "knowledge.sqlite3")
    yield opened
    opened.close()


def _ids(index: KnowledgeIndex, path: Path) -> list[int]:
    rows = index._db.execute(
        "SELECT chunks.id FROM chunks JOIN files ON files.id = chunks.file_id WHERE files.path = ?",
        (str(path),),
    ).fetchall()
    return [int(row[0]) for row in rows]


def test_a_changed_file_is_read_alone_a_deleted_one_leaves_a_renamed_one_moves(
    tmp_path: Path, index: KnowledgeIndex
) -> None:
    folder = _folder(tmp_path / "docs")
    with EmbeddingServer() as server:
        embedder = _embedder(server.base_url)
        index_base(index, "kb", [folder], embedder=embedder)
        asked = len(server.requests)
        kept = _ids(index, folder / "c.md")

        (folder / "a.md").write_text("# a.md\n\nNow about the damson tree.\n", encoding="utf-8")
        (folder / "b.md").unlink()
        (folder / "c.md").rename(folder / "cherries.md")
        changed = [str(folder / n) for n in ("a.md", "b.md", "c.md", "cherries.md")]
        applied = apply_changes(index, "kb", [folder], changed, embedder=embedder)
        embedder.close()

    assert applied.read == [str(folder / "a.md")]
    assert applied.removed == [str(folder / "b.md")]
    assert applied.moved == [(str(folder / "c.md"), str(folder / "cherries.md"))]
    assert _ids(index, folder / "cherries.md") == kept, "the renamed file kept its chunks"
    sent = [text for request in server.requests[asked:] for text in request["input"]]
    assert sent == ["# a.md\n\nNow about the damson tree."], "only the changed file was embedded again"
    assert search(index, "kb", "damson").hits[0].chunk.path == str(folder / "a.md")
    assert search(index, "kb", "blueberry").hits == []
    assert search(index, "kb", "cherry").hits[0].chunk.path == str(folder / "cherries.md")
    assert sorted(index.files("kb")) == [str(folder / "a.md"), str(folder / "cherries.md")]


def test_a_folder_moved_in_is_indexed_and_hidden_files_are_not(tmp_path: Path, index: KnowledgeIndex) -> None:
    folder = _folder(tmp_path / "docs")
    index_base(index, "kb", [folder])
    outside = _folder(tmp_path / "elsewhere")
    (outside / "a.md").rename(outside / "plum.md")
    outside.rename(folder / "more")
    (folder / ".secret.md").write_text("hidden mango", encoding="utf-8")
    apply_changes(index, "kb", [folder], [str(folder / "more"), str(folder / ".secret.md")])
    assert search(index, "kb", "apricot").hits[0].chunk.path in {
        str(folder / "a.md"),
        str(folder / "more/plum.md"),
    }
    assert len(search(index, "kb", "apricot").hits) == 2
    assert search(index, "kb", "mango").hits == []


def test_before_a_send_a_file_edited_since_indexing_is_read_again(
    tmp_path: Path, index: KnowledgeIndex
) -> None:
    folder = _folder(tmp_path / "docs")
    index_base(index, "kb", [folder])
    (folder / "b.md").write_text("# b.md\n\nThe elderberry replaced it.\n", encoding="utf-8")
    assert refresh_changed(index, "kb") == [str(folder / "b.md")]
    assert search(index, "kb", "elderberry").hits[0].chunk.path == str(folder / "b.md")
    assert refresh_changed(index, "kb") == [], "nothing else moved"


@pytest.mark.asyncio
async def test_a_real_watch_reports_a_write_and_stops_cleanly(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "docs")
    batches: list[set[str]] = []

    async def on_batch(paths: set[str]) -> None:
        batches.append(paths)

    watch = FolderWatch([folder], on_batch)
    watch.start()
    try:
        target = folder / "a.md"

        def seen() -> bool:
            target.write_text(f"# a\n\nfig {len(batches)}\n", encoding="utf-8")  # until the watch is up
            return any(str(target) in batch for batch in batches)

        await until(seen, "the write reported")
    finally:
        await watch.aclose()
    assert not [t for t in threading.enumerate() if "watch" in t.name.lower() and t.is_alive()]
    assert all(task.get_name() != "knowledge folder watch" for task in asyncio.all_tasks())


def test_indexing_waits_for_the_embedding_server_and_carries_on(
    tmp_path: Path, index: KnowledgeIndex
) -> None:
    folder = _folder(tmp_path / "docs")
    waits: list[str] = []
    with EmbeddingServer() as server:
        server.refuse = True
        embedder = _embedder(server.base_url)

        def progress(state: Progress) -> None:
            if state.waiting:
                waits.append(state.waiting)
                server.refuse = False  # the server is back for the next try

        report = index_base(index, "kb", [folder], embedder=embedder, on_progress=progress, patience=60)
        embedder.close()
    assert waits and "(HTTP 503)" in waits[0] and "Trying again" in waits[0]
    assert report.embedding_notice == "" and report.progress.embedded == 3
    assert index.vector_model("kb") == ("fake-embed", 64)


def test_a_slow_embedding_server_is_waited_for(tmp_path: Path, index: KnowledgeIndex) -> None:
    folder = _folder(tmp_path / "docs")
    waits: list[str] = []
    with EmbeddingServer() as server:
        server.delay = 3.0  # longer than the client waits for an answer
        embedder = OpenAIEmbedder(
            ProviderConfig("local", ProviderKind.OPENAI, base_url=server.base_url), "e", None, timeout=0.5
        )

        def progress(state: Progress) -> None:
            if state.waiting:
                waits.append(state.waiting)
                server.delay = 0.0

        report = index_base(index, "kb", [folder], embedder=embedder, on_progress=progress, patience=60)
        embedder.close()
    assert waits and "(no answer in " in waits[0]
    assert report.embedding_notice == "" and report.progress.embedded == 3


def test_a_hanging_embedding_server_is_waited_for_and_no_file_fails(
    tmp_path: Path, index: KnowledgeIndex
) -> None:
    """The server accepts each request and never answers: the run waits (its client's timeout,
    then the pause between tries), fails no file, and embeds every chunk once it answers."""
    folder = _folder(tmp_path / "docs")
    waits: list[str] = []
    with EmbeddingServer() as server:
        server.hang = True
        embedder = OpenAIEmbedder(
            ProviderConfig("local", ProviderKind.OPENAI, base_url=server.base_url), "e", None, timeout=0.5
        )

        def progress(state: Progress) -> None:
            if state.waiting and not waits:
                waits.append(state.waiting)
                server.hang = False  # answering again by the next try

        report = index_base(index, "kb", [folder], embedder=embedder, on_progress=progress, patience=60)
        embedder.close()
    assert waits and "(no answer in 0.5 s)" in waits[0] and "Trying again" in waits[0]
    assert report.problems == [] and report.progress.files_read == 3
    assert report.embedding_notice == "" and report.progress.embedded == 3
    assert index.vector_model("kb") == ("e", 64)


def test_with_no_patience_left_the_vectors_wait_for_the_next_run(
    tmp_path: Path, index: KnowledgeIndex
) -> None:
    folder = _folder(tmp_path / "docs")
    cancel = threading.Event()
    with EmbeddingServer() as server:
        server.refuse = True
        embedder = _embedder(server.base_url)
        report = index_base(index, "kb", [folder], embedder=embedder, cancel=cancel, patience=0)
        server.refuse = False
        again = index_base(index, "kb", [folder], embedder=embedder)
        embedder.close()
    assert "next indexing" in report.embedding_notice and index.totals("kb")[1] == 3
    assert again.progress.files_read == 0 and again.progress.embedded == 3
