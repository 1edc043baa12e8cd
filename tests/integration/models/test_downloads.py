"""Downloads a person can trust, against a fake Hub on loopback (``tests/support/fake_hub.py``).

The engine's ``models`` facet on a temporary data folder: search, a model's quantisations,
a dropped connection resumed with Range, pause and resume, cancel, a corrupted transfer
refused, a file that is not GGUF refused by name, several downloads in a queue.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from tests.support.fake_hub import BROKEN_REPO, FILE, REPO, FakeHub, point_at
from tests.support.waiting import until

from threadline.engine.models import Models
from threadline.models.download import State
from threadline.models.fit import Verdict

pytestmark = pytest.mark.asyncio


def open_models(tmp_path: Path, hub: FakeHub) -> Models:
    point_at(tmp_path / "data", hub)
    models = Models(tmp_path / "data")
    models.queue.retry_wait = 0.05
    return models


async def test_search_finds_gguf_models_and_lists_their_quantisations(tmp_path: Path, hub: FakeHub) -> None:
    models = open_models(tmp_path, hub)
    found = await models.search("tiny")
    assert [m.repo for m in found] == [REPO]
    choices = await models.files(REPO, context=2048)
    assert [c.file.name for c in choices] == ["tiny-llama.F16.gguf", FILE]  # README.md left out
    q8 = choices[1]
    assert q8.file.size == len(hub.files[REPO][FILE])
    assert q8.file.sha256 == hashlib.sha256(hub.files[REPO][FILE]).hexdigest()
    assert q8.fit.need_bytes > q8.file.size
    assert q8.fit.verdict in (Verdict.GPU, Verdict.RAM)  # half a megabyte fits any machine
    assert not q8.installed
    await models.aclose()


async def test_a_dropped_connection_is_resumed_from_the_partial_file(tmp_path: Path, hub: FakeHub) -> None:
    models = open_models(tmp_path, hub)
    size = len(hub.files[REPO][FILE])
    hub.drop_after = 100_000
    job = await models.pull(REPO, FILE)
    await models.wait(job.id)
    assert job.state is State.DONE, job.message
    assert job.model is not None and job.model.info.architecture == "llama"
    assert (models.folder / FILE).read_bytes() == hub.files[REPO][FILE]
    ranges = hub.ranges(FILE)
    assert ranges[0] is None and len(ranges) == 2, ranges
    assert ranges[1] is not None and ranges[1].startswith("bytes=") and ranges[1] != "bytes=0-"
    assert 0 < int(ranges[1].removeprefix("bytes=").rstrip("-")) < size
    assert not list((models.folder / ".partial").iterdir())  # the part and its note are gone
    (installed,) = await models.installed()
    assert installed.sha256 == hashlib.sha256(hub.files[REPO][FILE]).hexdigest()
    assert installed.info.context_length == 4096 and installed.info.chat_template
    await models.aclose()


async def test_pause_keeps_the_part_and_resume_asks_only_for_the_rest(tmp_path: Path, hub: FakeHub) -> None:
    models = open_models(tmp_path, hub)
    hub.delay, hub.hold_after = 0.05, 200_000
    job = await models.pull(REPO, FILE)
    await until(lambda: job.done > 50_000 and job.speed > 0, "some bytes arrived, at a speed")
    assert job.eta is not None and job.eta > 0
    models.pause(job.id)
    await models.wait(job.id)
    assert job.state is State.PAUSED
    part = models.folder / ".partial" / (FILE + ".part")
    await until(lambda: part.stat().st_size > 0, "the part on disk")
    kept = part.stat().st_size
    hub.release()
    models.resume(job.id)
    await until(lambda: job.state is State.DONE, "the download finished")
    assert hub.ranges(FILE)[-1] == f"bytes={kept}-"
    assert (models.folder / FILE).read_bytes() == hub.files[REPO][FILE]
    await models.aclose()


async def test_a_restart_finds_the_paused_part_and_resumes_it(tmp_path: Path, hub: FakeHub) -> None:
    models = open_models(tmp_path, hub)
    hub.delay, hub.hold_after = 0.05, 200_000
    job = await models.pull(REPO, FILE)
    await until(lambda: job.done > 50_000, "some bytes arrived")
    await models.aclose()  # the app stops mid-download
    hub.release()
    again = Models(tmp_path / "data")
    (paused,) = again.downloads()
    kept = paused.done
    assert paused.state is State.PAUSED and kept > 0
    again.resume(paused.id)
    await again.wait(paused.id)
    assert paused.state is State.DONE, paused.message
    assert hub.ranges(FILE)[-1] == f"bytes={kept}-"
    assert (again.folder / FILE).read_bytes() == hub.files[REPO][FILE]
    await again.aclose()


async def test_cancel_removes_the_partial_file(tmp_path: Path, hub: FakeHub) -> None:
    models = open_models(tmp_path, hub)
    hub.delay, hub.hold_after = 0.05, 100_000
    job = await models.pull(REPO, FILE)
    await until(lambda: job.done > 20_000, "some bytes arrived")
    models.cancel(job.id)
    await until(lambda: not list((models.folder / ".partial").iterdir()), "the part deleted")
    assert models.downloads() == []
    assert not (models.folder / FILE).exists()
    await models.aclose()


@pytest.mark.expected_log_warnings()
async def test_a_corrupted_download_is_deleted_and_said_so(tmp_path: Path, hub: FakeHub) -> None:
    hub.bad_sha.add(FILE)
    models = open_models(tmp_path, hub)
    job = await models.pull(REPO, FILE)
    await models.wait(job.id)
    assert job.state is State.FAILED
    assert job.message is not None
    assert job.message.startswith(
        f"{FILE} did not match the checksum the Hub gives for it, so it was deleted"
    )
    assert not (models.folder / FILE).exists()
    assert not list((models.folder / ".partial").iterdir())
    assert await models.installed() == []
    await models.aclose()


async def test_a_download_that_is_not_gguf_is_refused_naming_the_file(tmp_path: Path, hub: FakeHub) -> None:
    models = open_models(tmp_path, hub)
    job = await models.pull(BROKEN_REPO, "other.gguf")
    await models.wait(job.id)
    assert job.state is State.FAILED
    assert job.message is not None and job.message.startswith("other.gguf is not a GGUF model file")
    assert not (models.folder / "other.gguf").exists()
    await models.aclose()


async def test_several_downloads_wait_their_turn_in_the_queue(tmp_path: Path, hub: FakeHub) -> None:
    models = open_models(tmp_path, hub)
    hub.hold_after = 100_000
    first = await models.pull(REPO, FILE)
    second = await models.pull(REPO, "tiny-llama.F16.gguf")
    await until(lambda: first.state is State.RUNNING, "the first one running")
    assert second.state is State.QUEUED
    hub.release()
    await models.wait(first.id)
    await models.wait(second.id)
    assert first.state is State.DONE and second.state is State.DONE, (first.message, second.message)
    assert sorted(m.name for m in await models.installed()) == ["tiny-llama.F16.gguf", FILE]
    await models.aclose()


async def test_not_enough_space_is_refused_before_anything_is_written(tmp_path: Path, hub: FakeHub) -> None:
    from tests.integration.store.mounts import small_tmpfs

    with small_tmpfs(tmp_path / "disk", "1m") as disk:
        models = open_models(tmp_path, hub)
        models.set_folder(disk / "models")
        job = await models.pull(REPO, FILE)
        await models.wait(job.id)
        assert job.state is State.FAILED
        assert job.message is not None and job.message.startswith("Not enough disk space for " + FILE)
        assert not (disk / "models" / ".partial" / (FILE + ".part")).exists()
        await models.aclose()


async def test_a_disk_filling_up_pauses_the_download_and_keeps_the_part(tmp_path: Path, hub: FakeHub) -> None:
    from tests.integration.store.mounts import fill, small_tmpfs

    with small_tmpfs(tmp_path / "disk", "80m") as disk:
        models = open_models(tmp_path, hub)
        models.set_folder(disk / "models")
        hub.delay, hub.hold_after = 0.05, 200_000
        job = await models.pull(REPO, FILE)
        await until(lambda: job.done > 20_000, "some bytes arrived")
        filler = fill(disk)
        hub.release()  # the rest arrives on a full disk
        await models.wait(job.id)
        assert job.state is State.PAUSED
        assert job.message is not None and job.message.startswith(
            f"The disk is full: the download of {FILE} is paused,"
        )
        part = disk / "models" / ".partial" / (FILE + ".part")
        assert part.stat().st_size == job.done > 0
        filler.unlink()
        hub.release()
        models.resume(job.id)
        await until(lambda: job.state in (State.DONE, State.FAILED), "the download ended")
        assert job.state is State.DONE, job.message
        assert (disk / "models" / FILE).read_bytes() == hub.files[REPO][FILE]
        await models.aclose()


async def test_hub_errors_are_sentences(tmp_path: Path, hub: FakeHub) -> None:
    from threadline.models.errors import HubError

    models = open_models(tmp_path, hub)
    with pytest.raises(HubError, match="The Hub has no model nobody/none"):
        await models.files("nobody/none")
    with pytest.raises(HubError, match=f"{REPO} has no file missing.gguf"):
        await models.pull(REPO, "missing.gguf")
    await models.aclose()


async def test_a_paused_part_follows_its_folder(tmp_path: Path, hub: FakeHub) -> None:
    models = open_models(tmp_path, hub)
    hub.hold_after = 100_000
    job = await models.pull(REPO, FILE)
    await until(lambda: job.done >= 100_000, "some bytes arrived")
    models.pause(job.id)
    await models.wait(job.id)
    first = models.folder
    models.set_folder(tmp_path / "elsewhere")
    assert models.downloads() == []  # the part stays in the first folder
    models.set_folder(first)
    (again,) = models.downloads()
    assert again.state is State.PAUSED and again.done == job.done
    hub.release()
    models.resume(again.id)
    await models.wait(again.id)
    assert again.state is State.DONE, again.message
    assert (first / FILE).read_bytes() == hub.files[REPO][FILE]
    await models.aclose()
