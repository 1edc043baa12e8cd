"""A fake Hugging Face Hub on 127.0.0.1: the API ``huggingface_hub`` calls, and file downloads.

A real HTTP server in a thread, so ``HfApi(endpoint=...)`` and the downloader talk HTTP to
it as to the Hub: ``GET /api/models`` (search), ``GET /api/models/REPO`` (files with sizes and
LFS SHA-256), ``GET /REPO/resolve/main/FILE`` (a 302 to ``/cdn/…``, as the Hub redirects to
its storage) and the file itself with ``Range`` support. Knobs a test turns:

- ``drop_after``: bytes of a response after which the connection is cut (once per value set);
- ``delay``: seconds to wait between 16 KB chunks (a slow link);
- ``hold_after``: bytes of a response after which the server waits until ``release()`` (a
  download that is surely midway when the test pauses, cancels or kills it, however busy
  the machine);
- ``bad_sha``: names whose announced SHA-256 is wrong (a corrupted transfer, as the client sees it);
- ``requests``: every ``(path, Range header)`` asked, to see that a resume used Range.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

SLICE = 16 * 1024
REPO = "tiny/Tiny-Llama-GGUF"
FILE = "tiny-llama.Q8_0.gguf"
BROKEN_REPO = "someone/Broken-GGUF"


@dataclass
class FakeHub:
    files: dict[str, dict[str, bytes]] = field(default_factory=dict)
    """repo -> file name -> content."""
    downloads: dict[str, int] = field(default_factory=dict)
    drop_after: int | None = None
    delay: float = 0.0
    bad_sha: set[str] = field(default_factory=set)
    hold_after: int | None = None
    released: threading.Event = field(default_factory=threading.Event)
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    url: str = ""

    def add(self, repo: str, name: str, content: bytes, downloads: int = 10) -> None:
        self.files.setdefault(repo, {})[name] = content
        self.downloads[repo] = downloads

    def release(self) -> None:
        """Let held responses go on, and hold no more."""
        self.hold_after = None
        self.released.set()

    def sha(self, repo: str, name: str) -> str:
        if name in self.bad_sha:
            return "0" * 64
        return hashlib.sha256(self.files[repo][name]).hexdigest()

    def ranges(self, name: str) -> list[str | None]:
        return [r for p, r in self.requests if p.startswith("/cdn/") and p.endswith("/" + name)]


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _json(self, data: object, status: int = 200) -> None:
            body = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            path = unquote(parts.path)
            hub.requests.append((path, self.headers.get("Range")))
            query = parse_qs(parts.query)
            if path == "/api/models":
                text = (query.get("search") or [""])[0].lower()
                found = [
                    {"id": repo, "downloads": hub.downloads.get(repo, 0), "likes": 1, "tags": ["gguf"]}
                    for repo in hub.files
                    if text in repo.lower()
                ]
                found.sort(key=lambda m: -int(m["downloads"]))  # type: ignore[call-overload]
                self._json(found)
                return
            if path.startswith("/api/models/"):
                repo = path.removeprefix("/api/models/")
                if repo not in hub.files:
                    self._json({"error": "Repository not found"}, 404)
                    return
                siblings = [
                    {
                        "rfilename": name,
                        "size": len(data),
                        "blobId": "b" * 40,
                        "lfs": {"size": len(data), "sha256": hub.sha(repo, name), "pointerSize": 134},
                    }
                    for name, data in hub.files[repo].items()
                ]
                siblings.append({"rfilename": "README.md", "size": 10, "blobId": "c" * 40})
                self._json({"id": repo, "siblings": siblings, "tags": ["gguf"]})
                return
            if "/resolve/" in path:
                repo, _, rest = path.lstrip("/").partition("/resolve/")
                name = rest.partition("/")[2]
                self.send_response(302)
                self.send_header("Location", f"/cdn/{repo}/{name}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if path.startswith("/cdn/"):
                repo, _, name = path.removeprefix("/cdn/").rpartition("/")
                data = hub.files.get(repo, {}).get(name)
                if data is None:
                    self._json({"error": "not found"}, 404)
                    return
                self._send_file(data)
                return
            self._json({"error": "not found"}, 404)

        def _send_file(self, data: bytes) -> None:
            start = 0
            wanted = self.headers.get("Range")
            if wanted and wanted.startswith("bytes="):
                start = int(wanted.removeprefix("bytes=").split("-")[0])
                if start >= len(data):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(data)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            body = data[start:]
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            limit = hub.drop_after
            sent = 0
            for i in range(0, len(body), SLICE):
                piece = body[i : i + SLICE]
                if limit is not None and sent + len(piece) > limit:
                    hub.drop_after = None  # once: the next request gets the rest
                    self.wfile.write(piece[: max(0, limit - sent)])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                try:
                    self.wfile.write(piece)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return
                sent += len(piece)
                if hub.delay:
                    time.sleep(hub.delay)
                if hub.hold_after is not None and sent >= hub.hold_after:
                    hub.released.wait(timeout=120)

    return Handler


@contextmanager
def running_hub(hub: FakeHub | None = None) -> Iterator[FakeHub]:
    """Serve ``hub`` on a free port of 127.0.0.1 for the block; ``hub.url`` is its endpoint."""
    hub = hub or FakeHub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="fake hub", daemon=True)
    thread.start()
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield hub
    finally:
        hub.release()
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The bytes of a tiny GGUF llama (``tests/support/tiny_gguf.py``), made once per run."""
    from tests.support.tiny_gguf import make_tiny_gguf

    return make_tiny_gguf(tmp_path_factory.mktemp("gguf") / FILE).read_bytes()


@pytest.fixture
def hub(tiny_model: bytes) -> Iterator[FakeHub]:
    """A fake Hub with ``REPO`` (two quantisations) and ``BROKEN_REPO`` (a file that is not GGUF)."""
    with running_hub() as fake:
        fake.add(REPO, FILE, tiny_model, downloads=100)
        fake.add(REPO, "tiny-llama.F16.gguf", tiny_model[:-7] + b"1234567", downloads=100)
        fake.add(BROKEN_REPO, "other.gguf", b"x", downloads=5)
        yield fake


def point_at(data_dir: Path, hub: FakeHub, folder: Path | None = None) -> None:
    """The data folder's local-model settings: this fake Hub (and a models folder, when given)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    config: dict[str, str] = {"hub_endpoint": hub.url}
    if folder is not None:
        config["folder"] = str(folder)
    (data_dir / "local-models.json").write_text(json.dumps(config))
