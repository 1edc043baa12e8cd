"""``threadline agent add/edit --reasoning-effort/--thinking-budget`` and ``ask`` with a thinking
model, as real processes against the replay server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.cli.test_cli_agent import ok
from tests.integration.cli.test_cli_ask import add_replay_provider
from tests.support.cli_process import threadline
from tests.support.sse_server import ReplayServer, load_sse_fixture, sse_response


def test_reasoning_effort_is_stored_sent_and_the_thinking_kept_out_of_the_answer(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    ok(tmp_path, "agent", "add", "Thinker", "--reasoning-effort", "high", "--thinking-budget", "4096")
    shown = json.loads(ok(tmp_path, "agent", "show", "Thinker"))
    assert (shown["reasoning_effort"], shown["thinking_budget"]) == ("high", 4096)

    replay_server.enqueue(sse_response(load_sse_fixture("openai_reasoning_content.sse")))
    result = threadline(tmp_path, "ask", "--agent", "Thinker", "What is 17 × 23?")
    assert result.returncode == 0, result.stderr
    assert "391" in result.stdout and "17 × 20" not in result.stdout
    body = replay_server.requests[-1].body
    assert body["reasoning_effort"] == "high" and "thinking" not in body  # the budget is Anthropic's

    ok(tmp_path, "agent", "edit", "Thinker", "--reasoning-effort", "", "--thinking-budget", "0")
    shown = json.loads(ok(tmp_path, "agent", "show", "Thinker"))
    assert "reasoning_effort" not in shown and "thinking_budget" not in shown


def test_bad_thinking_options_are_refused(tmp_path: Path) -> None:
    for option, value in (("--reasoning-effort", "extreme"), ("--thinking-budget", "100")):
        result = threadline(tmp_path, "agent", "add", "Thinker", option, value)
        assert result.returncode != 0
        assert result.stderr.startswith("threadline: ") and option in result.stderr
        assert "Traceback" not in result.stderr
