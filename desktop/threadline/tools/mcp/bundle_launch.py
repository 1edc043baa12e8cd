"""From an installed bundle's manifest and the user's answers to an ordinary MCP server record.

The manifest's ``mcp_config`` (this platform's override applied) may use variables, replaced
as the MCP bundle specification says: ``${__dirname}`` (the unpacked folder), ``${HOME}``,
``${DESKTOP}``, ``${DOCUMENTS}``, ``${DOWNLOADS}``, ``${pathSeparator}`` and ``${/}``, and
``${user_config.KEY}`` (the user's answer or the default; a list given alone as an argument
becomes several arguments, a boolean ``true``/``false``).

Where a value goes decides how it is kept (docs/storage.md, "Secrets"): a ``sensitive``
answer may reach the server only through its environment, whose values the server manager
moves to the keychain; an environment value made only of non-sensitive parts is marked "not
a secret" and stays readable in the settings. A manifest that puts a sensitive answer on the
command line (stored as written) is refused, as is a ``${__dirname}`` path that leads out of
the bundle's folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from threadline.tools.mcp.bundle_manifest import ConfigOption, Manifest
from threadline.tools.mcp.bundles import BundleError
from threadline.tools.mcp.config import McpServerConfig, Transport

_VARIABLE = re.compile(r"\$\{([^}]+)\}")
_PATH_END = re.compile(r"[\s:;,=\"']")
_WHOLE_USER_VALUE = re.compile(r"^\$\{user_config\.([^}]+)\}$")

Values = dict[str, Any]
"""Answers to ``user_config``: text, a number, a boolean, or a list of text (``multiple``)."""


def system_variables(folder: Path) -> dict[str, str]:
    home = Path.home()
    return {
        "__dirname": str(folder),
        "HOME": str(home),
        "DESKTOP": str(home / "Desktop"),
        "DOCUMENTS": str(home / "Documents"),
        "DOWNLOADS": str(home / "Downloads"),
        "pathSeparator": os.sep,
        "/": os.sep,
    }


def _empty(value: Any) -> bool:
    return (
        value is None
        or value == ""
        or (isinstance(value, list) and (not value or any(v in (None, "") for v in value)))
    )


def check_values(manifest: Manifest, values: Mapping[str, Any]) -> Values:
    """The answers merged over the defaults, each checked; ``BundleError`` says which is wrong."""
    merged: Values = {}
    for option in manifest.user_config:
        value = values.get(option.key, option.default)
        if _empty(value):
            if option.required:
                raise BundleError(f"{option.title} is required.")
            continue
        merged[option.key] = _checked(option, value)
    return merged


def _checked(option: ConfigOption, value: Any) -> Any:
    if option.type == "boolean":
        if not isinstance(value, bool):
            raise BundleError(f"{option.title} must be on or off.")
        return value
    if option.type == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BundleError(f"{option.title} must be a number.")
        if (option.min is not None and value < option.min) or (option.max is not None and value > option.max):
            raise BundleError(f"{option.title} must be between {_text(option.min)} and {_text(option.max)}.")
        return value
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(v, str) for v in items):
        raise BundleError(f"{option.title} must be text.")
    if option.multiple:
        return list(items)
    if len(items) != 1:
        raise BundleError(f"{option.title} takes one value.")
    return items[0]


def _text(value: Any) -> str:
    """A value as the specification writes it into a string (numbers as JavaScript would)."""
    if value is None:
        return "any"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class _Substitution:
    def __init__(self, manifest: Manifest, folder: Path, values: Values) -> None:
        self.folder = folder
        self.variables = system_variables(folder)
        self.values = values
        self.sensitive = {o.key for o in manifest.user_config if o.sensitive}
        self.options = {o.key for o in manifest.user_config}
        self.used_secret = False

    def value(self, name: str) -> str | list[str] | None:
        if name.startswith("user_config."):
            key = name.removeprefix("user_config.")
            if key not in self.values:
                return None
            self.used_secret |= key in self.sensitive
            value = self.values[key]
            return [str(v) for v in value] if isinstance(value, list) else _text(value)
        return self.variables.get(name)

    def text(self, template: str) -> str:
        def replace(match: re.Match[str]) -> str:
            value = self.value(match.group(1))
            if value is None:
                return match.group(0)  # an unknown variable stays as written, as the reference host does
            return os.pathsep.join(value) if isinstance(value, list) else value

        for after in template.split("${__dirname}")[1:]:
            # The path that follows each ${__dirname} (up to a space or a list separator, as
            # in --config=${__dirname}/a.json or A:${__dirname}/b) must stay in the folder.
            tail = _VARIABLE.sub(replace, _PATH_END.split(after, maxsplit=1)[0])
            resolved = Path(os.path.normpath(f"{self.folder}{tail}"))
            if resolved != self.folder and self.folder not in resolved.parents:
                raise BundleError(
                    f"The bundle's manifest points outside the bundle ({template!r}). Not installed."
                )
        result = _VARIABLE.sub(replace, template)
        return result

    def args(self, templates: tuple[str, ...]) -> list[str]:
        out: list[str] = []
        for template in templates:
            whole = _WHOLE_USER_VALUE.match(template)
            value = self.value(f"user_config.{whole.group(1)}") if whole else None
            if whole and value is None and whole.group(1) in self.options:
                continue  # an optional setting left empty adds no argument (a list of none, or no text)
            if isinstance(value, list):
                out.extend(value)
            else:
                out.append(self.text(template))
        return out


def server_config(manifest: Manifest, folder: Path, name: str, values: Values) -> McpServerConfig:
    """The stdio server record that runs the unpacked bundle in ``folder`` as its manifest says."""
    folder = Path(os.path.normpath(folder))
    entry = Path(os.path.normpath(folder / manifest.entry_point))
    if folder not in entry.parents:
        raise BundleError(f"The bundle's entry point {manifest.entry_point!r} points outside the bundle.")
    sub = _Substitution(manifest, folder, values)
    command = sub.text(manifest.launch.command)
    args = sub.args(manifest.launch.args)
    if sub.used_secret:
        raise _secret_on_command_line(manifest)
    env: dict[str, str] = {}
    public: list[str] = []
    for key, template in manifest.launch.env.items():
        sub.used_secret = False
        env[key] = sub.text(template)
        if not sub.used_secret:
            public.append(key)
    return McpServerConfig(
        name=name,
        transport=Transport.STDIO,
        command=command,
        args=tuple(args),
        env=env,
        cwd=str(folder),
        public_env=tuple(public),
    ).validate()


def check_launch(manifest: Manifest, folder: Path) -> None:
    """Refuse, before any question is asked, what no answer can fix: a ``${__dirname}`` path out
    of the folder, or a secret setting on the command line."""
    sensitive = {o.key for o in manifest.user_config if o.sensitive}
    for word in (manifest.launch.command, *manifest.launch.args):
        used = {m.group(1).removeprefix("user_config.") for m in _VARIABLE.finditer(word)}
        if used & sensitive:
            raise _secret_on_command_line(manifest)
    sub = _Substitution(manifest, Path(os.path.normpath(folder)), {})
    for word in (manifest.launch.command, *manifest.launch.args, *manifest.launch.env.values()):
        sub.text(word)


def launch_preview(manifest: Manifest, folder: Path) -> tuple[str, dict[str, str]]:
    """The command line the bundle will run and its environment, answers shown by their
    variable (``${user_config.X}``), for the install dialog."""
    import shlex

    sub = _Substitution(manifest, folder, {})

    def shown(word: str) -> str:
        try:
            return sub.text(word)
        except BundleError:
            return word  # refused at install; shown as written

    command = shlex.join(shown(w) for w in [manifest.launch.command, *manifest.launch.args])
    return command, {k: shown(v) for k, v in manifest.launch.env.items()}


def _secret_on_command_line(manifest: Manifest) -> BundleError:
    return BundleError(
        f"{manifest.title} passes a secret setting on its command line, where Threadline would have to "
        "store it in plain text. Not installed; ask its author to pass it in the environment instead."
    )
