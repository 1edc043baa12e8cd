"""Settled messages of a chat kept in a few flat buffers instead of several objects each.

Why: an open chat's messages were about 500 bytes in five or six small objects per
message (the ``Message``, its text, its ``datetime``, its metadata…), all in Python's
small-object heap. That heap returns memory in 1 MiB arenas, and only when every object
in an arena is gone; a few objects that outlive a closed chat (library caches, Qt's own
blocks) land in the gaps between its messages and keep whole arenas. So what a long chat
held while open stayed after it closed (docs/performance.md, "Memory after a big chat is
opened and closed").
Here the ids stay strings (they are the tree's keys) and everything else lives in
``bytearray`` and ``array`` buffers, which are one allocation each outside that heap and
are given back whole when the chat closes.

Only messages that can never change are packed: settled (not streaming), with children
(a message that has children is never rewritten; docs/design.md §1), and plain, that is
text, role, kind, status, time and request metadata, nothing else. ``ConversationTree``
decides what to pack and turns a message back into an object if it loses its children.
Reading one makes a new ``Message`` equal to the one packed, so a reader may keep it but
must not change it to change the chat (nothing does: changes become new versions).
"""

from __future__ import annotations

import math
from array import array
from datetime import UTC, datetime, timedelta

from threadline.core.id_positions import IdPositions
from threadline.core.messages import Message, MessageKind, MessageStatus, RequestMetadata, Role

_ROLES = tuple(Role)
_KINDS = tuple(MessageKind)
_STATUSES = tuple(MessageStatus)
_ROLE_CODE = {r: i for i, r in enumerate(_ROLES)}
_KIND_CODE = {k: i for i, k in enumerate(_KINDS)}
_STATUS_CODE = {s: i for i, s in enumerate(_STATUSES)}

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_NO_TIME = -(2**63)
_NO_COUNT = -1
_NO_METADATA = -1

MetadataFields = tuple[
    str, str, str, datetime | None, datetime | None, float | None, int | None, int | None, str, str, bool, str
]
"""``RequestMetadata``'s fields in declaration order (``metadata_fields``)."""

_LONG_TEXT = 400
"""Characters past which a string is kept as it is: Python's small-object heap takes objects
up to 512 bytes, so a longer string is its own allocation already (no copy to make, nothing
to decode when read). Counted in characters, not bytes: where the line falls is only a
question of speed."""


def packable(message: Message) -> bool:
    """Whether ``message`` has nothing the packed form cannot give back exactly (its children
    are ``ConversationTree``'s to check)."""
    metadata = message.metadata
    return (
        not message.images
        and not message.context
        and not message.tool_calls
        and not message.tool_results
        and not message.reasoning
        and not message.sources
        and message.summarised_through is None
        and message.marker is None
        and type(message.id) is str
        and parts_packable(
            message.status,
            message.text,
            message.created_at,
            None if metadata is None else metadata_fields(metadata),
        )
    )


def parts_packable(
    status: MessageStatus, text: object, created_at: object, meta: MetadataFields | None
) -> bool:
    """``packable`` of a plain message given by its parts (a row the store reads)."""
    return (
        status is not MessageStatus.STREAMING
        and type(text) is str
        and _is_utc(created_at)
        and (meta is None or metadata_packable(meta))
    )


class _Strings:
    """Strings one after another in one buffer (UTF-8); a long one kept as its own object.

    Entry ``i`` spans ``ends[i - 1]`` to ``ends[i]``; a long string takes no bytes and sits in
    ``long``. ``surrogatepass`` keeps lone surrogates, which decoded JSON can hold.
    """

    __slots__ = ("_buffer", "_ends", "_long")

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._ends = array("q")
        self._long: dict[int, str] = {}

    def add(self, text: str) -> None:
        """Append ``text`` as the next entry (entries are read back by their order, from 0)."""
        if text:  # most metadata strings are empty: nothing to copy
            if len(text) > _LONG_TEXT:
                self._long[len(self._ends)] = text
            else:
                self._buffer += text.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._buffer))

    def get(self, index: int) -> str:
        start = self._ends[index - 1] if index else 0
        end = self._ends[index]
        if start == end:
            return self._long.get(index, "")
        return self._buffer[start:end].decode("utf-8", "surrogatepass")


