"""``engine.extensions``: MCP bundles (``.mcpb``) installed, updated and removed (docs/mcp.md, "Bundles").

An installed bundle is unpacked into ``<data dir>/extensions/<server>/<version>`` and runs as
an ordinary stdio MCP server record of ``engine.tool_servers`` (its name from the manifest's).
What only an extension has is kept in the settings under ``mcp_extensions``: its version,
folder, the non-sensitive answers to its settings and the names of the sensitive ones (whose
values are in the keychain, ``tools/mcp/bundle_secrets.py``). Installing a bundle whose server
is installed already is an update: the answers given before are kept unless given anew, the
new version is unpacked beside the old one, and the old folder goes once the new record is saved.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from threadline.engine.errors import EngineError
from threadline.tools.mcp import bundle_secrets
from threadline.tools.mcp.bundle_launch import (
    check_launch,
    check_values,
    launch_preview,
    server_config,
)
from threadline.tools.mcp.bundle_manifest import Manifest
from threadline.tools.mcp.bundle_runtimes import runtime_problem
from threadline.tools.mcp.bundles import Bundle, BundleError, folder_name_for, open_bundle, unpack
from threadline.tools.mcp.config import InvalidServerConfig, McpServerConfig, SettingsStore
from threadline.tools.mcp.manager import McpServerManager

EXTENSIONS_SETTING = "mcp_extensions"
EXTENSIONS_FOLDER = "extensions"


class ExtensionError(EngineError):
    """A bundle that was not installed (or an extension not removed); the message says why."""

    default_message = "The MCP extension was not installed."


@dataclass(frozen=True, slots=True)
class InstalledExtension:
    name: str
    """The MCP server's name."""
    version: str
    title: str
    folder: str
    values: dict[str, Any] = field(default_factory=dict)
    """Answers to the non-sensitive settings."""
    sensitive: tuple[str, ...] = ()
    """Settings whose answers are in the keychain."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "title": self.title,
            "folder": self.folder,
            "values": self.values,
            "sensitive": list(self.sensitive),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> InstalledExtension:
        return cls(
            name=str(data["name"]),
            version=str(data.get("version", "")),
            title=str(data.get("title", "")),
            folder=str(data.get("folder", "")),
            values=dict(data.get("values") or {}),
            sensitive=tuple(str(k) for k in data.get("sensitive") or ()),
        )


@dataclass(frozen=True, slots=True)
class ExtensionPreview:
    """What the install dialog shows before anything is written."""

    path: Path
    manifest: Manifest
    name: str
    command: str
    """The command line it will run (``${user_config.X}`` left as written)."""
    env: dict[str, str]
    """The environment it adds, shown the same way."""
    needs: str = ""
    """What this computer lacks to start it, as a sentence: the program (``node``, ``uv``…) or a
    version of its runtime the manifest names (``tools/mcp/bundle_runtimes.py``); ``""`` when nothing."""
    installed: InstalledExtension | None = None
    """The version installed now (an update), if any."""

    @property
    def change(self) -> str:
        """``install``, ``update``, ``reinstall`` (the same version) or ``downgrade``."""
        if self.installed is None:
            return "install"
        new, old = version_key(self.manifest.version), version_key(self.installed.version)
        return "update" if new > old else "reinstall" if new == old else "downgrade"


def version_key(version: str) -> tuple[tuple[int, str], ...]:
    """A version as something to compare: numbers as numbers (``1.10`` after ``1.9``), the rest as text."""
    import re

    return tuple((int(p), "") if p.isdigit() else (-1, p) for p in re.split(r"[.+-]", version))


class Extensions:
    def __init__(self, store: SettingsStore, data_dir: Path, servers: McpServerManager) -> None:
        self._store = store
        self._root = data_dir / EXTENSIONS_FOLDER
        self._servers = servers
        self._lock = asyncio.Lock()

    async def installed(self) -> list[InstalledExtension]:
        raw = await self._store.get_setting(EXTENSIONS_SETTING, [])
        found = []
        for item in raw if isinstance(raw, list) else []:
            with contextlib.suppress(KeyError, TypeError, ValueError):
                found.append(InstalledExtension.from_json(item))
        return found

    async def _record(self, name: str) -> InstalledExtension | None:
        return next((e for e in await self.installed() if e.name == name), None)

    async def _save_records(self, records: list[InstalledExtension]) -> None:
        await self._store.set_setting(EXTENSIONS_SETTING, [r.to_json() for r in records])

    async def preview(self, path: Path) -> ExtensionPreview:
        """Open and check ``path`` (nothing is written); ``ExtensionError`` says why not."""
        bundle = await self._open(path)
        name = self._name(bundle)
        folder = self._root / name / folder_name_for(bundle.manifest.version)
        try:
            check_launch(bundle.manifest, folder)
        except BundleError as err:
            raise ExtensionError(str(err)) from err
        command, env = launch_preview(bundle.manifest, folder)
        return ExtensionPreview(
            path=path,
            manifest=bundle.manifest,
            name=name,
            command=command,
            env=env,
            needs=await asyncio.to_thread(runtime_problem, bundle.manifest),
            installed=await self._record(name),
        )

    async def install(self, path: Path, values: dict[str, Any] | None = None) -> InstalledExtension:
        """Install (or update) the bundle at ``path`` with these answers to its settings.

        On an update, a setting not given keeps its previous answer (a sensitive one is read
        back from the keychain). Nothing stays written when it fails.
        """
        async with self._lock:
            bundle = await self._open(path)
            name = self._name(bundle)
            previous = await self._record(name)
            configs = {c.name: c for c in await self._servers.list_servers()}
            if previous is None and name in configs:
                raise ExtensionError(
                    f"There is already an MCP server named {name} that is not from an extension. "
                    "Remove or rename it first."
                )
            answers = self._answers(bundle.manifest, previous, values or {})
            try:
                checked = check_values(bundle.manifest, answers)
            except BundleError as err:
                raise ExtensionError(str(err)) from err
            folder = self._free_folder(name, bundle.manifest.version)
            try:
                await asyncio.to_thread(unpack, bundle, folder)
                config = server_config(bundle.manifest, folder, name, checked)
                record = await self._register(bundle, name, folder, checked, previous, config)
            except BaseException as err:
                await asyncio.to_thread(_remove_new, folder)
                if isinstance(err, BundleError):
                    raise ExtensionError(str(err)) from err
                if isinstance(err, OSError):
                    raise ExtensionError(
                        f"The extension could not be unpacked into {folder.parent}: {err}."
                    ) from err
                raise
            if previous is not None and Path(previous.folder) != folder:
                await asyncio.to_thread(shutil.rmtree, previous.folder, True)
            return record

    async def _register(
        self,
        bundle: Bundle,
        name: str,
        folder: Path,
        values: dict[str, Any],
        previous: InstalledExtension | None,
        config: McpServerConfig,
    ) -> InstalledExtension:
        sensitive = {o.key for o in bundle.manifest.user_config if o.sensitive}
        secrets = {
            k: json.dumps(v) if isinstance(v, list) else str(v) for k, v in values.items() if k in sensitive
        }
        try:
            bundle_secrets.store(name, secrets)
            await self._servers.save_server(config, previous_name=name if previous is not None else None)
        except (BundleError, InvalidServerConfig) as err:
            raise ExtensionError(str(err)) from err
        record = InstalledExtension(
            name=name,
            version=bundle.manifest.version,
            title=bundle.manifest.title,
            folder=str(folder),
            values={k: v for k, v in values.items() if k not in sensitive},
            sensitive=tuple(sorted(secrets)),
        )
        others = [r for r in await self.installed() if r.name != name]
        await self._save_records([*others, record])
        if previous is not None:
            bundle_secrets.forget(name, set(previous.sensitive) - set(record.sensitive))
        return record

    async def remove(self, name: str) -> None:
        """Remove the MCP server ``name``; an extension's files and secret settings go with it."""
        async with self._lock:
            record = await self._record(name)
            await self._servers.remove_server(name)
            if record is None:
                return
            await self._save_records([r for r in await self.installed() if r.name != name])
            bundle_secrets.forget(name, record.sensitive)
            await asyncio.to_thread(shutil.rmtree, self._root / name, True)

    # -- helpers -----------------------------------------------------------------------------

    async def _open(self, path: Path) -> Bundle:
        try:
            return await asyncio.to_thread(open_bundle, path)
        except BundleError as err:
            raise ExtensionError(str(err)) from err

    @staticmethod
    def _name(bundle: Bundle) -> str:
        try:
            return bundle.server_name
        except BundleError as err:
            raise ExtensionError(str(err)) from err

    @staticmethod
    def _answers(
        manifest: Manifest, previous: InstalledExtension | None, given: dict[str, Any]
    ) -> dict[str, Any]:
        answers: dict[str, Any] = {}
        if previous is not None:
            answers.update(previous.values)
            lists = {o.key for o in manifest.user_config if o.multiple}
            for key, value in bundle_secrets.read(previous.name, previous.sensitive).items():
                answers[key] = _listed(value) if key in lists else value
        sensitive = {o.key for o in manifest.user_config if o.sensitive}
        for key, value in given.items():
            if key in sensitive and value in ("", None, []) and key in answers:
                continue  # a secret left blank on an update keeps the one stored
            answers[key] = value
        return answers

    def _free_folder(self, name: str, version: str) -> Path:
        base = self._root / name / folder_name_for(version)
        folder, n = base, 1
        while folder.exists():  # the same version again: beside it, the old one goes once this one is saved
            n += 1
            folder = base.with_name(f"{base.name}~{n}")
        return folder


def _remove_new(folder: Path) -> None:
    """Take away what a failed install wrote: its folder, and the extension's folder when that is empty."""
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        folder.parent.rmdir()  # only when empty: an installed version stays


def _listed(stored: str) -> list[str] | str:
    """A secret list setting as it was stored (JSON); anything else as it is."""
    with contextlib.suppress(ValueError):
        value = json.loads(stored)
        if isinstance(value, list):
            return [str(v) for v in value]
    return stored
