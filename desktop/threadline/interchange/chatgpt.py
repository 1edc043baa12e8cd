"""ChatGPT's data export: ``conversations.json`` (or ``conversations-NNN.json``) in the zip.

Each conversation is an object with ``title``, ``create_time``/``update_time``
(seconds), ``mapping`` (node id → ``{id, message, parent, children}``),
``current_node`` (the message the app showed last), ``is_archived`` and
``default_model_slug``. A message has ``author.role`` (system, user, assistant,
tool) and ``author.name`` (the tool), ``content`` typed by ``content_type``
(``text``, ``multimodal_text`` with image and audio pointers, ``code``,
``execution_output``, browsing and quote displays, ``system_error``…),
``recipient`` (``all``, or the tool an assistant message calls), ``status`` and
``metadata.model_slug``.

How it maps: user messages are prompts; an assistant message to ``all`` is a
reply; an assistant message to a tool (``python``, ``browser``, ``dalle.text2im``)
is a tool call whose arguments hold the code or command; a ``tool`` message is
that call's result (``execution_output`` and the like kept as text). System
messages, context the app injects (``user_editable_context``), reasoning
(``thoughts``, ``reasoning_recap``) and nodes marked visually hidden are skipped,
their children re-parented; the ``thoughts`` become the ``reasoning`` of the next
assistant message shown, never its text (``interchange.reasoning_import``). Images
and files the zip holds become image blocks; the others become a visible placeholder
naming them.
"""

from __future__ import annotations

import base64
import hashlib
import json

from threadline.core.messages import ImageBlock, Message, MessageStatus, RequestMetadata, ToolCall, ToolResult
from threadline.core.reasoning import Reasoning
from threadline.interchange.assemble import SourceNode, assemble, imported_conversation
from threadline.interchange.common import (
    EPOCH,
    ParseContext,
    as_dict,
    as_id,
    as_list,
    as_str,
    as_time,
    checked_text,
    placeholder,
    title_from,
)
from threadline.interchange.ids import message_id_for
from threadline.interchange.model import ImportedConversation, ImportSource
from threadline.interchange.reasoning_import import chatgpt_thoughts, is_chatgpt_recap, is_chatgpt_thoughts

SOURCE = ImportSource.CHATGPT
HIDDEN_CONTENT = frozenset({"user_editable_context", "model_editable_context", "thoughts", "reasoning_recap"})
_STATUSES = {
    "finished_successfully": MessageStatus.COMPLETE,
    "finished_partial_completion": MessageStatus.CANCELLED,
    "in_progress": MessageStatus.INTERRUPTED,
}


def looks_like(item: object) -> bool:
    """A ChatGPT conversation: an object with a ``mapping`` object of nodes."""
    record = as_dict(item)
    return isinstance(record.get("mapping"), dict) and ("current_node" in record or "create_time" in record)


def title_of(item: object) -> str:
    return title_from(item, "title")


def parse(item: object, context: ParseContext) -> ImportedConversation:
    record = as_dict(item)
    mapping = as_dict(record.get("mapping"))
    conversation_id = as_id(record.get("conversation_id")) or as_id(record.get("id")) or _fallback_id(record)
    created = as_time(record.get("create_time")) or EPOCH
    updated = as_time(record.get("update_time")) or created
    default_model = as_str(record.get("default_model_slug"))
    nodes = _Nodes(conversation_id, mapping, context, default_model, created)
    tree = assemble(nodes.build(), as_id(record.get("current_node")), context.limits)
    return imported_conversation(
        SOURCE,
        conversation_id,
        tree,
        title=as_str(record.get("title")).strip(),
        created=created,
        updated=updated,
        model=default_model,
        archived=record.get("is_archived") is True,
    )


def _fallback_id(record: dict[str, object]) -> str:
    """An id for a conversation that carries none: its creation time and node ids, hashed."""
    key = json.dumps([record.get("create_time"), sorted(as_dict(record.get("mapping")))], default=str)
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()[:32]


