"""Provider-layer figures against the local replay server (printed, not asserted).

* CPU per OpenAI chunk, no HTTP: the SDK's way (its SSE decoder, then a pydantic
  ``ChatCompletionChunk`` per event, ``construct_type``, what ``create(stream=True)``
  does) against ours (``threadline.llm.sse``, ``json.loads``, the accumulator on
  plain dicts), over the same bytes;
* time to first token added by the provider layer (SDK request + our parsing):
  the moment the first ``TextDelta`` is yielded minus the moment the replay
  server wrote the first content chunk (same clock: server thread and client
  share the process);
* tokens per second through one provider, for 1 and for 8 concurrent streams,
  with the server writing as fast as it can.

Run: ``.venv/bin/python bench/llm_bench.py [--tokens 2000] [--runs 20]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
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


def chunk_parse_cost(tokens: int, repeats: int = 5) -> tuple[float, float]:
    """Microseconds of CPU per chunk: (SDK chunk objects, our decoder + dicts), best of ``repeats``."""
    from openai._models import construct_type
    from openai._streaming import SSEDecoder as SdkDecoder
    from openai.types.chat import ChatCompletionChunk

    from threadline.llm.accumulate import OpenAIAccumulator
    from threadline.llm.sse import SSEDecoder

    chunks = stream_for(ProviderKind.OPENAI, tokens)

    def sdk() -> None:
        for sse in SdkDecoder().iter_bytes(iter(chunks)):
            if sse.data.startswith("[DONE]"):
                break
            construct_type(type_=ChatCompletionChunk, value=sse.json())

    def ours() -> None:
        decoder = SSEDecoder()
        accumulator = OpenAIAccumulator(provider="bench", model="m")
        for chunk in chunks:
            for sse in decoder.feed(chunk):
                if sse.data.startswith(b"[DONE]"):
                    return
                accumulator.feed(json.loads(sse.data))

    def best(run: Callable[[], None]) -> float:
        times = []
        for _ in range(repeats):
            started = time.process_time()
            run()
            times.append(time.process_time() - started)
        return min(times) / len(chunks) * 1e6

    return best(sdk), best(ours)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    sdk_us, ours_us = chunk_parse_cost(args.tokens)
    print(
        f"openai chunk parsing, CPU per chunk (no HTTP): SDK chunk objects {sdk_us:.1f} µs, "
        f"our SSE decoder + json.loads + accumulator {ours_us:.1f} µs ({sdk_us / ours_us:.0f}x)"
    )
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
