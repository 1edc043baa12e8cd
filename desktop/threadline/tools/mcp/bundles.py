"""Opening an MCP bundle (``.mcpb``) without trusting it, and unpacking it into the data folder.

A bundle is a zip with ``manifest.json`` at its root. Its members are judged before anything
is written: a name that is absolute, has a drive, a backslash or ``..`` (zip slip), a symbolic
link, a member that is neither stored nor deflated, more than ``MAX_MEMBERS`` members or more
than ``MAX_TOTAL`` bytes declared are refused with a sentence saying so. Members are then
inflated through ``files.zip_members.MemberReader``, which checks each step against the
declared size, the remaining budget and the compression ratio, so an archive whose directory
lies is stopped in constant memory. Unpacking goes to a fresh folder beside the final one and
is renamed into place only when every member was written: a refused bundle leaves nothing.
docs/mcp.md, "Bundles".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from threadline.files.zip_members import MemberError, MemberReader
from threadline.tools.mcp.bundle_manifest import Manifest, ManifestError, parse_manifest, relative_inside
from threadline.tools.mcp.config import MAX_SERVER_NAME

MAX_MEMBERS = 20_000
MAX_TOTAL = 1024 * 1024 * 1024
"""Most bytes a bundle may unpack to (all members together)."""
MAX_MANIFEST = 1024 * 1024
MAX_RATIO = 1000
MANIFEST_NAME = "manifest.json"


class BundleError(Exception):
    """A bundle that cannot or must not be installed; ``str()`` is the sentence for the user."""


@dataclass(frozen=True, slots=True)
class Bundle:
    """A bundle that passed the checks: its manifest and its members' names."""

    path: Path
    manifest: Manifest
    members: frozenset[str]

    @property
    def server_name(self) -> str:
        return server_name_for(self.manifest.name)


def server_name_for(manifest_name: str) -> str:
    """The MCP server name (and extension folder) of a bundle: its manifest name, made a valid server name."""
    name = re.sub(r"[^A-Za-z0-9-]+", "-", manifest_name).strip("-")[:MAX_SERVER_NAME].strip("-")
    if not name:
        raise BundleError(
            f"The bundle's name {manifest_name!r} has no letters or digits to name its server by."
        )
    return name


def folder_name_for(version: str) -> str:
    """The version's folder name (no separators, never ``..``)."""
    name = re.sub(r"[^A-Za-z0-9.+_-]+", "-", version).strip(".-")
    return name or "0"


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    return info.create_system == 3 and stat.S_ISLNK(info.external_attr >> 16)


def _members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    infos = archive.infolist()
    if len(infos) > MAX_MEMBERS:
        raise BundleError(
            f"The bundle has {len(infos)} files; Threadline installs bundles of at most {MAX_MEMBERS}."
        )
    seen: set[str] = set()
    total = 0
    for info in infos:
        name = info.filename
        if not relative_inside(name.rstrip("/")):
            raise BundleError(
                f"The bundle holds a file named {name!r}, which points outside its folder. Not installed."
            )
        if _is_symlink(info):
            raise BundleError(
                f"The bundle holds a symbolic link ({name!r}), which Threadline does not install."
            )
        normal = str(PurePosixPath(name))
        if normal in seen:
            raise BundleError(f"The bundle holds {normal!r} twice. Not installed.")
        seen.add(normal)
        total += info.file_size
    if total > MAX_TOTAL:
        raise BundleError(
            f"The bundle unpacks to {total // (1024 * 1024)} MB; Threadline installs bundles of at most "
            f"{MAX_TOTAL // (1024 * 1024)} MB."
        )
    return infos


def open_bundle(path: Path) -> Bundle:
    """Check ``path`` and read its manifest; nothing is written. ``BundleError`` says why not."""
    try:
        with zipfile.ZipFile(path) as archive:
            infos = _members(archive)
    except (OSError, zipfile.BadZipFile) as err:
        raise BundleError(f"{path.name} is not a bundle Threadline can open ({err}).") from err
    by_name = {str(PurePosixPath(i.filename)): i for i in infos}
    info = by_name.get(MANIFEST_NAME)
    if info is None:
        raise BundleError(f"{path.name} has no manifest.json at its top level, so it is not an MCP bundle.")
    try:
        with MemberReader(path, info, max_ratio=MAX_RATIO, cap=MAX_MANIFEST) as reader:
            data = json.loads(reader.read())
    except MemberError as err:
        raise BundleError(f"The bundle's manifest.json cannot be read: {err}.") from err
    except (ValueError, OSError) as err:
        raise BundleError(f"The bundle's manifest.json is not valid JSON ({err}).") from err
    try:
        manifest = parse_manifest(data)
    except ManifestError as err:
        raise BundleError(str(err)) from err
    files = frozenset(name for name, i in by_name.items() if not i.is_dir())
    if manifest.entry_point not in files:
        raise BundleError(f"The bundle's entry point {manifest.entry_point!r} is not in the bundle.")
    return Bundle(path=path, manifest=manifest, members=files)


def unpack(bundle: Bundle, target: Path) -> None:
    """Unpack into ``target`` (which must not exist yet), all or nothing."""
    if target.exists():
        raise BundleError(f"{target} already exists; remove the extension first.")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=target.parent))
    try:
        _unpack_into(bundle.path, staging)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _unpack_into(path: Path, root: Path) -> None:
    budget = MAX_TOTAL
    with zipfile.ZipFile(path) as archive:
        infos = _members(archive)  # checked again: the file may have changed since it was shown
    resolved_root = root.resolve()
    for info in infos:
        destination = (root / PurePosixPath(info.filename)).resolve()
        if destination != resolved_root and resolved_root not in destination.parents:
            raise BundleError(
                f"The bundle holds {info.filename!r}, which points outside its folder. Not installed."
            )
        if info.is_dir():
            destination.mkdir(parents=True, exist_ok=True)
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            with (
                MemberReader(path, info, max_ratio=MAX_RATIO, cap=budget) as reader,
                open(destination, "xb") as out,
            ):
                while chunk := reader.read(1024 * 1024):
                    out.write(chunk)
                budget -= reader.inflated
        except MemberError as err:
            raise BundleError(
                f"The bundle's file {info.filename!r} cannot be unpacked: {err}. Not installed."
            ) from err
        mode = (info.external_attr >> 16) & 0o777
        if info.create_system == 3 and mode & 0o111:
            os.chmod(destination, 0o755)  # a binary server must stay runnable; nothing more than rwxr-xr-x
