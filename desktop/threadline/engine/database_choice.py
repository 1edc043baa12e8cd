"""Which database this data folder's conversations live in: the local file or a server.

The choice cannot be stored in the database itself (it says which database to open), so
it lives in a small file beside it, ``database.json`` in the data folder::

    {"backend": "postgresql",
     "server": {"host": "db.example.org", "port": 5432, "database": "threadline",
                "user": "ana", "tls": "verify-full", "ca_file": "/etc/ssl/our-ca.pem"}}

``"backend": "sqlite"`` (or no file) means the data folder's ``threadline.db``; the server
part is kept then, so switching back later starts from the same form.

The password is never in that file. It goes to the system keychain (service
``threadline-database``, user name ``user@host:port/database``), or — on a computer
without a keychain — comes from the ``THREADLINE_DB_PASSWORD`` environment variable,
which ``threadline db copy`` reads too. Nothing here logs or shows a password;
``describe`` and ``masked_url`` are the forms fit for a person or a log.

Precedence when the app or a command starts: ``--database-url`` on the command line, then
this file's server choice, then the local file. The module imports nothing heavy (no
SQLAlchemy, keyring only when a password is read or stored), because the app reads it
on every start.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from threadline.files.private import private_folder

CONFIG_FILENAME = "database.json"
KEYCHAIN_SERVICE = "threadline-database"
PASSWORD_VARIABLE = "THREADLINE_DB_PASSWORD"
DEFAULT_PORT = 5432
CONNECT_TIMEOUT_S = 10
"""How long the app waits for the server to answer before it reports it unreachable."""

TLS_MODES = ("disable", "prefer", "require", "verify-full")
"""libpq's ``sslmode`` values offered: off, when offered, always, always and check the name and CA."""

SQLITE = "sqlite"
POSTGRESQL = "postgresql"


class DatabaseChoiceError(Exception):
    """The choice could not be read, stored or used; ``user_message`` says what to do."""

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self._user_message = user_message

    @property
    def user_message(self) -> str:
        return self._user_message


_NO_KEYCHAIN_MESSAGE = (
    "There is no system keychain on this computer, so Threadline cannot store the database "
    "password safely (it never writes passwords to disk in plain text). Nothing was saved. "
    f"Leave the password field empty and set the {PASSWORD_VARIABLE} environment variable for "
    "Threadline instead; then save again."
)


@dataclass(frozen=True, slots=True)
class ServerChoice:
    """Where a PostgreSQL database is and how to reach it — everything but the password."""

    host: str
    port: int = DEFAULT_PORT
    database: str = "threadline"
    user: str = ""
    tls: str = "prefer"
    ca_file: str = ""

    @property
    def keychain_key(self) -> str:
        """The keychain user name the password is stored under."""
        return f"{self.user}@{self.host}:{self.port}/{self.database}"

    def describe(self) -> str:
        """``user@host:port/database`` — how the page and the log name the server."""
        user = f"{self.user}@" if self.user else ""
        return f"{user}{_host_part(self.host)}:{self.port}/{self.database}"

    def problems(self) -> list[str]:
        """What must be filled in or fixed before the choice can be used (``[]`` when fine)."""
        found = []
        if not self.host.strip():
            found.append("Enter the server's host name or address.")
        if not 0 < self.port < 65536:
            found.append("The port must be a number from 1 to 65535.")
        if not self.database.strip():
            found.append("Enter the name of the database on the server.")
        if not self.user.strip():
            found.append("Enter the user name to sign in with.")
        if self.tls not in TLS_MODES:
            found.append(f"TLS must be one of {', '.join(TLS_MODES)}.")
        if self.ca_file and not Path(self.ca_file).expanduser().is_file():
            found.append(f"The CA file {self.ca_file} does not exist.")
        if self.tls == "verify-full" and not self.ca_file:
            found.append("Checking the server's certificate (verify-full) needs the CA file that signed it.")
        return found


@dataclass(frozen=True, slots=True)
class DatabaseChoice:
    """What ``database.json`` holds: which backend is in use, and the server form's values."""

    backend: str = SQLITE
    server: ServerChoice | None = None

    @property
    def uses_server(self) -> bool:
        return self.backend == POSTGRESQL and self.server is not None


def choice_path(data_dir: Path) -> Path:
    return Path(data_dir) / CONFIG_FILENAME


def load_choice(data_dir: Path) -> DatabaseChoice:
    """The stored choice; no file means the local file. Raises ``DatabaseChoiceError`` when unreadable."""
    path = choice_path(data_dir)
    try:
        raw = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):  # no file, or no data folder to hold one
        return DatabaseChoice()
    except OSError as err:
        raise DatabaseChoiceError(
            f"Threadline could not read {path} ({err.strerror or 'unreadable'}), which says which "
            "database to use. Check the file's permissions, or delete it to use the local file."
        ) from err
    try:
        data = json.loads(raw)
        backend = str(data.get("backend", SQLITE))
        server_data = data.get("server")
        server = _server_from(server_data) if isinstance(server_data, dict) else None
    except (ValueError, TypeError, AttributeError) as err:
        raise DatabaseChoiceError(
            f"{path} is damaged, so Threadline does not know which database to use. Fix it, or "
            "delete it to use the local file, then start again."
        ) from err
    if backend not in (SQLITE, POSTGRESQL) or (backend == POSTGRESQL and server is None):
        raise DatabaseChoiceError(
            f"{path} names no usable database. Fix it, or delete it to use the local file, then start again."
        )
    return DatabaseChoice(backend=backend, server=server)


