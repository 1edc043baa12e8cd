"""Claude's data export: ``conversations.json``, one object per conversation.

A conversation has ``uuid``, ``name`` (may be empty), ``created_at``/``updated_at``
(ISO 8601), optionally ``current_leaf_message_uuid`` and ``model``, and
``chat_messages``: each with ``uuid``, ``sender`` (``human`` or ``assistant``),
``text``, ``content`` blocks (``text``, ``tool_use``, ``tool_result``,
``thinking``, ``image``…), ``created_at``, ``attachments`` (files whose extracted
text the export includes), ``files`` (uploads it does not include) and, in newer
exports, ``parent_message_uuid`` (the root's parent is the all-zero UUID). Older
exports have no parent links: the messages are one chain in file order.

How it maps: a human message is a prompt, its attachments' text attached as
context files, its uploads as placeholders. An assistant message is split at its
tool blocks into a chain that stays well-formed — text and ``tool_use`` blocks
become a reply with tool calls, the ``tool_result`` blocks after them one
tool-results message, the text after those a further reply — so code and tool
output stay what they were. Reasoning (``thinking`` and ``redacted_thinking`` blocks)
becomes the ``reasoning`` of the reply made from the blocks after it, never its text
(``interchange.reasoning_import``).
"""

from __future__ import annotations

import json

from threadline.core.messages import (
    ContextFile,
    Message,
    MessageStatus,
    RequestMetadata,
    ToolCall,
    ToolResult,
)
from threadline.core.reasoning import Reasoning
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
    title_from,
)
from threadline.interchange.ids import message_id_for
from threadline.interchange.model import ImportedConversation, ImportSource
from threadline.interchange.reasoning_import import CLAUDE_REASONING_BLOCKS, claude_block

SOURCE = ImportSource.CLAUDE
ROOT_PARENT = "00000000-0000-4000-8000-000000000000"
_MESSAGE_KEYS = MessageListKeys(
    id="uuid", parent="parent_message_uuid", time="created_at", root_parent=ROOT_PARENT
)


def looks_like(item: object) -> bool:
    """A Claude conversation: an object with a ``chat_messages`` list and a ``uuid``."""
    record = as_dict(item)
    return isinstance(record.get("chat_messages"), list) and "uuid" in record


def title_of(item: object) -> str:
    return title_from(item, "name", "title")


def parse(item: object, context: ParseContext) -> ImportedConversation:
    record = as_dict(item)
    conversation_id = as_id(record.get("uuid"))
    if conversation_id is None:
        raise ConversationProblem("it has no id (uuid)")
    created = as_time(record.get("created_at")) or EPOCH
    updated = as_time(record.get("updated_at")) or created
    model = as_str(record.get("model"))
    raw_messages = [as_dict(m) for m in as_list(record.get("chat_messages"))]
    nodes = nodes_from_message_list(
        raw_messages,
        _MESSAGE_KEYS,
        created,
        lambda source_id, raw: _Converter(conversation_id, source_id, context, model).convert(raw),
    )
    tree = assemble(nodes, as_id(record.get("current_leaf_message_uuid")), context.limits)
    return imported_conversation(
        SOURCE,
        conversation_id,
        tree,
        title=as_str(record.get("name")).strip(),
        created=created,
        updated=updated,
        model=model,
        archived=record.get("is_archived") is True,
    )


