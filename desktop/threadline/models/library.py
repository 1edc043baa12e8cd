"""The models folder: downloaded and imported GGUF files, each with a small JSON note beside it.

One flat folder the user chooses (Settings; default ``<data folder>/models``): ``NAME.gguf``
and ``NAME.gguf.json`` (where it came from, its SHA-256 when known, and the GGUF header facts
the runtime needs: context window, chat template). Partial downloads wait in ``.partial/``.
A file whose note is missing (copied in by hand) is read once and gets one.
Why flat and why notes: docs/local-models.md, "The models folder".
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from threadline.models.errors import ModelError
from threadline.models.fit import human_size
from threadline.models.gguf_info import GgufInfo, read_info

NOTE_SUFFIX = ".json"
PARTIAL_DIR = ".partial"
SPACE_MARGIN = 64 * 1024 * 1024
"""Kept free beyond the file itself, so the database and the log can still be written."""


@dataclass(frozen=True)
class InstalledModel:
    name: str
    path: Path
    size: int
    info: GgufInfo
    repo: str | None = None
    sha256: str | None = None
    source: str = "download"

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "size": self.size,
            "repo": self.repo,
            "sha256": self.sha256,
            "source": self.source,
            "architecture": self.info.architecture,
            "context_length": self.info.context_length,
            "has_chat_template": self.info.chat_template is not None,
        }


def check_space(folder: Path, needed: int, what: str) -> None:
    """Refuse before writing when the disk cannot take ``needed`` bytes more, with both figures."""
    free = shutil.disk_usage(folder).free
    if free < needed + SPACE_MARGIN:
        raise ModelError(
            f"Not enough disk space for {what}: it needs {human_size(needed)}, "
            f"and {human_size(free)} is free in {folder}. Free some space or choose another models folder."
        )


class ModelLibrary:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @property
    def partial_dir(self) -> Path:
        return self.folder / PARTIAL_DIR

    def ensure(self) -> None:
        self.partial_dir.mkdir(parents=True, exist_ok=True)

    def path_of(self, name: str) -> Path:
        if "/" in name or "\\" in name or name.startswith("."):
            raise ModelError(f"{name!r} is not a model file name.")
        return self.folder / name

    def installed(self) -> list[InstalledModel]:
        """Every usable GGUF in the folder, by name; a broken one is left out (and left alone)."""
        if not self.folder.is_dir():
            return []
        found = []
        for path in sorted(self.folder.glob("*.gguf")):
            try:
                found.append(self._load(path))
            except ModelError:
                continue
        return found

    def get(self, name: str) -> InstalledModel:
        path = self.path_of(name)
        if not path.is_file():
            raise ModelError(f"No model {name} in {self.folder} (see `threadline models list`).")
        return self._load(path)

    def _load(self, path: Path) -> InstalledModel:
        note_path = path.with_name(path.name + NOTE_SUFFIX)
        note: dict[str, Any] = {}
        try:
            note = json.loads(note_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            note = {}
        if isinstance(note.get("gguf"), dict):
            info = GgufInfo.from_json(note["gguf"])
        else:
            info = read_info(path)
            note = {"source": "found", "gguf": info.as_json()}
            self._write_note(path, note)
        return InstalledModel(
            name=path.name,
            path=path,
            size=path.stat().st_size,
            info=info,
            repo=note.get("repo"),
            sha256=note.get("sha256"),
            source=str(note.get("source", "download")),
        )

    def _write_note(self, path: Path, note: dict[str, Any]) -> None:
        note_path = path.with_name(path.name + NOTE_SUFFIX)
        tmp = note_path.with_name(note_path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(note, indent=2, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, note_path)
        except OSError:
            tmp.unlink(missing_ok=True)

    def add_verified(self, part: Path, name: str, repo: str, sha256: str | None) -> InstalledModel:
        """Move a checked download into place, with its note."""
        try:
            info = read_info(part, name)
        except ModelError as err:
            part.unlink(missing_ok=True)
            raise ModelError(f"{err.user_message} The download was deleted.") from err
        target = self.path_of(name)
        os.replace(part, target)
        note = {"source": "download", "repo": repo, "sha256": sha256, "added": time.time()}
        self._write_note(target, {**note, "gguf": info.as_json()})
        return self._load(target)

    def import_file(self, source: Path) -> InstalledModel:
        """Bring a GGUF the user has into the folder: checked first, then linked or copied."""
        source = source.expanduser()
        if not source.is_file():
            raise ModelError(f"{source} is not a file.")
        info = read_info(source)
        self.ensure()
        target = self.path_of(source.name)
        if target.exists():
            if target.resolve() == source.resolve():
                return self._load(target)
            raise ModelError(f"A model named {source.name} is already in {self.folder}; remove it first.")
        tmp = self.partial_dir / (source.name + ".import")
        try:
            os.link(source, tmp)
        except OSError:
            check_space(self.folder, source.stat().st_size, source.name)
            try:
                shutil.copyfile(source, tmp)
            except OSError as err:
                tmp.unlink(missing_ok=True)
                raise ModelError(f"Could not copy {source.name}: {err.strerror or err}.") from err
        os.replace(tmp, target)
        self._write_note(target, {"source": "import", "from": str(source), "gguf": info.as_json()})
        return self._load(target)

    def remove(self, name: str) -> None:
        path = self.path_of(name)
        if not path.is_file():
            raise ModelError(f"No model {name} in {self.folder} (see `threadline models list`).")
        path.unlink()
        path.with_name(path.name + NOTE_SUFFIX).unlink(missing_ok=True)
