"""The stderr channel masks injected values wherever a read cuts the text (lines, long lines, UTF-8)."""

from __future__ import annotations

import time
from pathlib import Path

from threadline.tools.mcp.config import McpServerConfig
from threadline.tools.mcp.stderr import MASK, MAX_PENDING, Masker, StderrChannel, injected_values

SECRET = "sëcret-value-0123456789"


def logged(tmp_path: Path, pieces: list[bytes]) -> tuple[str, str]:
    """What the log and the tail hold after a server wrote ``pieces``, each read before the next."""
    log = tmp_path / "server.log"
    channel = StderrChannel(log.open("w", encoding="utf-8"), Masker([SECRET]))
    for piece in pieces:
        channel.child_file.buffer.write(piece)  # type: ignore[attr-defined]
        channel.child_file.flush()
        deadline = time.monotonic() + 30
        while not channel.caught_up():
            assert time.monotonic() < deadline, "the channel never read what was written"
            time.sleep(0.005)
    channel.finish(10)
    return log.read_text(encoding="utf-8"), channel.tail()


def test_a_value_cut_across_reads_is_masked(tmp_path: Path) -> None:
    written = f"token={SECRET} ok\nlast line".encode()
    cut = written.index("ë".encode()) + 1  # inside the two bytes of "ë"
    text, tail = logged(tmp_path, [written[:cut], written[cut : cut + 9], written[cut + 9 :]])
    assert text == f"token={MASK} ok\nlast line" and tail == text


def test_a_value_at_the_cut_of_a_line_too_long_to_hold_is_masked(tmp_path: Path) -> None:
    head = "x" * (MAX_PENDING + 5) + SECRET[:6]
    text, _ = logged(tmp_path, [head.encode(), (SECRET[6:] + "y" * 7).encode()])
    assert SECRET not in text and text == "x" * (MAX_PENDING + 5) + MASK + "y" * 7


def test_injected_values_leave_out_public_and_short_ones_and_cover_each_line() -> None:
    config = McpServerConfig(
        "s",
        command="x",
        env={"TOKEN": "abcdef", "LEVEL": "debugging", "FLAG": "1"},
        headers={"Authorization": "Bearer t0k3n", "Multi": "first-line\nsecond-line"},
        public_env=("LEVEL",),
    )
    assert set(injected_values(config)) == {
        "abcdef",
        "Bearer t0k3n",
        "first-line\nsecond-line",
        "first-line",
        "second-line",
    }