class _Converter:
    """One chat message → a chain of Threadline messages."""

    def __init__(self, conversation_id: str, source_id: str, context: ParseContext, model: str) -> None:
        self._conversation_id = conversation_id
        self._source_id = source_id
        self._limits = context.limits
        self._model = model
        self._made: list[Message] = []
        self._reasoning: list[Reasoning] = []
        """Thinking read but not yet given to a reply: it goes on the next one made."""

    def convert(self, raw: dict[str, object]) -> list[Message]:
        sender = as_str(raw.get("sender"))
        blocks = [as_dict(b) for b in as_list(raw.get("content"))]
        if sender == "human":
            self._human(raw, blocks)
        elif sender == "assistant":
            self._assistant(raw, blocks)
        for earlier, later in zip(self._made, self._made[1:], strict=False):
            later.parent_id = earlier.id
        return self._made

    def _next_id(self) -> str:
        suffix = f"#{len(self._made)}" if self._made else ""
        return message_id_for(SOURCE, self._conversation_id, self._source_id + suffix)

    def _human(self, raw: dict[str, object], blocks: list[dict[str, object]]) -> None:
        texts = [_block_text(b) for b in blocks if as_str(b.get("type")) != "tool_result"]
        text = "\n\n".join(t for t in texts if t) if blocks else as_str(raw.get("text"))
        context: list[ContextFile] = []
        notes: list[str] = []
        for attachment in (as_dict(a) for a in as_list(raw.get("attachments"))):
            name = as_str(attachment.get("file_name")) or "attachment"
            extracted = attachment.get("extracted_content")
            if isinstance(extracted, str):
                context.append(ContextFile(name, checked_text(extracted, self._limits)))
            else:
                notes.append(placeholder("file", name))
        for upload in (as_dict(f) for f in as_list(raw.get("files"))):
            notes.append(placeholder("file", as_str(upload.get("file_name"))))
        text = "\n".join(p for p in [text, *notes] if p)
        results = [b for b in blocks if as_str(b.get("type")) == "tool_result"]
        if results:
            self._results(results)
        if text or context or not results:
            message = Message.prompt(
                checked_text(text, self._limits), id=self._next_id(), context=tuple(context)
            )
            self._made.append(message)

    def _assistant(self, raw: dict[str, object], blocks: list[dict[str, object]]) -> None:
        if not blocks:
            blocks = [{"type": "text", "text": as_str(raw.get("text"))}]
        text: list[str] = []
        calls: list[ToolCall] = []
        results: list[dict[str, object]] = []
        for block in blocks:
            kind = as_str(block.get("type"))
            if kind == "tool_use":
                if results:
                    self._results(results)
                    results = []
                calls.append(self._call(block, len(calls)))
            elif kind == "tool_result":
                if calls or text:
                    self._reply(text, calls)
                    text, calls = [], []
                results.append(block)
            elif kind in CLAUDE_REASONING_BLOCKS:
                if (block_reasoning := claude_block(block, self._limits)) is not None:
                    self._reasoning.append(block_reasoning)
            else:
                if results:
                    self._results(results)
                    results = []
                if shown := _block_text(block):
                    text.append(shown)
        if results:
            self._results(results)
        if text or calls or self._reasoning or not self._made:
            self._reply(text, calls)

    def _call(self, block: dict[str, object], index: int) -> ToolCall:
        call_id = as_id(block.get("id")) or f"toolu_{self._source_id}_{len(self._made)}_{index}"
        arguments = block.get("input")
        return ToolCall(
            id=call_id,
            name=as_str(block.get("name")) or "tool",
            arguments=json.dumps(arguments if isinstance(arguments, dict) else {"input": arguments}),
        )

    def _reply(self, text: list[str], calls: list[ToolCall]) -> None:
        metadata = RequestMetadata(model=self._model)
        message = Message.reply(
            parent_id=None,
            id=self._next_id(),
            text=checked_text("\n\n".join(text), self._limits),
            tool_calls=tuple(calls),
            metadata=metadata,
            status=MessageStatus.COMPLETE,
        )
        message.reasoning, self._reasoning = tuple(self._reasoning), []
        self._made.append(message)

    def _results(self, blocks: list[dict[str, object]]) -> None:
        """Results answer the calls of the reply just made, by id, else in order."""
        previous = self._made[-1] if self._made else None
        calls = list(previous.tool_calls) if previous is not None else []
        made: list[ToolResult] = []
        for position, block in enumerate(blocks):
            call_id = as_id(block.get("tool_use_id"))
            name = as_str(block.get("name"))
            if call_id is None:
                match = next((c for c in calls if c.name == name), calls[0] if calls else None)
                call_id = match.id if match else f"toolu_result_{self._source_id}_{position}"
                if match is not None:
                    calls.remove(match)
            content = block.get("content")
            if isinstance(content, list):
                text = "\n\n".join(t for t in (_block_text(as_dict(c)) for c in content) if t)
            else:
                text = as_str(content)
            made.append(
                ToolResult(
                    call_id=call_id,
                    text=checked_text(text, self._limits),
                    is_error=block.get("is_error") is True,
                    tool_name=name,
                )
            )
        self._made.append(Message.tool_results_message(tuple(made), parent_id=None, id=self._next_id()))


def _block_text(block: dict[str, object]) -> str:
    kind = as_str(block.get("type"))
    if kind in ("text", ""):
        return as_str(block.get("text"))
    if kind in ("image", "document", "file"):
        source = as_dict(block.get("source"))
        name = as_str(block.get("file_name")) or as_str(source.get("url"))
        return placeholder("image" if kind == "image" else "file", name)
    return as_str(block.get("text"))
