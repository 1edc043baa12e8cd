"""An unsent prompt of one session (text and attachments), kept across restarts.

A draft is what the user typed but has not sent; losing it when the app restarts
or a tab closes is losing the user's work. The engine stores it in the store's
UI-state table under a key per session (``draft_key``), as JSON, so every window
and a restarted app find the same draft. It is removed when its session is
deleted for good (not while the delete can still be undone).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from threadline.core.messages import ContextFile, ImageBlock

DRAFT_KEY_PREFIX = "draft:"

Attachment = ContextFile | ImageBlock


def draft_key(session_id: str) -> str:
    return DRAFT_KEY_PREFIX + session_id


@dataclass(frozen=True, slots=True)
class Draft:
    text: str = ""
    attachments: tuple[Attachment, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.text and not self.attachments

    def to_json(self) -> dict[str, Any]:
        items: list[dict[str, Any]] = []
        for item in self.attachments:
            if isinstance(item, ImageBlock):
                items.append(
                    {"kind": "image", "name": item.name, "media_type": item.media_type, "data": item.data}
                )
            else:
                items.append({"kind": "file", **item.to_json()})
        return {"text": self.text, "attachments": items}

    @classmethod
    def from_json(cls, value: Any) -> Draft | None:
        """The stored draft, skipping anything malformed (UI state is plain, editable data)."""
        if not isinstance(value, dict):
            return None
        text = value.get("text")
        attachments: list[Attachment] = []
        raw = value.get("attachments")
        for item in raw if isinstance(raw, list) else []:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                continue
            if item.get("kind") == "image" and isinstance(item.get("data"), str):
                media_type = item.get("media_type")
                if isinstance(media_type, str):
                    attachments.append(ImageBlock(media_type, item["data"], item["name"]))
            elif item.get("kind") == "file" and isinstance(item.get("text"), str):
                attachments.append(ContextFile.from_json(item))
        draft = cls(text if isinstance(text, str) else "", tuple(attachments))
        return None if draft.empty else draft
