"""Where each id sits in a long list of ids, without an object per id.

A ``dict[str, int]`` is the obvious map, but each position above 256 is an ``int``
object of its own: 10,000 of them for a 10,000-message chat, scattered through Python's
small-object heap, where they help keep a closed chat's memory (docs/performance.md,
"Memory after a big chat is opened and closed"). This is the same hash table, open
addressing with the probe sequence ``dict`` uses, kept in a ``list`` of keys and an
``array`` of positions: two allocations however many ids. Written here because no standard or well-kept
library offers a string-to-integer map stored this way; a lookup costs about twice a
``dict``'s (well under a microsecond), and it sits on paths that run once per message
or per row, not in tight loops.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

_EMPTY = -1
_REMOVED = -2
_HASH_BITS = (1 << 64) - 1
_PERTURB_SHIFT = 5


class IdPositions:
    """A map from id to a non-negative position (``get`` answers ``-1`` for an unknown id)."""

    __slots__ = ("_count", "_keys", "_mask", "_positions", "_used")

    def __init__(self, ids: Iterable[str] = ()) -> None:
        """``ids`` in order: each one's position is its index (a repeated id keeps its first)."""
        self._reset(8)
        for position, key in enumerate(ids):
            if self.get(key) < 0:
                self.add(key, position)

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) >= 0

    def get(self, key: str) -> int:
        """``key``'s position, or ``-1``."""
        slot = self._slot_of(key)
        return -1 if slot < 0 else self._positions[slot]

    def add(self, key: str, position: int) -> None:
        """Record ``key`` at ``position`` (``key`` must not be here already; ``position`` ≥ 0)."""
        if position < 0:
            raise ValueError("a position is never negative")
        if (self._used + 1) * 3 >= len(self._positions) * 2:
            self._grow()
        self._place(key, position)
        self._count += 1
        self._used += 1

    def discard(self, key: str) -> None:
        """Forget ``key`` if it is here (its slot stays taken until the table next grows)."""
        slot = self._slot_of(key)
        if slot >= 0:
            self._positions[slot] = _REMOVED
            self._keys[slot] = None
            self._count -= 1

    def _slot_of(self, key: str) -> int:
        """The slot holding ``key``, or ``-1``: ``dict``'s probe sequence, past removed slots."""
        keys, positions, mask = self._keys, self._positions, self._mask
        perturb = hash(key) & _HASH_BITS
        slot = perturb & mask
        while True:
            position = positions[slot]
            if position == _EMPTY:
                return -1
            if position >= 0:
                found = keys[slot]
                if found is key or found == key:
                    return slot
            perturb >>= _PERTURB_SHIFT
            slot = (slot * 5 + perturb + 1) & mask

    def _place(self, key: str, position: int) -> None:
        keys, positions, mask = self._keys, self._positions, self._mask
        perturb = hash(key) & _HASH_BITS
        slot = perturb & mask
        while positions[slot] != _EMPTY:
            perturb >>= _PERTURB_SHIFT
            slot = (slot * 5 + perturb + 1) & mask
        keys[slot] = key
        positions[slot] = position

    def _grow(self) -> None:
        live = [(k, p) for k, p in zip(self._keys, self._positions, strict=True) if k is not None and p >= 0]
        size = 8
        while len(live) * 3 >= size:  # a third full after growing: room for as many again
            size *= 2
        self._reset(size)
        for key, position in live:
            self._place(key, position)
        self._count = self._used = len(live)

    def _reset(self, size: int) -> None:
        self._keys: list[str | None] = [None] * size
        self._positions = array("q", [_EMPTY]) * size
        self._mask = size - 1
        self._count = 0
        self._used = 0
