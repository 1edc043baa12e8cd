"""Two Threadline app instances on one database, under Xvfb: one streams, the other shows it.

Two real app processes (``python -m threadline``) share one database — one SQLite file (two
windows of one person), or a database on the tests' PostgreSQL server (two machines) — each
with the same chat open (the
window state stored in the database reopens it). A reader in Debian's Python (pyatspi)
types a prompt into the first instance's message box and presses its Send through the
accessibility bus, then reads the second instance's "Messages" list as the reply streams
from the replay server: it must see the reply grow (several partial texts, each a prefix
of the next) and end complete. The change feed is what carries it (``docs/storage.md``).

Skipped only when the system packages are missing, like ``test_atspi_e2e``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.cli_process import ENV, threadline
from tests.support.postgres import PostgresServer, postgres_server  # noqa: F401  (fixture)
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response
from tests.ui.test_atspi_e2e import MISSING, SYSTEM_PYTHON

from threadline.engine.engine import DATABASE_FILENAME
from threadline.store.repository import Store
from threadline.ui.window.main_window import WINDOW_STATE_KEY

HERE = Path(__file__).resolve().parent
PIECES = [f"Paris fact {n}. " for n in range(40)]
REPLY = "".join(PIECES).strip()

pytestmark = pytest.mark.skipif(
    bool(MISSING),
    reason=f"the accessibility-bus test needs {', '.join(MISSING)} (.ci/setup --dev installs them)",
)


def cli(data_dir: Path, database: str, *args: str) -> subprocess.CompletedProcess[str]:
    return (
        threadline(data_dir, "--database-url", database, *args) if database else threadline(data_dir, *args)
    )


def shared_chat(data_dir: Path, database: str, server: ReplayServer) -> str:
    """A database with the replay provider and one answered chat, which the window reopens."""
    added = cli(
        data_dir, database, "provider", "add", "replay", "--kind", "openai",
        "--base-url", server.openai_base_url, "--model", "gpt-4o-mini",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    server.enqueue(sse_response(openai_text_stream(["Hello! Ask me anything."])))
    done = cli(data_dir, database, "ask", "Hello?")
    assert done.returncode == 0, done.stderr
    session_id = done.stderr.split("session ", 1)[1].split()[0]

    async def reopen_it() -> None:
        store = await Store.open(database or Store.sqlite_url(data_dir / DATABASE_FILENAME))
        try:
            await store.set_setting(WINDOW_STATE_KEY, {"tabs": [session_id], "current": session_id})
        finally:
            await store.close()

    asyncio.run(reopen_it())
    return session_id


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest) -> Iterator[str]:
    """Empty for the first instance's own SQLite file, else a database on the tests' PostgreSQL server."""
    if request.param == "sqlite":
        yield ""
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.create_database()
    try:
        yield url
    finally:
        server.drop_database(url)


@pytest.mark.timeout(300)
def test_a_reply_streamed_in_one_instance_grows_in_the_other(
    tmp_path: Path, replay_server: ReplayServer, database: str
) -> None:
    shared = tmp_path / "a"
    shared_chat(shared, database, replay_server)
    replay_server.enqueue(sse_response(openai_text_stream(PIECES), chunk_delay=0.1))
    url = database or Store.sqlite_url(shared / DATABASE_FILENAME)
    on_server = ["--database-url", url] if database else []
    app_a = [sys.executable, "-m", "threadline", "--data-dir", str(shared), *on_server]
    app_b = [sys.executable, "-m", "threadline", "--data-dir", str(tmp_path / "b"), "--database-url", url]
    env = {
        k: v
        for k, v in ENV.items()
        if k not in ("QT_QPA_PLATFORM", "QT_ACCESSIBILITY", "DBUS_SESSION_BUS_ADDRESS")
    }
    env.update(QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1", QT_QPA_PLATFORM="xcb")
    command = [
        "dbus-run-session", "--", "xvfb-run", "-a", "-s", "-screen 0 1280x900x24",
        SYSTEM_PYTHON, str(HERE / "atspi" / "two_instances.py"), json.dumps(app_a), json.dumps(app_b), REPLY,
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=280, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"the reader printed nothing\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    seen = json.loads(lines[-1])
    assert seen["found"] == [True, True] and seen["sent"], json.dumps(seen)
    assert seen["finished"], f"B never showed the whole reply: {seen}\n{done.stderr[-3000:]}"
    shown = [t for t in seen["seen"] if t.startswith("Paris fact")]
    assert len(shown) >= 3, f"B showed the reply only at the end: {shown}"
    assert all(REPLY.startswith(t.strip()) for t in shown), shown
    assert shown[-1].strip() == REPLY
    assert "Streaming" not in seen["last_name"]
