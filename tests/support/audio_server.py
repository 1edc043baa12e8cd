"""OpenAI's audio endpoints on 127.0.0.1, for the voice's tests.

``POST /v1/audio/speech`` answers with a real WAV: a 440 Hz tone of 40 ms per character of the
``input`` (so a test can tell a sentence from a paragraph by the sound's length);
``POST /v1/audio/transcriptions`` reads the multipart upload and answers ``{"text": TEXT}``.
Every request is kept in ``requests`` (path, the JSON or form fields, the uploaded bytes).
``fail_with`` makes the next answers an error status with OpenAI's error body.
"""

from __future__ import annotations

import io
import json
import math
import struct
import threading
import wave
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

RATE = 16000


def tone(seconds: float, rate: int = RATE) -> bytes:
    """A WAV of a 440 Hz tone lasting ``seconds``."""
    frames = int(seconds * rate)
    samples = b"".join(
        struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * i / rate))) for i in range(frames)
    )
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(samples)
    return out.getvalue()


@dataclass
class AudioRequest:
    path: str
    fields: dict[str, Any]
    upload: bytes = b""
    authorization: str = ""


@dataclass
class AudioServer:
    text: str = "Remind me to water the plants on Friday."
    requests: list[AudioRequest] = field(default_factory=list)
    fail_with: int = 0
    base_url: str = ""

    def spoken(self) -> list[str]:
        return [r.fields["input"] for r in self.requests if r.path.endswith("/audio/speech")]


def _handler(server: AudioServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            kind = self.headers.get("Content-Type", "")
            request = AudioRequest(self.path, {}, authorization=self.headers.get("Authorization", ""))
            if kind.startswith("application/json"):
                request.fields = json.loads(raw)
            elif kind.startswith("multipart/form-data"):
                message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {kind}\r\n\r\n".encode() + raw)
                for part in message.iter_parts():
                    name = part.get_param("name", header="content-disposition")
                    payload = part.get_payload(decode=True) or b""
                    if part.get_filename():
                        request.upload = payload
                    else:
                        request.fields[str(name)] = payload.decode()
            server.requests.append(request)
            if server.fail_with:
                error = {"error": {"message": "The audio service is overloaded.", "type": "server_error"}}
                self._answer(server.fail_with, json.dumps(error).encode(), "application/json")
            elif self.path.endswith("/audio/speech"):
                self._answer(200, tone(0.04 * len(request.fields.get("input", ""))), "audio/wav")
            elif self.path.endswith("/audio/transcriptions"):
                self._answer(200, json.dumps({"text": server.text}).encode(), "application/json")
            else:
                self._answer(404, b'{"error": {"message": "Not found"}}', "application/json")

    return Handler


@pytest.fixture
def audio_server() -> Iterator[AudioServer]:
    state = AudioServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(30)
