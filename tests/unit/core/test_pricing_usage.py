"""Prices apply only where they are certain; usage figures come from metadata or are marked estimates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from threadline.core.messages import Message, MessageKind, MessageStatus, RequestMetadata, Role
from threadline.core.pricing import Price, PriceTable, UserPrice, Vendor
from threadline.core.usage import format_cost, reply_usage, totals

START = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def reply(text: str = "hello there", **meta: object) -> Message:
    return Message(
        id="r1",
        parent_id="p1",
        role=Role.ASSISTANT,
        kind=MessageKind.RESPONSE,
        text=text,
        metadata=RequestMetadata(**meta),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4o-2024-08-06", "gpt-4o-latest"])
def test_a_known_model_of_the_official_endpoint_has_its_price(model: str) -> None:
    price = PriceTable().price("openai", model, Vendor.OPENAI)
    assert price is not None and (price.input_per_mtok, price.output_per_mtok) == (2.50, 10.0)


def test_a_longer_model_name_is_not_priced_as_its_prefix() -> None:
    table = PriceTable()
    assert table.price("openai", "o3-pro", Vendor.OPENAI) is None  # not o3's price
    mini = table.price("openai", "gpt-4o-mini", Vendor.OPENAI)
    assert mini is not None and mini.input_per_mtok == 0.15
    sonnet = table.price("anthropic", "claude-sonnet-4-20250514", Vendor.ANTHROPIC)
    assert sonnet is not None and sonnet.output_per_mtok == 15.0


def test_a_local_server_gets_no_shipped_price_but_the_users_own() -> None:
    assert PriceTable().price("ollama", "gpt-4o", None) is None
    table = PriceTable([UserPrice("ollama", "gpt-4o", 0.0, 0.0)])
    assert table.price("ollama", "gpt-4o", None) == Price(0.0, 0.0, source="your price")


def test_broken_user_entries_are_ignored() -> None:
    entries = [
        {"provider": "p", "model": "m", "input_per_mtok": "1.5", "output_per_mtok": 3},
        {"provider": "p", "model": "bad", "input_per_mtok": "x", "output_per_mtok": 3},
        {"provider": "p", "model": "neg", "input_per_mtok": -1, "output_per_mtok": 3},
        "not a dict",
        {"model": "no provider"},
    ]
    table = PriceTable.from_setting(entries)
    assert [(p.model, p.input_per_mtok) for p in table.user_prices()] == [("m", 1.5)]
    assert PriceTable.from_setting("garbage").user_prices() == []


def price_of(provider: str, model: str) -> Price | None:
    return PriceTable().price(provider, model, Vendor.OPENAI if provider == "openai" else None)


def test_reported_usage_gives_exact_figures_speed_and_cost() -> None:
    message = reply(
        provider="openai",
        model="gpt-4o-mini",
        input_tokens=1_000_000,
        output_tokens=200,
        started_at=START,
        ended_at=START + timedelta(seconds=3),
        time_to_first_token_ms=1000,
    )
    usage = reply_usage(message, price_of)
    assert usage is not None and not usage.estimated
    assert (usage.input_tokens, usage.output_tokens) == (1_000_000, 200)
    assert usage.tokens_per_second == pytest.approx(100.0)  # 200 tokens over the 2 s after the first
    assert usage.cost == pytest.approx(0.15 + 200 * 0.60 / 1_000_000)


def test_without_a_usage_report_output_is_estimated_and_no_cost_is_invented() -> None:
    usage = reply_usage(reply("x" * 400, provider="local", model="llama"), price_of)
    assert usage is not None and usage.estimated and usage.output_tokens == 100
    assert usage.input_tokens is None and usage.cost is None


def test_a_prompt_has_no_usage_and_totals_count_unpriced_replies() -> None:
    prompt = Message.prompt("hi")
    assert reply_usage(prompt, price_of) is None
    priced = reply_usage(reply(provider="openai", model="gpt-4o", input_tokens=10, output_tokens=5), price_of)
    unpriced = reply_usage(reply(provider="local", model="llama", input_tokens=10, output_tokens=5), price_of)
    assert priced is not None and unpriced is not None
    total = totals([priced, unpriced])
    assert (total.replies, total.input_tokens, total.output_tokens, total.unpriced) == (2, 20, 10, 1)
    assert total.cost == pytest.approx(priced.cost)


def test_a_streaming_reply_is_not_estimated_yet() -> None:
    message = reply("partial", provider="local", model="m")
    message.status = MessageStatus.STREAMING
    usage = reply_usage(message, price_of)
    assert usage is not None and usage.output_tokens is None


@pytest.mark.parametrize(
    ("dollars", "text"),
    [(None, ""), (12.345, "$12.35"), (0.0421, "$0.042"), (0.00123, "$0.0012"), (0.00001, "<$0.0001")],
)
def test_costs_are_shown_with_enough_digits(dollars: float | None, text: str) -> None:
    assert format_cost(dollars) == text
