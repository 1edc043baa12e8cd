"""Loopback fakes for the web tools: a SearXNG, Brave and Tavily answering in their documented
JSON, and a page server with an article, a PDF, a redirect loop, a huge page and a slow page.

One ``WebServer`` is one origin (``127.0.0.1:port``); start two for a redirect from one origin
to another. ``requests`` logs ``(method, path, headers)`` of everything received. The slow page
sends its headers, then waits on ``release`` (set when the server closes): the fetch's own time
limit must end it. The huge page streams ``HUGE_BYTES`` of HTML.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support.documents import write_pdf

ARTICLE_TITLE = "The Albatross Valve Handbook"
ARTICLE_ANSWER = "The albatross valve needs a torque of 42 newton metres, checked every spring."
PDF_ANSWER = "Heron pumps run at 1450 revolutions per minute."
HUGE_BYTES = 8 * 1024 * 1024
BRAVE_KEY = "brave-test-key"
TAVILY_KEY = "tvly-test-key"

ARTICLE = f"""<!doctype html>
<html><head><title>{ARTICLE_TITLE}</title><meta charset="utf-8"></head>
<body>
<nav><a href="/">Home</a> <a href="/shop">Shop</a> <a href="/login">Log in</a></nav>
<article>
<h1>{ARTICLE_TITLE}</h1>
<p>Valves of the albatross kind are found on old harbour cranes. They are sturdy, but they need
care, and the care is easy to get wrong when one reads the wrong table.</p>
<p>{ARTICLE_ANSWER}</p>
<p>Tightening beyond that bends the seat; less lets the valve weep. Use a calibrated wrench and
write the date on the tag.</p>
</article>
<footer>Copyright the Harbour Crane Society. Cookie settings.</footer>
</body></html>"""


def search_hits(query: str, base_url: str) -> list[dict[str, str]]:
    """The results every fake provider returns for ``query``: the article first."""
    return [
        {
            "title": ARTICLE_TITLE,
            "url": f"{base_url}/page.html",
            "snippet": f"Everything about the albatross valve ({query}): torque, seats and tags.",
        },
        {"title": "Heron pumps", "url": f"{base_url}/doc.pdf", "snippet": "Speeds of heron pumps."},
    ]


class WebServer:
    def __init__(self, pdf_folder: Path) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.release = threading.Event()
        self.pdf = write_pdf(pdf_folder / "heron.pdf", ["Heron pumps", PDF_ANSWER]).read_bytes()
        self.searxng_json = True
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                owner.requests.append(("GET", self.path, dict(self.headers.items())))
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                route = parts.path
                if route == "/search":
                    self._searxng(query)
                elif route == "/res/v1/web/search":
                    self._brave(query)
                elif route == "/page.html":
                    self._send(200, "text/html; charset=utf-8", ARTICLE.encode())
                elif route == "/doc.pdf":
                    self._send(200, "application/pdf", owner.pdf)
                elif route == "/loop":
                    self._redirect("/loop")
                elif route == "/redirect":
                    self._redirect(query["to"])
                elif route == "/huge":
                    self._huge()
                elif route == "/slow":
                    self.send_response(200)
                    self.send_header("content-type", "text/html")
                    self.send_header("content-length", "100000")
                    self.end_headers()
                    self.wfile.write(b"<html><body><p>The start of a slow page")
                    self.wfile.flush()
                    owner.release.wait()
                elif route == "/notes.txt":
                    self._send(200, "text/plain", b"Plain notes about valves.")
                else:
                    self._send(404, "text/plain", b"not found")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                owner.requests.append(("POST", self.path, dict(self.headers.items())))
                if urlsplit(self.path).path != "/search":
                    self._send(404, "text/plain", b"not found")
                    return
                if self.headers.get("authorization") != f"Bearer {TAVILY_KEY}":
                    self._json(401, {"detail": {"error": "Unauthorized: missing or invalid API key."}})
                    return
                hits = search_hits(body["query"], owner.base_url)[: body.get("max_results", 5)]
                self._json(
                    200,
                    {
                        "query": body["query"],
                        "follow_up_questions": None,
                        "answer": None,
                        "images": [],
                        "results": [
                            {
                                "title": h["title"],
                                "url": h["url"],
                                "content": h["snippet"],
                                "score": 0.9,
                                "raw_content": None,
                            }
                            for h in hits
                        ],
                        "response_time": 0.42,
                    },
                )

            def _searxng(self, query: dict[str, str]) -> None:
                if query.get("format") != "json" or not owner.searxng_json:
                    self._send(403, "text/html", b"<html><body>403 Forbidden</body></html>")
                    return
                hits = search_hits(query["q"], owner.base_url)
                results = [
                    {
                        "url": h["url"],
                        "title": h["title"],
                        "content": h["snippet"],
                        "publishedDate": None,
                        "thumbnail": "",
                        "engine": "duckduckgo",
                        "template": "default.html",
                        "parsed_url": [
                            "http",
                            urlsplit(h["url"]).netloc,
                            urlsplit(h["url"]).path,
                            "",
                            "",
                            "",
                        ],
                        "img_src": "",
                        "priority": "",
                        "engines": ["duckduckgo", "brave"],
                        "positions": [i + 1, i + 2],
                        "score": 2.0 / (i + 1),
                        "category": "general",
                    }
                    for i, h in enumerate(hits)
                ]
                self._json(
                    200,
                    {
                        "query": query["q"],
                        "number_of_results": 0,
                        "results": results,
                        "answers": [],
                        "corrections": [],
                        "infoboxes": [],
                        "suggestions": ["albatross valve torque"],
                        "unresponsive_engines": [],
                    },
                )

            def _brave(self, query: dict[str, str]) -> None:
                if self.headers.get("x-subscription-token") != BRAVE_KEY:
                    self._json(
                        401,
                        {
                            "type": "ErrorResponse",
                            "error": {"status": 401, "code": "SUBSCRIPTION_TOKEN_INVALID"},
                        },
                    )
                    return
                hits = search_hits(query["q"], owner.base_url)[: int(query.get("count", "20"))]
                results = [
                    {
                        "title": h["title"],
                        "url": h["url"],
                        "description": h["snippet"],
                        "is_source_local": False,
                        "is_source_both": False,
                        "language": "en",
                        "family_friendly": True,
                        "type": "search_result",
                        "subtype": "generic",
                        "meta_url": {"scheme": "http", "netloc": urlsplit(h["url"]).netloc, "path": "›"},
                    }
                    for h in hits
                ]
                self._json(
                    200,
                    {
                        "type": "search",
                        "query": {"original": query["q"], "more_results_available": False},
                        "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": False}]},
                        "web": {"type": "search", "results": results, "family_friendly": True},
                    },
                )

            def _huge(self) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.send_header("content-length", str(HUGE_BYTES))
                self.end_headers()
                block = b"<p>" + b"filler words about nothing in particular " * 24 + b"</p>\n"
                sent = 0
                try:
                    while sent < HUGE_BYTES:
                        piece = block[: HUGE_BYTES - sent]
                        self.wfile.write(piece)
                        sent += len(piece)
                except OSError:  # the reader stopped at its limit and closed the connection
                    pass

            def _redirect(self, to: str) -> None:
                self.send_response(302)
                self.send_header("location", to)
                self.send_header("content-length", "0")
                self.end_headers()

            def _json(self, status: int, payload: Any) -> None:
                self._send(status, "application/json", json.dumps(payload).encode())

            def _send(self, status: int, content_type: str, raw: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def paths(self) -> list[str]:
        return [path for _method, path, _headers in self.requests]

    def __enter__(self) -> WebServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
