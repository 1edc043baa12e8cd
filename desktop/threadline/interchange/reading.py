"""Reading an export file without trusting it: zip members, sizes, encodings, JSON arrays.

Exports are big (a ChatGPT ``conversations.json`` of years reaches hundreds of
megabytes), so a top-level JSON array is decoded one element at a time from a
growing buffer instead of all at once: memory holds one conversation, not the
file, and conversations can be stored while the rest is still being read.

Every byte read is counted against :class:`~threadline.interchange.limits.ImportLimits`
while it is read — a zip member's header may lie about its size, so a bomb is
stopped by counting what actually inflates. Bytes that are not UTF-8 are kept
apart (``surrogateescape``), so one damaged conversation fails on its own and the
rest of the file still goes in.
"""

from __future__ import annotations

import codecs
import json
import mimetypes
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from threadline.interchange.common import Attachment
from threadline.interchange.limits import ImportLimits, LimitExceeded, describe_size, json_depth_exceeds

CHUNK = 1024 * 1024
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_NOT_UTF8 = re.compile("[\udc80-\udcff]")
_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


class FileRefused(Exception):
    """The file as a whole cannot be read; ``reason`` is for the report."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Element:
    """One decoded element of a top-level array (or the whole document when it is an object)."""

    value: object
    whole_document: bool = False


@dataclass(frozen=True, slots=True)
class BadElement:
    """An element that could not be decoded; ``fatal`` when nothing after it can be read either."""

    reason: str
    fatal: bool = False
    over_limit: bool = False
    """A limit stopped the reading: reported even where damage would be passed over."""


class Budget:
    """Bytes read so far from one file, against the total limit (zip members share it)."""

    def __init__(self, limits: ImportLimits, total_hint: int) -> None:
        self.limits = limits
        self.read = 0
        self.total_hint = max(total_hint, 1)

    def take(self, count: int) -> None:
        self.read += count
        if self.read > self.limits.max_total_bytes:
            raise LimitExceeded(
                f"it inflates to more than {describe_size(self.limits.max_total_bytes)} of text, "
                "the most Threadline reads from one file"
            )

    @property
    def spent(self) -> bool:
        return self.read > self.limits.max_total_bytes

    @property
    def fraction(self) -> float:
        return min(1.0, self.read / self.total_hint)


@dataclass(frozen=True, slots=True)
class Document:
    """One JSON document of the file: the file itself, or one member of a zip."""

    name: str
    open: Callable[[], IO[bytes]]
    stored_size: int
    """Its size in the file (compressed, for a zip member): inflating far beyond it is a bomb."""
    compressed: bool


class ExportFile:
    """The JSON documents of a file, and the files a zip carries beside them."""

    def __init__(self, path: Path, limits: ImportLimits) -> None:
        self.path = path
        self.limits = limits
        self._zip: zipfile.ZipFile | None = None
        self._members: dict[str, zipfile.ZipInfo] = {}
        try:
            size = path.stat().st_size
            with path.open("rb") as handle:
                magic = handle.read(4)
        except OSError as error:
            raise FileRefused(f"it could not be read ({error.strerror or 'no access'})") from error
        if size > limits.max_file_bytes:
            raise FileRefused(f"it is larger than {describe_size(limits.max_file_bytes)}")
        self.size = size
        if magic in ZIP_MAGIC:
            try:
                self._zip = zipfile.ZipFile(path)
            except (zipfile.BadZipFile, OSError, ValueError) as error:
                raise FileRefused("it looks like a zip archive but is damaged") from error
            self._members = {info.filename: info for info in self._zip.infolist() if not info.is_dir()}
        self.budget = Budget(limits, sum(i.file_size for i in self._json_members()) if self._zip else size)

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()

    @property
    def is_zip(self) -> bool:
        return self._zip is not None

    def documents(self) -> list[Document]:
        """The file itself, or the zip's ``.json`` members in name order (split exports in sequence)."""
        if self._zip is None:
            return [Document(self.path.name, lambda: self.path.open("rb"), self.size, False)]
        archive = self._zip
        return [
            Document(info.filename, lambda info=info: archive.open(info), info.compress_size, True)  # type: ignore[misc]
            for info in self._json_members()
        ]

    def _json_members(self) -> list[zipfile.ZipInfo]:
        return sorted(
            (i for name, i in self._members.items() if name.lower().endswith(".json")),
            key=lambda i: i.filename,
        )

    def attachment(self, file_id: str) -> Attachment | None:
        """A file of the zip whose name starts with ``file_id`` (ChatGPT keeps uploads that way)."""
        if self._zip is None or not file_id or "/" in file_id:
            return None
        for name, info in self._members.items():
            base = name.rsplit("/", 1)[-1]
            if not base.startswith(file_id) or name.lower().endswith(".json"):
                continue
            if info.file_size > self.limits.max_attachment_bytes:
                return None
            media_type = mimetypes.guess_type(base)[0] or "application/octet-stream"
            try:
                with self._zip.open(info) as member:
                    data = member.read(self.limits.max_attachment_bytes + 1)
            except (zipfile.BadZipFile, OSError, RuntimeError, ValueError):
                return None
            if len(data) > self.limits.max_attachment_bytes:
                return None
            return Attachment(name=base, media_type=media_type, data=data)
        return None


