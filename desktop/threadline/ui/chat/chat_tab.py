"""One open conversation: the chat view, its inline error banner and the composer.

A tab binds to the engine's one live conversation of its session (a reference,
never a copy) through a ConversationModel, and turns what the user does into engine
calls. Its own signals (title, busy, status, a reply finished) are re-emitted for
the window only while it is the current tab (TabContainer).

When a turn of this session asks the user about tool calls, the window's
``ApprovalRouter`` calls ``ask_approval``: the tab shows its ``ApprovalBar`` above
the composer and waits. Each tab has its own bar and its own waiting future, so
answers never cross tabs. Stop, Esc or closing the tab cancels the turn; the
engine then records cancelled results for the calls (docs/design.md §1).

Whether a turn is running comes only from the engine's events (``TurnStateChanged``,
and ``SaveStateChanged`` while its writes are being retried: "Saving…", sending
held); the tab never guesses or retries a refused send. A session whose model
cannot be used (none chosen, its provider or model removed) says so in the banner,
the picker and the status line, and Send asks for a model instead of failing.
The composer's text and attachments are the session's draft, saved through the
engine shortly after each change and put back when the tab opens.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QResizeEvent
from PySide6.QtWidgets import QApplication, QHBoxLayout, QPlainTextEdit, QSplitter, QVBoxLayout, QWidget

from threadline.core.config import DEFAULT_AGENT_ID
from threadline.core.messages import ContextFile, ImageBlock, Message, MessageKind, MessageStatus, ToolCall
from threadline.core.session import SessionInfo
from threadline.core.tree import TreeError
from threadline.core.turn import TurnState
from threadline.engine.api import EngineApi, LiveConversationApi
from threadline.engine.approval import Decision
from threadline.engine.drafts import Draft
from threadline.engine.errors import EngineError, SessionBusyError
from threadline.engine.events import (
    ChangesReceiving,
    CompareStarted,
    ContextGathered,
    ConversationEvent,
    ErrorAction,
    MessagesRemoved,
    MessagesRestored,
    RetryScheduled,
    SaveStateChanged,
    SessionBusyElsewhere,
    UserFacingError,
)
from threadline.ui.chat.agent_picker import AgentBinding
from threadline.ui.chat.attachment_tray import FileDropTarget
from threadline.ui.chat.busy_elsewhere_strip import BusyElsewhereStrip
from threadline.ui.chat.chat_view import ChatView
from threadline.ui.chat.compare_picker import CompareAgents
from threadline.ui.chat.composer import Composer
from threadline.ui.chat.context_strip import ContextStrip
from threadline.ui.chat.conversation_controls import ConversationControls
from threadline.ui.chat.conversation_model import ConversationModel
from threadline.ui.chat.find_keys import install_find_keys
from threadline.ui.chat.message_actions import COMPARE_VERSIONS, CONTROL_ACTIONS, is_editable_reply
from threadline.ui.chat.message_undo import MessageUndoBar
from threadline.ui.chat.meter_feed import MeterFeed
from threadline.ui.chat.model_catalog import ModelCatalog, ModelChoice
from threadline.ui.chat.waiting_send import WaitingSend
from threadline.ui.common.error_banner import ErrorBanner, first_sentence
from threadline.ui.common.focus_chain import move_before_in_focus_chain
from threadline.ui.common.message_bridge import MessageBridge, MessageLevel, UserMessage
from threadline.ui.common.tasks import describe, spawn
from threadline.ui.common.theme import ThemeColors

if TYPE_CHECKING:  # built when first asked for, not by every open
    from threadline.ui.approval.approval_bar import ApprovalBar
    from threadline.ui.chat.branch_map_panel import BranchMapPanel
    from threadline.ui.chat.compare_view import CompareView
    from threadline.ui.chat.context_dialog import ContextDialog
    from threadline.ui.chat.find_bar import FindBar
    from threadline.ui.chat.slash_completer import SlashCompleter
    from threadline.ui.chat.slash_runner import SlashCommandRunner

log = logging.getLogger("threadline.ui.chat.chat_tab")

INTERRUPTED_TOOLS_KIND = "interrupted_tools"

COMPOSER_MAX_WIDTH = 820
COMPACTING_TEXT = "Summarising earlier messages…"
REPLY_EDIT_HINT = "Editing a reply — Enter saves your text as a new version (nothing is sent), Esc cancels."
DRAFT_SAVE_MS = 600
"""How long typing must pause before the draft is saved (one write per pause, not per key)."""


class ChatTab(QWidget):
    titleChanged = Signal(str)
    busyChanged = Signal(bool)
    exportRequested = Signal(list)
    """``/export`` without a file: the window's export dialog, with these chats chosen."""
    statusChanged = Signal(str)
    replyFinished = Signal()
    settingsRequested = Signal(str)  # page / provider hint
    newSessionRequested = Signal()
    approvalChanged = Signal(bool)  # waiting for the user to answer tool calls
    branchMapCloseRequested = Signal()  # the branch map's own close button

    def __init__(
        self,
        engine: EngineApi,
        live: LiveConversationApi,
        catalog: ModelCatalog,
        colors: ThemeColors,
        parent: QWidget | None = None,
        *,
        bridge: MessageBridge | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ChatTab")
        self.bridge = bridge
        """The window's message bridge: errors about this tab's session show in its banner too."""
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.engine = engine
        self.live = live
        self.catalog = catalog
        self._info: SessionInfo = live.info
        self._busy = not live.conversation.ready_for_input
        self._status = ""
        self._saving = False
        self._save_error: UserFacingError | None = None
        """Why the turn's writes are behind, while the banner may be showing it."""
        self._compacting = False
        self._model_problem = ""
        """Why this chat's model cannot be used (sending waits for another pick)."""
        self._model_note = ""
        """A warning about this chat's model that does not stop sending (not in the listing)."""
        self._draft_dirty = False
        self._draft_loaded = False

        self.model = ConversationModel(live, self)
        self.view = ChatView()
        self.view.setAccessibleName("Conversation")
        self.view.set_colors(colors)
        self.view.set_tool_namer(self._tool_name)
        self.view.setModel(self.model)
        self.banner = ErrorBanner()
        self._approval: ApprovalBar | None = None  # built at the first question (``approval``)
        self._approval_wait: asyncio.Future[list[Decision]] | None = None
        self.composer = Composer()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        # The branch map (hidden until the window's View → Branch Map) sits beside the chat,
        # built the first time it is shown (``branch_map``).
        self._colors = colors
        self._branch_map: BranchMapPanel | None = None
        self.chat_split = QSplitter(Qt.Orientation.Horizontal)
        self.chat_split.setChildrenCollapsible(False)
        self.chat_split.setHandleWidth(1)
        self.chat_split.addWidget(self.view)
        self.chat_split.setStretchFactor(0, 1)
        layout.addWidget(self.chat_split, 1)
        self._layout = layout
        self._compare_view: CompareView | None = None  # built when a compare starts (``compare_view``)
        bottom = QWidget()
        bottom_layout = QHBoxLayout(bottom)
        bottom_layout.setContentsMargins(16, 6, 16, 14)
        column = QWidget()
        column.setMaximumWidth(COMPOSER_MAX_WIDTH)
        col = QVBoxLayout(column)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(8)
        self.undo_bar = MessageUndoBar(engine, live.session_id)
        self.undo_bar.restored.connect(self.view.set_current_message)
        self.undo_bar.failed.connect(lambda text: self._show_local_error(text, ()))
        col.addWidget(self.undo_bar)
        col.addWidget(self.banner)
        self.busy_elsewhere = BusyElsewhereStrip(lambda: engine.stop_elsewhere(live.session_id))
        col.addWidget(self.busy_elsewhere)
        self.waiting_send = WaitingSend(
            self.busy_elsewhere,
            lambda: engine.busy_elsewhere(live.session_id),
            lambda: engine.catch_up(live.session_id),
            self.composer.submit,
        )
        self._column = col
        """Where the approval bar goes when it is first needed: above the context strip."""
        self.context_strip = ContextStrip()
        col.addWidget(self.context_strip)
        col.addWidget(self.composer)
        # Slash commands (run here, never sent): their runner and note, and the list that
        # opens on "/", are built by the first "/" typed or sent (``slash``, ``slash_completer``).
        self._slash: SlashCommandRunner | None = None
        self._slash_completer: SlashCompleter | None = None
        self.composer.edit.textChanged.connect(self._slash_typed)
        bottom_layout.addStretch(1)
        bottom_layout.addWidget(column, 100)
        bottom_layout.addStretch(1)
        layout.addWidget(bottom)
        self._bottom = bottom

        self.model.turnStateChanged.connect(self._turn_state)
        self.model.turnFailed.connect(self._turn_failed)
        self.model.retryScheduled.connect(self._retry_scheduled)
        self.model.promptUnsent.connect(self._prompt_unsent)
        self.model.sessionUpdated.connect(self._session_updated)
        self.model.messageFinished.connect(self._message_finished)
        self.model.rowsInserted.connect(self._history_changed)
        self.model.rowsRemoved.connect(self._history_changed)
        self.view.actionTriggered.connect(self._message_action)
        self.composer.submitted.connect(self._submit)
        self.composer.stopRequested.connect(self.stop)
        self.composer.modelChosen.connect(self._model_chosen)
        self.composer.attachmentRefused.connect(lambda text: self._show_local_error(text, ()))
        self._file_drops = FileDropTarget(self.view.viewport(), self.composer.attach_paths)
        self.banner.actionChosen.connect(self._banner_action)
        self.context_strip.editRequested.connect(self.edit_context)
        self.context_strip.show_configured(live.info.context)
        if live.last_context is not None:
            self.context_strip.show_gathered(live.last_context)
        self.catalog.changed.connect(self._refresh_models)
        self.composer.draftChanged.connect(self._draft_changed)
        self.agent = AgentBinding(
            engine,
            live,
            self.composer.agent_picker,
            notice=self.banner.show_info,
            error=lambda text: self._show_local_error(text, ()),
            parent=self,
        )
        self.agent.changed.connect(self._update_status)
        self._find_bar: FindBar | None = None  # built by the first Ctrl+F or F3 (``find_bar``)
        install_find_keys(self, lambda: self.find_bar)
        self.compare_agents = CompareAgents(engine, self.composer.compare_button)  # agents beside models
        self.meter_feed = MeterFeed(
            engine, self.session_id, self.model, self.composer.meter, self.view, lambda: self._compare_view
        )
        self.controls = ConversationControls(self, colors)
        layout.insertWidget(0, self.controls.tangent_banner)
        col.insertWidget(col.indexOf(self.undo_bar), self.controls.clear_notice)
        self.composer.meter.compactRequested.connect(self.controls.open_compact_dialog)
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_SAVE_MS)
        self._draft_timer.timeout.connect(self._save_draft_later)
        self._unsubscribe_saves: Any = live.subscribe(self._engine_event)
        spawn(
            engine.sessions.get_draft(self.session_id),
            on_done=self._restore_draft,
            on_error=self._draft_failed,
        )
        if bridge is not None:
            bridge.shown.connect(self._bridge_message)

        self.view.escapePressed.connect(self._escape)
        self.view.typedAhead.connect(self._type_into_composer)
        self._answer_had_focus = False
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._focus_moved)
        self._retry_timer = QTimer(self)
        self._retry_timer.setInterval(1000)
        self._retry_timer.timeout.connect(self._tick_retry)
        self._retry_left = 0.0
        self._retry_event: RetryScheduled | None = None

        self._refresh_models()
        self._history_changed()
        self.composer.set_busy(self._busy)
        self._update_status()
        self._offer_interrupted_tools()

    # -- identity ------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.live.session_id

    @property
    def info(self) -> SessionInfo:
        return self._info

    @property
    def title(self) -> str:
        return self._info.display_title

    @property
    def busy(self) -> bool:
        return self._busy

    @property
    def status(self) -> str:
        return self._status

    @property
    def awaiting_approval(self) -> bool:
        return self._approval_wait is not None

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        self.view.set_colors(colors)
        if self._find_bar is not None:
            self._find_bar.set_colors(colors)
        if self._approval is not None:
            self._approval.set_colors(colors)
        if self._branch_map is not None:
            self._branch_map.set_colors(colors)
        if self._compare_view is not None:
            self._compare_view.set_colors(colors)
        self.controls.set_colors(colors)

    # -- slash commands ---------------------------------------------------------------------

    @property
    def slash(self) -> SlashCommandRunner:
        """What runs the slash commands sent from this tab, and its note above the message box;
        built the first time a "/" is typed or sent. Most chats never use a command, so the
        commands' modules and widgets are not paid by every open."""
        if self._slash is None:
            from threadline.ui.chat.slash_runner import SlashCommandRunner

            runner = SlashCommandRunner(self)
            self._column.insertWidget(self._column.indexOf(self.composer), runner.notice)
            move_before_in_focus_chain(runner.notice, self.composer)  # Tab's place, as if built with the tab
            self._slash = runner
        return self._slash

    @property
    def slash_completer(self) -> SlashCompleter:
        """The list of commands that opens when the text starts with "/" (built on the first)."""
        if self._slash_completer is None:
            from threadline.ui.chat.slash_completer import SlashCompleter

            self._slash_completer = SlashCompleter(self.composer.edit, self)
        return self._slash_completer

    def _slash_typed(self) -> None:
        """Build the command list when the text first starts with "/", and show it at once
        (it follows the text itself from then on)."""
        if self._slash_completer is None and self.composer.edit.document().characterAt(0) == "/":
            self.slash_completer.follow_text()

    # -- branch map -------------------------------------------------------------------------

    @property
    def branch_map(self) -> BranchMapPanel:
        """The branch map panel beside the chat, built (hidden) the first time it is asked for.

        Most chats are opened and closed without it, so its module, widgets and its
        subscription to the conversation are not paid by every open.
        """
        if self._branch_map is None:
            from threadline.ui.chat.branch_map_panel import BranchMapPanel

            panel = BranchMapPanel(self.engine, self.live, self._colors)
            panel.hide()
            panel.scrollRequested.connect(self.scroll_to_message)
            panel.failed.connect(lambda text: self._show_local_error(text, ()))
            panel.closeRequested.connect(self.branchMapCloseRequested.emit)
            self.chat_split.addWidget(panel)
            self.chat_split.setStretchFactor(1, 0)
            # Tab goes from the chat into the panel, as it would had the panel been built with it.
            QWidget.setTabOrder(self.view, panel.close_button)
            QWidget.setTabOrder(panel.close_button, panel.map)
            self._branch_map = panel
        return self._branch_map

    @property
    def shown_branch_map(self) -> BranchMapPanel | None:
        """The branch map panel if it is shown (never builds it)."""
        panel = self._branch_map
        return panel if panel is not None and panel.isVisible() else None

    def branch_map_contains(self, widget: QWidget) -> bool:
        """Whether ``widget`` is inside the branch map panel (False if it was never built)."""
        return self._branch_map is not None and self._branch_map.isAncestorOf(widget)

    def set_branch_map_visible(self, visible: bool) -> None:
        """Show the branch map (building it the first time) or hide it if it was ever built."""
        if visible:
            self.branch_map.show()
        elif self._branch_map is not None:
            self._branch_map.hide()

    def _tool_name(self, name: str) -> str:
        """The policy name (``time/get_current_time``) of a stored call's wire name, if registered."""
        return self.engine.tools.policy_name(name)

    def close_tab(self) -> None:
        """Detach from the live conversation; the engine keeps it (and any turn) alive.

        A turn waiting for this tab's approval is stopped: nobody is left to answer it.
        """
        if self._approval_wait is not None:
            self.engine.cancel(self.session_id)
            self._end_approval(cancel=True)
        self.model.detach()
        if self._compare_view is not None:
            self._compare_view.detach()
        self.agent.detach()
        if self._branch_map is not None:
            self._branch_map.detach()
        self.controls.detach()
        if self._unsubscribe_saves is not None:
            self._unsubscribe_saves()
            self._unsubscribe_saves = None
        self._draft_timer.stop()
        if self._draft_dirty:  # saved by the engine alone: this widget is about to be deleted
            self._draft_dirty = False
            spawn(
                self.engine.sessions.save_draft(self.session_id, self.composer.draft()),
                on_error=lambda err: log.warning("could not save the draft: %s", describe(err)),
            )

    # -- the draft -------------------------------------------------------------------------------

    def _restore_draft(self, draft: Draft | None) -> None:
        if self._unsubscribe_saves is None:
            return  # the tab closed while the draft was being read
        self._draft_loaded = True
        if draft is not None and self.composer.draft().empty:  # never over what was typed meanwhile
            self.composer.set_draft(draft)
            self._draft_timer.stop()
            self._draft_dirty = False

    def _draft_failed(self, err: BaseException) -> None:
        self._draft_loaded = True
        log.warning("could not read the draft of %s: %s", self.session_id, describe(err))

    def _draft_changed(self) -> None:
        if self._draft_loaded or not self.composer.draft().empty:
            self._draft_dirty = True
            self._draft_timer.start()

    def _save_draft_later(self) -> None:
        self._draft_timer.stop()
        spawn(
            self.save_draft_now(),
            on_error=lambda err: log.warning("could not save the draft: %s", describe(err)),
        )

    async def save_draft_now(self) -> None:
        """Store the draft if it changed since it was last stored (the window calls it on close)."""
        self._draft_timer.stop()
        if not self._draft_dirty:
            return
        self._draft_dirty = False
        await self.engine.sessions.save_draft(self.session_id, self.composer.draft())

    # -- sending -----------------------------------------------------------------------------

    def _submit(self, text: str, images: tuple[ImageBlock, ...], context: tuple[ContextFile, ...]) -> None:
        if self.composer.editing is not None and self._edit_reply(self.composer.editing, text):
            return  # a reply's new version is stored, not sent: no model needed
        if self.composer.editing is None:
            plain = self._slash is None and not text.startswith("/")  # not a command, and no note to close
            prompt = text if plain else self.slash.prompt_or_run(text)
            if prompt is None:
                return  # a slash command ran (or was refused); nothing is sent
            text = prompt
        if not self._info.model or self._model_problem:
            # Nothing is staged: the text stays in the box while the user picks a model.
            problem = self._model_problem or "Pick a model for this chat first."
            self._show_local_error(problem, (ErrorAction.PICK_MODEL,))
            return
        editing = self.composer.editing
        if self.busy_elsewhere.host and editing is None:
            self.waiting_send.hold()  # sent when the reply running elsewhere ends
            return
        try:
            if editing is not None:
                self.engine.edit_and_resend(self.session_id, editing, text)
            elif targets := self.composer.compare_button.targets():
                self.engine.send_compare(self.session_id, text, targets, images=images, context=context)
            else:
                self.engine.send(self.session_id, text, images=images, context=context)
        except SessionBusyError as err:
            # The engine says a turn runs although no event said so: tell it as it is.
            log.warning("send refused as busy in %s", self.session_id)
            self._show_local_error(f"Not sent: {err.user_message}", ())
            return
        except EngineError as err:
            self._show_local_error(f"Not sent: {err.user_message}", ())
            return
        except Exception as err:
            log.info("send refused: %s", err)
            self._show_local_error(f"Not sent: {describe(err)}", ())
            return
        self.banner.dismiss()
        self.composer.accept_sent()
        self.view.scroll_to_bottom()

    def _continue_with(self, reply_id: str) -> None:
        """A compare column's "Continue with this one": that reply becomes the chat's path, and
        comparing ends — the next prompt goes to the one model (or agent) chosen, not to all."""

        def continued(_none: object) -> None:
            self.compare_view.hide()
            self.composer.compare_button.clear()

        spawn(
            self.engine.pick_compare(self.session_id, reply_id),
            on_done=continued,
            on_error=lambda err: self._show_local_error(f"Could not continue with it: {describe(err)}", ()),
        )

    def compare_versions(self, prompt_id: str) -> None:
        """Show a prompt's replies side by side (each can be continued with)."""
        self.compare_view.show_versions(self.live.conversation.tree, prompt_id)

    def _edit_reply(self, message_id: str, text: str) -> bool:
        """Save an edited reply as its new version (nothing is sent); False if ``message_id`` is a prompt."""
        message = self.model.message(message_id)
        if message is None or not message.is_assistant:
            return False
        spawn(
            self.engine.messages.edit_reply(self.session_id, message_id, text),
            on_done=lambda _version: self.composer.accept_sent(),
            on_error=lambda err: self._show_local_error(f"Not saved: {describe(err)}", ()),
        )
        return True

    def stop(self) -> None:
        if self._busy or self._approval_wait is not None:
            self.engine.cancel(self.session_id)

    def _escape(self) -> None:
        if self._busy or self._approval_wait is not None:
            self.stop()
        elif self.composer.editing is not None:
            self.composer.end_edit()
            self.composer.edit.clear()

    def retry(self) -> None:
        self.banner.dismiss()
        try:
            self.engine.retry(self.session_id)
        except Exception as err:
            self._show_local_error(f"Could not retry: {describe(err)}", ())

    # -- find -----------------------------------------------------------------------------------------

    @property
    def find_bar(self) -> FindBar:
        """The find bar over the chat, built (hidden) the first time Ctrl+F or F3 asks for it:
        most chats are never searched, so its module, widgets, style sheet and its watching of
        the conversation are not paid by every open."""
        if self._find_bar is None:
            from threadline.ui.chat.find_bar import FindBar

            bar = FindBar(self.view, self.model)
            bar.closed.connect(self.focus_composer)
            move_before_in_focus_chain(bar, self.controls.menu_button)  # Tab's old place: after Send
            self._find_bar = bar
        return self._find_bar

    # -- compare ------------------------------------------------------------------------------------

    @property
    def compare_view(self) -> CompareView:
        """Several models' replies side by side, between the chat and the composer, built (hidden)
        the first time a compare starts or versions are compared: most chats never show it."""
        if self._compare_view is None:
            from threadline.ui.chat.compare_view import CompareView

            view = CompareView(self.live, self._colors)
            view.pickRequested.connect(self._continue_with)
            view.stopRequested.connect(lambda i: self.engine.stop_compare_worker(self.session_id, i))
            view.closeRequested.connect(view.hide)
            if self.view.price_of is not None:  # the prices the meter feed already gave the chat
                view.set_price_of(self.view.price_of)
            self._layout.insertWidget(self._layout.indexOf(self.chat_split) + 1, view, 2)
            move_before_in_focus_chain(view, self._bottom)  # Tab's old place: after the chat
            self._compare_view = view
        return self._compare_view

    # -- tool approval ------------------------------------------------------------------------------

    @property
    def approval(self) -> ApprovalBar:
        """The bar that asks about tool calls, above the composer, built (hidden) the first time
        it is asked for: most chats never ask, so its module, widgets and style sheet are not
        paid by every open."""
        if self._approval is None:
            from threadline.ui.approval.approval_bar import ApprovalBar

            bar = ApprovalBar(self._colors)
            bar.decided.connect(self._approval_decided)
            bar.stopRequested.connect(self.stop)
            self._column.insertWidget(self._column.indexOf(self.context_strip), bar)
            move_before_in_focus_chain(bar, self.context_strip)  # where Tab found it when built with the tab
            self._approval = bar
        return self._approval

    def _in_approval(self, widget: QWidget) -> bool:
        """Whether ``widget`` is inside the approval bar (False if it was never built)."""
        return self._approval is not None and self._approval.isAncestorOf(widget)

    async def ask_approval(
        self, calls: Sequence[ToolCall], previews: Mapping[str, str | None], asker: str = ""
    ) -> list[Decision]:
        """Show the calls in the approval bar and wait for the user's answers (one per call).

        Raises ``CancelledError`` when the turn is stopped or the tab closes meanwhile.
        """
        if self._approval_wait is not None:  # a stale request (cannot happen: one turn per session)
            self._end_approval(cancel=True)
        wait: asyncio.Future[list[Decision]] = asyncio.get_running_loop().create_future()
        self._approval_wait = wait
        self.approval.ask(calls, previews, asker)
        self._fit_approval()
        self.approvalChanged.emit(True)
        self._update_status()
        if self.isVisible() and self.window().isActiveWindow():
            focused = QApplication.focusWidget()
            typing = (
                isinstance(focused, QPlainTextEdit)
                and not focused.isReadOnly()
                and bool(focused.toPlainText())
            )
            if not typing:  # never steal the keyboard from a message being written
                self.approval.focus_first()
        self.view.scroll_to_bottom()
        try:
            return await wait
        finally:
            if self._approval_wait is wait:
                self._end_approval(cancel=False)

    def _approval_decided(self, decisions: list[Decision]) -> None:
        wait = self._approval_wait
        if wait is not None and not wait.done():
            wait.set_result(decisions)
        self._end_approval(cancel=False)
        self._focus_composer_after_answer()

    def _focus_composer_after_answer(self) -> None:
        """After Allow, Deny or Retry the keyboard goes back to the message box.

        The answered button hides as it is pressed, so Qt has already passed the focus on to
        the next widget in the chain, which may be anywhere in the window; ``_focus_moved``
        remembers that the focus was on the answer. Focus the user moved elsewhere stays.
        """
        focused = QApplication.focusWidget()
        if focused is None or self.isAncestorOf(focused) or self._answer_had_focus:
            self.composer.focus_input()
        self._answer_had_focus = False

    def _focus_moved(self, old: QWidget | None, new: QWidget | None) -> None:
        """Whether the keyboard was on the approval bar or the banner when its button hid."""
        if new is not None and (self._in_approval(new) or self.banner.isAncestorOf(new)):
            self._answer_had_focus = True
        elif old is not None and (self._in_approval(old) or self.banner.isAncestorOf(old)):
            self._answer_had_focus = not old.isVisible()  # hidden by the answer, not left by the user
        else:
            self._answer_had_focus = False

    def _end_approval(self, *, cancel: bool) -> None:
        wait, self._approval_wait = self._approval_wait, None
        if cancel and wait is not None and not wait.done():
            wait.cancel()
        focused = QApplication.focusWidget()
        had_focus = focused is not None and self._in_approval(focused)
        if self._approval is not None:
            self._approval.clear()
        if had_focus:
            self.composer.focus_input()
        if wait is not None:
            self.approvalChanged.emit(False)
            self._update_status()

    def _fit_approval(self) -> None:
        self.approval.set_max_rows_height(int(self.height() * 0.5))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._approval is not None and self._approval.pending:
            self._fit_approval()

    # -- per-message actions --------------------------------------------------------------------

    def _message_action(self, action: str, message_id: str) -> None:
        message = self.model.message(message_id)
        if message is None:
            return
        try:
            if action == "edit" and message.kind is MessageKind.PROMPT:
                self.composer.begin_edit(message_id, message.text)
            elif action == "edit" and is_editable_reply(message):
                self.composer.begin_edit(message_id, message.text, REPLY_EDIT_HINT)
            elif action in CONTROL_ACTIONS:
                self.controls.message_action(action, message_id)
            elif action == "delete":
                spawn(
                    self.engine.messages.delete_message(self.session_id, message_id),
                    on_error=lambda err: self._show_local_error(f"Not deleted: {describe(err)}", ()),
                )
            elif action == COMPARE_VERSIONS and message.parent_id is not None:
                self.compare_versions(message.parent_id)
            elif action == "copy_markdown":
                self.statusChanged.emit("Copied as Markdown")
            elif action == "copy_chat_markdown":
                spawn(self.engine.export_markdown(self.session_id), on_done=self._copy_chat)
            elif action in ("regenerate", "retry"):
                self.banner.dismiss()
                self.engine.regenerate(self.session_id, message_id)
                self.view.scroll_to_bottom()
            elif action == "continue":
                self.banner.dismiss()
                self.engine.resume(self.session_id, message_id)
                self.view.scroll_to_bottom()
            elif action in ("prev_version", "next_version"):
                offset = -1 if action == "prev_version" else 1
                spawn(
                    self.engine.switch_version(self.session_id, message_id, offset),
                    on_error=lambda err: self._show_local_error(describe(err), ()),
                )
            elif action == "copy":
                self.statusChanged.emit("Copied to the clipboard")
            elif action == "copy_code":
                self.statusChanged.emit("Code copied to the clipboard")
        except Exception as err:
            self._show_local_error(describe(err), ())

    def _copy_chat(self, markdown: str) -> None:
        QApplication.clipboard().setText(markdown)
        self.statusChanged.emit("Conversation copied as Markdown")

    # -- engine events -------------------------------------------------------------------------

    def _turn_state(self, state: TurnState) -> None:
        busy = state in (
            TurnState.STREAMING,
            TurnState.AWAITING_APPROVAL,
            TurnState.RUNNING_TOOLS,
            TurnState.COMPARING,
        )
        if not busy:
            self._stop_retry_countdown()
        if busy != self._busy:
            self._busy = busy
            self.composer.set_busy(busy)
            self.busyChanged.emit(busy)
            if busy and self._slash is not None:
                self._slash.notice.hide()  # a turn began (send, Regenerate, edit resent): the note is old
        self._update_status()
        if not busy:
            self._offer_interrupted_tools()

    def _turn_failed(self, error: UserFacingError) -> None:
        self._stop_retry_countdown()
        self.banner.show_error(error, self._banner_text(error))
        self._update_status()

    def _banner_text(self, error: UserFacingError) -> str:
        """What the banner says of a failed turn: when the failed reply in the chat already gives
        the whole explanation, only its first sentence (the buttons are what the banner adds)."""
        path = self.live.conversation.path()
        metadata = path[-1].metadata if path and path[-1].status is MessageStatus.FAILED else None
        if metadata is None or metadata.error != error.message:
            return ""
        first = first_sentence(error.message)
        return "" if first == error.message else f"{first} The reply above says more."

    def _prompt_unsent(self, prompt: Message) -> None:
        """The store refused the prompt, so nothing was sent: give the user their words back.

        What they typed since goes after it rather than being replaced.
        """
        typed = self.composer.draft()
        text = prompt.text if not typed.text.strip() else f"{prompt.text}\n\n{typed.text}"
        attachments = (*prompt.images, *prompt.context, *typed.attachments)
        self.composer.set_draft(Draft(text, attachments))

    def _retry_scheduled(self, event: RetryScheduled) -> None:
        self._retry_event = event
        self._retry_left = event.delay
        self._tick_retry(initial=True)
        self._retry_timer.start()

    def _tick_retry(self, initial: bool = False) -> None:
        event = self._retry_event
        if event is None:
            return
        if not initial:
            self._retry_left -= 1
        if self._retry_left <= 0:
            self._stop_retry_countdown()
            return
        self.banner.show_info(event.describe(self._retry_left))

    def _stop_retry_countdown(self) -> None:
        self._retry_timer.stop()
        if self._retry_event is not None:
            self._retry_event = None
            if self.banner.error is None:
                self.banner.hide()

    def _session_updated(self, info: SessionInfo) -> None:
        old_title = self._info.display_title
        self._info = info
        if info.display_title != old_title:
            self.titleChanged.emit(info.display_title)
        self.context_strip.show_configured(info.context)
        self._refresh_models()

    def update_info(self, info: SessionInfo) -> None:
        """The sidebar heard about a change first (e.g. a rename): follow it."""
        if info.id == self.session_id:
            self._session_updated(info)

    def _message_finished(self, message_id: str) -> None:
        message = self.model.message(message_id)
        if message is not None and message.status is not MessageStatus.STREAMING:
            self.replyFinished.emit()
        self._history_changed()

    def _history_changed(self, *_: Any) -> None:
        self.composer.set_history_chars(self.live.conversation.tree.path_text_length())

    # -- the banner's buttons --------------------------------------------------------------------

    def _bridge_message(self, message: UserMessage) -> None:
        if message.session_id == self.session_id and message.level is not MessageLevel.INFO:
            self._show_local_error(message.text, ())

    def _show_local_error(self, text: str, actions: tuple[ErrorAction, ...]) -> None:
        self.banner.show_error(UserFacingError("local", text, actions))

    def _banner_action(self, action: ErrorAction) -> None:
        if action is ErrorAction.RETRY:
            self.retry()
            self._focus_composer_after_answer()
        elif action is ErrorAction.ADD_KEY:
            self.settingsRequested.emit(self._info.provider or "providers")
        elif action is ErrorAction.SETTINGS:
            self.settingsRequested.emit("providers")
        elif action is ErrorAction.SET_CONTEXT_WINDOW:
            self.settingsRequested.emit("models")
        elif action is ErrorAction.PICK_MODEL:
            self.banner.dismiss()
            self.composer.model_picker.setFocus()
            self.composer.model_picker.showPopup()
        elif action is ErrorAction.COMPACT:
            self.compact()
        elif action is ErrorAction.NEW_SESSION:
            self.newSessionRequested.emit()
        elif action is ErrorAction.RERUN_TOOLS:
            self.rerun_interrupted_tools()
        elif action is ErrorAction.SKIP_TOOLS:
            self.skip_interrupted_tools()

    # -- tool calls a crash stopped --------------------------------------------------------------

    def _offer_interrupted_tools(self) -> None:
        """After a crash while tools ran, say so and offer to run them again or skip them.

        Shown when the chat opens and whenever it is ready again; nothing runs by itself,
        since a tool may have done half its work (a write, a command) before the crash.
        """
        if self._busy:
            return
        stopped = self.engine.interrupted_tools(self.session_id)
        shown = self.banner.error is not None and self.banner.error.kind == INTERRUPTED_TOOLS_KIND
        if stopped is None:
            if shown:
                self.banner.dismiss()
            return
        names = ", ".join(dict.fromkeys(self._tool_name(c.name) for c in stopped.calls))
        unsure = [self._tool_name(n) for n in self.engine.interrupted_tools_unsure(self.session_id)]
        if unsure:  # its work goes on elsewhere: a second run may do it twice
            works = "it works" if len(unsure) == 1 else "they work"
            text = (
                f"Threadline stopped while {names} ran. It cannot tell whether {', '.join(unsure)} "
                f"stopped too: {works} outside Threadline and may have finished. Check before you run "
                "it again, or skip and the model is told the call was interrupted."
            )
        else:
            text = (
                f"Threadline stopped while {names} ran, so {'it' if len(stopped.calls) == 1 else 'they'} "
                "did not finish. Run again, or skip and the model is told the call was interrupted."
            )
        self.banner.show_error(
            UserFacingError(INTERRUPTED_TOOLS_KIND, text, (ErrorAction.RERUN_TOOLS, ErrorAction.SKIP_TOOLS))
        )

    def rerun_interrupted_tools(self) -> None:
        self.banner.dismiss()
        try:
            self.engine.rerun_interrupted_tools(self.session_id)
        except (EngineError, TreeError) as err:
            self._show_local_error(f"Could not run the tools again: {describe(err)}", ())

    def skip_interrupted_tools(self) -> None:
        self.banner.dismiss()
        spawn(
            self.engine.skip_interrupted_tools(self.session_id),
            on_done=lambda _: self._offer_interrupted_tools(),
            on_error=lambda err: self._show_local_error(f"Could not skip the tools: {describe(err)}", ()),
        )

    def edit_context(self) -> ContextDialog:
        """Open the dialog that edits this session's own sticky context (modeless; returned for tests)."""
        from threadline.ui.chat.context_dialog import ContextDialog  # with its editor, only when asked for

        dialog = ContextDialog(self.engine, self.session_id, self._info.context, self.live.last_context, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        dialog.open()
        return dialog

    @property
    def compacting(self) -> bool:
        return self._compacting

    def show_control_error(self, text: str) -> None:
        """A conversation control (clear, tangent, checkpoint) failed: the banner says why."""
        self._show_local_error(text, ())

    def show_status(self, text: str) -> None:
        self.statusChanged.emit(text)

    def compact(
        self, instructions: str = "", *, keep_turns: int = 0, finished: Callable[[bool], None] | None = None
    ) -> None:
        """Summarise the whole conversation so far, so the next message starts from the summary.

        ``/compact`` passes the user's ``instructions``, keeps the last turns and is told
        through ``finished`` whether a summary was made.

        The banner offers this when the conversation no longer fits the model's context
        window; there the latest turn is the one that did not fit, so nothing is kept
        verbatim. While the summary is requested the banner says so and sending is held;
        afterwards the summary shows in the conversation, or the banner shows why not
        (the engine's ``TurnFailed``).
        """
        if self._compacting:
            return
        self._compacting = True
        self.banner.show_info(COMPACTING_TEXT)
        self._update_held()

        def done(summary: Message | None) -> None:
            self._compacting = False
            self._update_held()
            if summary is not None:
                self.banner.dismiss()
                self.view.scroll_to_bottom()
                self.statusChanged.emit("Earlier messages were summarised; you can continue the chat.")
            elif self.banner.error is None:  # stopped before any answer: no error to show
                self.banner.dismiss()
            if finished is not None:
                finished(summary is not None)

        def failed(err: BaseException) -> None:
            self._compacting = False
            self._update_held()
            self._show_local_error(f"Could not compact the conversation: {describe(err)}", ())
            if finished is not None:
                finished(False)

        spawn(
            self.engine.compact(self.session_id, instructions, keep_turns=keep_turns),
            on_done=done,
            on_error=failed,
        )

    def _update_held(self) -> None:
        """Sending waits while the turn's writes are retried or a summary is being written."""
        self.composer.set_held("Saving…" if self._saving else COMPACTING_TEXT if self._compacting else "")
        self._update_status()

    # -- models -------------------------------------------------------------------------------------

    def _refresh_models(self) -> None:
        info = self._info
        current = None
        if info.model:
            current = self.catalog.find(info.provider, info.model) or ModelChoice(info.provider, info.model)
        problem = self.catalog.problem(info.provider, info.model)
        note = "" if problem else self.catalog.unlisted(info.provider, info.model)
        self.composer.set_models(
            self.catalog.choices(), current, problem=problem, loading=self.catalog.refreshing
        )
        if note:
            self.composer.model_picker.setToolTip(note)
        told = problem or note  # blocking, or a warning: either is said once, where errors are
        if told != (self._model_problem or self._model_note):
            old = self._model_problem or self._model_note
            if told:
                self._show_local_error(told, (ErrorAction.PICK_MODEL,))
            elif self.banner.error is not None and self.banner.error.message == old:
                self.banner.dismiss()
        self._model_problem, self._model_note = problem, note
        self._update_status()

    def dismiss_command_error(self) -> None:
        """A command went through: what the banner said about the last one goes, but not what
        it says about this chat's model (``/model`` itself may have just put that there)."""
        error = self.banner.error
        if error is None or error.message not in (self._model_problem, self._model_note):
            self.banner.dismiss()

    def _engine_event(self, event: ConversationEvent) -> None:
        """Events the conversation model does not relay: the save state of the turn, sticky context."""
        if isinstance(event, ContextGathered):
            self.context_strip.show_gathered(event.gathered)
        elif isinstance(event, CompareStarted) and self._compare_view is None:
            self.compare_view.catch_up(event)  # built now: it subscribes after this event was sent
        elif isinstance(event, MessagesRemoved | MessagesRestored):
            self.undo_bar.on_event(event)
        elif isinstance(event, SessionBusyElsewhere):
            self.busy_elsewhere.on_event(event)
            self.waiting_send.on_event(event)
        elif isinstance(event, ChangesReceiving):
            self.busy_elsewhere.on_changes(event)
        elif isinstance(event, SaveStateChanged):
            self._saving = event.saving
            self._update_held()
            if event.error is not None:
                self._save_error = event.error
                self.banner.show_error(event.error)
            elif self._save_error is not None:  # saved again: why it was not goes too (if still shown)
                if self.banner.error is self._save_error:
                    self.banner.dismiss()
                self._save_error = None
            self._update_status()

    def _model_chosen(self, choice: ModelChoice) -> None:
        spawn(
            self.engine.sessions.set_session_model(self.session_id, choice.provider, choice.model),
            on_error=lambda err: self._show_local_error(f"Could not change the model: {describe(err)}", ()),
        )

    # -- status ---------------------------------------------------------------------------------------

    def _update_status(self) -> None:
        info = self._info
        parts = []
        if self._model_problem:
            parts.append(self._model_problem)
        elif info.model:
            parts.append(f"{info.model} ({info.provider})" if info.provider else info.model)
            if self._model_note:
                parts.append(f"not in {info.provider}'s model list")
        else:
            parts.append("No model chosen")
        if self.agent.agent_id != DEFAULT_AGENT_ID and self.agent.agent_name:
            parts.append(f"Agent: {self.agent.agent_name}")
        if self._saving:
            parts.append("Saving…")
        if self._compacting:
            parts.append(COMPACTING_TEXT)
        state = self.live.conversation.state
        if state is TurnState.STREAMING:
            parts.append("Replying…")
        elif state is TurnState.AWAITING_APPROVAL or self._approval_wait is not None:
            parts.append("Waiting for your approval")
        elif state is TurnState.RUNNING_TOOLS:
            parts.append("Running tools…")
        elif state is TurnState.COMPARING:
            parts.append("Comparing replies…")
        elif state is TurnState.FAILED:
            parts.append("The last reply failed")
        text = "  ·  ".join(parts)
        if text != self._status:
            self._status = text
            self.statusChanged.emit(text)

    def focus_composer(self) -> None:
        self.composer.focus_input()

    def _type_into_composer(self, event: QKeyEvent) -> None:
        """Text typed in the conversation after a click there: it was meant for the message box."""
        edit = self.composer.edit
        if edit.isEnabled() and not edit.isReadOnly():
            self.composer.focus_input()
            QApplication.sendEvent(edit, event)

    def scroll_to_message(self, message_id: str) -> bool:
        return self.view.scroll_to_message(message_id)
