"""How much of a streaming reply a crash loses: SIGKILL `threadline ask` at random moments.

Each run starts ``python -m threadline ask`` in a subprocess, streaming from the
replay server at a known rate (``--rate`` tokens a second, every token the same
width), and SIGKILLs it at a random moment of the stream. The server notes when
it sent each token; after all runs the stored replies are read back. Per kill,

    lost ms = (tokens the server sent before the kill - tokens stored) * 1000 / rate

which is how far behind the stream the database was when the process died. The
coalesced writer's goal is a maximum of 250 ms. Prints the distribution, asserts
nothing.

    .venv/bin/python bench/kill_bench.py [--kills 100] [--rate 100] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response

from threadline.engine.engine import DATABASE_FILENAME
from threadline.store.repository import Store

TOKEN_WIDTH = 7
"""Every token is ``"k00042 "``: the stored length says how many were stored."""
ENV = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring", "PYTHONUNBUFFERED": "1"}


class TimedChunks(list[bytes]):
    """The chunks of one stream; notes the moment the server takes each token chunk to send it."""

    def __init__(self, chunks: list[bytes]) -> None:
        super().__init__(chunks)
        self.sent_at: list[float] = []
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[bytes]:
        for chunk in super().__iter__():
            if b'"k0' in chunk:
                with self._lock:
                    self.sent_at.append(time.monotonic())
            yield chunk

    def sent_before(self, moment: float) -> int:
        with self._lock:
            return sum(1 for t in self.sent_at if t <= moment)


def threadline(data_dir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "threadline", "--data-dir", str(data_dir), *args]


def one_kill(data_dir: Path, server: ReplayServer, rate: float, tokens: int, delay: float) -> tuple[str, int]:
    """Run one ask, kill it ``delay`` s after its first printed token; (session id, tokens sent)."""
    chunks = TimedChunks(sse_response(openai_text_stream([f"k{i:05d} " for i in range(tokens)])).chunks)
    response = sse_response([], chunk_delay=1 / rate)
    response.chunks = chunks
    server.enqueue(response)
    process = subprocess.Popen(
        threadline(data_dir, "ask", "stream please"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    )
    assert process.stdout is not None and process.stderr is not None
    try:
        if not os.read(process.stdout.fileno(), 64):
            raise RuntimeError(f"ask printed nothing: {process.stderr.read().decode()}")
        time.sleep(delay)
        killed_at = time.monotonic()
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        session = process.stderr.read().decode().split("session ")[1].split()[0]
    finally:
        process.stdout.close()
        process.stderr.close()
    server.clear()
    return session, chunks.sent_before(killed_at)


async def stored_tokens(data_dir: Path, sessions: list[str]) -> list[int]:
    store = await Store.open(Store.sqlite_url(data_dir / DATABASE_FILENAME))
    try:
        counts = []
        for session in sessions:
            path = (await store.load_tree(session)).path()
            counts.append(len(path[1].text) // TOKEN_WIDTH if len(path) > 1 else 0)
        return counts
    finally:
        await store.close()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--rate", type=float, default=100.0, help="tokens a second")
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    chooser = random.Random(options.seed)
    stream_seconds = 4.0
    tokens = int(options.rate * stream_seconds)
    with tempfile.TemporaryDirectory() as folder, ReplayServer() as server:
        data_dir = Path(folder)
        subprocess.run(
            threadline(
                data_dir, "provider", "add", "replay", "--kind", "openai",
                "--base-url", server.openai_base_url, "--model", "gpt-4o-mini",
            ),
            check=True, env=ENV, capture_output=True,
        )  # fmt: skip
        runs: list[tuple[str, int]] = []
        for number in range(options.kills):
            delay = chooser.uniform(0.05, stream_seconds - 1)
            runs.append(one_kill(data_dir, server, options.rate, tokens, delay))
            if (number + 1) % 10 == 0:
                print(f"  {number + 1} kills", file=sys.stderr)
        stored = asyncio.run(stored_tokens(data_dir, [session for session, _ in runs]))
    pairs = [(sent, kept) for (_, sent), kept in zip(runs, stored, strict=True)]
    lost_ms = [max(0, sent - kept) * 1000 / options.rate for sent, kept in pairs]
    ahead = sum(1 for sent, kept in pairs if kept > sent)
    print(f"kill_bench: {options.kills} SIGKILLs mid-stream at {options.rate:.0f} tokens/s")
    print(
        f"  ms of tokens lost: min {min(lost_ms):.0f}, median {statistics.median(lost_ms):.0f}, "
        f"p90 {percentile(lost_ms, 0.9):.0f}, max {max(lost_ms):.0f} (goal: max <= 250)"
    )
    over = sum(1 for ms in lost_ms if ms > 250)
    print(f"  kills over 250 ms: {over}; stored more than sent (clock skew): {ahead}")


if __name__ == "__main__":
    main()
