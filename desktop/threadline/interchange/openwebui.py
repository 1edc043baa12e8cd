"""Open WebUI's chat export: a JSON list of chats (Settings → Chats → Export).

Each entry has ``id``, ``title``, ``created_at``/``updated_at`` (seconds),
``archived``, ``pinned`` and ``chat``: ``{title, models, history, messages}``.
``history.messages`` maps message ids to ``{id, parentId, childrenIds, role,
content, timestamp, model, files, done, error}`` and ``history.currentId`` is the
message shown last — a tree with every regenerated reply and edited prompt. Older
exports have only the flat ``chat.messages`` list (with ``parentId`` links when
present, else one chain).

How it maps: user messages are prompts, assistant messages replies with their
model; images embedded as ``data:`` URLs become image blocks, other files a
placeholder naming them; a reply saved with ``error`` is a failed reply, one
saved unfinished (``done: false``) an interrupted one. System messages are not
shown (the chat's system prompt is a setting there, not part of the talk).
"""

from __future__ import annotations

import base64
import binascii

from threadline.core.messages import ImageBlock, Message, MessageStatus, RequestMetadata
from threadline.interchange.assemble import (
    MessageListKeys,
    assemble,
    imported_conversation,
    nodes_from_message_list,
)
from threadline.interchange.common import (
    EPOCH,
    ConversationProblem,
    ParseContext,
    as_dict,
    as_id,
    as_list,
    as_str,
    as_time,
    checked_text,
    placeholder,
)
from threadline.interchange.ids import message_id_for
from threadline.interchange.model import ImportedConversation, ImportSource

SOURCE = ImportSource.OPEN_WEBUI
UNTITLED = "New Chat"
"""The title Open WebUI gives a chat it has not named yet: treated as no title."""
_MESSAGE_KEYS = MessageListKeys(id="id", parent="parentId", time="timestamp")


def looks_like(item: object) -> bool:
    """An Open WebUI chat: an object whose ``chat`` holds a ``history`` object or a ``messages`` list."""
    chat = as_dict(as_dict(item).get("chat"))
    return isinstance(chat.get("history"), dict) or isinstance(chat.get("messages"), list)


def title_of(item: object) -> str:
    record = as_dict(item)
    return (as_str(record.get("title")) or as_str(as_dict(record.get("chat")).get("title"))).strip()[
        :200
    ] or "Untitled conversation"


def parse(item: object, context: ParseContext) -> ImportedConversation:
    record = as_dict(item)
    chat = as_dict(record.get("chat"))
    conversation_id = as_id(record.get("id")) or as_id(chat.get("id"))
    if conversation_id is None:
        raise ConversationProblem("it has no id")
    created = as_time(record.get("created_at")) or as_time(chat.get("timestamp")) or EPOCH
    updated = as_time(record.get("updated_at")) or created
    models = [m for m in as_list(chat.get("models")) if isinstance(m, str)]
    history = as_dict(chat.get("history"))
    stored = as_dict(history.get("messages"))
    if stored:
        raw_messages = [as_dict(m) | {"id": as_id(as_dict(m).get("id")) or k} for k, m in stored.items()]
        current = as_id(history.get("currentId"))
    else:
        raw_messages = [as_dict(m) for m in as_list(chat.get("messages"))]
        current = None
    nodes = nodes_from_message_list(
        raw_messages,
        _MESSAGE_KEYS,
        created,
        lambda source_id, raw: _as_chain(_convert(conversation_id, source_id, raw, context)),
    )
    tree = assemble(nodes, current, context.limits)
    title = (as_str(record.get("title")) or as_str(chat.get("title"))).strip()
    return imported_conversation(
        SOURCE,
        conversation_id,
        tree,
        title="" if title == UNTITLED else title,
        created=created,
        updated=updated,
        model=models[0] if models else "",
        archived=record.get("archived") is True,
        pinned=record.get("pinned") is True,
    )


def _as_chain(message: Message | None) -> list[Message]:
    return [message] if message is not None else []


def _convert(
    conversation_id: str, source_id: str, raw: dict[str, object], context: ParseContext
) -> Message | None:
    role = as_str(raw.get("role"))
    message_id = message_id_for(SOURCE, conversation_id, source_id)
    content = raw.get("content")
    text = checked_text(content if isinstance(content, str) else _parts_text(content), context.limits)
    if role == "user":
        images, notes = _files(raw, context)
        text = "\n".join(p for p in [text, *notes] if p)
        return Message.prompt(text, id=message_id, images=images)
    if role == "assistant":
        error = as_dict(raw.get("error"))
        error_text = as_str(error.get("content")) or (as_str(raw.get("error")) if "error" in raw else "")
        status = MessageStatus.COMPLETE
        if error_text or raw.get("error") is True:
            status = MessageStatus.FAILED
        elif raw.get("done") is False:
            status = MessageStatus.INTERRUPTED
        model = as_str(raw.get("model"))
        metadata = RequestMetadata(model=model, error=error_text)
        return Message.reply(parent_id=None, id=message_id, text=text, status=status, metadata=metadata)
    return None


def _parts_text(content: object) -> str:
    """Content given as a list of ``{type: text, text}`` parts (OpenAI-style) rather than a string."""
    return "\n".join(as_str(as_dict(p).get("text")) for p in as_list(content) if as_dict(p).get("text"))


def _files(raw: dict[str, object], context: ParseContext) -> tuple[tuple[ImageBlock, ...], list[str]]:
    images: list[ImageBlock] = []
    notes: list[str] = []
    for entry in (as_dict(f) for f in as_list(raw.get("files"))):
        url = as_str(entry.get("url"))
        name = as_str(entry.get("name")) or as_str(as_dict(entry.get("file")).get("filename"))
        image = _data_image(url, name, context.limits.max_attachment_bytes)
        if image is not None:
            images.append(image)
        else:
            kind = "image" if as_str(entry.get("type")) == "image" else "file"
            shown = name or ("" if url.startswith("data:") else url[:200])
            notes.append(placeholder(kind, shown))
    return tuple(images), notes


def _data_image(url: str, name: str, limit: int) -> ImageBlock | None:
    """An image the export embeds as a ``data:image/…;base64,…`` URL, if it is one and not too big."""
    if not url.startswith("data:image/") or ";base64," not in url:
        return None
    header, data = url[5:].split(";base64,", 1)
    if len(data) * 3 // 4 > limit:
        return None
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return ImageBlock(media_type=header, data=data, name=name)
