"""The ``sensitive`` answers to a bundle's settings, kept in the system keychain only.

The server record holds them too, but only as environment values, which the server manager
moves to the keychain under the server's name (``mcp_secrets``). The answers themselves are
kept here as well (service ``threadline-mcp-extension``, user ``server/KEY``) so an update,
whose manifest may use them differently, starts from what the user typed. There is no
plaintext fallback: without a keychain an extension with a sensitive setting is not
installed. No function here logs a value or puts one in a message.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Any

from threadline.llm.credentials import keychain_available
from threadline.tools.mcp.bundles import BundleError

SERVICE = "threadline-mcp-extension"


def _user(server: str, key: str) -> str:
    return f"{server}/{key}"


def _keyring() -> Any:
    import keyring

    return keyring


def store(server: str, values: Mapping[str, str]) -> None:
    if not values:
        return
    if not keychain_available():
        raise BundleError(
            "There is no system keychain on this computer, so Threadline cannot keep this extension's "
            "secret settings (it never writes them to disk in plain text). Not installed."
        )
    keyring = _keyring()
    for key, value in values.items():
        try:
            keyring.set_password(SERVICE, _user(server, key), value)
        except keyring.errors.KeyringError as err:
            raise BundleError(
                f"The system keychain refused to store a secret setting ({type(err).__name__}). "
                "Unlock it and try again."
            ) from err


def read(server: str, keys: Iterable[str]) -> dict[str, str]:
    """The stored answers of ``keys`` that can be read (a missing one is left out: asked again)."""
    if not keychain_available():
        return {}
    keyring = _keyring()
    found: dict[str, str] = {}
    for key in keys:
        with contextlib.suppress(keyring.errors.KeyringError):
            value = keyring.get_password(SERVICE, _user(server, key))
            if value is not None:
                found[key] = str(value)
    return found


def forget(server: str, keys: Iterable[str]) -> None:
    if not keychain_available():
        return
    keyring = _keyring()
    for key in keys:
        with contextlib.suppress(keyring.errors.KeyringError):  # already gone, or a locked keychain
            keyring.delete_password(SERVICE, _user(server, key))
