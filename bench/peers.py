"""`threadline ask` side by side with Simon Willison's `llm` CLI, against one local server.

Both commands run as fresh processes against the same OpenAI-style server on
127.0.0.1 (the replay server of the tests, writing as fast as it can), one after
the other in alternation, ``--rounds`` times, for a short reply and for a
``--tokens`` reply (one chunk per token). For each it prints the median wall
time (process start to exit), the median peak resident memory of the process
(``os.wait4``'s ``ru_maxrss`` of that very child) and the ratio threadline/llm.

``--mcp`` adds the case "MCP servers offered, no tool used": the default agent
selects the tools of two real MCP servers (``mcp-server-time`` and
``mcp-server-git``, both from PyPI, as the tests use), and the reply is plain
text. It prints the same figures for threadline alone and with the servers
offered, plus how many server processes each ask started.

This script installs nothing. Without `llm` on the PATH (or in this venv) it
says how to get it and measures threadline alone. `llm` is pointed at the server
through ``extra-openai-models.yaml`` in a temporary ``LLM_USER_PATH``, so the
user's own `llm` settings and logs are not touched; it logs the exchange to its
own SQLite database there, as threadline stores it in its own.

Run: ``.venv/bin/python bench/peers.py [--rounds 7] [--tokens 2000] [--mcp]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response  # noqa: E402

MODEL = "gpt-4o-mini"
LLM_MODEL_ID = "bench-local"
SHORT_REPLY = ["Hello", "!", " How", " can", " I", " help", "?"]
TIME_SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
GIT_SERVER = [sys.executable, "-m", "mcp_server_git"]


@dataclass
class Runs:
    """Wall seconds and peak RSS (MB) of each run of one command."""

    wall: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def add(self, wall: float, rss_mb: float, cpu: float) -> None:
        self.wall.append(wall)
        self.rss_mb.append(rss_mb)
        self.cpu.append(cpu)

    @property
    def median_wall(self) -> float:
        return statistics.median(self.wall)

    @property
    def median_rss(self) -> float:
        return statistics.median(self.rss_mb)

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpu)


def run_measured(argv: Sequence[str], env: dict[str, str], expect_chars: int) -> tuple[float, float, float]:
    """``(wall seconds, peak RSS in MB, CPU seconds)`` of one process; its reply must be printed in full."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        printed = out.read().decode(errors="replace")
        if process.returncode != 0 or len(printed.strip()) < expect_chars:
            raise SystemExit(
                f"{argv[0]} failed (exit {process.returncode}, {len(printed)} characters printed):\n"
                + err.read().decode(errors="replace")[-2000:]
            )
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime  # ru_maxrss: kilobytes on Linux


def find_llm() -> str | None:
    beside = Path(sys.executable).with_name("llm")
    return str(beside) if beside.exists() else shutil.which("llm")


SOURCE: Path | None = None
"""``--source``: run the threadline package of that checkout instead of the installed one."""


def threadline_command() -> list[str]:
    script = Path(sys.executable).with_name("threadline")
    if SOURCE is None and script.exists():
        return [str(script)]
    return [sys.executable, "-m", "threadline"]


def setup_threadline(data_dir: Path, server: ReplayServer, env: dict[str, str]) -> None:
    subprocess.run(
        [*threadline_command(), "--data-dir", str(data_dir), "provider", "add", "local", "--kind", "openai",
         "--base-url", server.openai_base_url, "--model", MODEL],
        env=env, check=True, capture_output=True,
    )  # fmt: skip


