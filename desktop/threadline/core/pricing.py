"""What a reply cost: a price table per provider and model, shipped defaults plus the user's own.

Prices are in US dollars per million tokens, input and output. A price applies only
where Threadline can be sure of it: the shipped table covers well-known models of
the official OpenAI and Anthropic endpoints, matched by exact model id (or that id
with a date suffix such as ``-2024-08-06`` / ``-20250514``, which the vendors use for
pinned snapshots of the same model). A local server or a proxy that happens to
serve a model called ``gpt-4o`` gets no shipped price, and an unknown model gets no
cost at all: no figure is better than a wrong one. The user's own entries (Settings,
``threadline usage --set-price``) name a provider and a model and always win.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from threadline.core.model_ids import base_model_id

PRICES_TAKEN = "2025-11"
"""When the shipped prices were copied from the vendors' public price pages (year-month)."""


class Vendor(StrEnum):
    """An official endpoint whose published prices the shipped table knows."""

    OPENAI = "openai"
    ANTHROPIC = "anthropic"


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens; ``source`` says where the figure came from."""

    input_per_mtok: float
    output_per_mtok: float
    source: str = f"shipped, {PRICES_TAKEN}"

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1_000_000


SHIPPED_PRICES: Mapping[Vendor, Mapping[str, tuple[float, float]]] = {
    Vendor.OPENAI: {
        "gpt-5": (1.25, 10.0),
        "gpt-5-mini": (0.25, 2.0),
        "gpt-5-nano": (0.05, 0.40),
        "gpt-4.1": (2.0, 8.0),
        "gpt-4.1-mini": (0.40, 1.60),
        "gpt-4.1-nano": (0.10, 0.40),
        "gpt-4o": (2.50, 10.0),
        "gpt-4o-mini": (0.15, 0.60),
        "o3": (2.0, 8.0),
        "o3-mini": (1.10, 4.40),
        "o4-mini": (1.10, 4.40),
    },
    Vendor.ANTHROPIC: {
        "claude-opus-4-5": (5.0, 25.0),
        "claude-opus-4-1": (15.0, 75.0),
        "claude-opus-4": (15.0, 75.0),
        "claude-sonnet-4-5": (3.0, 15.0),
        "claude-sonnet-4": (3.0, 15.0),
        "claude-3-7-sonnet": (3.0, 15.0),
        "claude-haiku-4-5": (1.0, 5.0),
        "claude-3-5-haiku": (0.80, 4.0),
    },
}
"""Published list prices (standard tier, no batch or cache discounts) as of ``PRICES_TAKEN``."""


@dataclass(frozen=True, slots=True)
class UserPrice:
    """A price the user set for one provider (by its name in Threadline) and model."""

    provider: str
    model: str
    input_per_mtok: float
    output_per_mtok: float

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "input_per_mtok": self.input_per_mtok,
            "output_per_mtok": self.output_per_mtok,
        }

    @classmethod
    def from_json(cls, data: Any) -> UserPrice | None:
        """``None`` for an entry that is not a valid price (settings are edited by people)."""
        if not isinstance(data, dict):
            return None
        try:
            entry = cls(
                str(data["provider"]),
                str(data["model"]),
                float(data["input_per_mtok"]),
                float(data["output_per_mtok"]),
            )
        except (KeyError, TypeError, ValueError):
            return None
        if entry.input_per_mtok < 0 or entry.output_per_mtok < 0 or not entry.model:
            return None
        return entry


class PriceTable:
    """Looks up the price of a provider's model: the user's entry, else the shipped one, else none."""

    def __init__(self, user_prices: Iterable[UserPrice] = ()) -> None:
        self._user = {(p.provider, p.model): p for p in user_prices}

    @classmethod
    def from_setting(cls, value: Any) -> PriceTable:
        entries = value if isinstance(value, list) else []
        return cls(p for p in map(UserPrice.from_json, entries) if p is not None)

    def user_prices(self) -> list[UserPrice]:
        return list(self._user.values())

    def price(self, provider: str, model: str, vendor: Vendor | None) -> Price | None:
        """``vendor`` is the official endpoint the provider talks to, ``None`` for any other server."""
        own = self._user.get((provider, model))
        if own is not None:
            return Price(own.input_per_mtok, own.output_per_mtok, source="your price")
        if vendor is None:
            return None
        known = SHIPPED_PRICES[vendor]
        pair = known.get(model) or known.get(base_model_id(model))
        return None if pair is None else Price(*pair)
