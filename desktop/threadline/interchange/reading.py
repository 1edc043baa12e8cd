"""Reading an export file without trusting it: zip members, sizes, encodings, JSON arrays.

Exports are big (a ChatGPT ``conversations.json`` of years reaches hundreds of
megabytes), so a top-level JSON array is decoded one element at a time from a
growing buffer instead of all at once: memory holds one conversation, not the
file, and conversations can be stored while the rest is still being read.

Every byte read is counted against :class:`~threadline.interchange.limits.ImportLimits`
as it comes out of the file, before it is decoded or kept — a zip member's header may
lie about its size, so a member is inflated by :mod:`threadline.files.zip_members`, which
judges the ratio against the packed bytes it has actually consumed and refuses a bomb
after a few megabytes. A document whose first character cannot start JSON is refused
at once, not read to its end. Bytes that are not UTF-8 are kept apart
(``surrogateescape``), so one damaged conversation fails on its own and the rest of
the file still goes in.
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
from types import TracebackType
from typing import Protocol

from threadline.files.zip_members import (
    MemberDamaged,
    MemberError,
    MemberOversized,
    MemberReader,
    MemberTooCompressed,
    MemberUnsupported,
)
from threadline.interchange.common import Attachment
from threadline.interchange.limits import ImportLimits, LimitExceeded, describe_size, json_depth_exceeds

CHUNK = 1024 * 1024
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_NOT_UTF8 = re.compile("[\udc80-\udcff]")
_DECODER = json.JSONDecoder()
_NOT_SPACE = re.compile("[^ \t\r\n]")
_JSON_STARTS = "[{"
"""What an export's JSON may start with: a list of conversations or one object."""


class ByteSource(Protocol):
    """What a document is read from: an open file or a :class:`MemberReader`."""

    def read(self, size: int = -1, /) -> bytes: ...

    def close(self) -> None: ...

    def __enter__(self) -> ByteSource: ...

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None, /
    ) -> object: ...


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
    open: Callable[[], ByteSource]


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
            return [Document(self.path.name, lambda: self.path.open("rb"))]
        ratio = self.limits.max_compression_ratio
        return [
            Document(info.filename, lambda info=info: MemberReader(self.path, info, max_ratio=ratio))  # type: ignore[misc]
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
            try:  # images hardly compress: no ratio, only the cap (and the declared size)
                with MemberReader(
                    self.path, info, max_ratio=None, cap=self.limits.max_attachment_bytes
                ) as member:
                    data = member.read()
            except (MemberError, OSError):
                return None
            return Attachment(name=base, media_type=media_type, data=data)
        return None


def read_elements(document: Document, budget: Budget) -> Iterator[Element | BadElement]:
    """Decode ``document``: each element of a top-level array, or the whole of anything else."""
    try:
        handle = document.open()
    except (MemberError, OSError, ValueError) as error:
        yield BadElement(f"{document.name} could not be read ({_why(error)})", fatal=True)
        return
    with handle:
        text = _Text(handle, budget)
        try:
            yield from _elements(text, budget.limits)
        except LimitExceeded as error:
            yield BadElement(f"{document.name}: {error.reason}", fatal=True, over_limit=True)
        except MemberTooCompressed as error:
            yield BadElement(
                f"{document.name}: it inflates more than {error.ratio} times its packed size (a zip bomb?)",
                fatal=True,
                over_limit=True,
            )
        except MemberOversized:
            yield BadElement(
                f"{document.name}: it inflates beyond the size its archive declares (a zip bomb?)",
                fatal=True,
                over_limit=True,
            )
        except (MemberError, OSError, ValueError) as error:
            yield BadElement(f"{document.name} could not be read ({_why(error)})", fatal=True)


def _why(error: BaseException) -> str:
    if isinstance(error, MemberDamaged):
        return "the archive is damaged"
    if isinstance(error, MemberUnsupported):
        return "it is encrypted or compressed in a way Threadline cannot read"
    if isinstance(error, OSError):
        return error.strerror or "a read error"
    return "it is damaged"


class _Text:
    """Decoded text of a document, read on demand and counted against the limits.

    Bytes come in pieces of at most ``CHUNK``, each counted against the limits before it
    is decoded and kept; a zip member's ratio is judged by its reader as it inflates.
    """

    def __init__(self, handle: ByteSource, budget: Budget) -> None:
        self._handle = handle
        self._budget = budget
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self._read = 0
        self.buffer = ""
        self.at_end = False
        self._first = True

    def more(self, wanted: int) -> None:
        """Append at least ``wanted`` bytes' worth of text (less only at the end)."""
        pieces = [self.buffer]
        got = 0
        while not self.at_end and got < max(wanted, 1):
            text = self._piece()
            got += max(len(text), 1)
            pieces.append(text)
        self.buffer = "".join(pieces)

    def _piece(self) -> str:
        data = self._handle.read(CHUNK)
        self._read += len(data)
        self._budget.take(len(data))
        limits = self._budget.limits
        if self._read > limits.max_document_bytes:
            raise LimitExceeded(f"it is larger than {describe_size(limits.max_document_bytes)}")
        text = self._decoder.decode(data, final=not data)
        if self._first and text:
            text = text.removeprefix("\ufeff")
            self._first = False
        self.at_end = not data
        return text

    def forget(self, position: int) -> int:
        """Drop the text before ``position`` (already decoded or skipped); the same place now."""
        self.buffer = self.buffer[position:]
        return 0


def _skip_space(text: _Text, position: int) -> int:
    """The first non-space from ``position``; space read on the way is not kept (a file of
    gigabytes of blanks costs no memory). Positions before the returned one may move."""
    while True:
        found = _NOT_SPACE.search(text.buffer, position)
        if found is not None:
            return found.start()
        if text.at_end:
            return len(text.buffer)
        position = text.forget(len(text.buffer))
        text.more(CHUNK)


def _elements(text: _Text, limits: ImportLimits) -> Iterator[Element | BadElement]:
    position = _skip_space(text, 0)
    if position >= len(text.buffer):
        yield BadElement("it is empty", fatal=True)
        return
    if text.buffer[position] not in _JSON_STARTS:
        yield BadElement("it is not JSON, or the JSON is damaged", fatal=True)
        return
    if text.buffer[position] != "[":
        text.forget(position)
        while not text.at_end:  # one join at the end: the limits bound what is read
            text.more(limits.max_document_bytes)
        yield _decode_whole(text.buffer, limits)
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
            position = text.forget(position)
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
