"""A deterministic embedding server on 127.0.0.1 serving ``POST /v1/embeddings`` as OpenAI does.

Each text becomes a vector of ``dimensions`` floats: every word adds 1 to the slot its
hash picks, then the vector is normalised. Texts sharing words are near each other, so
vector search finds something real and the same text always gives the same vector.
``synonyms`` maps a word to another before hashing, so a paraphrase (other words, the same
meaning) lands near its original where keyword search sees nothing in common.
``requests`` records every body received; ``refuse`` makes it answer 503; ``delay`` (seconds)
holds every answer back, as a busy server does; ``hang`` accepts each request and never answers
it (until ``hang`` is cleared or the server closes), as a stuck server does. Closing releases the
requests held back, so it never waits for them. ``port`` listens on a given port: a test takes
one from ``closed_port()`` (nothing listens there, so connecting is refused) and starts the server
on it later, as an embedding server that comes back does.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def embed_text(text: str, dimensions: int, synonyms: dict[str, str] | None = None) -> list[float]:
    vector = [0.0] * dimensions
    for found in re.findall(r"\w+", text.lower()):
        word = (synonyms or {}).get(found, found)
        slot = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little") % dimensions
        vector[slot] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def closed_port() -> int:
    """A loopback port nothing listens on right now: a connection to it is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EmbeddingServer:
    def __init__(
        self, dimensions: int = 64, synonyms: dict[str, str] | None = None, *, port: int = 0
    ) -> None:
        self.dimensions = dimensions
        self.synonyms = synonyms
        self.requests: list[dict[str, Any]] = []
        self.refuse = False
        self.delay = 0.0
        self.hang = False
        self._closing = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                owner.requests.append(body)
                if owner.delay:
                    owner._closing.wait(owner.delay)
                while owner.hang and not owner._closing.wait(0.05):
                    pass
                if owner._closing.is_set():
                    return  # closed without an answer
                if owner.refuse or self.path.split("?")[0] != "/v1/embeddings":
                    self._answer(503 if owner.refuse else 404, {"error": {"message": "unavailable"}})
                    return
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [
                    {
                        "object": "embedding",
                        "index": i,
                        "embedding": embed_text(t, owner.dimensions, owner.synonyms),
                    }
                    for i, t in enumerate(texts)
                ]
                self._answer(200, {"object": "list", "data": data, "model": body["model"]})

            def _answer(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(raw)  # unless the client gave up waiting (a slow server's test)

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> EmbeddingServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
