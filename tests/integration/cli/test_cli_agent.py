"""`threadline agent …` and `threadline ask --agent NAME` as real processes against the replay server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.cli.test_cli_ask import add_replay_provider
from tests.support.cli_process import threadline
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response


def ok(data_dir: Path, *args: str, stdin: str | None = None) -> str:
    result = threadline(data_dir, *args, stdin=stdin)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_agent_commands_and_ask_with_an_agent(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    ok(
        tmp_path,
        "agent",
        "add",
        "Reviewer",
        "--system",
        "Be terse.",
        "--temperature",
        "0.4",
        "--top-p",
        "0.9",
    )
    ok(tmp_path, "agent", "edit", "reviewer", "--max-tokens", "77")
    shown = json.loads(ok(tmp_path, "agent", "show", "Reviewer"))
    assert (shown["system_prompt"], shown["temperature"], shown["top_p"], shown["max_tokens"]) == (
        "Be terse.",
        0.4,
        0.9,
        77,
    )
    names = [a["name"] for a in json.loads(ok(tmp_path, "agent", "list", "--json"))]
    assert names == ["Default", "Reviewer"]

    replay_server.enqueue(sse_response(openai_text_stream(["fine"])))
    result = threadline(tmp_path, "ask", "--agent", "Reviewer", "Check this")
    assert result.returncode == 0, result.stderr
    body = replay_server.requests[-1].body
    assert body["messages"][0] == {"role": "system", "content": "Be terse."}
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.4, 0.9, 77)

    exported = ok(tmp_path, "agent", "export", "Reviewer")
    assert json.loads(exported)["agents"][0]["name"] == "Reviewer"
    imported = ok(tmp_path, "agent", "import", "-", stdin=exported)
    assert "Reviewer (2)" in imported

    removed = ok(tmp_path, "agent", "remove", "Reviewer")
    assert "1 chat(s) now use the default agent" in removed


def test_agent_commands_refuse_in_one_line(tmp_path: Path) -> None:
    missing = threadline(tmp_path, "ask", "--agent", "Nobody", "hi")
    assert missing.returncode != 0 and "no agent named 'Nobody'" in missing.stderr
    default = threadline(tmp_path, "agent", "remove", "Default")
    assert default.returncode != 0 and "default agent cannot be deleted" in default.stderr
    bad = threadline(tmp_path, "agent", "import", "-", stdin='{"agents": [{"name": "A", "top_p": 3}]}')
    assert bad.returncode != 0 and bad.stderr.startswith("threadline: ") and "top_p" in bad.stderr
    assert "Traceback" not in bad.stderr
