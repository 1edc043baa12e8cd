"""`threadline usage` against replies from a server that reports usage and one that does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.integration.cli.test_cli_ask import add_replay_provider
from tests.support.cli_process import threadline
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response


def ask(data_dir: Path, server: ReplayServer, usage: tuple[int, int] | None) -> str:
    server.enqueue(sse_response(openai_text_stream(["Paris ", "is the capital of France."], usage=usage)))
    result = threadline(data_dir, "ask", "Capital of France?")
    assert result.returncode == 0, result.stderr
    return result.stderr.split("session ")[1].split()[0]


def usage_json(data_dir: Path, *args: str) -> dict:  # type: ignore[type-arg]
    result = threadline(data_dir, "usage", "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_usage_reports_tokens_and_cost_with_the_users_price(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    reported = ask(tmp_path, replay_server, usage=(1200, 300))
    silent = ask(tmp_path, replay_server, usage=None)

    before = usage_json(tmp_path, "--session", reported)
    (only,) = before["replies"]
    assert (only["input_tokens"], only["output_tokens"], only["estimated"]) == (1200, 300, False)
    assert only["cost_usd"] is None  # a local server has no shipped price: no cost rather than a wrong one
    assert only["time_to_first_token_ms"] is not None

    set_price = threadline(tmp_path, "usage", "--set-price", "replay", "gpt-4o-mini", "2", "8")
    assert set_price.returncode == 0, set_price.stderr
    after = usage_json(tmp_path, "--session", reported)
    assert after["replies"][0]["cost_usd"] == pytest.approx((1200 * 2 + 300 * 8) / 1_000_000)
    assert after["total"]["cost_usd"] == pytest.approx(after["replies"][0]["cost_usd"])

    estimate = usage_json(tmp_path, "--session", silent)["replies"][0]
    assert estimate["estimated"] is True and estimate["output_tokens"] > 0
    assert estimate["input_tokens"] is None and estimate["cost_usd"] is None

    text = threadline(tmp_path, "usage", "--session", silent)
    assert text.returncode == 0 and "out ≈" in text.stdout and "no price" in text.stdout

    listing = usage_json(tmp_path)
    assert {c["session"] for c in listing["chats"]} == {reported, silent}
    assert listing["total"]["replies"] == 2 and listing["total"]["replies_without_price"] == 1

    cleared = threadline(tmp_path, "usage", "--clear-price", "replay", "gpt-4o-mini")
    assert cleared.returncode == 0
    assert usage_json(tmp_path, "--session", reported)["replies"][0]["cost_usd"] is None


def test_usage_refuses_bad_prices_and_unknown_chats(tmp_path: Path) -> None:
    bad = threadline(tmp_path, "usage", "--set-price", "replay", "m", "cheap", "8")
    assert bad.returncode == 1 and bad.stderr.startswith("threadline: prices are numbers")
    unknown = threadline(tmp_path, "usage", "--session", "nope")
    assert unknown.returncode == 1 and "no chat with id 'nope'" in unknown.stderr
    prices = threadline(tmp_path, "usage", "--prices")
    assert prices.returncode == 0 and "gpt-4o-mini: 0.15 / 0.6" in prices.stdout
