"""Helpers every import parser shares: typed reads of untrusted values, times, placeholders.

Exports come from other programs, several versions of them, and sometimes from
hand-edited or damaged files, so nothing is assumed about a value's type: each
read says what it expects and falls back (a missing title, a timestamp that is
not a number) or raises :class:`ConversationProblem` with a reason a person can
understand (a message tree that loops, a conversation without messages).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from threadline.core.messages import Message
from threadline.core.session import automatic_title
from threadline.interchange.limits import DEFAULT_LIMITS, ImportLimits

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class ConversationProblem(Exception):
    """This conversation cannot be imported; ``reason`` goes into the report as is."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file found inside the export (an uploaded image kept in the zip)."""

    name: str
    media_type: str
    data: bytes


AttachmentLookup = Callable[[str], Attachment | None]
"""Finds a file of the export by the id the conversation refers to it with."""


def _no_attachments(_file_id: str) -> Attachment | None:
    return None


@dataclass(frozen=True, slots=True)
class ParseContext:
    """What a parser may use beyond the conversation itself."""

    limits: ImportLimits = DEFAULT_LIMITS
    attachment: AttachmentLookup = _no_attachments


def as_dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def as_str(value: object) -> str:
    return value if isinstance(value, str) else ""


def as_id(value: object) -> str | None:
    """An id as text: strings as they are, integers written out; anything else is no id."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def as_time(value: object) -> datetime | None:
    """A timestamp from seconds, milliseconds or nanoseconds since 1970, or ISO 8601 text."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = float(value)
        if not math.isfinite(seconds) or seconds <= 0:
            return None
        while seconds > 1e11:  # milliseconds, microseconds or nanoseconds
            seconds /= 1000
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def placeholder(kind: str, name: str) -> str:
    """The visible text standing for something the export does not contain."""
    named = f": {name}" if name else ""
    return f"[{kind}{named} — not included in the export]"


def _is_placeholder(line: str) -> bool:
    return line.startswith("[") and line.endswith("not included in the export]")


def checked_text(text: str, limits: ImportLimits) -> str:
    if len(text) > limits.max_text_chars:
        raise ConversationProblem(
            f"a message is longer than {limits.max_text_chars:,} characters, the most Threadline imports"
        )
    return text


def fallback_title(messages: tuple[Message, ...] | list[Message], created: datetime) -> str:
    """A title for a conversation the export left untitled: its first prompt, else its date."""
    for message in messages:
        said = "\n".join(line for line in message.text.splitlines() if not _is_placeholder(line))
        if message.is_prompt and (title := automatic_title(said)):
            return title
    return f"Imported chat of {created:%Y-%m-%d}" if created > EPOCH else "Imported chat"


def title_from(item: object, *keys: str) -> str:
    """A best-effort title of a raw conversation, for the report when it cannot be read."""
    record = as_dict(item)
    for key in keys:
        if title := as_str(record.get(key)).strip():
            return title[:200]
    return "Untitled conversation"