def read_elements(document: Document, budget: Budget) -> Iterator[Element | BadElement]:
    """Decode ``document``: each element of a top-level array, or the whole of anything else."""
    try:
        handle = document.open()
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError, NotImplementedError) as error:
        yield BadElement(f"{document.name} could not be read ({_why(error)})", fatal=True)
        return
    with handle:
        text = _Text(handle, document, budget)
        try:
            yield from _elements(text, budget.limits)
        except LimitExceeded as error:
            yield BadElement(f"{document.name}: {error.reason}", fatal=True, over_limit=True)
        except (
            zipfile.BadZipFile,
            OSError,
            EOFError,
            RuntimeError,
            ValueError,
            NotImplementedError,
        ) as error:
            yield BadElement(f"{document.name} could not be read ({_why(error)})", fatal=True)


def _why(error: BaseException) -> str:
    if isinstance(error, zipfile.BadZipFile):
        return "the archive is damaged"
    if isinstance(error, RuntimeError | NotImplementedError):
        return "it is encrypted or compressed in a way Threadline cannot read"
    if isinstance(error, OSError):
        return error.strerror or "a read error"
    return "it is damaged"


class _Text:
    """Decoded text of a document, read on demand and counted against the limits."""

    def __init__(self, handle: IO[bytes], document: Document, budget: Budget) -> None:
        self._handle = handle
        self._document = document
        self._budget = budget
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self._read = 0
        self.buffer = ""
        self.at_end = False
        self._first = True

    def more(self, wanted: int) -> None:
        """Append at least ``wanted`` bytes' worth of text (less only at the end)."""
        data = self._handle.read(max(CHUNK, wanted))
        self._read += len(data)
        self._budget.take(len(data))
        limits = self._budget.limits
        if self._read > limits.max_document_bytes:
            raise LimitExceeded(f"it is larger than {describe_size(limits.max_document_bytes)}")
        if self._document.compressed and self._read > CHUNK + limits.max_compression_ratio * max(
            self._document.stored_size, 1
        ):
            raise LimitExceeded(
                f"it inflates more than {limits.max_compression_ratio} times its packed size (a zip bomb?)"
            )
        text = self._decoder.decode(data, final=not data)
        if self._first and text:
            text = text.removeprefix("\ufeff")
            self._first = False
        self.buffer += text
        self.at_end = not data


def _skip_space(text: _Text, position: int) -> int:
    while True:
        while position < len(text.buffer) and text.buffer[position] in _SPACE:
            position += 1
        if position < len(text.buffer) or text.at_end:
            return position
        text.more(CHUNK)


def _elements(text: _Text, limits: ImportLimits) -> Iterator[Element | BadElement]:
    position = _skip_space(text, 0)
    if position >= len(text.buffer):
        yield BadElement("it is empty", fatal=True)
        return
    if text.buffer[position] != "[":
        while not text.at_end:
            text.more(CHUNK)
        yield _decode_whole(text.buffer[position:], limits)
        return
    position += 1
    count = 0
    while True:
        position = _skip_space(text, position)
        if position >= len(text.buffer):
            yield BadElement(_cut_off(count), fatal=True)
            return
        if text.buffer[position] == "]":
            return
        if count:
            if text.buffer[position] != ",":
                yield BadElement(_cut_off(count), fatal=True)
                return
            position = _skip_space(text, position + 1)
        if position > CHUNK:  # forget what has been decoded (rarely: copying is not free)
            text.buffer = text.buffer[position:]
            position = 0
        decoded = _decode_next(text, position, limits, count)
        if isinstance(decoded, BadElement):
            yield decoded
            return
        value, end = decoded
        count += 1
        yield _checked(value, text.buffer, position, end, limits)
        position = end


def _decode_next(
    text: _Text, start: int, limits: ImportLimits, count: int
) -> tuple[object, int] | BadElement:
    """The element at ``start``, reading more until it is whole (the buffer at least doubles each time)."""
    while True:
        try:
            return _DECODER.raw_decode(text.buffer, start)
        except json.JSONDecodeError:
            if text.at_end:
                return BadElement(_cut_off(count), fatal=True)
            pending = len(text.buffer) - start
            if pending > limits.max_conversation_bytes:
                return BadElement(
                    f"conversation {count + 1} is larger than {describe_size(limits.max_conversation_bytes)}",
                    fatal=True,
                )
            text.more(pending)
        except RecursionError:
            return BadElement(f"conversation {count + 1} is nested too deeply to be read", fatal=True)


def _checked(value: object, buffer: str, start: int, end: int, limits: ImportLimits) -> Element | BadElement:
    if _NOT_UTF8.search(buffer, start, end):
        return BadElement("it contains bytes that are not UTF-8 text")
    if end - start > limits.max_conversation_bytes:
        return BadElement(f"it is larger than {describe_size(limits.max_conversation_bytes)}")
    if json_depth_exceeds(value, limits.max_json_depth):
        return BadElement(f"it nests data more than {limits.max_json_depth} levels deep")
    return Element(value)


def _decode_whole(document: str, limits: ImportLimits) -> Element | BadElement:
    try:
        value = json.loads(document)
    except json.JSONDecodeError:
        return BadElement("it is not JSON, or the JSON is damaged", fatal=True)
    except RecursionError:
        return BadElement("it is nested too deeply to be read", fatal=True)
    if _NOT_UTF8.search(document):
        return BadElement("it contains bytes that are not UTF-8 text", fatal=True)
    if json_depth_exceeds(value, limits.max_json_depth):
        return BadElement(f"it nests data more than {limits.max_json_depth} levels deep", fatal=True)
    return Element(value, whole_document=True)


def _cut_off(count: int) -> str:
    return f"the JSON is cut off or damaged after conversation {count}" if count else "it is not valid JSON"
