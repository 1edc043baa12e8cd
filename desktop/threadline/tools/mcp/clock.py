"""Time limits that stop while a person answers (``PersonClock``), apart from the connection
(``mcp_client``) that keeps one per server."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import anyio


class PersonClock:
    """Time limits that stop while a person answers (a sign in, an elicitation form).

    The SDK pauses a request's own clock during its OAuth redirect only; Threadline's
    start limit and an elicitation in the middle of a call would still run out while the
    user reads the form. Each limit is an ``anyio.CancelScope`` whose deadline ``paused``
    lifts and puts back with the time that was left.
    """

    def __init__(self) -> None:
        self._left: dict[anyio.CancelScope, float] = {}
        self._pauses = 0

    @contextlib.contextmanager
    def limit(self, seconds: float) -> Iterator[None]:
        """Raise ``TimeoutError`` once the block has run ``seconds`` (not counting pauses)."""
        import anyio

        scope = anyio.CancelScope()
        self._left[scope] = seconds
        scope.deadline = math.inf if self._pauses else anyio.current_time() + seconds
        try:
            with scope:
                yield
        finally:
            self._left.pop(scope, None)
        if scope.cancelled_caught:
            raise TimeoutError

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        import anyio

        if not self._pauses:
            now = anyio.current_time()
            for scope in self._left:
                self._left[scope] = max(0.0, scope.deadline - now)
                scope.deadline = math.inf
        self._pauses += 1
        try:
            yield
        finally:
            self._pauses -= 1
            if not self._pauses:
                now = anyio.current_time()
                for scope, left in self._left.items():
                    scope.deadline = now + left