class _Metadata:
    """``RequestMetadata`` column by column: the words that repeat (provider, model, stop
    reason) as numbers into one table, the others in a ``_Strings``, times in microseconds."""

    __slots__ = (
        "_edited",
        "_ended",
        "_input",
        "_model",
        "_output",
        "_provider",
        "_started",
        "_stop",
        "_strings",
        "_ttft",
        "_word_code",
        "_words",
    )

    def __init__(self) -> None:
        self._words: list[str] = []
        self._word_code: dict[str, int] = {}
        self._provider = array("l")
        self._model = array("l")
        self._stop = array("l")
        self._strings = _Strings()  # request id, error, brought-from: three per entry
        self._started = array("q")
        self._ended = array("q")
        self._ttft = array("d")
        self._input = array("q")
        self._output = array("q")
        self._edited = bytearray()

    def add(self, fields: MetadataFields) -> int:
        """Pack ``RequestMetadata``'s fields, in its order (``metadata_packable`` must hold)."""
        (
            provider,
            model,
            request_id,
            started,
            ended,
            ttft,
            tokens_in,
            tokens_out,
            stop,
            error,
            edited,
            brought,
        ) = fields
        index = len(self._edited)
        codes = self._word_code
        self._provider.append(codes[provider] if provider in codes else self._word(provider))
        self._model.append(codes[model] if model in codes else self._word(model))
        self._stop.append(codes[stop] if stop in codes else self._word(stop))
        self._strings.add(request_id)
        self._strings.add(error)
        self._strings.add(brought)
        self._started.append(_NO_TIME if started is None else _micros(started))
        self._ended.append(_NO_TIME if ended is None else _micros(ended))
        self._ttft.append(math.nan if ttft is None else ttft)
        self._input.append(_NO_COUNT if tokens_in is None else tokens_in)
        self._output.append(_NO_COUNT if tokens_out is None else tokens_out)
        self._edited.append(edited)
        return index

    def get(self, index: int) -> RequestMetadata:
        words = self._words
        started, ended = self._started[index], self._ended[index]
        ttft = self._ttft[index]
        input_tokens, output_tokens = self._input[index], self._output[index]
        return RequestMetadata(
            provider=words[self._provider[index]],
            model=words[self._model[index]],
            request_id=self._strings.get(3 * index),
            started_at=None if started == _NO_TIME else _time(started),
            ended_at=None if ended == _NO_TIME else _time(ended),
            time_to_first_token_ms=None if math.isnan(ttft) else ttft,
            input_tokens=None if input_tokens == _NO_COUNT else input_tokens,
            output_tokens=None if output_tokens == _NO_COUNT else output_tokens,
            stop_reason=words[self._stop[index]],
            error=self._strings.get(3 * index + 1),
            edited=bool(self._edited[index]),
            brought_from=self._strings.get(3 * index + 2),
        )

    def _word(self, word: str) -> int:
        code = self._word_code.get(word)
        if code is None:
            code = self._word_code[word] = len(self._words)
            self._words.append(word)
        return code


