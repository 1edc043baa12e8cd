"""The sidebar's date groups and its sort order, apart from Qt so both are tested plainly.

Groups follow the chat apps people know: "Pinned" on top, then "Today",
"Yesterday", "Previous 7 days", "Previous 30 days", then one group per month
for the last twelve months ("October 2026"), then one per year ("2023"). Each
group has a rank that grows down the list, so a row's place is a plain tuple
comparison and the list stays sorted under ``bisect``.

The order within the list is the store's page order (pinned first, then most
recent activity, then id, all descending): rows loaded page by page then form a
prefix of the whole list, and a session can tell whether it belongs to the part
already loaded by comparing with the last row fetched.
"""

from __future__ import annotations

from datetime import date, datetime
from functools import total_ordering

PINNED = "Pinned"
ARCHIVED = "Archived"
"""The one group of the archived list (pinned first, then newest)."""

_RECENT = ((0, "Today"), (1, "Yesterday"), (7, "Previous 7 days"), (30, "Previous 30 days"))
MONTHS_SHOWN = 12
"""Months older than "Previous 30 days" get a group each this far back; earlier ones, a year."""
_MONTH_RANK = 100
_YEAR_RANK = 10_000


@total_ordering
class Descending:
    """A string that sorts backwards: ids tie-break newest-first, as the store's ``id DESC``."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Descending) and self.value == other.value

    def __lt__(self, other: Descending) -> bool:
        return self.value > other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Descending({self.value!r})"


def local_day(when: datetime) -> date:
    return (when.astimezone() if when.tzinfo else when).date()


def date_group(day: date, today: date) -> tuple[int, str]:
    """(rank, label) of an unpinned chat last active on ``day``."""
    age = (today - day).days
    for rank, (within, label) in enumerate(_RECENT, start=1):
        if age <= within:
            return rank, label
    months_back = (today.year * 12 + today.month) - (day.year * 12 + day.month)
    if months_back < MONTHS_SHOWN:
        return _MONTH_RANK + months_back, f"{day:%B} {day.year}"
    return _YEAR_RANK + (today.year - day.year), str(day.year)


def group_key(pinned: bool, updated_at: datetime, today: date, *, archived: bool) -> tuple[int, str]:
    if archived:
        return 0, ARCHIVED
    if pinned:
        return 0, PINNED
    return date_group(local_day(updated_at), today)


def store_order(pinned: bool, updated_at: datetime, session_id: str) -> tuple[bool, float, Descending]:
    """The store's page order as an ascending key: pinned, then recent, then id descending."""
    return (not pinned, -updated_at.timestamp(), Descending(session_id))
