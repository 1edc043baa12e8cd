"""What the desktop citizen costs a start (docs/performance.md, "Desktop citizen").

``python bench/desktop_bench.py``:

* the window's start probe (``--startup-probe``: first paint, whole window, CPU of the
  process) on this checkout and on another (``THREADLINE_BENCH_SOURCE=DIR``, e.g. ``git
  archive main desktop | tar -x -C DIR``), alternately, medians of ``ROUNDS``: the instance
  lock before the first paint and the local server after it;
* a second start on a data folder whose window is running: launch → exited 0 (the hand-off);
* the desktop room's construction once the engine is open (tray menu, notifier, turn watch),
  in-process, offscreen.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
ROUNDS = int(os.environ.get("ROUNDS", "11"))


def env_for(source: Path) -> dict[str, str]:
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": f"{ROOT}:{source / 'desktop'}"}


def probe_once(env: dict[str, str], data_dir: str) -> tuple[float, float, float]:
    proc = subprocess.Popen(
        [PY, "-m", "threadline", "--data-dir", data_dir, "--startup-probe"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    assert proc.stdout is not None
    lines = proc.stdout.read().strip().splitlines()
    assert os.waitstatus_to_exitcode(status) == 0
    return float(lines[0]), float(lines[-1]), (usage.ru_utime + usage.ru_stime) * 1000


def compare_probes(before: Path, after: Path) -> None:
    runs: dict[str, list[tuple[float, float, float]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as folder:
        envs = {"before": env_for(before), "after": env_for(after)}
        for name, env in envs.items():  # warm-up: bytecode, the data folder
            probe_once(env, f"{folder}/{name}")
        for _ in range(ROUNDS):
            for name, env in envs.items():
                runs[name].append(probe_once(env, f"{folder}/{name}"))
    print(f"start probe, medians of {ROUNDS} (alternating), load {os.getloadavg()[0]:.1f}")
    for name, values in runs.items():
        paint, whole, cpu = (statistics.median(column) for column in zip(*values, strict=True))
        print(f"  {name:6}: first paint {paint:6.1f} ms  whole window {whole:6.1f} ms  CPU {cpu:6.1f} ms")


def hand_off() -> None:
    env = env_for(ROOT)
    with tempfile.TemporaryDirectory() as folder:
        first = subprocess.Popen(
            [PY, "-m", "threadline", "--data-dir", folder], env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            sys.path.insert(0, str(ROOT / "desktop"))
            from threadline.app.single_instance import is_listening

            deadline = time.monotonic() + 120
            while not is_listening(Path(folder)) and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(3)  # the engine open and idle, as a second start usually finds it
            walls, cpus = [], []
            for _ in range(ROUNDS):
                began = time.perf_counter()
                second = subprocess.Popen([PY, "-m", "threadline", "--data-dir", folder], env=env)
                _, status, usage = os.wait4(second.pid, 0)
                walls.append((time.perf_counter() - began) * 1000)
                cpus.append((usage.ru_utime + usage.ru_stime) * 1000)
                assert os.waitstatus_to_exitcode(status) == 0
        finally:
            first.terminate()
            first.wait(timeout=60)
    print(
        f"second start → handed over and exited 0: {statistics.median(walls):.0f} ms wall, "
        f"{statistics.median(cpus):.0f} ms CPU (medians of {ROUNDS})"
    )


def main() -> int:
    before = Path(os.environ.get("THREADLINE_BENCH_SOURCE", ROOT))
    compare_probes(before, ROOT)
    hand_off()
    return 0


if __name__ == "__main__":
    sys.exit(main())
