"""Provider-layer figures against the local replay server (printed, not asserted).

* time to first token added by the provider layer (SDK + accumulator): the
  moment the first ``TextDelta`` is yielded minus the moment the replay server
  wrote the first content chunk (same clock: server thread and client share the
  process);
* tokens per second through one provider, for 1 and for 8 concurrent streams,
  with the server writing as fast as it can.

Run: ``.venv/bin/python bench/llm_bench.py [--tokens 2000] [--runs 20]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support import sse_streams as s
from tests.support.sse_server import ReplayServer

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.core.messages import Role
from threadline.core.request import BuiltRequest, SentMessage
from threadline.llm.base import ChatParams, Provider
from threadline.llm.events import TextDelta
from threadline.llm.factory import make_provider

REQUEST = BuiltRequest("", (SentMessage(Role.USER, text="go"),), 1)


def stream_for(kind: ProviderKind, tokens: int) -> list[bytes]:
    pieces = [f"t{i} " for i in range(tokens)]
    if kind is ProviderKind.OPENAI:
        return s.openai_text_stream(pieces)
    return s.anthropic_text_stream(pieces)


async def first_token_overhead(
    provider: Provider, server: ReplayServer, kind: ProviderKind, runs: int
) -> list[float]:
    out: list[float] = []
    for _ in range(runs):
        # a 50 ms pause before the first content chunk separates "server ready" from "client parsed"
        chunks = stream_for(kind, 5)
        server.enqueue(
            s.sse_response(chunks, stall_after=1 if kind is ProviderKind.OPENAI else 3, stall_for=0.05)
        )
        started = time.perf_counter()
        first: float | None = None
        async for event in provider.stream(REQUEST, ChatParams("m")):
            if first is None and isinstance(event, TextDelta):
                first = time.perf_counter()
        assert first is not None
        out.append((first - started - 0.05) * 1000)
    return out


async def throughput(
    provider: Provider, server: ReplayServer, kind: ProviderKind, tokens: int, streams: int
) -> float:
    for _ in range(streams):
        server.enqueue(s.sse_response(stream_for(kind, tokens)))

    async def one() -> int:
        count = 0
        async for event in provider.stream(REQUEST, ChatParams("m")):
            count += isinstance(event, TextDelta)
        return count

    started = time.perf_counter()
    counts = await asyncio.gather(*(one() for _ in range(streams)))
    return sum(counts) / (time.perf_counter() - started)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with ReplayServer() as server:
        for kind in (ProviderKind.OPENAI, ProviderKind.ANTHROPIC):
            base = server.openai_base_url if kind is ProviderKind.OPENAI else server.base_url
            provider = make_provider(ProviderConfig(kind.value, kind, base_url=base), "k", timeout=30)
            await throughput(provider, server, kind, 50, 1)  # warm up (imports, connection)
            ttft = await first_token_overhead(provider, server, kind, args.runs)
            one = await throughput(provider, server, kind, args.tokens, 1)
            eight = await throughput(provider, server, kind, args.tokens, 8)
            await provider.aclose()
            print(
                f"{kind.value:9}  request → first token (incl. request round trip): "
                f"median {statistics.median(ttft):.2f} ms, max {max(ttft):.2f} ms   "
                f"tokens/s: 1 stream {one:,.0f}, 8 streams {eight:,.0f} (total)"
            )


if __name__ == "__main__":
    asyncio.run(main())