def offer_mcp_servers(data_dir: Path, env: dict[str, str], repo: Path) -> None:
    """Two real MCP servers, selected by the default agent's tools (``time/*``, ``git/*``)."""
    base = [*threadline_command(), "--data-dir", str(data_dir), "mcp", "add"]
    # (an option before ``--``: `mcp add NAME -- cmd -m …` alone is misparsed by this version)
    public = ["--public-env", "BENCH=1"]
    subprocess.run([*base, "time", *public, "--", *TIME_SERVER], env=env, check=True, capture_output=True)
    subprocess.run([*base, "git", *public, "--", *GIT_SERVER, "--repository", str(repo)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    code = (
        "import asyncio, dataclasses, sys\n"
        "from pathlib import Path\n"
        "from threadline.engine.engine import Engine\n"
        "async def main():\n"
        "    engine = await Engine.open(Path(sys.argv[1]))\n"
        "    agent = await engine.agents.get_agent()\n"
        "    await engine.agents.save_agent(dataclasses.replace(agent, enabled_tools=('time/*', 'git/*')))\n"
        "    await engine.aclose()\n"
        "asyncio.run(main())\n"
    )
    subprocess.run([sys.executable, "-c", code, str(data_dir)], env=env, check=True)


def setup_llm(user_dir: Path, server: ReplayServer) -> None:
    user_dir.mkdir(parents=True, exist_ok=True)
    (user_dir / "extra-openai-models.yaml").write_text(
        f"- model_id: {LLM_MODEL_ID}\n"
        f"  model_name: {MODEL}\n"
        f'  api_base: "{server.openai_base_url}"\n'
        "  api_key_name: bench\n"
    )
    (user_dir / "keys.json").write_text('{"bench": "sk-bench-not-a-key"}\n')


def reply_pieces(tokens: int) -> list[str]:
    words = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")
    return [f" {words[i % len(words)]}" for i in range(tokens)]


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "-"


def print_row(label: str, ours: Runs, theirs: Runs | None) -> None:
    line = f"{label:<34} threadline {ours.median_wall:6.3f} s (cpu {ours.median_cpu:5.3f} s)"
    line += f" {ours.median_rss:6.1f} MB"
    if theirs is not None:
        line += (
            f"   llm {theirs.median_wall:6.3f} s (cpu {theirs.median_cpu:5.3f} s) {theirs.median_rss:6.1f} MB"
            f"   ratio wall {ratio(ours.median_wall, theirs.median_wall)}"
            f" cpu {ratio(ours.median_cpu, theirs.median_cpu)}"
            f" memory {ratio(ours.median_rss, theirs.median_rss)}"
        )
    print(line, flush=True)


def count_server_starts(data_dir: Path) -> int:
    """MCP servers started so far: each start (re)writes its log file in ``<data dir>/logs``."""
    logs = data_dir / "logs"
    return len(list(logs.glob("mcp-*.log"))) if logs.exists() else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--mcp", action="store_true", help="also measure ask with two MCP servers offered")
    parser.add_argument(
        "--source",
        type=Path,
        metavar="CHECKOUT",
        help="measure the threadline of another checkout (e.g. `git archive COMMIT | tar -x -C DIR`)",
    )
    args = parser.parse_args()
    global SOURCE
    SOURCE = args.source

    llm = find_llm()
    if llm is None:
        print(
            "`llm` was not found, so threadline is measured alone. To compare, install it into this venv\n"
            "(it is not a dependency of Threadline): .venv/bin/pip install llm",
            flush=True,
        )
    # An installed package has its bytecode compiled (pip does it; `llm`'s is): let the editable
    # checkout's be cached too, rather than compiling Threadline's sources on every run.
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "NO_COLOR": "1",
    }
    if SOURCE is not None:
        env["PYTHONPATH"] = str(SOURCE.resolve() / "desktop")
    with tempfile.TemporaryDirectory(prefix="peers-") as tmp, ReplayServer() as server:
        data_dir = Path(tmp) / "threadline"
        llm_env = {**env, "LLM_USER_PATH": str(Path(tmp) / "llm")}
        setup_threadline(data_dir, server, env)
        if llm is not None:
            setup_llm(Path(tmp) / "llm", server)
        cases = [("short reply", SHORT_REPLY), (f"{args.tokens:,}-token reply", reply_pieces(args.tokens))]
        print(f"{args.rounds} rounds each, alternating; medians; server on {server.base_url}", flush=True)
        warm = sse_response(openai_text_stream(SHORT_REPLY, model=MODEL))
        server.default = warm  # one unmeasured run each: bytecode caches, the OS's file cache
        run_measured([*threadline_command(), "--data-dir", str(data_dir), "ask", "hi"], env, 1)
        if llm is not None:
            run_measured([llm, "-m", LLM_MODEL_ID, "hi"], llm_env, 1)
        for label, pieces in cases:
            server.default = sse_response(openai_text_stream(pieces, model=MODEL))
            expect = len("".join(pieces).strip())
            ours, theirs = Runs(), Runs()
            ask = [*threadline_command(), "--data-dir", str(data_dir), "ask", "Say hello"]
            for _ in range(args.rounds):
                ours.add(*run_measured(ask, env, expect))
                if llm is not None:
                    theirs.add(*run_measured([llm, "-m", LLM_MODEL_ID, "Say hello"], llm_env, expect))
            print_row(label, ours, theirs if llm is not None else None)
        if args.mcp:
            measure_mcp(Path(tmp), server, env, args.rounds)
    return 0


def measure_mcp(tmp: Path, server: ReplayServer, env: dict[str, str], rounds: int) -> None:
    """Ask with no tool use, with and without two MCP servers offered (alternating)."""
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    plain, offered = tmp / "plain", tmp / "offered"
    for data_dir in (plain, offered):
        setup_threadline(data_dir, server, env)
    offer_mcp_servers(offered, env, repo)
    server.default = sse_response(openai_text_stream(SHORT_REPLY, model=MODEL))
    expect = len("".join(SHORT_REPLY).strip())
    without, with_servers = Runs(), Runs()
    starts: list[int] = []
    cold = [*threadline_command(), "--data-dir", str(offered), "ask", "hi"]
    run_measured(cold, env, expect)  # unmeasured, as for the others (a first ask learns the tool lists)
    print(
        f"  first ask with the servers offered started {count_server_starts(offered)} MCP servers", flush=True
    )
    for _ in range(rounds):
        without.add(
            *run_measured([*threadline_command(), "--data-dir", str(plain), "ask", "hi"], env, expect)
        )
        logs = offered / "logs"
        for old in logs.glob("mcp-*.log") if logs.exists() else ():
            old.unlink()
        with_servers.add(
            *run_measured([*threadline_command(), "--data-dir", str(offered), "ask", "hi"], env, expect)
        )
        starts.append(count_server_starts(offered))
        offered_tools = server.requests[-1].body.get("tools") or []
    print_row("short reply, no MCP server", without, None)
    print_row("short reply, 2 MCP servers offered", with_servers, None)
    print(
        f"  ratio with/without {ratio(with_servers.median_wall, without.median_wall)};"
        f" MCP servers started per ask: {starts}; tools offered in the last request: {len(offered_tools)}",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
