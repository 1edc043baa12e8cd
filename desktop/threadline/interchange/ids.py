"""Threadline ids made from a source's own ids, the same on every import.

A conversation exported twice (or a file imported twice) carries the same source
ids, so deriving session and message ids from them with UUID 5 lets a second
import find what the first one stored without keeping a separate mapping table.
The source name is part of the key: a ChatGPT and a Claude conversation never
collide even if their ids happen to match.
"""

from __future__ import annotations

import uuid

from threadline.interchange.model import ImportedConversation, ImportSource

_NAMESPACE = uuid.UUID("6f1c1f0e-5b1e-4c38-9a52-3d0b1f2a7c11")


def session_id_for(source: ImportSource, conversation_id: str) -> str:
    """The Threadline session id of a source conversation."""
    return uuid.uuid5(_NAMESPACE, f"{source.value}\x00{conversation_id}").hex


def message_id_for(source: ImportSource, conversation_id: str, message_id: str) -> str:
    """The Threadline message id of a source message (unique across conversations)."""
    return uuid.uuid5(_NAMESPACE, f"{source.value}\x00{conversation_id}\x00{message_id}").hex


def resolve_session_id(conversation: ImportedConversation) -> str:
    """Where a conversation is stored: its own id when given, Threadline's id as is, else derived."""
    if conversation.session_id:
        return conversation.session_id
    if conversation.source is ImportSource.THREADLINE:
        return conversation.source_id
    return session_id_for(conversation.source, conversation.source_id)
