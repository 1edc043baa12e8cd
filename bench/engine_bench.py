"""Engine benchmarks (issue 3): time to first token added by Threadline, and throughput.

Prints figures, asserts nothing. Everything runs against the local replay server
(tests/support/sse_server.py) with the real engine, store (SQLite in a temp dir)
and the official SDK, so the figures include stream parsing, event dispatch and
coalesced database writes.

    .venv/bin/python bench/engine_bench.py [--tokens 4000] [--runs 15]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import keyring
from tests.support.memory_keyring import MemoryKeyring
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.engine.engine import Engine
from threadline.engine.events import ConversationEvent, TextDelta


async def raw_first_token(server: ReplayServer) -> float:
    """Seconds from request to the first content chunk, for a bare socket client (no SDK)."""
    server.enqueue(sse_response(openai_text_stream(["hi", " there"])))
    body = b'{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"x"}]}'
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(head + body)
    seen = b""
    try:
        while b'"content":"hi"' not in seen:
            chunk = await reader.read(65536)
            if not chunk:
                raise RuntimeError("no content chunk")
            seen += chunk
        return time.perf_counter() - start
    finally:
        writer.close()


async def engine_first_token(engine: Engine, server: ReplayServer) -> float:
    server.enqueue(sse_response(openai_text_stream(["hi", " there"])))
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    first = asyncio.get_running_loop().create_future()

    def on_event(event: ConversationEvent) -> None:
        if isinstance(event, TextDelta) and not first.done():
            first.set_result(time.perf_counter())

    live.subscribe(on_event)
    start = time.perf_counter()
    engine.turns.send(session.id, "x")
    stamp = await first
    await engine.turns.wait_idle(session.id)
    return stamp - start


async def throughput(engine: Engine, server: ReplayServer, streams: int, tokens: int) -> tuple[float, float]:
    """(total tokens/s, slowest stream's tokens/s) for ``streams`` concurrent replies."""
    pieces = [f"tok{i} " for i in range(tokens)]
    server.responder = lambda request: sse_response(openai_text_stream(pieces))
    sessions = [await engine.sessions.new_session() for _ in range(streams)]
    for session in sessions:
        await engine.sessions.open_session(session.id)
    start = time.perf_counter()
    ends: dict[str, float] = {}

    async def one(session_id: str) -> None:
        engine.turns.send(session_id, "stream")
        await engine.turns.wait_idle(session_id)
        ends[session_id] = time.perf_counter()

    await asyncio.gather(*(one(s.id) for s in sessions))
    server.responder = None
    total = time.perf_counter() - start
    for session in sessions:
        live = engine.sessions.live(session.id)
        assert live is not None and live.conversation.path()[-1].text == "".join(pieces)
    slowest = max(ends.values()) - start
    return streams * tokens / total, tokens / slowest


async def main(tokens: int, runs: int) -> None:
    keyring.set_keyring(MemoryKeyring())
    with ReplayServer() as server, tempfile.TemporaryDirectory() as tmp:
        engine = await Engine.open(Path(tmp))
        await engine.providers.save_provider(
            ProviderConfig(
                "bench", ProviderKind.OPENAI, base_url=server.openai_base_url, default_model="gpt-4o-mini"
            ),
            "sk-bench",
        )
        try:
            cold = await engine_first_token(engine, server)
            raw = [await raw_first_token(server) for _ in range(runs)]
            warm = [await engine_first_token(engine, server) for _ in range(runs)]
            raw_median, warm_median = statistics.median(raw), statistics.median(warm)
            print(f"time to first token, bare socket client (median of {runs}): {raw_median * 1000:7.1f} ms")
            print(f"time to first token, Threadline engine (median of {runs}): {warm_median * 1000:7.1f} ms")
            print(
                f"  added by Threadline: {(warm_median - raw_median) * 1000:7.1f} ms (p90 warm "
                f"{sorted(warm)[int(0.9 * (runs - 1))] * 1000:.1f} ms)"
            )
            print(f"  first turn of the process (SDK import + client): {cold * 1000:7.1f} ms")
            for streams in (1, 8):
                total, slowest = await throughput(engine, server, streams, tokens)
                print(
                    f"throughput, {streams} stream(s) x {tokens} tokens: {total:9.0f} tokens/s in all, "
                    f"{slowest:8.0f} tokens/s for the slowest stream"
                )
        finally:
            await engine.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    asyncio.run(main(options.tokens, options.runs))
