"""How late a lease's heartbeat lands, as another process reading the lease sees it.

A holder process (this script with ``--holder``) takes a chat's lease in a SQLite file and
beats it as a turn does (``SessionLeases``, every ``--every`` seconds). This process reads
the lease every 20 ms for ``--seconds`` and records how long the holder had been silent
(the lease's ``read_at`` minus its ``heartbeat_at``). Lateness is that silence minus the
heartbeat period: what a margin on the heartbeat must cover for a live holder not to be
taken for dead. Prints the distribution (run it idle and under ``stress-ng --cpu 2``),
asserts nothing. With ``--busy`` the holder's event loop is also kept busy with work in
20 ms slices (a window laying out a long reply), so it wants a whole core itself.

    .venv/bin/python bench/lease_bench.py [--every 1] [--seconds 60] [--busy]
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

from threadline.engine.leases import SessionLeases
from threadline.store.repository import Store


async def hold(url: str, session_id: str, every: float, busy: bool) -> None:
    """The holder: take the lease, beat it until killed (its loop busy meanwhile, if ``busy``)."""
    store = await Store.open(url)
    leases = SessionLeases(store, on_stop_requested=lambda _id: None, heartbeat_every=every)
    acquired = await leases.acquire(session_id, on_busy=lambda _lease: None)
    assert acquired.ok
    print("held", flush=True)
    while True:
        if busy:
            end = time.perf_counter() + 0.02
            while time.perf_counter() < end:
                pass
            await asyncio.sleep(0)
        else:
            await asyncio.sleep(3600)


async def measure(every: float, seconds: float, busy: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        url = Store.sqlite_url(Path(folder) / "bench.db")
        store = await Store.open(url)
        session_id = (await store.create_session(title="Leased")).id
        holding = ["--holder", url, session_id, "--every", str(every), *(["--busy"] if busy else [])]
        holder = await asyncio.create_subprocess_exec(
            sys.executable, __file__, *holding, stdout=asyncio.subprocess.PIPE
        )
        try:
            assert holder.stdout is not None
            assert await holder.stdout.readline() == b"held\n"
            silences: list[float] = []
            loop = asyncio.get_running_loop()
            end = loop.time() + seconds
            while loop.time() < end:
                lease = await store.get_lease(session_id)
                assert lease is not None
                silences.append((lease.read_at - lease.heartbeat_at).total_seconds())
                await asyncio.sleep(0.02)
        finally:
            holder.kill()
            await holder.communicate()
            await store.close()
    late = sorted(max(0.0, s - every) for s in silences)
    cuts = statistics.quantiles(late, n=1000, method="inclusive")
    print(f"{len(late)} reads over {seconds:.0f} s, heartbeat every {every:g} s, holder busy: {busy}")
    print(f"lateness: median {statistics.median(late) * 1000:.0f} ms, p99 {cuts[989] * 1000:.0f} ms,")
    print(f"          p99.9 {cuts[998] * 1000:.0f} ms, max {late[-1] * 1000:.0f} ms")
    print(f"longest silence seen: {max(silences):.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=1.0, help="heartbeat period, seconds")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to read")
    parser.add_argument("--busy", action="store_true", help="keep the holder's event loop busy")
    parser.add_argument("--holder", nargs=2, metavar=("URL", "SESSION"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.holder:
        asyncio.run(hold(args.holder[0], args.holder[1], args.every, args.busy))
    else:
        asyncio.run(measure(args.every, args.seconds, args.busy))


if __name__ == "__main__":
    main()