def _server_from(data: dict[str, Any]) -> ServerChoice:
    return ServerChoice(
        host=str(data["host"]),
        port=int(data.get("port", DEFAULT_PORT)),
        database=str(data.get("database", "threadline")),
        user=str(data.get("user", "")),
        tls=str(data.get("tls", "prefer")),
        ca_file=str(data.get("ca_file", "")),
    )


def save_choice(data_dir: Path, choice: DatabaseChoice) -> Path:
    """Write ``database.json`` atomically (a crash leaves the old file or the new, never half)."""
    path = choice_path(data_dir)
    payload: dict[str, Any] = {"backend": choice.backend}
    if choice.server is not None:
        payload["server"] = asdict(choice.server)
    try:
        private_folder(path.parent)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".database-", suffix=".json")
    except OSError as err:
        raise _unwritable(path, err) from err
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(payload, f, indent=2)
            f.write("\n")
        os.replace(temp, path)
    except OSError as err:
        Path(temp).unlink(missing_ok=True)
        raise _unwritable(path, err) from err
    return path


def _unwritable(path: Path, err: OSError) -> DatabaseChoiceError:
    return DatabaseChoiceError(
        f"Threadline could not write {path} ({err.strerror or 'not writable'}). Check that the data "
        "folder is writable and has free space, then save again."
    )


def use_local_file(data_dir: Path) -> Path:
    """Switch back to the data folder's file, keeping the server's details for the form."""
    try:
        server = load_choice(data_dir).server
    except DatabaseChoiceError:
        server = None
    return save_choice(data_dir, DatabaseChoice(SQLITE, server))


# -- the password ---------------------------------------------------------------------------


def _keyring() -> Any:
    import keyring

    return keyring


def store_password(server: ServerChoice, password: str) -> None:
    """Keep ``password`` in the system keychain; raises ``DatabaseChoiceError`` when there is none."""
    from threadline.llm.credentials import keychain_available

    if not keychain_available():
        raise DatabaseChoiceError(_NO_KEYCHAIN_MESSAGE)
    keyring = _keyring()
    try:
        keyring.set_password(KEYCHAIN_SERVICE, server.keychain_key, password)
    except keyring.errors.NoKeyringError as err:
        raise DatabaseChoiceError(_NO_KEYCHAIN_MESSAGE) from err
    except keyring.errors.KeyringError as err:
        raise DatabaseChoiceError(
            "The system keychain refused to store the database password "
            f"({type(err).__name__}). Unlock the keychain and save again."
        ) from err


def has_stored_password(server: ServerChoice) -> bool:
    return _keychain_password(server) is not None


def stored_password(server: ServerChoice) -> str | None:
    """The keychain's password for ``server``, else ``$THREADLINE_DB_PASSWORD``, else ``None``."""
    return _keychain_password(server) or os.environ.get(PASSWORD_VARIABLE) or None


def _keychain_password(server: ServerChoice) -> str | None:
    from threadline.llm.credentials import keychain_available

    if not keychain_available():
        return None
    try:
        value = _keyring().get_password(KEYCHAIN_SERVICE, server.keychain_key)
    except Exception:  # a locked or broken keychain: the variable may still serve
        return None
    return str(value) if value else None


# -- URLs -----------------------------------------------------------------------------------


def _host_part(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def connect_options(server: ServerChoice) -> dict[str, str]:
    """libpq's TLS and timeout options for ``server`` (psycopg takes them as connect arguments)."""
    options = {"sslmode": server.tls, "connect_timeout": str(CONNECT_TIMEOUT_S)}
    if server.ca_file:
        options["sslrootcert"] = str(Path(server.ca_file).expanduser())
    return options


def build_url(server: ServerChoice, password: str | None) -> str:
    """The SQLAlchemy URL (``postgresql+psycopg://…``), TLS options in its query.

    SQLAlchemy hands the query's options to psycopg as connect arguments. The result holds
    the password: pass it on, never show or log it (``masked_url`` is for that).
    """
    return _url(server, quote(password, safe="") if password else "")


def masked_url(server: ServerChoice) -> str:
    """The server's URL as it may be shown or logged: ``***`` where the password goes."""
    return _url(server, "***")


def _url(server: ServerChoice, password_part: str) -> str:
    credentials = quote(server.user, safe="")
    if password_part:
        credentials += ":" + password_part
    at = f"{credentials}@" if credentials else ""
    query = urlencode(connect_options(server))
    return (
        f"postgresql+psycopg://{at}{_host_part(server.host)}:{server.port}/"
        f"{quote(server.database, safe='')}?{query}"
    )


def resolve_database_url(data_dir: Path, flag_url: str | None) -> str | None:
    """The URL to open: ``--database-url`` first, then ``database.json``'s server, else ``None``.

    ``None`` means the data folder's SQLite file (the store's default). Raises
    ``DatabaseChoiceError`` when the file is unreadable.
    """
    if flag_url:
        return flag_url
    choice = load_choice(data_dir)
    if not choice.uses_server or choice.server is None:
        return None
    return build_url(choice.server, stored_password(choice.server))
