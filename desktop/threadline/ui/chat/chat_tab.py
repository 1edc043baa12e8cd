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

The tab is a composite: the draft, the approval bar, compaction, the retry countdown,
the offer after a crash, the model's status and a message's actions are helpers in the
sub-rooms, each typed against a small ``Protocol`` of what it needs from the tab (they
never import it; docs/ui-layout.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QResizeEvent
from PySide6.QtWidgets import QApplication, QHBoxLayout, QSplitter, QVBoxLayout, QWidget

from threadline.core.messages import ContextFile, ImageBlock, Message, MessageStatus, ToolCall
from threadline.core.session import SessionInfo
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
    SaveStateChanged,
    SessionBusyElsewhere,
    UserFacingError,
)
from threadline.ui.chat.changes.changes_wiring import FileChangesWiring
from threadline.ui.chat.composer.agent_picker import AgentBinding
from threadline.ui.chat.composer.attachment_tray import FileDropTarget
from threadline.ui.chat.composer.busy_elsewhere_strip import BusyElsewhereStrip
from threadline.ui.chat.composer.compare_picker import CompareAgents
from threadline.ui.chat.composer.composer import Composer
from threadline.ui.chat.composer.draft_keeper import DraftKeeper
from threadline.ui.chat.composer.meter_feed import MeterFeed
from threadline.ui.chat.composer.model_catalog import ModelCatalog, ModelChoice
from threadline.ui.chat.composer.model_status import ModelStatus, status_line
from threadline.ui.chat.composer.waiting_send import WaitingSend
from threadline.ui.chat.controls.approval_wiring import ApprovalWiring
from threadline.ui.chat.controls.compaction import COMPACTING_TEXT, Compaction
from threadline.ui.chat.controls.context_strip import ContextStrip
from threadline.ui.chat.controls.conversation_controls import ConversationControls
from threadline.ui.chat.controls.interrupted_tools import InterruptedTools
from threadline.ui.chat.controls.message_commands import MessageCommands
from threadline.ui.chat.controls.retry_countdown import RetryCountdown
from threadline.ui.chat.find.find_keys import install_find_keys
from threadline.ui.chat.knowledge_notice import KnowledgeNotices
from threadline.ui.chat.mcp.chat_mcp import ChatMcp
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.chat.view.empty_hint import empty_hint
from threadline.ui.chat.view.message_undo import MessageUndoBar
from threadline.ui.common.error_banner import ErrorBanner, first_sentence
from threadline.ui.common.focus_chain import move_before_in_focus_chain
from threadline.ui.common.message_bridge import MessageBridge, MessageLevel, UserMessage
from threadline.ui.common.tasks import describe, spawn
from threadline.ui.common.theme import ThemeColors

if TYPE_CHECKING:  # built when first asked for, not by every open
    from threadline.ui.approval.approval_bar import ApprovalBar
    from threadline.ui.chat.branch_map.branch_map_panel import BranchMapPanel
    from threadline.ui.chat.compare.compare_view import CompareView
    from threadline.ui.chat.composer.slash_completer import SlashCompleter
    from threadline.ui.chat.controls.context_dialog import ContextDialog
    from threadline.ui.chat.controls.slash_runner import SlashCommandRunner
    from threadline.ui.chat.find.find_bar import FindBar

log = logging.getLogger("threadline.ui.chat.chat_tab")

