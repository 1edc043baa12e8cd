"""API keys: the system keychain first, then an environment variable (docs/design.md §4, §6).

Keys live in the keychain through ``keyring`` (service ``threadline``, user name =
the provider's name), or — where no keychain exists, as on a headless Linux —
in an environment variable the provider config names (``api_key_env``). There is
no plaintext fallback: ``set_api_key`` raises ``KeychainUnavailableError`` with a
message that says so and how to use a variable instead. Keys are never logged;
no function here puts a key in an exception message.

``keyring`` is imported on first use: picking a backend probes D-Bus and is not
free. Its import alone is ~2 MB and reads every installed package's entry points,
so when ``PYTHON_KEYRING_BACKEND`` names keyring's fail or null backend (headless
machines, CI) and nothing has imported keyring yet, the answer "no keychain" is
given without it: keyring would load exactly that backend, which counts as none.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from threadline.core.config import ProviderConfig

SERVICE = "threadline"

_NO_KEYCHAIN_MESSAGE = (
    "There is no system keychain on this computer, so Threadline cannot store the API key for "
    "provider {name} safely (it never writes keys to disk in plain text). Put the key in an "
    "environment variable instead and point the provider at it, e.g. "
    "`threadline provider add {name} ... --api-key-env {env}`."
)


class CredentialsError(Exception):
    """Reading or writing a key failed; ``str(err)`` is fit to show the user."""

    @property
    def user_message(self) -> str:
        return str(self)


class KeychainUnavailableError(CredentialsError):
    """No usable keychain: keys must come from an environment variable."""

    def __init__(self, provider: str = "", *, env_hint: str = "") -> None:
        name = provider or "NAME"
        env = env_hint or suggested_env_var(provider)
        super().__init__(_NO_KEYCHAIN_MESSAGE.format(name=name, env=env))
        self.provider = provider


def suggested_env_var(provider: str) -> str:
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in provider.upper()).strip("_")
    return f"{cleaned or 'PROVIDER'}_API_KEY"


def _keyring() -> Any:
    import keyring

    return keyring


_NO_KEYCHAIN_BACKENDS = frozenset({"keyring.backends.fail.Keyring", "keyring.backends.null.Keyring"})
"""``PYTHON_KEYRING_BACKEND`` values (as keyring reads them, unstripped) that mean no keychain."""


def _usable_backend() -> Any | None:
    """The active keyring backend, or ``None`` when it is the fail or null backend."""
    if "keyring" not in sys.modules and os.environ.get("PYTHON_KEYRING_BACKEND") in _NO_KEYCHAIN_BACKENDS:
        return None  # keyring would load that backend first (its ``load_env``); once imported, ask it
    keyring = _keyring()
    from keyring.backends import fail, null

    try:
        backend = keyring.get_keyring()
    except Exception:
        return None
    if isinstance(backend, fail.Keyring | null.Keyring):
        return None
    chained = getattr(backend, "backends", None)
    if chained is not None and not any(not isinstance(b, fail.Keyring | null.Keyring) for b in chained):
        return None
    return backend


def keychain_available() -> bool:
    return _usable_backend() is not None


def has_keychain_entry(provider: str) -> bool:
    """Whether the keychain holds a key for ``provider`` (``False`` without a keychain)."""
    backend = _usable_backend()
    if backend is None:
        return False
    try:
        return bool(backend.get_password(SERVICE, provider))
    except Exception:
        return False


def get_api_key(config: ProviderConfig) -> str | None:
    """The key for ``config``: the keychain entry, else ``$config.api_key_env``, else ``None``."""
    backend = _usable_backend()
    if backend is not None:
        try:
            key = backend.get_password(SERVICE, config.name)
        except Exception:  # a locked or broken keychain: the variable may still serve
            key = None
        if key:
            return str(key)
    if config.api_key_env:
        value = os.environ.get(config.api_key_env, "").strip()
        if value:
            return value
    return None


def set_api_key(provider: str, key: str) -> None:
    backend = _usable_backend()
    if backend is None:
        raise KeychainUnavailableError(provider)
    errors = _keyring().errors
    try:
        backend.set_password(SERVICE, provider, key)
    except errors.NoKeyringError as err:
        raise KeychainUnavailableError(provider) from err
    except errors.KeyringError as err:
        raise CredentialsError(
            f"The system keychain refused to store the API key for provider {provider} "
            f"({type(err).__name__}). Unlock the keychain and try again, or use an environment variable."
        ) from err


def delete_api_key(provider: str) -> None:
    """Forget the stored key; nothing happens when there is none."""
    backend = _usable_backend()
    if backend is None:
        raise KeychainUnavailableError(provider)
    errors = _keyring().errors
    try:
        backend.delete_password(SERVICE, provider)
    except errors.PasswordDeleteError:
        pass
    except errors.KeyringError as err:
        raise CredentialsError(
            f"The system keychain refused to delete the API key for provider {provider} "
            f"({type(err).__name__})."
        ) from err
