"""Values of MCP server records (``env`` and ``headers``) live in the system keychain.

Which values are secret is decided by where the user puts them, never guessed
from their names: a token called ``GH_PAT`` is as secret as one called
``GITHUB_TOKEN``. So every value is written to the keychain through
``keyring`` (service ``threadline-mcp``, user name ``server/env/NAME`` or
``server/header/Name``) and the stored JSON, and the record the settings UI
sees, keep only ``STORED_IN_KEYCHAIN`` in its place. Two kinds of value stay
in the JSON as written:

- a name the user marked "not a secret" (``public_env`` / ``public_headers``
  of the record), e.g. ``LOG_LEVEL=debug``;
- a value written as ``${VAR}``: it is read from Threadline's own environment
  when the server starts. That is the way on a computer without a keychain (a
  headless Linux). Saving any other literal there raises
  ``InvalidServerConfig`` saying so: there is no plaintext fallback.

No function here logs a value or puts one in a message.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import replace
from typing import Any, Literal

from threadline.core.config import STORED_IN_KEYCHAIN as _KEYCHAIN_MARKER
from threadline.llm.credentials import keychain_available
from threadline.tools.mcp.config import InvalidServerConfig, McpServerConfig

SERVICE = "threadline-mcp"
STORED_IN_KEYCHAIN = _KEYCHAIN_MARKER
"""What the JSON (and the settings editor) holds in place of a secret kept in the keychain."""
MASK = "••••••"
"""How ``mcp list`` shows a value kept in the keychain."""
_ENV_REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")

Kind = Literal["env", "header"]


class SecretUnavailableError(Exception):
    """A value the server needs cannot be read; the message names it (never its value)."""


def env_reference(value: str) -> str | None:
    """``VAR`` for a value written as ``${VAR}``, else ``None``."""
    match = _ENV_REFERENCE.match(value.strip())
    return match.group(1) if match else None


def keychain_user(server: str, kind: Kind, name: str) -> str:
    return f"{server}/{kind}/{name}"


def _label(kind: Kind, name: str) -> str:
    return f"environment variable {name}" if kind == "env" else f"header {name}"


def _sections(config: McpServerConfig) -> list[tuple[Kind, dict[str, str]]]:
    return [("env", config.env), ("header", config.headers)]


def is_public(config: McpServerConfig, kind: Kind, name: str) -> bool:
    """Whether the user marked this value "not a secret" (it stays in the settings)."""
    return name in (config.public_env if kind == "env" else config.public_headers)


def _must_store(config: McpServerConfig, kind: Kind, name: str, value: str) -> bool:
    return (
        bool(value)
        and value != STORED_IN_KEYCHAIN
        and env_reference(value) is None
        and not is_public(config, kind, name)
    )


def has_plain_secrets(config: McpServerConfig) -> bool:
    """Whether a value of ``config`` would be written to disk as it is but is not marked "not a secret"."""
    return any(_must_store(config, kind, k, v) for kind, pairs in _sections(config) for k, v in pairs.items())


def stored_names(config: McpServerConfig) -> set[tuple[Kind, str]]:
    return {
        (kind, k) for kind, pairs in _sections(config) for k, v in pairs.items() if v == STORED_IN_KEYCHAIN
    }


def masked(config: McpServerConfig, kind: Kind) -> dict[str, str]:
    """The ``env`` or ``headers`` of ``config`` fit to print: keychain values as ``MASK``.

    A value marked "not a secret" and a ``${VAR}`` reference are shown as written;
    anything else (a literal not yet moved to the keychain) is masked too.
    """
    pairs = config.env if kind == "env" else config.headers
    return {
        k: v if is_public(config, kind, k) or env_reference(v) is not None or not v else MASK
        for k, v in pairs.items()
    }


def _keyring() -> Any:
    import keyring

    return keyring


def no_keychain_message(server: str, kind: Kind, name: str) -> str:
    variable = "".join(ch if ch.isalnum() else "_" for ch in name.upper())
    how = f"--env-from {name}={variable}" if kind == "env" else f"--header {name}=${{{variable}}}"
    return (
        f"There is no system keychain on this computer, so Threadline cannot store the {_label(kind, name)} "
        f"of MCP server {server!r} safely (it never writes secrets to disk in plain text). Put the value in "
        f"an environment variable of Threadline, e.g. {variable}, and write ${{{variable}}} as the value "
        f"(on the command line: {how}); or, if the value is not a secret, mark it so."
    )


def store_secrets(config: McpServerConfig, previous: McpServerConfig | None = None) -> McpServerConfig:
    """Write ``config``'s literal values to the keychain; the record with markers in their place.

    A marker kept from ``previous`` under another server name (a rename) is copied to the new
    name; a marker whose name is now marked "not a secret" is replaced by the value read back
    from the keychain. The entries no longer used are removed by ``forget_stale`` once the
    record is saved.
    """
    plain = [
        (kind, k, v)
        for kind, pairs in _sections(config)
        for k, v in pairs.items()
        if _must_store(config, kind, k, v)
    ]
    revealed = [(kind, k) for kind, k in stored_names(config) if is_public(config, kind, k)]
    renamed = previous is not None and previous.name != config.name
    if not plain and not revealed and not renamed:
        return config
    if plain and not keychain_available():
        kind, name, _ = plain[0]
        raise InvalidServerConfig(no_keychain_message(config.name, kind, name))
    keyring = _keyring()
    for kind, name, value in plain:
        try:
            keyring.set_password(SERVICE, keychain_user(config.name, kind, name), value)
        except keyring.errors.KeyringError as err:
            raise InvalidServerConfig(
                f"The system keychain refused to store the {_label(kind, name)} of MCP server "
                f"{config.name!r} ({type(err).__name__}). Unlock the keychain and try again, or write "
                "the value as ${VAR} to read it from Threadline's environment."
            ) from err
    source = previous.name if previous is not None else config.name
    public_values: dict[tuple[Kind, str], str] = {}
    for kind, name in revealed:
        public_values[(kind, name)] = _read_back(source, kind, name)
    if renamed and keychain_available():
        assert previous is not None
        for kind, name in (stored_names(config) & stored_names(previous)) - set(revealed):
            value = _read_back(previous.name, kind, name)
            try:
                keyring.set_password(SERVICE, keychain_user(config.name, kind, name), value)
            except keyring.errors.KeyringError as err:
                raise InvalidServerConfig(
                    f"The system keychain refused to move the {_label(kind, name)} of MCP server "
                    f"{previous.name!r} ({type(err).__name__})."
                ) from err

    def kept(kind: Kind, name: str, value: str) -> str:
        if (kind, name) in public_values:
            return public_values[(kind, name)]
        return STORED_IN_KEYCHAIN if _must_store(config, kind, name, value) else value

    env = {k: kept("env", k, v) for k, v in config.env.items()}
    headers = {k: kept("header", k, v) for k, v in config.headers.items()}
    return replace(config, env=env, headers=headers)


def _read_back(server: str, kind: Kind, name: str) -> str:
    """A value kept in the keychain, for moving it (rename) or keeping it in the settings."""
    if not keychain_available():
        raise InvalidServerConfig(
            f"The {_label(kind, name)} of MCP server {server!r} is in the system keychain, which cannot "
            "be used now. Type the value again."
        )
    keyring = _keyring()
    try:
        value = keyring.get_password(SERVICE, keychain_user(server, kind, name))
    except keyring.errors.KeyringError as err:
        raise InvalidServerConfig(
            f"The system keychain refused to give the {_label(kind, name)} of MCP server {server!r} "
            f"({type(err).__name__}). Unlock it and try again, or type the value again."
        ) from err
    if value is None:
        raise InvalidServerConfig(
            f"The system keychain has no value for the {_label(kind, name)} of MCP server {server!r}. "
            "Type the value again."
        )
    return str(value)


def forget_stale(previous: McpServerConfig, current: McpServerConfig | None) -> None:
    """Delete ``previous``'s keychain entries that ``current`` (``None``: removed) no longer uses."""
    keep = stored_names(current) if current is not None and current.name == previous.name else set()
    stale = stored_names(previous) - keep
    if not stale or not keychain_available():
        return
    keyring = _keyring()
    for kind, name in stale:
        with contextlib.suppress(keyring.errors.KeyringError):  # already gone, or a locked keychain
            keyring.delete_password(SERVICE, keychain_user(previous.name, kind, name))


