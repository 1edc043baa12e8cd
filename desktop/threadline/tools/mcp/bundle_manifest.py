"""The ``manifest.json`` of an MCP bundle (``.mcpb``, formerly ``.dxt``), read and checked.

The format is the MCP bundle specification (``modelcontextprotocol/mcpb``, MANIFEST.md);
its published JSON schemas are versions 0.1 to 0.4. Every version forbids keys it does not
define, so a manifest is checked against the version it names (``manifest_version``, or the
older ``dxt_version``): a key, a server type or a ``user_config`` type that version does not
have is refused with its name, and a manifest of a newer version is refused as such, rather
than half understood. The checks are written out here (not a JSON-schema library) because
the parts Threadline acts on need typed values anyway, and so reading a bundle needs no
optional package. docs/mcp.md, "Bundles".
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

KNOWN_VERSIONS = ("0.1", "0.2", "0.3", "0.4")
_COMMON_KEYS = {
    "$schema", "dxt_version", "manifest_version", "name", "display_name", "version", "description",
    "long_description", "author", "repository", "homepage", "documentation", "support", "icon",
    "screenshots", "server", "tools", "tools_generated", "prompts", "prompts_generated", "keywords",
    "license", "compatibility", "user_config",
}  # fmt: skip
_KEYS = {
    "0.1": _COMMON_KEYS,
    "0.2": _COMMON_KEYS | {"privacy_policies"},
    "0.3": _COMMON_KEYS | {"privacy_policies", "icons", "localization", "_meta"},
    "0.4": _COMMON_KEYS | {"privacy_policies", "icons", "localization", "_meta"},
}
_SERVER_TYPES = {v: ("python", "node", "binary") for v in KNOWN_VERSIONS} | {
    "0.4": ("python", "node", "binary", "uv")
}
CONFIG_TYPES = ("string", "number", "boolean", "directory", "file")
_OPTION_KEYS = {"type", "title", "description", "required", "default", "multiple", "sensitive", "min", "max"}
_PLATFORMS = ("darwin", "win32", "linux")
_PLATFORM_NAMES = {"darwin": "macOS", "win32": "Windows", "linux": "Linux"}
_CONFIG_KEY = re.compile(r"^[A-Za-z0-9_.-]+$")


class ManifestError(ValueError):
    """The manifest cannot be used; the message says what is wrong, in a sentence for the user."""


@dataclass(frozen=True, slots=True)
class ConfigOption:
    """One entry of ``user_config``: a field of the install form."""

    key: str
    type: str
    title: str
    description: str
    required: bool = False
    default: Any = None
    multiple: bool = False
    sensitive: bool = False
    min: float | None = None
    max: float | None = None


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """``server.mcp_config`` with this platform's override applied (variables not yet replaced)."""

    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Manifest:
    manifest_version: str
    name: str
    version: str
    description: str
    author: str
    server_type: str
    entry_point: str
    launch: LaunchSpec
    display_name: str = ""
    author_url: str = ""
    homepage: str = ""
    long_description: str = ""
    tools: tuple[tuple[str, str], ...] = ()
    """Declared tools: (name, description)."""
    prompts: tuple[str, ...] = ()
    user_config: tuple[ConfigOption, ...] = ()
    platforms: tuple[str, ...] = ()
    runtimes: dict[str, str] = field(default_factory=dict)
    """``compatibility.runtimes``: npm version ranges by runtime (``{"node": ">=18"}``)."""

    @property
    def title(self) -> str:
        return self.display_name or self.name


