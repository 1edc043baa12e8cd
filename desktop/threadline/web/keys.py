"""Brave's and Tavily's API keys: in the system keychain only (service ``threadline-web``,
user name the provider), or read from an environment variable the setting names.

There is no plaintext fallback (docs/storage.md, "Secrets"): without a keychain
``store_key`` raises ``WebError`` saying to use a variable instead. No function here logs a
key or puts one in a message. Keychain calls may block (D-Bus): callers run them in a thread.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from threadline.llm.credentials import keychain_available
from threadline.web.config import WebConfig, WebProvider
from threadline.web.errors import WebError

SERVICE = "threadline-web"


def _keyring() -> Any:
    import keyring

    return keyring


def store_key(provider: WebProvider, key: str) -> None:
    if not keychain_available():
        raise WebError(
            f"There is no system keychain on this computer, so the {provider.label} key cannot be kept "
            f"safely. Put it in an environment variable and run `threadline web use {provider.value} "
            "--api-key-env VAR`."
        )
    keyring = _keyring()
    try:
        keyring.set_password(SERVICE, provider.value, key)
    except keyring.errors.KeyringError as err:
        raise WebError(
            f"The system keychain refused to keep the {provider.label} key ({type(err).__name__}). "
            "Unlock it and try again."
        ) from err


def stored_key(provider: WebProvider) -> str | None:
    if not keychain_available():
        return None
    try:
        value = _keyring().get_password(SERVICE, provider.value)
    except Exception:  # a locked or broken keychain: the variable may still serve
        return None
    return str(value) if value else None


def forget_key(provider: WebProvider) -> None:
    if not keychain_available():
        return
    keyring = _keyring()
    with contextlib.suppress(keyring.errors.PasswordDeleteError):
        keyring.delete_password(SERVICE, provider.value)


def api_key(config: WebConfig) -> str | None:
    """The key for the chosen provider: the keychain's, else ``$api_key_env``'s."""
    if not config.provider.needs_key:
        return None
    key = stored_key(config.provider)
    if key:
        return key
    if config.api_key_env:
        return os.environ.get(config.api_key_env, "").strip() or None
    return None