class PackedMessages:
    """Packed messages by id: add one, read it back as a new ``Message``, drop it.

    Besides the messages, it keeps what the chat's scans over every message need
    (the kind, the text's length and line breaks, the parent's place), so that they
    run over the buffers instead of making 10,000 messages each time.
    """

    __slots__ = (
        "_chars",
        "_created",
        "_ids",
        "_index",
        "_kinds",
        "_line_breaks",
        "_metadata",
        "_metadata_at",
        "_parent_at",
        "_parents",
        "_roles",
        "_statuses",
        "_texts",
    )

    def __init__(self) -> None:
        self._index = IdPositions()
        self._ids: list[str] = []
        self._parents: list[str | None] = []
        self._parent_at = array("q")  # the parent's place here, or -1 (a root, or not packed)
        self._roles = bytearray()
        self._kinds = bytearray()
        self._statuses = bytearray()
        self._created = array("q")
        self._texts = _Strings()
        self._chars = array("q")
        self._line_breaks = array("q")
        self._metadata_at = array("q")
        self._metadata: _Metadata | None = None

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._index

    def add(self, message: Message) -> None:
        """Pack ``message`` (``packable`` must hold; its id must not be here yet)."""
        meta = message.metadata
        self.add_parts(
            message.id,
            message.parent_id,
            message.role,
            message.kind,
            message.text,
            message.status,
            message.created_at,
            None if meta is None else metadata_fields(meta),
        )

    def add_parts(
        self,
        message_id: str,
        parent: str | None,
        role: Role,
        kind: MessageKind,
        text: str,
        status: MessageStatus,
        created_at: datetime,
        meta: MetadataFields | None,
    ) -> None:
        """Pack a plain message given by its parts (``parts_packable`` must hold)."""
        ids = self._ids
        place = len(ids)
        if parent is None:
            parent_at = -1
        elif place and ids[-1] is parent:  # a linear chat: the parent was packed just before
            parent_at = place - 1
        else:
            parent_at = self._index.get(parent)
        self._index.add(message_id, place)
        ids.append(message_id)
        self._parents.append(parent)
        self._parent_at.append(parent_at)
        self._roles.append(_ROLE_CODE[role])
        self._kinds.append(_KIND_CODE[kind])
        self._statuses.append(_STATUS_CODE[status])
        self._created.append(_micros(created_at))
        self._texts.add(text)
        self._chars.append(len(text))
        self._line_breaks.append(text.count("\n"))
        if meta is None:
            self._metadata_at.append(_NO_METADATA)
        else:
            if self._metadata is None:
                self._metadata = _Metadata()
            self._metadata_at.append(self._metadata.add(meta))

    def message(self, message_id: str) -> Message:
        """A new ``Message`` equal to the one packed under ``message_id`` (``KeyError`` if none)."""
        return self.message_at(self.place(message_id))

    def parent_id(self, message_id: str) -> str | None:
        """The packed message's parent, without making the message."""
        return self._parents[self.place(message_id)]

    def stored_id(self, message_id: str) -> str:
        """The id string kept for ``message_id`` (an equal string may be another object)."""
        return self._ids[self.place(message_id)]

    def climb(self, message_id: str, ids_out: list[str], places_out: array[int]) -> str | None:
        """Append the ids from ``message_id`` up through its packed ancestors to ``ids_out``
        and their places here to ``places_out``; return the first ancestor that is not
        packed here (``None``: the root was reached). Parents link by place: no lookups."""
        index = self.place(message_id)
        ids, parent_at = self._ids, self._parent_at
        while True:
            ids_out.append(ids[index])
            places_out.append(index)
            above = parent_at[index]
            if above < 0:
                return self._parents[index]
            index = above

    # -- by place, for scans that climbed (``climb``) ------------------------------------

    def message_at(self, index: int) -> Message:
        return Message(
            self._ids[index],
            self._parents[index],
            _ROLES[self._roles[index]],
            _KINDS[self._kinds[index]],
            self._texts.get(index),
            status=_STATUSES[self._statuses[index]],
            metadata=self._metadata_of(index),
            created_at=_time(self._created[index]),
        )

    def kind_at(self, index: int) -> MessageKind:
        return _KINDS[self._kinds[index]]

    def facts_at(self, index: int) -> tuple[Role, MessageKind, MessageStatus, int]:
        """The role, kind, status and text length: what a request's estimate needs of a plain message."""
        return (
            _ROLES[self._roles[index]],
            _KINDS[self._kinds[index]],
            _STATUSES[self._statuses[index]],
            self._chars[index],
        )

    def place(self, message_id: str) -> int:
        """Where ``message_id`` is kept (``KeyError`` if it is not), for the ``_at`` readers."""
        index = self._index.get(message_id)
        if index < 0:
            raise KeyError(message_id)
        return index

    def request_facts_at(self, index: int) -> tuple[MessageStatus, RequestMetadata | None, int]:
        """The status, request metadata and text length (a packed message has no tool calls)."""
        return _STATUSES[self._statuses[index]], self._metadata_of(index), self._chars[index]

    def text_shape_at(self, index: int) -> tuple[MessageKind, int, int]:
        return _KINDS[self._kinds[index]], self._chars[index], self._line_breaks[index]

    def text_length_at(self, index: int) -> int:
        return self._chars[index]

    def remove(self, message_id: str) -> Message:
        """Take a message out; what it used in the buffers stays until the tree goes.

        Its children (none are left packed: a packed message's children go first, or it
        would still have them) no longer point at its place."""
        index = self.place(message_id)
        message = self.message_at(index)
        self._index.discard(message_id)
        self._parents[index] = None
        self._parent_at[index] = -1
        return message

    def _metadata_of(self, index: int) -> RequestMetadata | None:
        meta_index = self._metadata_at[index]
        metadata = self._metadata
        return None if meta_index == _NO_METADATA or metadata is None else metadata.get(meta_index)


def _is_utc(value: object) -> bool:
    return type(value) is datetime and value.tzinfo is UTC


def metadata_fields(meta: RequestMetadata) -> MetadataFields:
    """``meta``'s fields in declaration order: what ``RequestMetadata(*fields)`` makes again."""
    return (
        meta.provider,
        meta.model,
        meta.request_id,
        meta.started_at,
        meta.ended_at,
        meta.time_to_first_token_ms,
        meta.input_tokens,
        meta.output_tokens,
        meta.stop_reason,
        meta.error,
        meta.edited,
        meta.brought_from,
    )


def metadata_packable(fields: MetadataFields) -> bool:
    """Whether ``RequestMetadata(*fields)`` can be packed and read back exactly."""
    provider, model, request_id, started, ended, ttft, tokens_in, tokens_out, stop, error, edited, brought = (
        fields
    )
    return (
        type(provider) is str
        and type(model) is str
        and type(stop) is str
        and type(request_id) is str
        and type(error) is str
        and type(brought) is str
        and type(edited) is bool
        and (started is None or _is_utc(started))
        and (ended is None or _is_utc(ended))
        and (ttft is None or (type(ttft) is float and not math.isnan(ttft)))
        and _count_packable(tokens_in)
        and _count_packable(tokens_out)
    )


def _count_packable(count: object) -> bool:
    return count is None or (type(count) is int and 0 <= count < 2**63)


def _micros(value: datetime) -> int:
    return (value - _EPOCH) // _MICROSECOND


def _time(micros: int) -> datetime:
    return _EPOCH + micros * _MICROSECOND
