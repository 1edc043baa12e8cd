"""Knowledge bases kept current by a real engine: an edit between turns reaches the next request,
attached folders are watched, and an indexing paused (or cut short by a close) carries on at the
next start while a cancelled one does not."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from tests.integration.engine.helpers import failure, turn
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response
from tests.support.waiting import POLL, WAIT, until

from threadline.core.knowledge import AttachScope
from threadline.engine.engine import Engine
from threadline.knowledge import Progress

pytestmark = pytest.mark.asyncio


def system_sent(server: ReplayServer) -> str:
    first = server.requests[-1].body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


def many_files(folder: Path, count: int = 40, words: int = 50) -> Path:
    folder.mkdir(parents=True)
    for i in range(count):
        (folder / f"f{i:03}.md").write_text(f"# File {i}\n\n" + f"word{i} text " * words, encoding="utf-8")
    return folder


async def test_a_file_edited_between_two_turns_is_sent_as_it_is_now(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    note = folder / "note.md"
    note.write_text("# Note\n\nThe meeting is on Tuesday in room PELICAN.\n", encoding="utf-8")
    session = await engine.sessions.new_session()
    await engine.knowledge.add("notes", [folder])
    await engine.knowledge.index("notes")
    await engine.knowledge.attach("notes", AttachScope.SESSION, session.id)

    replay_server.enqueue(sse_response(openai_text_stream(["Tuesday."])))
    assert failure(await turn(engine, session.id, "When is the meeting?")) is None
    assert "PELICAN" in system_sent(replay_server)

    note.write_text("# Note\n\nThe meeting moved to Friday in room HERON.\n", encoding="utf-8")
    replay_server.enqueue(sse_response(openai_text_stream(["Friday."])))
    assert failure(await turn(engine, session.id, "When is the meeting now?")) is None
    sent = system_sent(replay_server)
    assert "HERON" in sent and "PELICAN" not in sent


async def test_the_folders_of_attached_bases_are_watched_until_the_engine_closes(
    replay_server: ReplayServer, tmp_path: Path
) -> None:
    engine = await open_engine(tmp_path / "data", replay_server)
    folder = many_files(tmp_path / "docs", 3)
    await engine.knowledge.add("watched", [folder])
    await engine.knowledge.index("watched")
    await engine.knowledge.attach("watched", AttachScope.AGENT, "default")
    engine.knowledge.start()
    new = folder / "new.md"
    deadline = time.monotonic() + WAIT
    attempt = 0
    try:
        while not (await engine.knowledge.search("watched", "kingfisher")).hits:
            assert time.monotonic() < deadline, "the new file was not indexed by the watch"
            attempt += 1  # written again until the watch, started in the background, sees it
            new.write_text(f"# New\n\nA kingfisher, try {attempt}.\n", encoding="utf-8")
            await asyncio.sleep(POLL * 10)
        assert engine.knowledge.upkeep.batches > 0
    finally:
        await engine.aclose()
    assert not [t for t in asyncio.all_tasks() if t.get_name() == "knowledge folder watch"]
    assert engine.knowledge.upkeep._watch is None and not engine.knowledge.upkeep._tasks


async def test_a_paused_indexing_carries_on_at_the_next_start_and_a_cancelled_one_does_not(
    replay_server: ReplayServer, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    engine = await open_engine(data, replay_server)
    for name in ("paused", "cancelled"):
        await engine.knowledge.add(name, [many_files(tmp_path / name)])

    def stop_at_five(name: str, stop: str) -> object:
        def progress(state: Progress) -> None:
            if state.files_done == 5:
                getattr(engine.knowledge, stop)(name)

        return progress

    paused = await engine.knowledge.index("paused", stop_at_five("paused", "pause"))  # type: ignore[arg-type]
    cancelled = await engine.knowledge.index("cancelled", stop_at_five("cancelled", "cancel"))  # type: ignore[arg-type]
    assert paused.cancelled and cancelled.cancelled
    assert await engine.knowledge.unfinished() == ["paused"]
    assert engine.knowledge.last_report("paused") is paused
    await engine.aclose()

    again = await open_engine(data, replay_server)
    try:
        again.knowledge.start()
        await until(lambda: again.knowledge.last_report("paused") is not None, "the paused indexing resumed")
        report = again.knowledge.last_report("paused")
        assert report is not None and not report.cancelled and report.progress.files_read == 35
        assert (await again.knowledge.totals("paused"))[0] == 40
        assert (await again.knowledge.totals("cancelled"))[0] == 5, "a cancelled indexing stays stopped"
        assert await again.knowledge.unfinished() == []
    finally:
        await again.aclose()


async def test_an_indexing_cut_short_by_a_close_resumes_and_resume_carries_on_in_the_background(
    replay_server: ReplayServer, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    engine = await open_engine(data, replay_server)
    await engine.knowledge.add("big", [many_files(tmp_path / "big", 400, words=2000)])  # seconds of work
    assert engine.knowledge.resume("big")
    await until(
        lambda: (engine.knowledge.progress("big") or Progress()).files_done >= 3, "indexing under way"
    )
    assert not engine.knowledge.resume("big"), "one runs already"
    await engine.aclose()  # as when the app quits half way (a kill leaves the same wish behind)
    assert 0 < (await _totals(data, replay_server, "big")) < 400

    again = await open_engine(data, replay_server)
    try:
        assert await again.knowledge.unfinished() == ["big"]
        again.knowledge.start()
        await until(lambda: again.knowledge.last_report("big") is not None, "the indexing carried on")
        assert (await again.knowledge.totals("big"))[0] == 400
    finally:
        await again.aclose()


async def _totals(data: Path, server: ReplayServer, name: str) -> int:
    engine = await open_engine(data, server)
    try:
        return (await engine.knowledge.totals(name))[0]
    finally:
        await engine.aclose()


async def test_vectors_left_out_by_a_down_embedding_server_keep_the_wish_to_finish(
    engine: Engine, tmp_path: Path
) -> None:
    from tests.support.embedding_server import EmbeddingServer

    from threadline.core.config import ProviderConfig, ProviderKind

    folder = many_files(tmp_path / "docs", 3)
    engine.knowledge.embed_patience = 0  # no waiting: the vectors are left to a later run at once
    with EmbeddingServer() as embeddings:
        await engine.providers.save_provider(
            ProviderConfig("embedder", ProviderKind.OPENAI, base_url=embeddings.base_url), None
        )
        await engine.knowledge.add("docs", [folder], embed_provider="embedder", embed_model="e")
        embeddings.refuse = True
        down = await engine.knowledge.index("docs")
        assert "next indexing" in down.embedding_notice
        assert await engine.knowledge.unfinished() == ["docs"], "the next start carries on"
        embeddings.refuse = False
        up = await engine.knowledge.index("docs")
    assert up.embedding_notice == "" and up.progress.embedded == 3
    assert await engine.knowledge.unfinished() == []
