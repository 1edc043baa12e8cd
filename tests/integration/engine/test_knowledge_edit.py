"""Editing a knowledge base and reading its problems (``engine.knowledge.edit``/``problems``), as
Settings → Knowledge uses them: a real engine, real files, the real index."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from threadline.core.knowledge import AttachScope
from threadline.engine.engine import Engine
from threadline.engine.knowledge import KnowledgeError
from threadline.knowledge import Progress

pytestmark = pytest.mark.asyncio


def notes(folder: Path, files: int = 3) -> Path:
    folder.mkdir(parents=True)
    for i in range(files):
        (folder / f"note{i}.md").write_text(f"# Note {i}\n\nThe heron count is {i}.\n", encoding="utf-8")
    return folder


async def test_rename_and_change_folders_keeps_attachments_and_the_next_run_follows(
    engine: Engine, tmp_path: Path
) -> None:
    first, second = notes(tmp_path / "first"), notes(tmp_path / "second", 2)
    await engine.knowledge.add("notes", [first])
    await engine.knowledge.attach("notes", AttachScope.PROJECT, "p1")
    await engine.knowledge.index("notes")
    edited = await engine.knowledge.edit("notes", new_name=" field notes ", paths=[second])
    assert edited.name == "field notes" and edited.paths == (str(second),)
    assert edited.attached == ((AttachScope.PROJECT, "p1"),)
    assert [b.name for b in await engine.knowledge.bases()] == ["field notes"]
    assert (await engine.knowledge.totals("field notes"))[0] == 3  # same index until the next run
    report = await engine.knowledge.index("field notes")
    assert report.removed == 3 and (await engine.knowledge.totals("field notes"))[0] == 2


async def test_another_embedding_model_drops_the_index_the_same_keeps_it(
    engine: Engine, tmp_path: Path
) -> None:
    folder = notes(tmp_path / "n")
    await engine.knowledge.add("notes", [folder])
    await engine.knowledge.index("notes")
    await engine.knowledge.edit("notes", paths=[folder])  # nothing about the model changed
    assert (await engine.knowledge.totals("notes"))[0] == 3
    edited = await engine.knowledge.edit("notes", embed_provider="replay", embed_model="embed-small")
    assert edited.embeds and (await engine.knowledge.totals("notes"))[0] == 0


async def test_refused_edits_say_why_and_change_nothing(engine: Engine, tmp_path: Path) -> None:
    folder = notes(tmp_path / "n")
    await engine.knowledge.add("notes", [folder])
    await engine.knowledge.add("other", [folder])
    for kwargs, words in (
        ({"new_name": "other"}, "exists already"),
        ({"new_name": "  "}, "Give the knowledge base a name"),
        ({"paths": []}, "at least one folder"),
        ({"embed_provider": "nowhere", "embed_model": "m"}, "no provider named"),
    ):
        with pytest.raises(KnowledgeError, match=words):
            await engine.knowledge.edit("notes", **kwargs)  # type: ignore[arg-type]
    assert [b.name for b in await engine.knowledge.bases()] == ["notes", "other"]

    started, release = threading.Event(), threading.Event()

    def hold(_progress: Progress) -> None:
        started.set()
        release.wait(30)

    run = asyncio.ensure_future(engine.knowledge.index("notes", hold))
    await asyncio.to_thread(started.wait, 30)
    with pytest.raises(KnowledgeError, match="being indexed"):
        await engine.knowledge.edit("notes", new_name="renamed")
    release.set()
    await run


async def test_problems_name_each_file_that_could_not_be_read(engine: Engine, tmp_path: Path) -> None:
    folder = notes(tmp_path / "n")
    (folder / "empty.txt").write_text("", encoding="utf-8")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n not a PDF \x00")
    await engine.knowledge.add("notes", [folder])
    assert await engine.knowledge.problems("notes") == []
    await engine.knowledge.index("notes")
    problems = await engine.knowledge.problems("notes")
    assert [p.path for p in problems] == [str(folder / "broken.pdf"), str(folder / "empty.txt")]
    assert all(p.reason for p in problems)
