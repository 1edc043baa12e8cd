"""What a reply used and cost, from its stored request metadata.

Figures come from the provider's own usage report. When a server sends none (many
local servers), the tokens are estimated from the text and marked ``estimated`` so
the window can show them with "≈". Speed is output tokens over the time from the
first token to the end, so a slow first byte does not hide a fast stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from threadline.core.messages import ASSISTANT_KINDS, Message, MessageStatus, RequestMetadata, written_length
from threadline.core.pricing import Price
from threadline.core.request import tokens_for_chars

PriceLookup = Callable[[str, str], Price | None]
"""``(provider, model) -> price`` or ``None`` when unknown."""


@dataclass(frozen=True, slots=True)
class ReplyUsage:
    """One assistant message's figures; ``None`` where a figure is not known."""

    message_id: str
    provider: str
    model: str
    input_tokens: int | None
    output_tokens: int | None
    estimated: bool
    """True when a token count is Threadline's estimate rather than the provider's report."""
    time_to_first_token_ms: float | None
    tokens_per_second: float | None
    cost: float | None
    """US dollars, ``None`` when the price of this provider's model is unknown."""


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """Sums over several replies. ``cost`` covers only replies with a known price."""

    replies: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False
    cost: float | None = None
    unpriced: int = 0
    """Replies left out of ``cost`` because their price is unknown."""


def reply_usage(message: Message, price_of: PriceLookup) -> ReplyUsage | None:
    """The figures of one assistant message; ``None`` for any other message."""
    if message.kind not in ASSISTANT_KINDS or message.metadata is None:
        return None
    return usage_of_reply(message.id, message.status, message.metadata, written_length(message), price_of)


def usage_of_reply(
    message_id: str, status: MessageStatus, meta: RequestMetadata, written: int, price_of: PriceLookup
) -> ReplyUsage:
    """``reply_usage`` from what it reads of a reply: ``written`` is the characters of its text
    and tool-call arguments, which estimate its output when the provider did not count it.
    (``ConversationTree.request_facts`` gives these without making a long chat's replies.)"""
    estimated = False
    output_tokens = meta.output_tokens
    if output_tokens is None and status is not MessageStatus.STREAMING and written:
        output_tokens, estimated = tokens_for_chars(written), True
    input_tokens = meta.input_tokens
    speed = None
    if output_tokens and meta.started_at and meta.ended_at:
        seconds = (meta.ended_at - meta.started_at).total_seconds() - (
            meta.time_to_first_token_ms or 0
        ) / 1000
        if seconds > 0.05:  # a reply that arrived in one chunk has no meaningful speed
            speed = output_tokens / seconds
    cost = None
    price = price_of(meta.provider, meta.model) if meta.provider and meta.model else None
    if price is not None and input_tokens is not None and output_tokens is not None:
        cost = price.cost(input_tokens, output_tokens)
    return ReplyUsage(
        message_id=message_id,
        provider=meta.provider,
        model=meta.model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        estimated=estimated,
        time_to_first_token_ms=meta.time_to_first_token_ms,
        tokens_per_second=speed,
        cost=cost,
    )


def live_usage(message: Message, now: datetime) -> ReplyUsage | None:
    """Figures of a reply still streaming: output tokens and speed, both estimates so far."""
    if message.kind not in ASSISTANT_KINDS or message.metadata is None:
        return None
    meta = message.metadata
    tokens = tokens_for_chars(written_length(message))
    speed = None
    if tokens and meta.started_at is not None:
        seconds = (now - meta.started_at).total_seconds()
        if seconds > 0.5:  # the first half second says nothing about the speed
            speed = tokens / seconds
    return ReplyUsage(
        message_id=message.id,
        provider=meta.provider,
        model=meta.model,
        input_tokens=None,
        output_tokens=tokens,
        estimated=True,
        time_to_first_token_ms=None,
        tokens_per_second=speed,
        cost=None,
    )


def describe(usage: ReplyUsage) -> str:
    """One short line: ``1,234 in · 567 out · 0.4 s to first token · 52 tokens/s · $0.0012``.

    Estimates carry "≈"; unknown figures are left out rather than shown as zero.
    """
    approx = "≈" if usage.estimated else ""
    parts: list[str] = []
    if usage.input_tokens is not None:
        parts.append(f"{usage.input_tokens:,} in")
    if usage.output_tokens is not None:
        parts.append(f"{approx}{usage.output_tokens:,} out")
    if usage.time_to_first_token_ms is not None:
        parts.append(f"{usage.time_to_first_token_ms / 1000:.1f} s to first token")
    if usage.tokens_per_second is not None:
        parts.append(f"{approx}{usage.tokens_per_second:,.0f} tokens/s")
    if usage.cost is not None:
        parts.append(format_cost(usage.cost))
    return " · ".join(parts)


def totals(replies: Iterable[ReplyUsage]) -> UsageTotals:
    count = input_tokens = output_tokens = unpriced = 0
    estimated = False
    cost: float | None = None
    for reply in replies:
        count += 1
        input_tokens += reply.input_tokens or 0
        output_tokens += reply.output_tokens or 0
        estimated = estimated or reply.estimated or reply.input_tokens is None
        if reply.cost is None:
            unpriced += 1
        else:
            cost = (cost or 0.0) + reply.cost
    return UsageTotals(count, input_tokens, output_tokens, estimated, cost, unpriced)


def replies(count: int) -> str:
    """ "1 reply", "3 replies"."""
    return f"{count:,} repl{'y' if count == 1 else 'ies'}"


def format_cost(dollars: float | None) -> str:
    """``$0.0123`` style: enough digits that a cheap reply does not show as $0.00."""
    if dollars is None:
        return ""
    if dollars >= 1:
        return f"${dollars:,.2f}"
    if dollars >= 0.01:
        return f"${dollars:.3f}"
    return f"${dollars:.4f}" if dollars >= 0.0001 else "<$0.0001"
