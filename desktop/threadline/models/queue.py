"""Several downloads in a queue, one file at a time: pause, resume, cancel, and listeners.

One at a time because the connection, not the number of transfers, is the limit, and the
first file a person asked for is then the first they can use. A paused job keeps its part
on disk; a cancelled one loses it. Parts found at start (an app that stopped mid-download)
come back as paused jobs, so Resume is one click (docs/local-models.md, "Downloads").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from threadline.models.download import (
    DiskFullError,
    DownloadJob,
    State,
    discard_part,
    httpx_module,
    part_paths,
    read_part_note,
    transfer,
)
from threadline.models.errors import ModelError
from threadline.models.fit import human_size
from threadline.models.hub import HubFile
from threadline.models.library import ModelLibrary

log = logging.getLogger("threadline.models")

Listener = Callable[[DownloadJob], None]
ACTIVE = (State.QUEUED, State.RUNNING, State.CHECKING)


class DownloadQueue:
    def __init__(self, library: ModelLibrary, url_of: Callable[[HubFile], str]) -> None:
        self.library = library
        self._url_of = url_of
        self._jobs: dict[str, DownloadJob] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._listeners: list[Listener] = []
        self._client: Any = None
        self._wake: asyncio.Event | None = None
        self._runner: asyncio.Task[None] | None = None
        self._done_events: dict[str, asyncio.Event] = {}
        self.retry_wait = 0.5

    # -- reading ----------------------------------------------------------------------------
    def jobs(self) -> list[DownloadJob]:
        return list(self._jobs.values())

    def get(self, job_id: str) -> DownloadJob:
        try:
            return self._jobs[job_id]
        except KeyError:
            raise ModelError(f"No download {job_id}.") from None

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _changed(self, job: DownloadJob) -> None:
        for listener in list(self._listeners):
            try:
                listener(job)
            except Exception:
                log.exception("a download listener failed")

    def restore_partials(self) -> None:
        """Parts left by an earlier run, as paused jobs (their notes say which file they are)."""
        folder = self.library.partial_dir
        if not folder.is_dir():
            return
        for note in sorted(folder.glob("*.part.json")):
            data = read_part_note(note)
            if not data or not isinstance(data.get("name"), str) or not isinstance(data.get("repo"), str):
                continue
            file = HubFile(data["repo"], data["name"], int(data.get("size") or 0), data.get("sha256"))
            job = DownloadJob(file, self._url_of(file), State.PAUSED)
            part, _ = part_paths(self.library, file.name)
            job.done = part.stat().st_size if part.exists() else 0
            self._jobs.setdefault(job.id, job)

    def forget_stopped(self) -> None:
        """Drop the jobs that are not running (the models folder changed: their parts stay in
        the old one, and come back as paused jobs when it is chosen again)."""
        for job_id, job in list(self._jobs.items()):
            if job.state not in ACTIVE:
                del self._jobs[job_id]

    # -- changing ---------------------------------------------------------------------------
    def add(self, file: HubFile) -> DownloadJob:
        """Queue ``file`` (a paused or failed job of the same file resumes from its part)."""
        self.library.ensure()
        existing = self._jobs.get(f"{file.repo}/{file.name}")
        if existing is not None and existing.state in ACTIVE:
            return existing
        if any(j.file.name == file.name and j.file.repo != file.repo for j in self._jobs.values()):
            raise ModelError(f"Another download is already saving a file named {file.name}.")
        if (self.library.folder / file.name).exists():
            raise ModelError(f"{file.name} is already in the models folder.")
        job = DownloadJob(file, self._url_of(file))
        part, _ = part_paths(self.library, file.name)
        job.done = part.stat().st_size if part.exists() else 0
        self._jobs[job.id] = job
        self._done_events[job.id] = asyncio.Event()
        self._changed(job)
        self._kick()
        return job

    def pause(self, job_id: str) -> None:
        job = self.get(job_id)
        if job.state not in ACTIVE:
            return
        job.state = State.PAUSED
        job.speed = 0.0
        job.message = None
        task = self._tasks.get(job_id)
        if task is not None:
            task.cancel()
        self._changed(job)

    def resume(self, job_id: str) -> None:
        job = self.get(job_id)
        if job.state not in (State.PAUSED, State.FAILED):
            return
        job.state = State.QUEUED
        job.message = None
        self._done_events.setdefault(job_id, asyncio.Event()).clear()
        self._changed(job)
        self._kick()

    def cancel(self, job_id: str) -> None:
        """Stop and delete what was downloaded; the job leaves the list."""
        job = self.get(job_id)
        task = self._tasks.get(job_id)
        job.state = State.CANCELLED
        if task is not None:
            task.cancel()
        else:
            discard_part(self.library, job.file.name)
        del self._jobs[job_id]
        self._finish(job)

    async def wait(self, job_id: str) -> DownloadJob:
        """Until the job is done, failed, paused or cancelled."""
        job = self.get(job_id)
        # Until its task has ended too: a paused job's task still has its part to close.
        while job.state in ACTIVE or job_id in self._tasks:
            event = self._done_events.setdefault(job_id, asyncio.Event())
            event.clear()  # an earlier run's end; this run's end sets it again
            await event.wait()
        return job

    def _finish(self, job: DownloadJob) -> None:
        self._changed(job)
        event = self._done_events.get(job.id)
        if event is not None:
            event.set()

    # -- running ----------------------------------------------------------------------------
    def _kick(self) -> None:
        if self._wake is None:
            self._wake = asyncio.Event()
        self._wake.set()
        if self._runner is None or self._runner.done():
            self._runner = asyncio.get_running_loop().create_task(self._run(), name="model downloads")

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            job = next((j for j in self._jobs.values() if j.state is State.QUEUED), None)
            if job is None:
                self._wake.clear()
                return
            task = asyncio.get_running_loop().create_task(self._one(job), name=f"download {job.id}")
            self._tasks[job.id] = task
            try:
                await asyncio.wait([task])
            finally:
                if self._tasks.get(job.id) is task:
                    del self._tasks[job.id]

    async def _one(self, job: DownloadJob) -> None:
        try:
            await self._transfer(job)
        finally:
            if self._tasks.get(job.id) is asyncio.current_task():
                del self._tasks[job.id]
            job.speed = 0.0
            self._finish(job)

    async def _transfer(self, job: DownloadJob) -> None:
        job.state = State.RUNNING
        job.message = None
        self._changed(job)
        try:
            job.model = await transfer(job, self.library, self._http(), self._changed, self.retry_wait)
            job.state = State.DONE
            job.message = None
        except asyncio.CancelledError:  # Pause or Cancel: this task's own end, not the loop's
            if job.state is State.CANCELLED:
                discard_part(self.library, job.file.name)
        except DiskFullError:
            job.state = State.PAUSED
            job.message = (
                f"The disk is full: the download of {job.file.name} is paused, {human_size(job.done)} "
                "kept. Free some space, then press Resume."
            )
        except ModelError as err:
            job.state = State.FAILED
            job.message = err.user_message
        except OSError as err:
            job.state = State.FAILED
            job.message = f"Could not save {job.file.name}: {err.strerror or err}."
        except Exception as err:  # a bug: said and logged, and the waiters still hear the end
            log.exception("the download of %s failed", job.id)
            job.state = State.FAILED
            job.message = f"The download of {job.file.name} failed: {err}. The log has the details."

    def _http(self) -> Any:
        if self._client is None:
            httpx = httpx_module()
            timeout = httpx.Timeout(30.0, connect=15.0)
            self._client = httpx.AsyncClient(follow_redirects=True, timeout=timeout)
        return self._client

    async def aclose(self) -> None:
        """Stop transfers (parts kept, as after a pause) and close the connection."""
        for job_id, task in list(self._tasks.items()):
            self._jobs[job_id].state = State.PAUSED
            task.cancel()
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        for task in list(self._tasks.values()):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._client is not None:
            await self._client.aclose()
            self._client = None
