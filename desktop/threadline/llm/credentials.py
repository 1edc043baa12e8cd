"""API keys and provider header values: the system keychain first, then an environment variable.

See docs/design.md §4, §6 and docs/storage.md ("Secrets").

Keys live in the keychain through ``keyring`` (service ``threadline``, user name =
the provider's name), or — where no keychain exists, as on a headless Linux —
in an environment variable the provider config names (``api_key_env``). There is
no plaintext fallback: ``set_api_key`` raises ``KeychainUnavailableError`` with a
message that says so and how to use a variable instead. Keys are never logged;
no function here puts a key in an exception message.

``keyring`` is imported on first use: picking a backend probes D-Bus and is not
free. Its import alone costs memory (docs/performance.md) and reads every installed
package's entry points,
so when ``PYTHON_KEYRING_BACKEND`` names keyring's fail or null backend (headless
machines, CI) and nothing has imported keyring yet, the answer "no keychain" is
given without it: keyring would load exactly that backend, which counts as none.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from dataclasses import replace
from typing import Any

from threadline.core.config import STORED_IN_KEYCHAIN, ProviderConfig, env_reference

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


# -- provider headers ---------------------------------------------------------------------------
#
# A provider's extra HTTP headers (``X-Org``, ``Authorization`` of a gateway ...) may be
# credentials whatever their names, so every value lives in the keychain (service
# ``threadline-provider-headers``, user name ``provider/Header-Name``); the store keeps the
# names only. Without a keychain a value is written ``${VAR}`` and read from Threadline's
# environment, as ``api_key_env`` does for keys (docs/storage.md, "Secrets").

HEADER_SERVICE = "threadline-provider-headers"
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""An HTTP field name (RFC 9110 ``token``)."""


def header_user(provider: str, name: str) -> str:
    return f"{provider}/{name}"


def header_variable(name: str) -> str:
    """A suggested environment variable for header ``name`` (``X-Org`` -> ``X_ORG``)."""
    return "".join(ch if ch.isalnum() else "_" for ch in name.upper()).strip("_") or "HEADER"


def header_how_to_set(provider: str, name: str) -> str:
    """The ways to give header ``name`` of ``provider`` a value again (for messages)."""
    return (
        f"threadline provider add {provider} --header '{name}=VALUE' (kept in the system keychain) or "
        f"--header '{name}=${{{header_variable(name)}}}' (read from that environment variable), "
        "or Settings → Providers → Headers"
    )


def _no_keychain_for_header(provider: str, name: str) -> CredentialsError:
    return CredentialsError(
        f"There is no system keychain on this computer, so Threadline cannot store the header {name} of "
        f"provider {provider} safely (it never writes secrets to disk in plain text). Put the value in an "
        f"environment variable and write ${{{header_variable(name)}}} as the value (on the command line: "
        f"--header '{name}=${{{header_variable(name)}}}')."
    )


def _is_literal(value: str) -> bool:
    return value != STORED_IN_KEYCHAIN and env_reference(value) is None


def set_header_value(provider: str, name: str, value: str) -> None:
    """Keep one header value in the keychain; raises ``CredentialsError`` (no keychain, refused)."""
    backend = _usable_backend()
    if backend is None:
        raise _no_keychain_for_header(provider, name)
    errors = _keyring().errors
    try:
        backend.set_password(HEADER_SERVICE, header_user(provider, name), value)
    except errors.NoKeyringError as err:
        raise _no_keychain_for_header(provider, name) from err
    except errors.KeyringError as err:
        raise CredentialsError(
            f"The system keychain refused to store the header {name} of provider {provider} "
            f"({type(err).__name__}). Unlock the keychain and try again, or write the value as ${{VAR}}."
        ) from err


def _header_value(provider: str, name: str) -> str | None:
    backend = _usable_backend()
    if backend is None:
        return None
    try:
        value = backend.get_password(HEADER_SERVICE, header_user(provider, name))
    except Exception:  # a locked or broken keychain: said as "no value"
        return None
    return None if value is None else str(value)


def store_headers(config: ProviderConfig, previous: ProviderConfig | None = None) -> ProviderConfig:
    """Put the typed header values of ``config`` in the keychain; the config with markers instead.

    A marker kept from ``previous`` under another provider name (a rename) has its value
    copied to the new name. Raises ``CredentialsError`` before anything is saved when a value
    cannot be kept (no keychain: the message says how to use a variable instead).
    """
    bad = next((name for name, _ in config.headers if not _HEADER_NAME.fullmatch(name)), None)
    if bad is not None:
        raise CredentialsError(
            f"{bad!r} is not an HTTP header name: use letters, digits and - only, e.g. X-Org "
            "(no spaces or colons)."
        )
    typed = [(name, value) for name, value in config.headers if value and _is_literal(value)]
    if typed and _usable_backend() is None:
        raise _no_keychain_for_header(config.name, typed[0][0])
    for name, value in typed:
        set_header_value(config.name, name, value)
    if previous is not None and previous.name != config.name:
        for name, value in config.headers:
            if value == STORED_IN_KEYCHAIN:
                kept = _header_value(previous.name, name)
                if kept is not None:
                    set_header_value(config.name, name, kept)
    headers = tuple(
        (name, STORED_IN_KEYCHAIN if value and _is_literal(value) else value)
        for name, value in config.headers
    )
    return replace(config, headers=headers)


def forget_headers(previous: ProviderConfig, current: ProviderConfig | None) -> None:
    """Delete the keychain values of ``previous`` that ``current`` (``None``: removed) no longer uses."""
    keep = (
        {n for n, v in current.headers if v == STORED_IN_KEYCHAIN}
        if current is not None and current.name == previous.name
        else set()
    )
    stale = {n for n, v in previous.headers if v == STORED_IN_KEYCHAIN} - keep
    backend = _usable_backend() if stale else None
    if backend is None:
        return
    for name in stale:
        with contextlib.suppress(Exception):  # already gone, or a locked keychain
            backend.delete_password(HEADER_SERVICE, header_user(previous.name, name))


def resolve_headers(config: ProviderConfig) -> ProviderConfig:
    """``config`` with its header values read from the keychain or the environment.

    Raises ``CredentialsError`` naming the header whose value is missing and how to set it;
    never a value.
    """
    resolved: list[tuple[str, str]] = []
    for name, value in config.headers:
        if value == STORED_IN_KEYCHAIN:
            found = _header_value(config.name, name)
            if found is None:
                where = (
                    "the system keychain has no value for it"
                    if keychain_available()
                    else "there is no system keychain on this computer to read it from"
                )
                raise CredentialsError(
                    f"The header {name} of provider {config.name} has no value: {where}. Set it again: "
                    f"{header_how_to_set(config.name, name)}."
                )
            resolved.append((name, found))
            continue
        variable = env_reference(value)
        if variable is not None:
            found = os.environ.get(variable)
            if found is None:
                raise CredentialsError(
                    f"The header {name} of provider {config.name} is read from ${variable}, but "
                    f"Threadline's environment has no variable {variable}."
                )
            resolved.append((name, found))
            continue
        resolved.append((name, value))
    return replace(config, headers=tuple(resolved))
