"""The resources a tool result linked or embedded, opened or attached from the chat.

A tool result's box lists them (``message_html``, ``mcp-resource:`` links); the view hands
a clicked link to the tab as an action, and this helper (built by ``ChatMcp``) acts on it:

* **Open** reads the resource through ``engine.mcp`` and shows it in a read-only viewer
  (``ResourceViewer``): text as text, an image as an image. An embedded text resource is
  shown as the result carried it, so it opens even when its server cannot read it again.
  Save as… there writes the resource's bytes, read again from the server, to a file.
* **Attach** adds it to the composer as an MCP resource chip, as Attach → From MCP server…
  does (``ChatMcp.attach``): read at Send, marked when it changes.

docs/mcp.md, "Resources in tool results".
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6

from threadline.core.messages import ContextFile, ImageBlock, ResourceRef
from threadline.engine.errors import EngineError
from threadline.ui.chat.view.message_html import RESOURCE_SCHEME
from threadline.ui.common.tasks import spawn

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from threadline.engine.api import EngineApi
    from threadline.ui.chat.mcp.resource_viewer import ResourceViewer
    from threadline.ui.chat.view.conversation_model import ConversationModel
    from threadline.ui.common.message_bridge import MessageBridge


def parse_action(action: str) -> tuple[str, int, str] | None:
    """``mcp-resource:<verb>:<index>:<call id>`` as (verb, index, call id); None for other actions."""
    parts = action.split(":", 3)
    if len(parts) != 4 or parts[0] != RESOURCE_SCHEME or not parts[2].isdigit():
        return None
    return parts[1], int(parts[2]), parts[3]


class ResultResources:
    def __init__(
        self,
        engine: EngineApi,
        model: ConversationModel,
        bridge: MessageBridge,
        widget: QWidget,
        attach: Callable[[str, str], None],
    ) -> None:
        self._engine = engine
        self._model = model
        self._bridge = bridge
        self._widget = widget
        self._attach = attach
        self.viewer: ResourceViewer | None = None
        """The last viewer opened (tests look at it)."""

    def run(self, action: str, message_id: str) -> None:
        """Act on a view action when it is one of a tool result's resource links."""
        parsed = parse_action(action)
        if parsed is None:
            return
        verb, index, call_id = parsed
        ref = self._find(message_id, call_id, index)
        if ref is None:
            return
        if verb == "attach":
            self._attach(ref.server, ref.uri)
        elif verb == "open":
            self.open(ref)

    def open(self, ref: ResourceRef) -> None:
        if ref.embedded and ref.text is not None:
            self._show(ref, [ContextFile(ref.label, ref.text, document_type="text")])
            return
        spawn(
            self._engine.mcp.read(ref.server, ref.uri),
            on_done=lambda items: self._show(ref, items),
            tell=self._bridge,
            context=f"{ref.uri} could not be opened",
        )

    def _show(self, ref: ResourceRef, items: list[ContextFile | ImageBlock]) -> None:
        if not shiboken6.isValid(self._widget):
            return
        from threadline.ui.chat.mcp.resource_viewer import ResourceViewer

        viewer = ResourceViewer(ref, items, self._widget)
        viewer.saveRequested.connect(lambda: self.save(ref, viewer))
        viewer.finished.connect(viewer.deleteLater)
        self.viewer = viewer
        viewer.open()

    def save(self, ref: ResourceRef, parent: QWidget) -> None:
        """Ask where, then read the resource's bytes from its server and write them there."""
        from PySide6.QtWidgets import QFileDialog

        suggested = ref.name or ref.uri.rstrip("/").rsplit("/", 1)[-1] or "resource"
        path, _ = QFileDialog.getSaveFileName(parent, "Save resource", suggested)
        if not path:
            return
        engine = self._engine

        async def save() -> None:
            data = await engine.mcp.read_bytes(ref.server, ref.uri)
            try:
                await asyncio.to_thread(Path(path).write_bytes, data)
            except OSError as err:
                raise EngineError(f"{path} could not be written: {err.strerror or err}.") from err

        spawn(save(), tell=self._bridge, context=f"{ref.uri} was not saved")

    def _find(self, message_id: str, call_id: str, index: int) -> ResourceRef | None:
        message = self._model.message(message_id)
        if message is None:
            return None
        for result in message.tool_results:
            if result.call_id == call_id and index < len(result.resources):
                return result.resources[index]
        return None
