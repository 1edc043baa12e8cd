"""``engine.models``: the local model library, for the window and the command line alike.

It holds the models folder (``models/library.py``), the download queue
(``models/queue.py``) and the Hub client (``models/hub.py``), and runs their blocking calls
in threads. Where the folder is and which Hub to ask are this computer's choices, so they
are kept in the data folder (``local-models.json``), not in a database several machines may
share (docs/local-models.md, "The models folder").
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from threadline.files.private import open_private, private_folder
from threadline.models.download import DownloadJob
from threadline.models.errors import ModelError
from threadline.models.fit import Fit, estimate
from threadline.models.hub import Hub, HubFile, HubModel, default_endpoint
from threadline.models.library import InstalledModel, ModelLibrary
from threadline.models.machine import Machine, detect
from threadline.models.queue import DownloadQueue
from threadline.models.runtime import LocalRuntime, RuntimeSettings, llama_cpp_installed

CONFIG_FILE = "local-models.json"
DEFAULT_CONTEXT = 8192


@dataclass(frozen=True)
class FileChoice:
    """One quantisation on the Hub, with what it would need here."""

    file: HubFile
    fit: Fit
    installed: bool


class Models:
    def __init__(self, data_dir: Path) -> None:
        self._config_path = data_dir / CONFIG_FILE
        self._default_folder = data_dir / "models"
        config = self._read_config()
        self.library = ModelLibrary(Path(config.get("folder") or self._default_folder))
        self._endpoint: str | None = config.get("hub_endpoint")
        self.queue = DownloadQueue(self.library, lambda f: self.hub().resolve_url(f.repo, f.name))
        self.queue.restore_partials()
        self._machine: Machine | None = None
        self.runtime = LocalRuntime(data_dir / "runtime")
        """The llama.cpp server the provider "On this computer" runs (``models/runtime.py``)."""
        self.runtime.stop_orphan_soon()  # one a killed Threadline left in memory

    def _read_config(self) -> dict[str, Any]:
        try:
            data = json.loads(self._config_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write_config(self, **values: Any) -> None:
        data = {**self._read_config(), **values}
        tmp = self._config_path.with_name(CONFIG_FILE + ".tmp")
        private_folder(tmp.parent)
        with open_private(tmp, "w", encoding="utf-8") as out:  # the data folder is the user's alone
            out.write(json.dumps(data, indent=2))
        os.replace(tmp, self._config_path)

    # -- where ------------------------------------------------------------------------------
    @property
    def folder(self) -> Path:
        return self.library.folder

    @property
    def default_folder(self) -> Path:
        return self._default_folder

    def set_folder(self, folder: Path) -> None:
        """Use another folder from now on (models already downloaded stay where they are)."""
        if any(j.state.value in ("queued", "downloading", "checking") for j in self.queue.jobs()):
            raise ModelError("Pause or cancel the downloads before changing the models folder.")
        folder = folder.expanduser()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ModelError(f"Could not use {folder} for models: {err.strerror or err}.") from err
        self.library.folder = folder
        self._write_config(folder=str(folder))
        self.queue.forget_stopped()
        self.queue.restore_partials()

    @property
    def endpoint(self) -> str:
        return (self._endpoint or default_endpoint()).rstrip("/")

    def hub(self) -> Hub:
        return Hub(self.endpoint)

    def machine(self, fresh: bool = False) -> Machine:
        if self._machine is None or fresh:
            self._machine = detect()
        return self._machine

    # -- the Hub ----------------------------------------------------------------------------
    async def search(self, text: str) -> list[HubModel]:
        return await asyncio.to_thread(self.hub().search, text)

    async def files(self, repo: str, context: int = DEFAULT_CONTEXT) -> list[FileChoice]:
        files = await asyncio.to_thread(self.hub().files, repo)
        machine = await asyncio.to_thread(self.machine, True)
        return [
            FileChoice(f, estimate(f.size, f.name, context, machine), (self.folder / f.name).is_file())
            for f in files
        ]

    # -- the folder -------------------------------------------------------------------------
    async def installed(self) -> list[InstalledModel]:
        return await asyncio.to_thread(self.library.installed)

    def fit_of(self, model: InstalledModel, context: int = DEFAULT_CONTEXT) -> Fit:
        """Exact KV cache from the model's header; the window shows it beside the model."""
        per_token = model.info.kv_bytes_per_token()
        return estimate(model.size, model.name, context, self.machine(), per_token)

    async def import_file(self, path: Path) -> InstalledModel:
        return await asyncio.to_thread(self.library.import_file, path)

    async def remove(self, name: str) -> None:
        await asyncio.to_thread(self.library.remove, name)

    def has_models(self) -> bool:
        """Whether the folder holds a model (a listing without reading the notes)."""
        try:
            return any(self.folder.glob("*.gguf"))
        except OSError:
            return False

    # -- the runtime ------------------------------------------------------------------------
    def runtime_settings(self) -> RuntimeSettings:
        return RuntimeSettings.from_json(self._read_config().get("runtime"))

    def set_runtime_settings(self, settings: RuntimeSettings) -> None:
        """Kept on this computer; the next model load uses them (a running one is reloaded then)."""
        self._write_config(runtime=settings.as_json())

    def runtime_installed(self) -> bool:
        """Whether something can run a model: ``threadline[local]`` or a chosen ``llama-server``."""
        return bool(self.runtime_settings().server_binary) or llama_cpp_installed()

    async def runtime_status(self) -> dict[str, Any] | None:
        """The running runtime's model, pid and port, or ``None``."""
        return await asyncio.to_thread(self.runtime.status)

    @property
    def runtime_log(self) -> Path:
        return self.runtime.log_path

    async def stop_runtime(self) -> None:
        await asyncio.to_thread(self.runtime.stop)

    # -- downloads --------------------------------------------------------------------------
    async def pull(self, repo: str, name: str) -> DownloadJob:
        """Queue one file of ``repo`` (its size and SHA-256 asked of the Hub first)."""
        file = await asyncio.to_thread(self.hub().file, repo, name)
        return self.queue.add(file)

    def download(self, file: HubFile) -> DownloadJob:
        return self.queue.add(file)

    def downloads(self) -> list[DownloadJob]:
        return self.queue.jobs()

    def pause(self, job_id: str) -> None:
        self.queue.pause(job_id)

    def resume(self, job_id: str) -> None:
        self.queue.resume(job_id)

    def cancel(self, job_id: str) -> None:
        self.queue.cancel(job_id)

    async def wait(self, job_id: str) -> DownloadJob:
        return await self.queue.wait(job_id)

    def subscribe(self, listener: Callable[[DownloadJob], None]) -> Callable[[], None]:
        return self.queue.subscribe(listener)

    async def aclose(self) -> None:
        await self.queue.aclose()
        await asyncio.to_thread(self.runtime.close)