def _str(data: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str:
    value = data.get(key)
    if value is None:
        if required:
            raise ManifestError(f"The bundle's manifest has no {where}{key}.")
        return ""
    if not isinstance(value, str):
        raise ManifestError(f"The bundle's manifest has a {where}{key} that is not text.")
    return value


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError(f"The bundle's manifest has {what} that is not a list of text.")
    return tuple(value)


def _env(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ManifestError(f"The bundle's manifest has {what} that is not a table of text values.")
    return {str(k): v for k, v in value.items()}


def _launch(config: Any) -> LaunchSpec:
    if not isinstance(config, dict):
        raise ManifestError("The bundle's manifest has no server.mcp_config.")
    unknown = set(config) - {"command", "args", "env", "platform_overrides"}
    if unknown:
        raise ManifestError(
            f"The bundle's server.mcp_config has keys Threadline does not know: {', '.join(sorted(unknown))}."
        )
    command = _str(config, "command", "server.mcp_config.", required=True)
    args = _strings(config.get("args"), "server.mcp_config.args")
    env = _env(config.get("env"), "server.mcp_config.env")
    overrides = config.get("platform_overrides") or {}
    if not isinstance(overrides, dict):
        raise ManifestError("The bundle's server.mcp_config.platform_overrides is not a table.")
    mine = overrides.get(sys.platform)
    if mine is not None:
        if not isinstance(mine, dict) or set(mine) - {"command", "args", "env"}:
            raise ManifestError(f"The bundle's platform override for {sys.platform} is not valid.")
        command = _str(mine, "command", f"{sys.platform} override's ") or command
        if "args" in mine:
            args = _strings(mine["args"], f"the {sys.platform} override's args")
        if "env" in mine:
            env = _env(mine["env"], f"the {sys.platform} override's env")
    if not command.strip():
        raise ManifestError("The bundle's manifest gives no command to start its server.")
    return LaunchSpec(command=command, args=args, env=env)


def _option(key: str, raw: Any, version: str) -> ConfigOption:
    if not _CONFIG_KEY.match(key):
        raise ManifestError(
            f"The bundle's user_config has a setting named {key!r}, which is not a valid name."
        )
    if not isinstance(raw, dict):
        raise ManifestError(f"The bundle's setting {key!r} is not a table.")
    unknown = set(raw) - _OPTION_KEYS
    if unknown:
        raise ManifestError(
            f"The bundle's setting {key!r} has fields manifest version {version} does not define: "
            f"{', '.join(sorted(unknown))}."
        )
    kind = _str(raw, "type", f"setting {key!r} ", required=True)
    if kind not in CONFIG_TYPES:
        raise ManifestError(
            f"The bundle's setting {key!r} is of type {kind!r}, which Threadline does not know "
            f"(it knows {', '.join(CONFIG_TYPES)})."
        )
    bounds: list[float | None] = []
    for name in ("min", "max"):
        value = raw.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ManifestError(f"The bundle's setting {key!r} has a {name} that is not a number.")
        bounds.append(None if value is None else float(value))
    default = raw.get("default")
    if default is not None and not isinstance(default, str | int | float | bool | list):
        raise ManifestError(f"The bundle's setting {key!r} has a default Threadline cannot use.")
    return ConfigOption(
        key=key,
        type=kind,
        title=_str(raw, "title", f"setting {key!r} ", required=True),
        description=_str(raw, "description", f"setting {key!r} ", required=True),
        required=raw.get("required") is True,
        default=default,
        multiple=raw.get("multiple") is True,
        sensitive=raw.get("sensitive") is True,
        min=bounds[0],
        max=bounds[1],
    )


def relative_inside(path: str) -> bool:
    """Whether ``path`` names a place inside the bundle (relative, no ``..``, no drive)."""
    if not path or path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path) or "\\" in path:
        return False
    return ".." not in PurePosixPath(path).parts


def parse_manifest(data: Any) -> Manifest:
    """A checked ``Manifest``; ``ManifestError`` names the first thing that is wrong."""
    if not isinstance(data, dict):
        raise ManifestError("The bundle's manifest.json is not a JSON object.")
    version = data.get("manifest_version") or data.get("dxt_version")
    if not isinstance(version, str):
        raise ManifestError("The bundle's manifest does not say its manifest_version.")
    if version not in KNOWN_VERSIONS:
        raise ManifestError(
            f"The bundle is made for manifest version {version}; Threadline reads versions "
            f"{KNOWN_VERSIONS[0]} to {KNOWN_VERSIONS[-1]}. "
            "Look for an update of Threadline or an older bundle."
        )
    unknown = set(data) - _KEYS[version]
    if unknown:
        raise ManifestError(
            f"The bundle's manifest has keys manifest version {version} does not define: "
            f"{', '.join(sorted(unknown))}."
        )
    author = data.get("author")
    if not isinstance(author, dict) or not isinstance(author.get("name"), str):
        raise ManifestError("The bundle's manifest does not name its author.")
    server = data.get("server")
    if not isinstance(server, dict):
        raise ManifestError("The bundle's manifest has no server section.")
    unknown = set(server) - {"type", "entry_point", "mcp_config"}
    if unknown:
        raise ManifestError(
            f"The bundle's server section has keys Threadline does not know: {', '.join(sorted(unknown))}."
        )
    server_type = _str(server, "type", "server.", required=True)
    if server_type not in _SERVER_TYPES[version]:
        raise ManifestError(
            f"The bundle's server is of type {server_type!r}, which manifest version {version} does not "
            f"define (it has {', '.join(_SERVER_TYPES[version])})."
        )
    entry_point = _str(server, "entry_point", "server.", required=True)
    if not relative_inside(entry_point):
        raise ManifestError(f"The bundle's entry point {entry_point!r} points outside the bundle.")
    tools = []
    for tool in data.get("tools") or []:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise ManifestError("The bundle's manifest lists a tool without a name.")
        tools.append((tool["name"], str(tool.get("description") or "")))
    prompts = []
    for prompt in data.get("prompts") or []:
        if not isinstance(prompt, dict) or not isinstance(prompt.get("name"), str):
            raise ManifestError("The bundle's manifest lists a prompt without a name.")
        prompts.append(prompt["name"])
    raw_config = data.get("user_config") or {}
    if not isinstance(raw_config, dict):
        raise ManifestError("The bundle's user_config is not a table.")
    compatibility = data.get("compatibility") or {}
    platforms = _strings(
        compatibility.get("platforms") if isinstance(compatibility, dict) else None, "platforms"
    )
    if any(p not in _PLATFORMS for p in platforms):
        raise ManifestError(f"The bundle names platforms Threadline does not know: {', '.join(platforms)}.")
    if platforms and sys.platform not in platforms:
        names = ", ".join(_PLATFORM_NAMES.get(p, p) for p in platforms)
        raise ManifestError(f"The bundle is made for {names} only, not for this computer.")
    runtimes = compatibility.get("runtimes") if isinstance(compatibility, dict) else None
    if runtimes is not None and (
        not isinstance(runtimes, dict) or not all(isinstance(v, str) for v in runtimes.values())
    ):
        raise ManifestError("The bundle's compatibility.runtimes is not a table of version ranges.")
    return Manifest(
        manifest_version=version,
        name=_str(data, "name", "", required=True),
        version=_str(data, "version", "", required=True),
        description=_str(data, "description", "", required=True),
        author=author["name"],
        author_url=str(author.get("url") or ""),
        display_name=_str(data, "display_name", ""),
        homepage=_str(data, "homepage", ""),
        long_description=_str(data, "long_description", ""),
        server_type=server_type,
        entry_point=entry_point,
        launch=_launch(server.get("mcp_config")),
        tools=tuple(tools),
        prompts=tuple(prompts),
        user_config=tuple(_option(str(k), v, version) for k, v in raw_config.items()),
        platforms=platforms,
        runtimes={str(k): v for k, v in (runtimes or {}).items()},
    )
