"""Secret values of MCP server records (``env`` and ``headers``) live in the system keychain.

A value whose name looks secret (it contains KEY, TOKEN, SECRET, PASSWORD,
PASSWD, AUTH, COOKIE or CREDENTIAL, in any case — ``Authorization`` and
``Proxy-Authorization`` included) is written to the keychain through
``keyring`` (service ``threadline-mcp``, user name ``server/env/NAME`` or
``server/header/Name``); the stored JSON, and the record the settings UI sees,
keep only ``STORED_IN_KEYCHAIN`` in its place. Other values stay in the JSON.

A value written as ``${VAR}`` is read from Threadline's own environment when
the server starts and is stored as written: that is the way on a computer
without a keychain (a headless Linux). Saving a secret-looking literal there
raises ``InvalidServerConfig`` saying so — there is no plaintext fallback.
No function here logs a value or puts one in a message.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import replace
from typing import Any, Literal

from threadline.llm.credentials import keychain_available
from threadline.tools.mcp_config import InvalidServerConfig, McpServerConfig

SERVICE = "threadline-mcp"
STORED_IN_KEYCHAIN = "•••• stored in keychain"
"""What the JSON (and the settings editor) holds in place of a secret kept in the keychain."""
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "AUTH", "COOKIE", "CREDENTIAL")
_ENV_REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")

Kind = Literal["env", "header"]


class SecretUnavailableError(Exception):
    """A value the server needs cannot be read; the message names it (never its value)."""


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return upper in {"AUTHORIZATION", "PROXY-AUTHORIZATION"} or any(w in upper for w in SECRET_WORDS)


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


def _must_store(name: str, value: str) -> bool:
    return (
        bool(value) and is_secret_name(name) and value != STORED_IN_KEYCHAIN and env_reference(value) is None
    )


def has_plain_secrets(config: McpServerConfig) -> bool:
    return any(_must_store(k, v) for _, pairs in _sections(config) for k, v in pairs.items())


def stored_names(config: McpServerConfig) -> set[tuple[Kind, str]]:
    return {
        (kind, k) for kind, pairs in _sections(config) for k, v in pairs.items() if v == STORED_IN_KEYCHAIN
    }


def _keyring() -> Any:
    import keyring

    return keyring


def _no_keychain(server: str, kind: Kind, name: str) -> InvalidServerConfig:
    return InvalidServerConfig(
        f"There is no system keychain on this computer, so Threadline cannot store the {_label(kind, name)} "
        f"of MCP server {server!r} safely (it never writes secrets to disk in plain text). Set it in "
        f"Threadline's environment instead and write the value as ${{{name.upper().replace('-', '_')}}}."
    )


def store_secrets(config: McpServerConfig, previous: McpServerConfig | None = None) -> McpServerConfig:
    """Write ``config``'s secret literals to the keychain; the record with markers in their place.

    A marker kept from ``previous`` under another server name (a rename) is copied to the new
    name; the old entries are removed by ``forget_stale`` once the record is saved.
    """
    plain = [(kind, k, v) for kind, pairs in _sections(config) for k, v in pairs.items() if _must_store(k, v)]
    if not plain and (previous is None or previous.name == config.name):
        return config
    if plain and not keychain_available():
        kind, name, _ = plain[0]
        raise _no_keychain(config.name, kind, name)
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
    if previous is not None and previous.name != config.name and keychain_available():
        for kind, name in stored_names(config) & stored_names(previous):
            try:
                value = keyring.get_password(SERVICE, keychain_user(previous.name, kind, name))
                if value is not None:
                    keyring.set_password(SERVICE, keychain_user(config.name, kind, name), value)
            except keyring.errors.KeyringError as err:
                raise InvalidServerConfig(
                    f"The system keychain refused to move the {_label(kind, name)} of MCP server "
                    f"{previous.name!r} ({type(err).__name__})."
                ) from err
    env = {k: STORED_IN_KEYCHAIN if _must_store(k, v) else v for k, v in config.env.items()}
    headers = {k: STORED_IN_KEYCHAIN if _must_store(k, v) else v for k, v in config.headers.items()}
    return replace(config, env=env, headers=headers)


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
