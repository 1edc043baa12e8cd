"""Time from Send to the first token with the provider "On this computer" (issue 35).

The real engine and store in a temporary data folder, the tiny random-weight llama of
``tests/support/tiny_gguf.py`` in its models folder, and the real llama.cpp server of
``llama-cpp-python`` (the ``threadline[local]`` extra). Cold: no runtime running, so Send
starts one and loads the model; warm: the runtime is up with the model loaded. Prints
figures, asserts nothing.

    .venv/bin/python bench/local_runtime_bench.py [--cold 3] [--warm 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.tiny_gguf import make_tiny_gguf

from threadline.engine.engine import Engine
from threadline.engine.events import ConversationEvent, TextDelta
from threadline.engine.local_runtime import LOCAL_PROVIDER

MODEL = "tiny.gguf"


async def first_token(engine: Engine) -> float:
    session = await engine.sessions.new_session()
    await engine.sessions.set_session_model(session.id, LOCAL_PROVIDER, MODEL)
    live = await engine.sessions.open_session(session.id)
    first = asyncio.get_running_loop().create_future()

    def on_event(event: ConversationEvent) -> None:
        if isinstance(event, TextDelta) and not first.done():
            first.set_result(time.perf_counter())

    live.subscribe(on_event)
    start = time.perf_counter()
    engine.turns.send(session.id, "Hello there")
    stamp = await first
    await engine.turns.wait_idle(session.id)
    return stamp - start


async def main(cold_runs: int, warm_runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        (data / "models").mkdir()
        make_tiny_gguf(data / "models" / MODEL)
        (data / "local-models.json").write_text(json.dumps({"runtime": {"context": 512}}))
        engine = await Engine.open(data)
        try:
            cold: list[float] = []
            pids = set()
            for _ in range(cold_runs):
                await engine.models.stop_runtime()
                assert await engine.models.runtime_status() is None
                cold.append(await first_token(engine))
                status = await engine.models.runtime_status()
                assert status is not None
                pids.add(status["pid"])
            assert len(pids) == cold_runs  # each cold run started a runtime of its own
            warm = [await first_token(engine) for _ in range(warm_runs)]
        finally:
            await engine.aclose()
    print(
        f"Send to first token, cold runtime (start + load), median of {cold_runs}: "
        f"{statistics.median(cold) * 1000:7.0f} ms (min {min(cold) * 1000:.0f}, max {max(cold) * 1000:.0f})"
    )
    print(
        f"Send to first token, warm runtime, median of {warm_runs}: "
        f"{statistics.median(warm) * 1000:7.0f} ms (min {min(warm) * 1000:.0f}, max {max(warm) * 1000:.0f})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cold", type=int, default=3)
    parser.add_argument("--warm", type=int, default=10)
    options = parser.parse_args()
    asyncio.run(main(options.cold, options.warm))