class _Nodes:
    """The mapping's nodes, each turned into its messages (or none, when hidden)."""

    def __init__(
        self,
        conversation_id: str,
        mapping: dict[str, object],
        context: ParseContext,
        default_model: str,
        created: object,
    ) -> None:
        self._conversation_id = conversation_id
        self._mapping = mapping
        self._context = context
        self._default_model = default_model
        self._created = created
        self._parents: dict[str, str | None] = {}
        self._messages: dict[str, dict[str, object]] = {}
        self._reasoning_nodes: dict[str, dict[str, object]] = {}
        """Hidden ``thoughts`` and ``reasoning_recap`` messages, read into the next reply."""
        for key, raw in mapping.items():
            node = as_dict(raw)
            node_id = as_id(node.get("id")) or key
            self._parents[node_id] = as_id(node.get("parent"))
            message = as_dict(node.get("message"))
            if message and not _hidden(message):
                self._messages[node_id] = message
            elif message and (is_chatgpt_thoughts(message) or is_chatgpt_recap(message)):
                self._reasoning_nodes[node_id] = message

    def build(self) -> list[SourceNode]:
        built = []
        for position, node_id in enumerate(self._parents):
            message = self._messages.get(node_id)
            made = self._convert(node_id, message) if message is not None else []
            when = made[0].created_at.timestamp() if made else 0.0
            built.append(SourceNode(node_id, self._parents[node_id], (when, position), made))
        return built

    def _id(self, node_id: str) -> str:
        return message_id_for(SOURCE, self._conversation_id, node_id)

    def _convert(self, node_id: str, message: dict[str, object]) -> list[Message]:
        role = as_str(as_dict(message.get("author")).get("role"))
        content = as_dict(message.get("content"))
        created = as_time(message.get("create_time")) or as_time(self._created) or EPOCH
        status = _STATUSES.get(as_str(message.get("status")), MessageStatus.COMPLETE)
        if role == "user":
            text, images = self._content_text(content)
            text = self._with_attachments(text, message, images)
            made = Message.prompt(text, id=self._id(node_id), images=images)
        elif role == "assistant":
            made = self._assistant(node_id, message, content, status)
        elif role == "tool":
            made = self._tool_result(node_id, message, content)
        else:
            return []
        if not (made.text or made.images or made.tool_calls or made.tool_results):
            return []  # an empty node (ChatGPT writes some before a tool call): nothing to show
        made.created_at = created
        return [made]

    def _assistant(
        self, node_id: str, message: dict[str, object], content: dict[str, object], status: MessageStatus
    ) -> Message:
        meta = as_dict(message.get("metadata"))
        model = as_str(meta.get("model_slug")) or self._default_model
        finish = as_str(as_dict(meta.get("finish_details")).get("type"))
        metadata = RequestMetadata(model=model, stop_reason=finish)
        recipient = as_str(message.get("recipient")) or "all"
        text, _images = self._content_text(content)
        if recipient == "all":
            if as_str(content.get("content_type")) == "code":
                text = f"```{as_str(content.get('language'))}\n{text}\n```"
            made = Message.reply(
                parent_id=None, id=self._id(node_id), text=text, status=status, metadata=metadata
            )
        else:
            call = ToolCall(id=_call_id(node_id), name=recipient, arguments=_arguments(content, text))
            made = Message.reply(
                parent_id=None, id=self._id(node_id), tool_calls=(call,), status=status, metadata=metadata
            )
        made.reasoning = self._reasoning_before(node_id)
        return made

    def _reasoning_before(self, node_id: str) -> tuple[Reasoning, ...]:
        """The ``thoughts`` among the hidden nodes between this message and the one shown
        before it, oldest first (bounded like ``_shown_ancestor``)."""
        found: list[Reasoning] = []
        recap: dict[str, object] | None = None
        node = self._parents.get(node_id)
        for _ in range(len(self._parents)):
            if node is None or node in self._messages:
                break
            hidden = self._reasoning_nodes.get(node)
            if hidden is not None and is_chatgpt_recap(hidden):
                recap = hidden
            elif hidden is not None and (block := chatgpt_thoughts(hidden, recap, self._context.limits)):
                found.append(block)
                recap = None
            node = self._parents.get(node)
        return tuple(reversed(found))

    def _tool_result(self, node_id: str, message: dict[str, object], content: dict[str, object]) -> Message:
        name = as_str(as_dict(message.get("author")).get("name"))
        text, images = self._content_text(content)
        caller = self._shown_ancestor(node_id)
        caller_message = self._messages.get(caller) if caller is not None else None
        calls_tool = (
            caller_message is not None and (as_str(caller_message.get("recipient")) or "all") != "all"
        )
        call_id = _call_id(caller) if calls_tool and caller is not None else _call_id(node_id)
        result = ToolResult(call_id=call_id, text=text, images=images, tool_name=name)
        return Message.tool_results_message((result,), parent_id=None, id=self._id(node_id))

    def _shown_ancestor(self, node_id: str) -> str | None:
        """The nearest ancestor that becomes a message (bounded: a loop is reported elsewhere)."""
        node = self._parents.get(node_id)
        for _ in range(len(self._parents)):
            if node is None or node in self._messages:
                return node
            node = self._parents.get(node)
        return None

    def _content_text(self, content: dict[str, object]) -> tuple[str, tuple[ImageBlock, ...]]:
        kind = as_str(content.get("content_type"))
        limits = self._context.limits
        if kind == "code":
            code = as_str(content.get("text"))
            return checked_text(code, limits), ()
        if kind == "execution_output":
            return checked_text(as_str(content.get("text")), limits), ()
        if kind == "tether_browsing_display":
            shown = as_str(content.get("result")) or as_str(content.get("summary"))
            return checked_text(shown, limits), ()
        if kind == "tether_quote":
            quoted = as_str(content.get("text"))
            source = as_str(content.get("title")) or as_str(content.get("url"))
            return checked_text(f"{quoted}\n\n— {source}" if source else quoted, limits), ()
        if kind == "system_error":
            error = ": ".join(p for p in (as_str(content.get("name")), as_str(content.get("text"))) if p)
            return checked_text(f"[error: {error}]", limits), ()
        pieces: list[str] = []
        images: list[ImageBlock] = []
        for part in as_list(content.get("parts")):
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict):
                shown, image = self._part(part)
                if image is not None:
                    images.append(image)
                elif shown:
                    pieces.append(shown)
        if not pieces and as_str(content.get("text")):
            pieces.append(as_str(content.get("text")))
        return checked_text("\n".join(p for p in pieces if p), limits), tuple(images)

    def _part(self, part: dict[str, object]) -> tuple[str, ImageBlock | None]:
        kind = as_str(part.get("content_type"))
        if kind == "audio_transcription":
            return as_str(part.get("text")), None
        if kind.endswith("asset_pointer"):
            pointer = as_str(part.get("asset_pointer"))
            file_id = pointer.rsplit("://", 1)[-1]
            if kind == "image_asset_pointer":
                found = self._context.attachment(file_id) if file_id else None
                if found is not None and found.media_type.startswith("image/"):
                    data = base64.b64encode(found.data).decode("ascii")
                    return "", ImageBlock(media_type=found.media_type, data=data, name=found.name)
                return placeholder("image", file_id), None
            what = "audio" if "audio" in kind else "file"
            return placeholder(what, file_id), None
        if text := as_str(part.get("text")):
            return text, None
        return "", None

    def _with_attachments(self, text: str, message: dict[str, object], images: tuple[ImageBlock, ...]) -> str:
        """Placeholders for attached files the conversation names (images it showed are parts)."""
        shown = {image.name for image in images}
        notes = []
        for raw in as_list(as_dict(message.get("metadata")).get("attachments")):
            attachment = as_dict(raw)
            name = as_str(attachment.get("name")) or as_str(attachment.get("id"))
            mime = as_str(attachment.get("mime_type"))
            if not name or name in shown or mime.startswith("image/"):
                continue
            notes.append(placeholder("attachment", name))
        return "\n".join([text, *notes]) if notes and text else "\n".join(notes) or text


def _hidden(message: dict[str, object]) -> bool:
    role = as_str(as_dict(message.get("author")).get("role"))
    meta = as_dict(message.get("metadata"))
    kind = as_str(as_dict(message.get("content")).get("content_type"))
    return (
        role == "system" or meta.get("is_visually_hidden_from_conversation") is True or kind in HIDDEN_CONTENT
    )


def _call_id(node_id: str) -> str:
    return "call_" + node_id


def _arguments(content: dict[str, object], text: str) -> str:
    """A tool call's JSON arguments: the code for ``code``, an object as is, else the text."""
    if as_str(content.get("content_type")) == "code":
        language = as_str(content.get("language"))
        return json.dumps({"code": text, **({"language": language} if language else {})})
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        value = None
    return text if isinstance(value, dict) else json.dumps({"input": text})