COMPOSER_MAX_WIDTH = 820


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
        self.bridge = bridge if bridge is not None else MessageBridge(self)
        """The window's message bridge (a tab of its own without one): errors about this tab's
        session show in its banner (docs/ui-layout.md, "Telling the user")."""
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.engine = engine
        self.live = live
        self.catalog = catalog
        self._info: SessionInfo = live.info
        self._busy = not live.conversation.ready_for_input
        self._status, self._saving = "", False
        self._save_error: UserFacingError | None = None
        """Why the turn's writes are behind, while the banner may be showing it."""
        self.model_status = ModelStatus(self)
        """Whether this chat's model can be used (the banner, the picker and the status line say)."""

        self.model = ConversationModel(live, self)
        self.view = ChatView()
        self.view.setAccessibleName("Conversation")
        self.view.set_colors(colors)
        self.view.set_tool_namer(self.tool_name)
        self.view.setModel(self.model)
        self.banner = ErrorBanner()
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
        self.busy_elsewhere = BusyElsewhereStrip(lambda: engine.turns.stop_elsewhere(live.session_id))
        col.addWidget(self.busy_elsewhere)
        self.waiting_send = WaitingSend(
            self.busy_elsewhere,
            lambda: engine.turns.busy_elsewhere(live.session_id),
            lambda: engine.turns.catch_up(live.session_id),
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
        self.retry_countdown = RetryCountdown(self.banner, self)
        self.model.retryScheduled.connect(self.retry_countdown.scheduled)
        self.model.promptUnsent.connect(self._prompt_unsent)
        self.model.sessionUpdated.connect(self._session_updated)
        self.model.messageFinished.connect(self._message_finished)
        self.model.rowsInserted.connect(self._history_changed)
        self.model.rowsRemoved.connect(self._history_changed)
        self.message_commands = MessageCommands(self)
        self.view.actionTriggered.connect(self.message_commands.run)
        self.composer.submitted.connect(self._submit)
        self.composer.stopRequested.connect(self.stop)
        self.composer.modelChosen.connect(self._model_chosen)
        self.composer.attachmentRefused.connect(lambda text: self._show_local_error(text, ()))
        self._file_drops = FileDropTarget(self.view.viewport(), self.composer.attach_paths)
        self.mcp = ChatMcp(self, self)  # MCP prompts in the "/" list, resources to attach
        self.banner.actionChosen.connect(self._banner_action)
        self.context_strip.editRequested.connect(self.edit_context)
        self.context_strip.show_configured(live.info.context)
        if live.last_context is not None:
            self.context_strip.show_gathered(live.last_context)
        self.catalog.changed.connect(self._refresh_models)
        self.agent = AgentBinding(
            engine,
            live,
            self.composer.agent_picker,
            notice=self.banner.show_info,
            parent=self,
        )
        self.agent.changed.connect(self._update_status)
        self._find_bar: FindBar | None = None  # built by the first Ctrl+F or F3 (``find_bar``)
        install_find_keys(self, lambda: self.find_bar)
        self.compare_agents = CompareAgents(engine, self.composer.compare_button)  # agents beside models
        self.meter_feed = MeterFeed(
            engine, self.session_id, self.model, self.composer.meter, self.view, lambda: self._compare_view
        )
        self.compaction, self.interrupted_tools = Compaction(self), InterruptedTools(self)
        self.knowledge_notices = KnowledgeNotices(live, self.banner.show_info, self)  # keyword-only searches
        self.controls = ConversationControls(self, colors)
        self.file_changes = FileChangesWiring(self, self)  # counts, diffs, restores (ui/chat/changes)
        layout.insertWidget(0, self.controls.tangent_banner)
        col.insertWidget(col.indexOf(self.undo_bar), self.controls.clear_notice)
        self.composer.meter.compactRequested.connect(self.controls.open_compact_dialog)
        self.drafts = DraftKeeper(engine, self.session_id, self.composer, self)
        self._unsubscribe_saves: Any = live.subscribe(self._engine_event)
        self.drafts.load()
        self.bridge.shown.connect(self._bridge_message)

        self.view.escapePressed.connect(self._escape)
        self.view.typedAhead.connect(self._type_into_composer)
        self.approvals = ApprovalWiring(self, self)
        """The approval bar (built at the first question) and the question it waits on."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._focus_moved)

        self._refresh_models()
        self._history_changed()
        self.composer.set_busy(self._busy)
        self._update_status()
        self.interrupted_tools.offer()

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
        return self.approvals.waiting

    @property
    def colors(self) -> ThemeColors:
        return self._colors

    def set_colors(self, colors: ThemeColors) -> None:
        self._colors = colors
        self.view.set_colors(colors)
        if self._find_bar is not None:
            self._find_bar.set_colors(colors)
        if self.approvals.built is not None:
            self.approvals.built.set_colors(colors)
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
            from threadline.ui.chat.controls.slash_runner import SlashCommandRunner

            runner = SlashCommandRunner(self)
            runner.run_prompt = self.mcp.run_prompt
            self._column.insertWidget(self._column.indexOf(self.composer), runner.notice)
            move_before_in_focus_chain(runner.notice, self.composer)  # Tab's place, as if built with the tab
            self._slash = runner
        return self._slash

    @property
    def slash_completer(self) -> SlashCompleter:
        """The list of commands that opens when the text starts with "/" (built on the first)."""
        if self._slash_completer is None:
            from threadline.ui.chat.composer.slash_completer import SlashCompleter

            self._slash_completer = SlashCompleter(self.composer.edit, self)
            self.mcp.serve(self._slash_completer)
        return self._slash_completer

    def _slash_typed(self) -> None:
        """Build the command list when the text first starts with "/", and show it at once
        (it follows the text itself from then on)."""
        if self._slash_completer is None and self.composer.edit.document().characterAt(0) == "/":
            self.slash_completer.follow_text()

    # -- branch map -------------------------------------------------------------------------

    @property
    def branch_map(self) -> BranchMapPanel:
        """The branch map panel beside the chat, built (hidden) the first time it is asked for:
        most chats are opened and closed without it, so its module, widgets and its
        subscription to the conversation are not paid by every open."""
        if self._branch_map is None:
            from threadline.ui.chat.branch_map.branch_map_panel import BranchMapPanel

            panel = BranchMapPanel(self.engine, self.live, self._colors)
            panel.hide()
            panel.scrollRequested.connect(self.scroll_to_message)
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

    def tool_name(self, name: str) -> str:
        """The policy name (``time/get_current_time``) of a stored call's wire name, if registered."""
        return self.engine.tools.policy_name(name)

    def close_tab(self) -> None:
        """Detach from the live conversation; the engine keeps it (and any turn) alive.

        A turn waiting for this tab's approval is stopped: nobody is left to answer it.
        """
        if self.approvals.waiting:
            self.engine.turns.cancel(self.session_id)
            self.approvals.end(cancel=True)
        self.model.detach()
        if self._compare_view is not None:
            self._compare_view.detach()
        self.agent.detach()
        if self._branch_map is not None:
            self._branch_map.detach()
        self.controls.detach()
        self.file_changes.close()
        if self._unsubscribe_saves is not None:
            self._unsubscribe_saves()
            self._unsubscribe_saves = None
        self.drafts.close()

    async def save_draft_now(self) -> None:
        """Store the draft if it changed since it was last stored (the window calls it on close)."""
        await self.drafts.save_now()

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
        if not self._info.model or self.model_status.problem:
            # Nothing is staged: the text stays in the box while the user picks a model.
            problem = self.model_status.problem or "Pick a model for this chat first."
            self._show_local_error(problem, (ErrorAction.PICK_MODEL,))
            return
        editing = self.composer.editing
        if self.busy_elsewhere.host and editing is None:
            self.waiting_send.hold()  # sent when the reply running elsewhere ends
            return
        try:
            if editing is not None:
                self.engine.turns.edit_and_resend(self.session_id, editing, text)
            elif targets := self.composer.compare_button.targets():
                self.engine.turns.send_compare(self.session_id, text, targets, images=images, context=context)
            else:
                self.engine.turns.send(self.session_id, text, images=images, context=context)
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
            self.engine.turns.pick_compare(self.session_id, reply_id),
            on_done=continued,
            tell=self,
            context="Could not continue with it",
            session_id=self.session_id,
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
            tell=self,
            context="Not saved",
            session_id=self.session_id,
        )
        return True

    def stop(self) -> None:
        if self._busy or self.approvals.waiting:
            self.engine.turns.cancel(self.session_id)

    def _escape(self) -> None:
        if self._busy or self.approvals.waiting:
            self.stop()
        elif self.composer.editing is not None:
            self.composer.end_edit()
            self.composer.edit.clear()

    def retry(self) -> None:
        self.banner.dismiss()
        try:
            self.engine.turns.retry(self.session_id)
        except Exception as err:
            self._show_local_error(f"Could not retry: {describe(err)}", ())

    # -- find -----------------------------------------------------------------------------------------

    @property
    def find_bar(self) -> FindBar:
        """The find bar over the chat, built (hidden) the first time Ctrl+F or F3 asks for it:
        most chats are never searched, so its module, widgets, style sheet and its watching of
        the conversation are not paid by every open."""
        if self._find_bar is None:
            from threadline.ui.chat.find.find_bar import FindBar

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
            from threadline.ui.chat.compare.compare_view import CompareView

            view = CompareView(self.live, self._colors)
            view.pickRequested.connect(self._continue_with)
            view.stopRequested.connect(lambda i: self.engine.turns.stop_compare_worker(self.session_id, i))
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
        it is asked for (``ApprovalWiring``)."""
        return self.approvals.bar

    def place_approval(self, bar: QWidget) -> None:
        """Put the approval bar above the context strip, where Tab found it when built with the tab."""
        self._column.insertWidget(self._column.indexOf(self.context_strip), bar)
        move_before_in_focus_chain(bar, self.context_strip)

    def approval_changed(self, waiting: bool) -> None:
        self.approvalChanged.emit(waiting)
        self._update_status()

    async def ask_approval(
        self, calls: Sequence[ToolCall], previews: Mapping[str, str | None], asker: str = ""
    ) -> list[Decision]:
        """Show the calls in the approval bar and wait for the user's answers (one per call).

        Raises ``CancelledError`` when the turn is stopped or the tab closes meanwhile.
        """
        return await self.approvals.ask(calls, previews, asker)

    def _focus_moved(self, old: QWidget | None, new: QWidget | None) -> None:
        self.approvals.focus_moved(old, new)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.approvals.resized()

    # -- per-message actions --------------------------------------------------------------------

    # -- engine events -------------------------------------------------------------------------

    def _turn_state(self, state: TurnState) -> None:
        busy = state in (
            TurnState.STREAMING,
            TurnState.AWAITING_APPROVAL,
            TurnState.RUNNING_TOOLS,
            TurnState.COMPARING,
        )
        if not busy:
            self.retry_countdown.stop()
        if busy != self._busy:
            self._busy = busy
            self.composer.set_busy(busy)
            self.busyChanged.emit(busy)
            if busy and self._slash is not None:
                self._slash.notice.hide()  # a turn began (send, Regenerate, edit resent): the note is old
        self._update_status()
        if not busy:
            self.interrupted_tools.offer()

    def _turn_failed(self, error: UserFacingError) -> None:
        self.retry_countdown.stop()
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
            self.approvals.focus_composer_after_answer()
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

    def rerun_interrupted_tools(self) -> None:
        self.interrupted_tools.rerun()

    def skip_interrupted_tools(self) -> None:
        self.interrupted_tools.skip()

    def edit_context(self) -> ContextDialog:
        """Open the dialog that edits this session's own sticky context (modeless; returned for tests)."""
        from threadline.ui.chat.controls.context_dialog import (
            ContextDialog,  # with its editor, only when asked for
        )

        dialog = ContextDialog(self.engine, self.session_id, self._info.context, self.live.last_context, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        dialog.open()
        return dialog

    @property
    def compacting(self) -> bool:
        return self.compaction.running

    def show_control_error(self, text: str) -> None:
        """A conversation control (clear, tangent, checkpoint) failed: the banner says why."""
        self._show_local_error(text, ())

    def show_status(self, text: str) -> None:
        self.statusChanged.emit(text)

    def compact(
        self, instructions: str = "", *, keep_turns: int = 0, finished: Callable[[bool], None] | None = None
    ) -> None:
        """Summarise the conversation so far (``Compaction.compact``)."""
        self.compaction.compact(instructions, keep_turns=keep_turns, finished=finished)

    def update_held(self) -> None:
        """Sending waits while the turn's writes are retried or a summary is being written."""
        self.composer.set_held(
            "Saving…" if self._saving else COMPACTING_TEXT if self.compaction.running else ""
        )
        self._update_status()

    # -- models -------------------------------------------------------------------------------------

    def _refresh_models(self) -> None:
        self.model_status.refresh()
        self._update_status()

    def request_export(self, session_ids: list[str]) -> None:
        """Ask the window for its export dialog with these chats chosen (``/export`` without a file)."""
        self.exportRequested.emit(session_ids)

    def dismiss_command_error(self) -> None:
        """A command went through: what the banner said about the last one goes, but not what
        it says about this chat's model (``/model`` itself may have just put that there)."""
        error = self.banner.error
        if error is None or not self.model_status.says(error.message):
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
        elif self.model_status.loading_changed(event):  # "Loading MODEL…" while the runtime loads it
            self._update_status()
        elif isinstance(event, SaveStateChanged):
            self._saving = event.saving
            self.update_held()
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
            tell=self,
            context="Could not change the model",
            session_id=self.session_id,
        )

    # -- status ---------------------------------------------------------------------------------------

    def _update_status(self) -> None:
        held = (("Saving…", self._saving), (COMPACTING_TEXT, self.compaction.running))
        holding = tuple(text for text, on in held if on)
        text = status_line(
            self._info,
            self.model_status,
            agent_id=self.agent.agent_id,
            agent_name=self.agent.agent_name,
            busy_with=holding,
            state=self.live.conversation.state,
            awaiting_approval=self.approvals.waiting,
        )
        if text != self._status:
            self._status = text
            self.statusChanged.emit(text)
        self.view.set_empty_hint(*empty_hint(self._info, self.agent.agent_id, self.agent.agent_name))

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
