"""What a ``shell`` call pays for recording its file changes: the scans before and after it.

    python bench/workspace_scan.py [--files 1000 100000] [--size 400] [--repeat 3]

For each count, a folder of that many small text files (``--size`` bytes, 1,000 per
sub-folder) is made in a temporary directory, then a tool call is recorded the way the
engine records a ``shell`` call (``Recorder.begin`` → the command → ``Recorder.finish``):

* *first*: a fresh session (empty scan cache) and an empty snapshot store: every file is
  read, hashed and its content kept, twice looked at;
* *repeated*: the same session again with nothing changed: the cache answers, each file is
  only stat'ed;
* *one file changed*: the same, with the command rewriting one file;
* *look ahead*: the session's first look as the engine now starts it at a turn's start
  (``Workspace.prescan`` → ``Recorder.look_ahead``: one scan on a new store, and its manifest
  kept, while the model thinks), and *first call
  after it*: what the first ``shell`` call then pays.

The figures are the median of ``--repeat`` runs of each (the first once per run, on a new
store). Results are in docs/performance.md, "Recording a shell call".
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "desktop"))

from threadline.workspace.blobs import SnapshotStore
from threadline.workspace.limits import DEFAULT_LIMITS, Budget
from threadline.workspace.recorder import CallInfo, Recorder
from threadline.workspace.scan import ScanCache


def make_folder(root: Path, count: int, size: int) -> None:
    line = (b"the quick brown fox jumps over the lazy dog " * (size // 44 + 1))[: size - 1] + b"\n"
    for index in range(count):
        folder = root / f"d{index // 1000:03d}"
        if index % 1000 == 0:
            folder.mkdir()
        (folder / f"f{index:06d}.txt").write_bytes(b"%d " % index + line)


def record(recorder: Recorder, folder: Path, cache: ScanCache, work: object = None) -> float:
    budget = Budget(DEFAULT_LIMITS.max_turn_bytes * 1000)
    started = time.perf_counter()
    recording = recorder.begin(CallInfo("s", "m", "c", "shell"), [str(folder)], None, cache, budget)
    if callable(work):
        work()
    recorder.finish(recording, cache, budget)
    recorder.forget(recording.id)
    return time.perf_counter() - started


def measure(count: int, size: int, repeat: int) -> dict[str, float]:
    firsts: list[float] = []
    repeated: list[float] = []
    changed: list[float] = []
    ahead: list[float] = []
    after_ahead: list[float] = []
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "work"
        folder.mkdir()
        made = time.perf_counter()
        make_folder(folder, count, size)
        print(f"  {count:,} files made in {time.perf_counter() - made:.1f} s", flush=True)
        target = folder / "d000" / "f000000.txt"
        for run in range(repeat):
            data_dir = Path(temporary) / f"data{run}"
            recorder = Recorder(data_dir, SnapshotStore.in_data_dir(data_dir), "bench")
            cache = ScanCache()
            firsts.append(record(recorder, folder, cache))
            repeated.append(record(recorder, folder, cache))
            changed.append(
                record(recorder, folder, cache, lambda: target.write_bytes(os.urandom(8).hex().encode()))
            )
            data_dir = Path(temporary) / f"ahead{run}"
            store = SnapshotStore.in_data_dir(data_dir)
            recorder = Recorder(data_dir, store, "bench")
            cache = ScanCache()
            started = time.perf_counter()
            recorder.look_ahead([str(folder)], cache, Budget(DEFAULT_LIMITS.max_turn_bytes * 1000))
            ahead.append(time.perf_counter() - started)
            after_ahead.append(record(recorder, folder, cache))
    return {
        "first": statistics.median(firsts),
        "repeated": statistics.median(repeated),
        "changed": statistics.median(changed),
        "ahead": statistics.median(ahead),
        "after_ahead": statistics.median(after_ahead),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--size", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{'files':>9}  {'first call':>11}  {'repeated':>9}  {'one changed':>11}  {'look ahead':>10}"
        f"  {'then first call':>15}  per file (repeated)"
    )
    for count in args.files:
        figures = measure(count, args.size, args.repeat)
        per_file = figures["repeated"] / count * 1e6
        print(
            f"{count:>9,}  {figures['first'] * 1000:>9.0f} ms  {figures['repeated'] * 1000:>6.0f} ms"
            f"  {figures['changed'] * 1000:>8.0f} ms  {figures['ahead'] * 1000:>7.0f} ms"
            f"  {figures['after_ahead'] * 1000:>12.0f} ms  {per_file:.1f} µs",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
