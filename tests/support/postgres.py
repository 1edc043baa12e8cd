"""A private PostgreSQL server for the test session, started with initdb/pg_ctl.

Why a private server: tests must not depend on (or damage) a system cluster,
and CI gets the same setup from Debian's ``postgresql`` package alone. The
server lives in a temp dir, listens on a free loopback port with trust auth,
runs without fsync (speed; the data is thrown away) and is stopped at the end.

initdb refuses to run as root, so when the tests run as root (CI containers)
the server runs as the ``postgres`` system user through ``runuser``.

Set ``THREADLINE_TEST_POSTGRES_URL`` (an admin URL such as
``postgresql+psycopg://postgres@127.0.0.1:5432/postgres``) to use an existing
server instead. Without binaries or such a URL the tests that need the server
are skipped with the reason.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

URL_ENV = "THREADLINE_TEST_POSTGRES_URL"
SERVER_USER = "postgres"


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL can be started here; the message says why (shown as the skip reason)."""


def find_bin_dir() -> Path | None:
    """Where initdb/pg_ctl live: PATH first, then Debian's versioned folders (newest first)."""
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(initdb).resolve().parent
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
        reverse=True,
    )
    return Path(candidates[0]).parent if candidates else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PostgresServer:
    """A running server; ``create_database`` gives each test its own empty database."""

    admin_url: str
    """psycopg (libpq) URL of the maintenance database."""
    sqlalchemy_base: str
    """``postgresql+psycopg://user@host:port`` without a database name."""
    bin_dir: Path | None = None
    base_dir: Path | None = None
    owned: bool = False
    run_as: list[str] = field(default_factory=list)
    options: str = ""
    """The server's command-line options (port, socket folder…), for ``start_again``."""

    def create_database(self) -> str:
        """A fresh database; returns its SQLAlchemy URL."""
        import psycopg

        name = f"threadline_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"{self.sqlalchemy_base}/{name}"

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    @property
    def can_restart(self) -> bool:
        """Whether this test session started the server (and so may stop and start it)."""
        return self.owned and self.bin_dir is not None and self.base_dir is not None

    def stop_for_a_while(self) -> None:
        """Shut the server down (``fast``: sessions are cut off), keeping its data for ``start_again``."""
        assert self.can_restart and self.bin_dir is not None and self.base_dir is not None
        data = self.base_dir / "data"
        subprocess.run(
            [*self.run_as, str(self.bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
            check=True,
            capture_output=True,
            timeout=60,
        )

    def start_again(self) -> None:
        """Start the server ``stop_for_a_while`` stopped, on its port; returns once it accepts connections."""
        assert self.can_restart and self.bin_dir is not None and self.base_dir is not None
        data, log = self.base_dir / "data", self.base_dir / "server.log"
        subprocess.run(
            [*self.run_as, str(self.bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", self.options,
             "-w", "-t", "60", "start"],
            check=True,
            capture_output=True,
            timeout=90,
        )  # fmt: skip
        _wait_until_ready(self)

    def stop(self) -> None:
        if not self.owned or self.bin_dir is None or self.base_dir is None:
            return
        data = self.base_dir / "data"
        subprocess.run(
            [*self.run_as, str(self.bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            check=False,
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(self.base_dir, ignore_errors=True)


def _run_as_prefix() -> tuple[list[str], int | None, int | None]:
    """Command prefix to run the server unprivileged, and the uid/gid to own its files."""
    if os.geteuid() != 0:
        return [], None, None
    try:
        user = pwd.getpwnam(SERVER_USER)
    except KeyError:
        raise PostgresUnavailable(
            f"running as root and there is no {SERVER_USER!r} user to run PostgreSQL as "
            "(install Debian's postgresql package, or set " + URL_ENV + ")"
        ) from None
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PostgresUnavailable("running as root and runuser (util-linux) is missing")
    return [runuser, "-u", SERVER_USER, "--"], user.pw_uid, user.pw_gid


def start_postgres() -> PostgresServer:
    """Start a throwaway server (or use ``THREADLINE_TEST_POSTGRES_URL``)."""
    existing = os.environ.get(URL_ENV)
    if existing:
        base, _, _database = existing.rpartition("/")
        return PostgresServer(admin_url=existing.replace("+psycopg", ""), sqlalchemy_base=base)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise PostgresUnavailable(
            "the psycopg package is not installed (pip install 'psycopg[binary]')"
        ) from None
    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise PostgresUnavailable(
            "no PostgreSQL server binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin; "
            "install Debian's postgresql package"
        )
    run_as, uid, gid = _run_as_prefix()
    base = Path(tempfile.mkdtemp(prefix="threadline-pg-"))
    base.chmod(0o700)
    if uid is not None and gid is not None:
        os.chown(base, uid, gid)
    data, log = base / "data", base / "server.log"
    port = free_port()

    def run(*args: str, timeout: float = 120) -> None:
        result = subprocess.run(
            [*run_as, *args], capture_output=True, text=True, timeout=timeout, check=False
        )
        if result.returncode != 0:
            detail = (result.stderr or result.stdout).strip()
            if log.exists():
                with contextlib.suppress(OSError):
                    detail += "\n" + log.read_text(errors="replace")[-2000:]
            shutil.rmtree(base, ignore_errors=True)
            raise PostgresUnavailable(f"{Path(args[0]).name} failed: {detail}")

    run(
        str(bin_dir / "initdb"), "-D", str(data), "-U", SERVER_USER, "-A", "trust",
        "-E", "UTF8", "--locale=C", "--no-sync",
    )  # fmt: skip
    options = (
        f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=50"
    )
    run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "-t", "60", "start")
    server = PostgresServer(
        admin_url=f"postgresql://{SERVER_USER}@127.0.0.1:{port}/postgres",
        sqlalchemy_base=f"postgresql+psycopg://{SERVER_USER}@127.0.0.1:{port}",
        bin_dir=bin_dir,
        base_dir=base,
        owned=True,
        run_as=run_as,
        options=options,
    )
    _wait_until_ready(server)
    return server


def _wait_until_ready(server: PostgresServer, timeout: float = 30) -> None:
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(server.admin_url, connect_timeout=2):
                return
        except psycopg.OperationalError as error:
            if time.monotonic() > deadline:
                server.stop()
                raise PostgresUnavailable(f"PostgreSQL did not accept connections: {error}") from error
            time.sleep(0.1)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server; tests using it skip (with the reason) if none can start."""
    try:
        server = start_postgres()
    except PostgresUnavailable as error:
        pytest.skip(f"PostgreSQL unavailable: {error}")
    try:
        yield server
    finally:
        server.stop()