def resolve_secrets(config: McpServerConfig) -> McpServerConfig:
    """The record with keychain markers and ``${VAR}`` values replaced by the real values.

    Raises ``SecretUnavailableError`` naming the missing value (the server then shows it as
    its error).
    """

    def resolve(kind: Kind, name: str, value: str) -> str:
        if value == STORED_IN_KEYCHAIN:
            if not keychain_available():
                raise SecretUnavailableError(
                    f"the {_label(kind, name)} is stored in the system keychain, but there is no usable "
                    "keychain now. Write the value as ${VAR} to read it from Threadline's environment."
                )
            keyring = _keyring()
            try:
                secret = keyring.get_password(SERVICE, keychain_user(config.name, kind, name))
            except keyring.errors.KeyringError as err:
                raise SecretUnavailableError(
                    f"the system keychain refused to give the {_label(kind, name)} ({type(err).__name__}); "
                    "unlock it and try again."
                ) from err
            if secret is None:
                raise SecretUnavailableError(
                    f"the system keychain has no value for the {_label(kind, name)}; edit the server "
                    "and enter it again."
                )
            return str(secret)
        variable = env_reference(value)
        if variable is not None:
            found = os.environ.get(variable)
            if found is None:
                raise SecretUnavailableError(
                    f"the {_label(kind, name)} is read from ${{{variable}}}, but Threadline's environment "
                    f"has no variable {variable}."
                )
            return found
        return value

    env = {k: resolve("env", k, v) for k, v in config.env.items()}
    headers = {k: resolve("header", k, v) for k, v in config.headers.items()}
    return replace(config, env=env, headers=headers)
