"""The "Context…" dialog of a chat tab: this session's own sticky context, and what the last request held.

The session's context comes on top of its agent's (edited in Settings → Agents); the
share of the context window is the agent's, so the editor hides it here. Saving goes
through ``engine.sessions.set_session_context`` and applies from the next request; a failure is
shown in the dialog and nothing is closed. The knowledge bases ticked below are attached to
this chat alone (``engine.knowledge.attach``), on top of its agent's and its project's.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

from threadline.core.gathered_context import GatheredContext
from threadline.core.knowledge import AttachScope
from threadline.core.sticky import StickyContext
from threadline.engine.api import EngineApi
from threadline.ui.chat.controls.context_strip import details
from threadline.ui.common.inline_messages import claim_while_open, show_in_label
from threadline.ui.common.message_bridge import UserMessage
from threadline.ui.common.save_buttons import add_save_foot
from threadline.ui.common.sticky_context_editor import StickyContextEditor
from threadline.ui.common.tasks import spawn
from threadline.ui.knowledge.knowledge_picker import KnowledgePicker


class ContextDialog(QDialog):
    """Edit one session's sticky context; ``saved`` holds what was stored once accepted."""

    def __init__(
        self,
        engine: EngineApi,
        session_id: str,
        context: StickyContext,
        last: GatheredContext | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.engine = engine
        self.session_id = session_id
        self.saved: StickyContext | None = None
        self.setObjectName("ContextDialog")
        self.setWindowTitle("Sticky context of this chat")
        self.setMinimumWidth(620)
        v = QVBoxLayout(self)
        v.setContentsMargins(18, 16, 18, 12)
        v.setSpacing(10)
        intro = QLabel(
            "Files, folders, patterns and commands sent with every message of this chat, on top of "
            "its agent's. The agent's share of the context window applies; what does not fit is left "
            "out and the tab says so."
        )
        intro.setObjectName("Hint")
        intro.setWordWrap(True)
        v.addWidget(intro)
        self.editor = StickyContextEditor(self, show_share=False)
        self.editor.set_value(context)
        v.addWidget(self.editor)
        self.knowledge = KnowledgePicker(
            "Knowledge bases this chat searches, besides those of its agent and its project."
        )
        v.addWidget(self.knowledge)
        self.last = QLabel(details(last) if last is not None else "")
        self.last.setObjectName("Hint")
        self.last.setTextFormat(Qt.TextFormat.RichText)
        self.last.setWordWrap(True)
        self.last.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.last.setVisible(bool(self.last.text()))
        v.addWidget(self.last)
        foot = add_save_foot(self, v, self.save)  # Enter in the path field adds it, it does not save
        self.message, self.buttons, self.save_button = foot.message, foot.buttons, foot.save_button
        self.bridge = claim_while_open(self, self)
        self.knowledge_loaded = spawn(
            self.knowledge.load(engine.knowledge, AttachScope.SESSION, session_id),
            tell=self,
            context="Knowledge bases not listed",
        )

    def save(self) -> None:
        context = self.editor.value()
        self.save_button.setEnabled(False)

        def done(_info: object) -> None:
            self.saved = context
            self.accept()

        async def store() -> None:
            await self.engine.sessions.set_session_context(self.session_id, context)
            await self.knowledge.apply(self.engine.knowledge, AttachScope.SESSION, self.session_id)

        spawn(
            store(),
            tell=self,
            on_done=done,
            on_failed=lambda _err: self.save_button.setEnabled(True),
            context="Not saved",  # shown in this dialog's line: it claims the bridge while open
        )

    def show_user_message(self, message: UserMessage) -> None:
        show_in_label(self.message, message)
