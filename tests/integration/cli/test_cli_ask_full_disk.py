"""`threadline ask` on a disk that fills up mid-reply: one accurate last line, and the text kept.

The data folder is a 4 MB tmpfs (root and ``mount`` needed, else the test is skipped
saying why; ``tests/unit/store/test_full_disk_message.py`` checks the wording without
a mount). The reply streams from the replay server; once part of it is printed the
disk is filled, so the writes that follow fail. ``ask`` keeps trying for
``ASK_SAVE_PATIENCE`` seconds, then ends with one line saying the disk is full (with
what is free, and where) and how much of the reply the database keeps.
"""

from __future__ import annotations

from pathlib import Path

from tests.integration.cli.test_cli_ask import add_replay_provider, ask_streaming, stored_sessions
from tests.integration.store.mounts import fill, small_tmpfs
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response

from threadline.core.messages import MessageStatus


def test_ask_on_a_disk_filling_mid_reply_ends_with_one_accurate_line(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    with small_tmpfs(tmp_path / "disk", "4m") as disk:
        add_replay_provider(disk, replay_server)
        pieces = [f"c{i:04d} " for i in range(800)]
        replay_server.enqueue(sse_response(openai_text_stream(pieces), chunk_delay=0.005))
        process, printed = ask_streaming(disk, "Count", 200 * 6)
        filler = fill(disk)
        rest, raw_stderr = process.communicate(timeout=120)
        filler.unlink()
        printed += rest
        stderr = raw_stderr.decode()

        assert process.returncode == 1, stderr
        # everything was shown (the notice on standard error ends the printed line first)
        assert printed.decode().replace("\n", "") == "".join(pieces)
        (path,) = stored_sessions(disk)  # a fresh open marks the reply interrupted (its writer is gone)
        prompt, reply = path
        assert prompt.text == "Count"
        assert reply.status is MessageStatus.INTERRUPTED
        assert 0 < len(reply.text) < len("".join(pieces))
        assert "".join(pieces).startswith(reply.text)

        lines = stderr.splitlines()
        assert lines[0].startswith("session ") and lines[1].startswith("[not saved yet: The disk")
        assert len(lines) == 3, stderr  # no warning per retry, none from closing
        last = lines[-1]
        assert last.startswith("threadline: The disk holding the conversation database is full (")
        assert f"free in {disk})" in last
        assert last.endswith(
            f"The reply is saved up to {len(reply.text):,} of {len(''.join(pieces)):,} characters, "
            "as interrupted; the rest was only printed."
        )
