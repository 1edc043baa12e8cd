"""Server-sent events: the bytes of a response body → ``(event, data)`` pairs (pure, no I/O).

The OpenAI provider reads its stream with this instead of the SDK's stream
objects (why: ``threadline.llm.openai_provider``). It follows the WHATWG
event-stream interpretation, the part chat APIs use:

* lines end with CRLF, LF or CR, and only those — not with the other characters
  ``str.splitlines`` breaks at (U+2028, U+0085, …), which a JSON string may hold
  raw. That is why this decoder splits bytes itself rather than using
  ``httpx.Response.aiter_lines`` (which is ``str.splitlines``);
* a line may arrive cut across network chunks (a CR at the end of one chunk and
  the LF at the start of the next make one line end);
* ``data:`` lines of one event are joined with ``\\n``; a blank line dispatches the
  event; an event without ``data`` is dropped; ``event:`` names it;
* ``:`` starts a comment (keep-alives); ``id:``, ``retry:`` and unknown fields are
  ignored, except ``error:``, which llama.cpp's server writes instead of
  ``data:`` for an error mid-stream: it is dispatched as an ``error`` event;
* an event not ended by a blank line when the body ends is discarded;
* one byte-order mark (UTF-8 ``EF BB BF``) at the very start of the body is
  dropped, as the standard says, even when the network cuts it across chunks;
  anywhere else it is data.

Data stays ``bytes`` (``json.loads`` reads UTF-8 bytes directly).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    event: str
    """The ``event:`` field, ``""`` when there was none."""
    data: bytes


_CR = 13
_LF = 10
_COLON = 58
_BOM = b"\xef\xbb\xbf"


class SSEDecoder:
    """Incremental: ``feed`` each chunk of the body as it arrives, ``finish`` at its end."""

    __slots__ = ("_data", "_event", "_head", "_partial", "_skip_lf")

    def __init__(self) -> None:
        self._head: bytes | None = b""
        """The body's first bytes while they may still be a byte-order mark; ``None`` once decided."""
        self._partial: list[bytes] = []
        """Pieces of a line whose end has not arrived yet."""
        self._skip_lf = False
        """The last chunk ended with CR: an LF starting the next one ends no further line."""
        self._event = ""
        self._data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events completed by ``chunk`` (often none or one)."""
        if self._head is not None:
            chunk = self._past_bom(chunk)
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if not chunk:
            return []
        lines = chunk.splitlines()  # bytes split at CRLF, LF and CR only
        last = chunk[-1]
        if last == _CR:
            self._skip_lf = True
        elif last != _LF:  # the last line goes on in the next chunk
            rest = lines.pop()
            if not lines:
                self._partial.append(rest)
                return []
            if self._partial:
                lines[0] = b"".join(self._partial) + lines[0]
            self._partial = [rest]
            return self._lines(lines)
        if self._partial:
            lines[0] = b"".join(self._partial) + lines[0]
            self._partial = []
        return self._lines(lines)

    def _past_bom(self, chunk: bytes) -> bytes:
        """``chunk`` less a byte-order mark starting the body (held back while it may be one)."""
        assert self._head is not None
        head = self._head + chunk
        if len(head) < len(_BOM) and _BOM.startswith(head):
            self._head = head  # "EF" or "EF BB" so far: the next chunk decides
            return b""
        self._head = None
        return head.removeprefix(_BOM)

    def finish(self) -> list[ServerSentEvent]:
        """At the end of the body: an unterminated event is discarded (as the spec says)."""
        self._head = b""
        self._partial = []
        self._skip_lf = False
        self._event = ""
        self._data = []
        return []

    def _lines(self, lines: list[bytes]) -> list[ServerSentEvent]:
        out: list[ServerSentEvent] = []
        for line in lines:
            if not line:
                if self._data:
                    out.append(ServerSentEvent(self._event, b"\n".join(self._data)))
                    self._data = []
                self._event = ""
                continue
            if line[0] == _COLON:
                continue  # a comment: keep-alive
            name, _, value = line.partition(b":")
            if value[:1] == b" ":
                value = value[1:]
            if name == b"data":
                self._data.append(value)
            elif name == b"event":
                self._event = value.decode("utf-8", "replace")
            elif name == b"error":  # llama.cpp: "error: {json}" in place of "data:"
                self._event = "error"
                self._data.append(value)
        return out


__all__ = ["SSEDecoder", "ServerSentEvent"]
