"""A real HTTP server on 127.0.0.1 that replays scripted provider answers.

The whole project's provider, engine and UI tests stream from this server, so
the official ``openai`` and ``anthropic`` SDKs parse byte-exact streams exactly as
they would from the real services (docs/design.md §7).

What it serves
--------------
* ``POST /v1/chat/completions`` (OpenAI) and ``POST /v1/messages`` (Anthropic):
  the next ``ScriptedResponse`` from one FIFO queue (``enqueue``), else the
  ``responder`` callable if set, else ``default`` if set, else a **500 with a
  clear JSON body** ("no scripted response left"), so a test never hangs.
* ``GET /v1/models``: ``models`` in the OpenAI list shape, or in Anthropic's shape
  when the request carries an ``anthropic-version`` header. Set
  ``models_response`` to script a failure instead.
* ``GET`` of a path in ``get_routes``: that scripted response (llama.cpp's ``/props``).
* Anything else: 404.

Every request is recorded in ``server.requests`` (method, path, lower-cased
headers, parsed JSON body), so tests assert on what was actually sent.

Each connection is handled on its own thread (``ThreadingHTTPServer``, HTTP/1.1
keep-alive), so many streams run at once without being serialised;
``max_concurrent_streams`` reports the most that were in flight together.
Chunks are written as given, each flushed as one HTTP chunk; faults (slow first
byte, delay between chunks, stall, abrupt disconnect, error statuses) are
fields of ``ScriptedResponse``. ``stop()`` releases stalled handlers and closes
every open connection.

Usage::

    from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response

    with ReplayServer() as server:
        server.enqueue(sse_response(openai_text_stream(["Hel", "lo"]), chunk_delay=0.001))
        client = AsyncOpenAI(base_url=server.openai_base_url, api_key="sk-test")
        ...
        assert server.requests[0].body["model"] == "gpt-4o-mini"

or with the pytest fixture ``replay_server`` from ``tests.support.fixtures``.
Builders for streams and error bodies live in ``tests.support.sse_streams`` and
are re-exported here.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.support.sse_streams import *  # noqa: F403  (the builders belong to this API)
from tests.support.sse_streams import (
    ScriptedResponse,
    anthropic_models_body,
    json_response,
    openai_models_body,
)
from tests.support.waiting import WAIT

STREAM_PATHS = frozenset({"/v1/chat/completions", "/v1/messages", "/chat/completions", "/messages"})
MODELS_PATHS = frozenset({"/v1/models", "/models"})

Responder = Callable[["RecordedRequest"], ScriptedResponse | None]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    """The parsed JSON body (``None`` when there was none or it was not JSON)."""
    raw: bytes = b""
    received_at: float = field(default_factory=time.monotonic)

    @property
    def is_anthropic(self) -> bool:
        return "anthropic-version" in self.headers


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    owner: ReplayServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    disable_nagle_algorithm = True
    """As real API servers do: otherwise each chunk after the headers waits for the
    client's delayed ACK on a reused connection (~40 ms), which is not what users see."""

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.owner._track(self.connection, add=False)

    # -- requests ----------------------------------------------------------------------

    def _record(self) -> RecordedRequest:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0]
        request = RecordedRequest(
            self.command, path, {k.lower(): v for k, v in self.headers.items()}, body, raw
        )
        self.server.owner._add_request(request)
        return request

    def do_GET(self) -> None:
        request = self._record()
        owner = self.server.owner
        if request.path in owner.get_routes:  # another GET a server answers (llama.cpp's /props)
            self._write(owner.get_routes[request.path])
        elif request.path in MODELS_PATHS:
            if owner.models_response is not None:
                self._write(owner.models_response)
            elif request.is_anthropic:
                self._write(json_response(200, anthropic_models_body(owner.models)))
            else:
                self._write(json_response(200, openai_models_body(owner.models)))
        else:
            self._write(json_response(404, {"error": {"message": f"no route for GET {request.path}"}}))

    def do_POST(self) -> None:
        request = self._record()
        if request.path not in STREAM_PATHS:
            self._write(json_response(404, {"error": {"message": f"no route for POST {request.path}"}}))
            return
        self._write(self.server.owner._next_response(request), stream=True)

    # -- responses ---------------------------------------------------------------------

    def _write(self, response: ScriptedResponse, *, stream: bool = False) -> None:
        owner = self.server.owner
        if stream:
            owner._stream_started()
        try:
            self._write_unguarded(response)
        except OSError:  # the client went away (cancelled, timed out): nothing to tell
            self.close_connection = True
        finally:
            if stream:
                owner._stream_ended()

    def _write_unguarded(self, response: ScriptedResponse) -> None:
        stop = self.server.owner._stopping
        if response.first_byte_delay and stop.wait(response.first_byte_delay):
            self._drop()
            return
        self.send_response_only(response.status)
        headers = {k.lower(): v for k, v in response.headers.items()}
        headers.setdefault("date", self.date_time_string())
        if response.chunked:
            headers["transfer-encoding"] = "chunked"
        else:
            headers["content-length"] = str(sum(len(c) for c in response.chunks))
        faulty = any(
            n is not None for n in (response.disconnect_after, response.stall_after, response.broken_framing)
        )
        if faulty:
            headers["connection"] = "close"
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()
        for count, chunk in enumerate(response.chunks, start=1):
            if count > 1 and response.chunk_delay and stop.wait(response.chunk_delay):
                self._drop()
                return
            if response.chunked:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunk else b"")
            else:
                self.wfile.write(chunk)
            self.wfile.flush()
            if response.disconnect_after is not None and count >= response.disconnect_after:
                self._drop()
                return
            if response.broken_framing is not None and count >= response.broken_framing:
                self.wfile.write(b"zz\r\nnot a chunk\r\n")
                self.wfile.flush()
                self._drop()
                return
            stalls = response.stall_after is not None and count == response.stall_after
            if stalls and (stop.wait(response.stall_for) or response.stall_for is None):
                self._drop()
                return
        if response.chunked:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        if faulty:
            self.close_connection = True

    def _drop(self) -> None:
        """Close the connection abruptly: no terminating chunk, no more requests."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


class ReplayServer:
    """See the module docstring. Start with ``with ReplayServer() as server`` or ``start()``."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        models: Sequence[str] = ("gpt-4o-mini", "claude-sonnet-4-5"),
    ) -> None:
        self.host = host
        self._requested_port = port
        self.models: list[str] = list(models)
        self.models_response: ScriptedResponse | None = None
        self.get_routes: dict[str, ScriptedResponse] = {}
        self.responder: Responder | None = None
        self.default: ScriptedResponse | None = None
        self.requests: list[RecordedRequest] = []
        self.max_concurrent_streams = 0
        self.active_streams = 0
        self._queue: deque[ScriptedResponse] = deque()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> ReplayServer:
        server = _Server((self.host, self._requested_port), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="replay-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the replay server is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` — the Anthropic base URL."""
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``base_url + "/v1"`` — what OpenAI clients take."""
        return self.base_url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    # -- scripting -------------------------------------------------------------------------

    def enqueue(self, *responses: ScriptedResponse) -> None:
        """Answer the next POSTs with these, in order."""
        with self._lock:
            self._queue.extend(responses)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    @property
    def last_request(self) -> RecordedRequest:
        with self._lock:
            return self.requests[-1]

    def stream_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.method == "POST"]

    def wait_for_requests(self, count: int, timeout: float = WAIT) -> bool:
        """Block until ``count`` requests arrived (for tests that script from another thread)."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self.requests) >= count, timeout)

    # -- handler side -----------------------------------------------------------------------

    def _add_request(self, request: RecordedRequest) -> None:
        with self._changed:
            self.requests.append(request)
            self._changed.notify_all()

    def _next_response(self, request: RecordedRequest) -> ScriptedResponse:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            number = len(self.requests)
        if self.responder is not None:
            answer = self.responder(request)
            if answer is not None:
                return answer
        if self.default is not None:
            return self.default
        message = (
            f"replay server: no scripted response left for {request.method} {request.path} "
            f"(request #{number}); enqueue one in the test"
        )
        return json_response(500, {"error": {"message": message, "type": "replay_server_empty"}})

    def _stream_started(self) -> None:
        with self._lock:
            self.active_streams += 1
            self.max_concurrent_streams = max(self.max_concurrent_streams, self.active_streams)

    def _stream_ended(self) -> None:
        with self._lock:
            self.active_streams -= 1

    def _track(self, connection: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)
