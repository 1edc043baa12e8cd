"""Usage and cost of stored replies, for the window's figures and ``threadline usage``.

Everything here is derived from stored history (each assistant message's request
metadata) and the price table, so any instance computes the same figures. The
price table is the shipped one (``threadline.core.pricing``) overlaid with the
user's entries, kept in the ``prices`` setting.
"""

from __future__ import annotations

from dataclasses import dataclass

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.core.messages import ASSISTANT_KINDS
from threadline.core.pricing import Price, PriceTable, UserPrice, Vendor
from threadline.core.tree import ConversationTree
from threadline.core.usage import ReplyUsage, UsageTotals, totals, usage_of_reply
from threadline.llm.openai_host import is_official_openai
from threadline.store.repository import Store

PRICES_SETTING = "prices"
"""Setting holding the user's prices: a list of ``UserPrice.to_json()`` entries."""


@dataclass(frozen=True, slots=True)
class SessionUsage:
    """Every reply of a session (all versions: each one was a paid request) and their sum.

    ``active`` sums the replies on the active path only: what the conversation as
    shown cost.
    """

    session_id: str
    replies: tuple[ReplyUsage, ...]
    total: UsageTotals
    active: UsageTotals


def vendor_of(config: ProviderConfig | None) -> Vendor | None:
    """The official endpoint a provider talks to, or ``None`` for a local server or proxy."""
    if config is None:
        return None
    if config.kind is ProviderKind.OPENAI:
        return Vendor.OPENAI if is_official_openai(config.base_url) else None
    if config.kind is ProviderKind.ANTHROPIC:
        url = config.base_url
        return Vendor.ANTHROPIC if not url or "api.anthropic.com" in url else None
    return None


class PriceBook:
    """The price table with the providers it applies to, read once per report."""

    def __init__(self, table: PriceTable, providers: list[ProviderConfig]) -> None:
        self.table = table
        self._vendors = {p.name: vendor_of(p) for p in providers}

    @classmethod
    async def load(cls, store: Store) -> PriceBook:
        table = PriceTable.from_setting(await store.get_setting(PRICES_SETTING, []))
        return cls(table, await store.list_providers())

    def price(self, provider: str, model: str) -> Price | None:
        return self.table.price(provider, model, self._vendors.get(provider))


def session_usage(session_id: str, tree: ConversationTree, prices: PriceBook) -> SessionUsage:
    replies = [
        usage_of_reply(message_id, status, meta, written, prices.price)
        for message_id, status, meta, written in tree.request_facts(ASSISTANT_KINDS)
        if meta is not None
    ]
    on_path = set(tree.path_ids())
    return SessionUsage(
        session_id,
        tuple(replies),
        totals(replies),
        totals(r for r in replies if r.message_id in on_path),
    )


async def set_user_price(store: Store, price: UserPrice | None, *, provider: str, model: str) -> None:
    """Set (or with ``None``, remove) the user's price for one provider's model."""
    table = PriceTable.from_setting(await store.get_setting(PRICES_SETTING, []))
    entries = [p for p in table.user_prices() if (p.provider, p.model) != (provider, model)]
    if price is not None:
        entries.append(price)
    await store.set_setting(PRICES_SETTING, [p.to_json() for p in entries])
