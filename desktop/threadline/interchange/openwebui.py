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
from threadline.interchange.assemble import SourceNode, assemble
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
    fallback_title,
    placeholder,
)
from threadline.interchange.ids import message_id_for, session_id_for
from threadline.interchange.model import ImportedConversation, ImportSource

SOURCE = ImportSource.OPEN_WEBUI


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
    linked = any("parentId" in m for m in raw_messages)
    nodes: list[SourceNode] = []
    previous: str | None = None
    for position, raw in enumerate(raw_messages):
        source_id = as_id(raw.get("id")) or f"#{position}"
        parent = as_id(raw.get("parentId")) if linked else previous
        when = as_time(raw.get("timestamp")) or created
        made = _convert(conversation_id, source_id, raw, context)
        if made is not None:
            made.created_at = when
        nodes.append(SourceNode(source_id, parent, (when.timestamp(), position), [made] if made else []))
        previous = source_id
    tree = assemble(nodes, current, context.limits)
    title = (as_str(record.get("title")) or as_str(chat.get("title"))).strip()
    if not title or title == "New Chat":
        title = fallback_title(tree.messages, created)
    return ImportedConversation(
        source=SOURCE,
        source_id=conversation_id,
        session_id=session_id_for(SOURCE, conversation_id),
        title=title,
        created_at=created,
        updated_at=max(updated, created),
        messages=tree.messages,
        active_leaf=tree.active_leaf,
        archived=record.get("archived") is True,
        pinned=record.get("pinned") is True,
        model=models[0] if models else "",
        source_message_ids=tree.source_message_ids,
    )


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
