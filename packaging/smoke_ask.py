"""Drive an installed/frozen ``threadline`` against the local replay server: the SDKs work frozen.

    python packaging/smoke_ask.py /usr/bin/threadline DATA_DIR

Starts ``tests.support.sse_server.ReplayServer`` on 127.0.0.1, adds an OpenAI-compatible and
an Anthropic provider pointing at it (keys from environment variables, no keychain needed),
runs ``threadline ask`` once through each, and checks the streamed replies. This proves the
bundle carries what the ``openai``/``anthropic`` SDKs and their HTTP stack import at run time.
Needs the repository checkout (for ``tests/support``); exits non-zero on any mismatch.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.sse_server import (  # noqa: E402
    ReplayServer,
    anthropic_text_stream,
    openai_text_stream,
    sse_response,
)


def main() -> int:
    exe, data_dir = sys.argv[1], sys.argv[2]
    env = {**os.environ, "SMOKE_OPENAI_KEY": "sk-smoke", "SMOKE_ANTHROPIC_KEY": "sk-ant-smoke"}

    def threadline(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run([exe, *args, "--data-dir", data_dir], input=stdin, capture_output=True,
                              text=True, env=env, timeout=120)
        if done.returncode != 0:
            raise SystemExit(f"smoke_ask: `threadline {' '.join(args)}` failed ({done.returncode}): "
                             f"{done.stderr.strip()[-400:]}")
        return done.stdout

    with ReplayServer() as server:
        server.enqueue(sse_response(openai_text_stream(["Frozen ", "OpenAI ", "works"])))
        server.enqueue(sse_response(anthropic_text_stream(["Frozen ", "Anthropic ", "works"])))
        threadline("provider", "add", "replay-openai", "--kind", "openai", "--base-url",
                   server.openai_base_url, "--api-key-env", "SMOKE_OPENAI_KEY", "--model", "gpt-4o-mini")
        threadline("provider", "add", "replay-anthropic", "--kind", "anthropic", "--base-url",
                   server.anthropic_base_url, "--api-key-env", "SMOKE_ANTHROPIC_KEY",
                   "--model", "claude-sonnet-4-5")
        first = threadline("ask", "--provider", "replay-openai", "Say hello")
        second = threadline("ask", "--provider", "replay-anthropic", "Say hello")
    if "Frozen OpenAI works" not in first or "Frozen Anthropic works" not in second:
        raise SystemExit(f"smoke_ask: unexpected replies: {first!r} / {second!r}")
    print("smoke_ask: OK — streamed a reply through the openai and anthropic SDKs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
