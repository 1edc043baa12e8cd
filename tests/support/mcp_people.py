"""Stand-ins for the person behind an MCP connection (``threadline.tools.mcp.person``).

``FollowingPerson`` accepts every form with its defaults and "opens" a sign-in page the
way a browser would load it: it follows the page's redirects with HTTP GETs, which brings
the authorization code to Threadline's loopback listener. Used by the conformance client
(tests/conformance/client.py) and the OAuth tests.
"""

from __future__ import annotations

import asyncio

from threadline.tools.mcp.person import DefaultsPerson


class FollowingPerson(DefaultsPerson):
    """Accepts forms with their defaults; follows a sign-in page's redirects like a browser."""

    def __init__(self) -> None:
        super().__init__()
        self._visits: set[asyncio.Task[None]] = set()
        self.statuses: list[int] = []
        """The HTTP status of each page loaded."""

    async def open_sign_in(self, server: str, url: str) -> None:
        await super().open_sign_in(server, url)
        task = asyncio.ensure_future(self._visit(url))  # a browser loads the page on its own
        self._visits.add(task)
        task.add_done_callback(self._visits.discard)

    async def _visit(self, url: str) -> None:
        import httpx2

        async with httpx2.AsyncClient(timeout=60) as client:
            for _ in range(10):
                response = await client.get(url, follow_redirects=False)
                self.statuses.append(response.status_code)
                location = response.headers.get("location")
                if response.status_code not in (301, 302, 303, 307, 308) or not location:
                    return
                url = str(response.url.join(location))
