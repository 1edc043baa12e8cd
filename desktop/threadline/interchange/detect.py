"""Reading any supported export: recognise the format from the content, parse each conversation.

The file name says nothing (people rename exports, and ChatGPT and Claude both
call theirs ``conversations.json``), so the format is decided by what the first
conversation looks like: a ``mapping`` of nodes is ChatGPT, ``chat_messages`` is
Claude, a ``chat`` with a ``history`` is Open WebUI, and an object marked
``"format": "threadline"`` is Threadline's own export (parsed by
``threadline_json``). In a zip every ``.json`` member is looked at the same way;
members that hold something else (ChatGPT's ``user.json``, Claude's
``projects.json``) are passed over.

Nothing raises out of :class:`ImportReader`: a file that cannot be read at all
yields one :class:`ImportProblem` naming the file, a conversation that cannot be
read one naming the conversation, and everything readable is yielded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from threadline.interchange import chatgpt, claude, openwebui
from threadline.interchange.common import ConversationProblem, ParseContext
from threadline.interchange.limits import DEFAULT_LIMITS, ImportLimits, LimitExceeded
from threadline.interchange.model import ImportedConversation, ImportProblem, ImportSource
from threadline.interchange.reading import (
    BadElement,
    Document,
    Element,
    ExportFile,
    FileRefused,
    read_elements,
)

log = logging.getLogger("threadline.interchange")

ImportItem = ImportedConversation | ImportProblem
NOT_RECOGNISED = (
    "it is not an export Threadline can import "
    "(ChatGPT, Claude or Open WebUI exports, or Threadline's own JSON)"
)


@dataclass(frozen=True, slots=True)
class Format:
    """One other app's export format: how to recognise, name and parse one conversation."""

    source: ImportSource
    label: str
    looks_like: Callable[[object], bool]
    title_of: Callable[[object], str]
    parse: Callable[[object, ParseContext], ImportedConversation]


def _format(source: ImportSource, label: str, module: ModuleType) -> Format:
    return Format(source, label, module.looks_like, module.title_of, module.parse)


FORMATS = (
    _format(ImportSource.CHATGPT, "ChatGPT", chatgpt),
    _format(ImportSource.CLAUDE, "Claude", claude),
    _format(ImportSource.OPEN_WEBUI, "Open WebUI", openwebui),
)


def detect(conversation: object) -> Format | None:
    """The format one conversation (an element of the export's list) is in, if any."""
    return next((f for f in FORMATS if f.looks_like(conversation)), None)


def _threadline() -> ModuleType | None:
    """Threadline's own format, when its module is present (it is imported only when needed)."""
    try:
        from threadline.interchange import threadline_json
    except ImportError:
        return None
    return threadline_json


class ImportReader:
    """Iterate to get each conversation of ``path`` (or the problem with it), in file order.

    ``fraction`` tells how much of the file has been read, for a progress bar.
    """

    def __init__(self, path: Path, limits: ImportLimits = DEFAULT_LIMITS) -> None:
        self.path = path
        self.limits = limits
        self._export: ExportFile | None = None
        self.recognised: set[ImportSource] = set()

    @property
    def fraction(self) -> float | None:
        return self._export.budget.fraction if self._export is not None else None

    def __iter__(self) -> Iterator[ImportItem]:
        try:
            self._export = ExportFile(self.path, self.limits)
        except FileRefused as refused:
            yield ImportProblem(self.path.name, _sentence(refused.reason))
            return
        try:
            unread: list[str] = []
            reported = 0
            for document in self._export.documents():
                if self._export.budget.spent:
                    break
                for item in self._document(document, unread):
                    reported += 1
                    yield item
            # A file whose every conversation was reported (three unreadable chats) needs no
            # fourth line saying it is not an export: the count would be one too many.
            if not self.recognised and not reported:
                reason = unread[0] if unread and not self._export.is_zip else NOT_RECOGNISED
                yield ImportProblem(self.path.name, _sentence(reason))
        finally:
            self._export.close()

    def _document(self, document: Document, unread: list[str]) -> Iterator[ImportItem]:
        assert self._export is not None
        context = ParseContext(self.limits, self._export.attachment)
        found: Format | None = None
        count = 0
        for element in read_elements(document, self._export.budget):
            if isinstance(element, BadElement):
                if found is None and element.fatal and not element.over_limit:
                    unread.append(element.reason)  # not (yet) known to hold conversations
                else:
                    count += 1
                    yield ImportProblem(self._where(document, count), _sentence(element.reason))
                if element.fatal:
                    return
                continue
            if element.whole_document:
                yield from self._whole(element, context, unread)
                return
            count += 1
            if found is None:
                found = detect(element.value)
                if found is None:
                    yield from self._unrecognised_list(document, unread)
                    return
                self.recognised.add(found.source)
            yield parse_one(found, element.value, context)

    def _whole(self, element: Element, context: ParseContext, unread: list[str]) -> Iterator[ImportItem]:
        """A document that is one object: Threadline's export, or a single conversation."""
        value = element.value
        module = _threadline()
        if module is not None and module.looks_like_threadline(value):
            self.recognised.add(ImportSource.THREADLINE)
            yield from _guarded_threadline(module, value)
            return
        found = detect(value)
        if found is None:
            unread.append(NOT_RECOGNISED)
            return
        self.recognised.add(found.source)
        yield parse_one(found, value, context)

    def _unrecognised_list(self, document: Document, unread: list[str]) -> Iterator[ImportItem]:
        """A list whose first element is no known conversation: perhaps Threadline's format
        (which is an object, so not this), else not something to import."""
        unread.append(NOT_RECOGNISED)
        return iter(())

    def _where(self, document: Document, count: int) -> str:
        name = document.name if self._export is not None and self._export.is_zip else self.path.name
        return f"{name}, conversation {count}"


def parse_one(found: Format, value: object, context: ParseContext) -> ImportItem:
    """One conversation, or the problem with it; never raises (the input is untrusted)."""
    title = _safe_title(found, value)
    if not found.looks_like(value):
        return ImportProblem(title, f"It is not a {found.label} conversation like the others in the file.")
    try:
        conversation = found.parse(value, context)
    except ConversationProblem as problem:
        return ImportProblem(title, _sentence(problem.reason))
    except LimitExceeded as exceeded:
        return ImportProblem(title, _sentence(exceeded.reason))
    except RecursionError:
        return ImportProblem(title, "It is nested too deeply to be read.")
    except Exception:
        log.info("could not read a %s conversation", found.label, exc_info=True)
        return ImportProblem(title, f"Its content is not in the shape of a {found.label} export.")
    return conversation


def _guarded_threadline(module: ModuleType, value: object) -> Iterator[ImportItem]:
    try:
        yield from module.parse_threadline(value)
    except Exception:
        log.info("could not read a Threadline export", exc_info=True)
        yield ImportProblem("(the file)", "Its content is not in the shape of a Threadline export.")


def _safe_title(found: Format, value: object) -> str:
    try:
        return found.title_of(value) or "Untitled conversation"
    except Exception:
        return "Untitled conversation"


def _sentence(reason: str) -> str:
    """Reasons are written lower-case to follow "…: "; the report shows them as sentences."""
    reason = reason.strip()
    if not reason:
        return "It could not be read."
    reason = reason[0].upper() + reason[1:]
    return reason if reason.endswith((".", "?", "!")) else reason + "."


def read_file(path: Path, limits: ImportLimits = DEFAULT_LIMITS) -> list[ImportItem]:
    """Every conversation of a small file at once (tests and tools; the app streams)."""
    return list(ImportReader(path, limits))
