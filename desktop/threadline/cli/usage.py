"""``threadline usage``: tokens, speed and cost, as the window shows them.

``--session ID`` prints one line per reply (every version: each was a paid
request) and the session's totals; without it, one line per recent chat. Token
counts a server did not report are Threadline's estimates, marked ``≈``; a
reply whose model has no known price shows no cost, and the totals say how many
such replies they leave out. ``--prices`` lists the price table, ``--set-price``
and ``--clear-price`` edit the user's own entries.

Only ``argparse`` is imported at module level: the parser is built on every start.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from threadline.core.usage import ReplyUsage, UsageTotals
    from threadline.engine.api import EngineApi

DEFAULT_CHATS = 20


def add_usage_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "usage", parents=[common], help="tokens, speed and cost per reply and per chat"
    )
    parser.add_argument("--session", metavar="ID", help="one chat, reply by reply")
    parser.add_argument(
        "--limit", type=int, default=DEFAULT_CHATS, metavar="N", help="how many recent chats (default 20)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON (for scripts)")
    parser.add_argument("--prices", action="store_true", help="list the price table")
    parser.add_argument(
        "--set-price",
        nargs=4,
        metavar=("PROVIDER", "MODEL", "INPUT", "OUTPUT"),
        help="set your price in US dollars per million input and output tokens",
    )
    parser.add_argument("--clear-price", nargs=2, metavar=("PROVIDER", "MODEL"), help="remove your price")


class UsageError(Exception):
    """Bad arguments: reported in one line by the caller."""


async def run(engine: EngineApi, args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    if args.set_price or args.clear_price:
        return await _edit_price(engine, args, out)
    if args.prices:
        return await _print_prices(engine, args, out)
    if args.session:
        return await _print_session(engine, args.session, args.json, out)
    return await _print_recent(engine, args.limit, args.json, out)


async def _print_session(engine: EngineApi, session_id: str, as_json: bool, out: TextIO) -> int:
    from threadline.store.errors import NotFoundError

    info = await engine.sessions.get_session(session_id)
    if info is None:
        raise UsageError(f"no chat with id {session_id!r} (see `threadline list`)")
    try:
        usage = await engine.library.usage(session_id)
    except NotFoundError as err:
        raise UsageError(f"no chat with id {session_id!r} (see `threadline list`)") from err
    if as_json:
        data = {
            "session": session_id,
            "title": info.display_title,
            "replies": [_reply_json(r) for r in usage.replies],
            "total": _totals_json(usage.total),
            "active_path": _totals_json(usage.active),
        }
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return 0
    out.write(f"{info.display_title}\n")
    for reply in usage.replies:
        out.write("  " + reply_line(reply) + "\n")
    out.write(f"All replies, every version: {totals_line(usage.total)}\n")
    out.write(f"The conversation as shown: {totals_line(usage.active)}\n")
    return 0


async def _print_recent(engine: EngineApi, limit: int, as_json: bool, out: TextIO) -> int:
    from threadline.core.usage import totals

    if limit < 1:
        raise UsageError("--limit must be at least 1")
    sessions = await engine.sessions.list_sessions(limit=limit)
    prices = await engine.library.price_book()
    rows = []
    replies: list[ReplyUsage] = []
    for info in sessions:
        usage = await engine.library.usage(info.id, prices)
        rows.append((info, usage.total))
        replies.extend(usage.replies)
    overall = totals(replies)
    if as_json:
        data = {
            "chats": [{"session": i.id, "title": i.display_title, **_totals_json(t)} for i, t in rows],
            "total": _totals_json(overall),
        }
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return 0
    for info, total in rows:
        out.write(f"{info.id}  {info.display_title[:40]:<40}  {totals_line(total)}\n")
    out.write(f"These {len(rows)} chats: {totals_line(overall)}\n")
    return 0


async def _print_prices(engine: EngineApi, args: argparse.Namespace, out: TextIO) -> int:
    from threadline.core.pricing import PRICES_TAKEN, SHIPPED_PRICES

    book = await engine.library.price_book()
    own = book.table.user_prices()
    if args.json:
        data = {
            "yours": [p.to_json() for p in own],
            "shipped": {
                "taken": PRICES_TAKEN,
                "prices": {
                    vendor.value: {
                        m: {"input_per_mtok": i, "output_per_mtok": o} for m, (i, o) in models.items()
                    }
                    for vendor, models in SHIPPED_PRICES.items()
                },
            },
        }
        out.write(json.dumps(data, indent=2) + "\n")
        return 0
    out.write("US dollars per million tokens (input / output)\n")
    if own:
        out.write("Your prices:\n")
        for p in own:
            out.write(f"  {p.provider} {p.model}: {p.input_per_mtok:g} / {p.output_per_mtok:g}\n")
    out.write(f"Shipped prices (official endpoints only, list prices as of {PRICES_TAKEN}):\n")
    for vendor, models in SHIPPED_PRICES.items():
        for model, (i, o) in models.items():
            out.write(f"  {vendor.value} {model}: {i:g} / {o:g}\n")
    return 0


async def _edit_price(engine: EngineApi, args: argparse.Namespace, out: TextIO) -> int:
    from threadline.core.pricing import UserPrice

    if args.clear_price:
        provider, model = args.clear_price
        await engine.library.set_price(None, provider=provider, model=model)
        out.write(f"Removed your price for {provider} {model}.\n")
        return 0
    provider, model, input_text, output_text = args.set_price
    price = UserPrice.from_json(
        {"provider": provider, "model": model, "input_per_mtok": input_text, "output_per_mtok": output_text}
    )
    if price is None:
        raise UsageError("prices are numbers of US dollars per million tokens, 0 or more (e.g. 2.5 10)")
    await engine.library.set_price(price, provider=provider, model=model)
    out.write(
        f"{provider} {model}: ${price.input_per_mtok:g} in, "
        f"${price.output_per_mtok:g} out per million tokens.\n"
    )
    return 0


def reply_line(reply: ReplyUsage) -> str:
    from threadline.core.usage import format_cost

    approx = "≈" if reply.estimated else ""
    parts = [f"{reply.model or '?'} ({reply.provider or '?'})"]
    parts.append(f"in {_count(reply.input_tokens)}")
    parts.append(f"out {approx}{_count(reply.output_tokens)}")
    if reply.time_to_first_token_ms is not None:
        parts.append(f"first token {reply.time_to_first_token_ms:,.0f} ms")
    if reply.tokens_per_second is not None:
        parts.append(f"{approx}{reply.tokens_per_second:,.0f} tokens/s")
    parts.append(format_cost(reply.cost) or "no price")
    return "  ".join(parts)


def totals_line(total: UsageTotals) -> str:
    from threadline.core.usage import format_cost, replies

    approx = "≈" if total.estimated else ""
    text = f"{replies(total.replies)}, in {approx}{total.input_tokens:,}, out {approx}{total.output_tokens:,}"
    if total.cost is not None:
        text += f", {format_cost(total.cost)}"
    if total.unpriced:
        text += f" ({total.unpriced} without a known price)"
    return text


def _count(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _reply_json(reply: ReplyUsage) -> dict[str, Any]:
    return {
        "message": reply.message_id,
        "provider": reply.provider,
        "model": reply.model,
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "estimated": reply.estimated,
        "time_to_first_token_ms": reply.time_to_first_token_ms,
        "tokens_per_second": reply.tokens_per_second,
        "cost_usd": reply.cost,
    }


def _totals_json(total: UsageTotals) -> dict[str, Any]:
    return {
        "replies": total.replies,
        "input_tokens": total.input_tokens,
        "output_tokens": total.output_tokens,
        "estimated": total.estimated,
        "cost_usd": total.cost,
        "replies_without_price": total.unpriced,
    }
