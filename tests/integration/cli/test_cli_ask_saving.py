"""`threadline ask` never exits 0 with lost text, and Ctrl+C stops a turn the way Stop does.

Separate processes (``python -m threadline``) against the replay server and real
SQLite files. A read-only database is opened through SQLite's own read-only mode
(``mode=ro``): the tests may run as root, for whom file permissions do not stop
a write.
"""

from __future__ import annotations

import signal
from pathlib import Path

from tests.integration.cli.test_cli_ask import add_replay_provider, ask_streaming, stored_sessions
from tests.support.cli_process import threadline
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response

from threadline.core.messages import MessageStatus
from threadline.engine.engine import DATABASE_FILENAME


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("threadline:")]


def read_only_url(data_dir: Path) -> str:
    return f"sqlite:///file:{data_dir / DATABASE_FILENAME}?mode=ro&uri=true"


def test_ask_on_a_read_only_database_says_so_in_one_line(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    replay_server.enqueue(sse_response(openai_text_stream(["First answer."])))
    first = threadline(tmp_path, "ask", "first")
    assert first.returncode == 0, first.stderr
    session_id = first.stderr.split("session ")[1].split()[0]
    url = read_only_url(tmp_path)

    for args in (["ask", "a new chat"], ["ask", "--session", session_id, "is this kept?"]):
        result = threadline(tmp_path, "--database-url", url, *args)
        assert result.returncode == 1, result.stderr
        (line,) = error_lines(result.stderr)
        assert "read" in line.lower()  # the store's own words: the database cannot be written
        assert "Traceback" not in result.stderr and "are saved" not in line
    assert replay_server.stream_requests()[1:] == []  # no prompt that could not be stored was sent
    (path,) = stored_sessions(tmp_path)
    assert [m.text for m in path] == ["first", "First answer."]


def test_ctrl_c_mid_stream_stores_the_partial_reply_and_exits_130(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    pieces = [f"c{i:03d} " for i in range(400)]
    replay_server.enqueue(sse_response(openai_text_stream(pieces), chunk_delay=0.01))
    process, printed = ask_streaming(tmp_path, "Count slowly", 50 * 5)
    process.send_signal(signal.SIGINT)
    rest, stderr = process.communicate(timeout=60)
    printed += rest

    assert process.returncode == 130, stderr.decode()
    (line,) = error_lines(stderr.decode())
    assert "stopped" in line and "Traceback" not in stderr.decode()
    (path,) = stored_sessions(tmp_path)
    prompt, reply = path
    assert prompt.text == "Count slowly"
    assert reply.status is MessageStatus.CANCELLED
    assert printed.decode().startswith(reply.text)  # everything shown was stored, nothing more
    assert len(reply.text) >= 50 * 5 and len(reply.text) < len("".join(pieces))
