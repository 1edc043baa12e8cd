"""An in-memory keyring backend for tests (the real keychain is never touched).

Usage::

    import keyring
    from tests.support.memory_keyring import MemoryKeyring

    keyring.set_keyring(MemoryKeyring())

or the ``memory_keyring`` / ``no_keyring`` fixtures from ``tests.support.fixtures``.
"""

from __future__ import annotations

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class MemoryKeyring(KeyringBackend):
    priority = 1  # never chosen on its own; tests set it explicitly

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        try:
            del self.entries[(service, username)]
        except KeyError:
            raise PasswordDeleteError(f"no entry for {username!r}") from None
