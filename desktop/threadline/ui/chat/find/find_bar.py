"""Find in a chat: the bar that Ctrl+F opens over a tab's conversation.

The matches come from the messages' data (``core.find_text``), not from what is painted:
the view draws only the rows on screen, while a find has to count every match of the
conversation's path — including those in collapsed tool calls, tool output and thinking — and answer
within a keystroke on a 10,000-message chat. The view is then asked to paint every match
it shows (``ChatView.text_highlights``), the current one in a stronger colour, to open the
tool box, thinking block or compaction summary card the current match is in, and to scroll
it into view.

Keys: Enter / F3 go to the next match, Shift+Enter / Shift+F3 to the previous one, Esc
closes the bar and puts the focus back in the composer. The count ("3 of 17", "No
matches") is read out to screen readers as it changes. While a reply streams in, the
search runs again at most every ``REFRESH_MS`` and keeps the current match.

A long chat's Markdown is made searchable a slice at a time (``find_shown_text``): first
the rows on screen and about two screens above them (what the user just scrolled past — a
chat opens at its end, so that is where a remembered word usually is), then from the view
down to the end, then upward from above the view, nearest first (``find_order``).
Until it is all made, the texts made so far are searched after each slice, and the match
to show is shown as soon as it is known ("1 of 3+ · searching…"; ``match_to_show``); when
every text is made, the whole chat is searched, staying on that match, and the count is
exact ("2 of 17"). Meanwhile Enter / Shift+Enter step through the matches found so far, in
the chat's order, and stop at either end (what lies past them is not known yet).

The bar floats over the top right corner of the chat, like a browser's, so opening it does
not move the conversation.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QKeyEvent,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from threadline.core.find_text import TEXT_PART, FindIndex, Match, find_matches, is_thinking_part
from threadline.core.messages import Message, MessageKind
from threadline.ui.chat.find.find_keys import install_find_keys
from threadline.ui.chat.find.find_order import (
    EarlySearch,
    ViewRows,
    match_to_show,
    preparation_order,
    search_rows,
)
from threadline.ui.chat.find.find_shown_text import ShownTexts
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.context_marks import summary_key
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.chat.view.markdown import COPY_CODE_SCHEME, UNSEARCHED_TITLE
from threadline.ui.chat.view.message_html import TOGGLE_SCHEME
from threadline.ui.chat.view.table_tokens import OPEN_TABLE_SCHEME
from threadline.ui.common.announce import announce
from threadline.ui.common.theme import LIGHT, ThemeColors

MAX_MATCHES = 10_000
"""Matches counted at most ("10,000+"): nobody steps through more, and counting costs."""
TYPING_MS = 40
"""Typing pauses this long before a search (a key repeat does not search per key)."""
REFRESH_MS = 250
"""While text streams in, the search runs again at most this often."""
OVERLAY_MARGIN = 10
PREPARE_SLICE_MS = 8
"""A long chat's Markdown is made searchable this long at a time between frames."""
PREPARE_AT_ONCE = 50
"""Up to this many messages are made searchable at once (a streaming reply, a short chat)."""


@dataclass(frozen=True, slots=True)
class MatchColours:
    """All matches get a soft marker colour; the current one a strong one."""

    match: QColor
    current: QColor

    @classmethod
    def of(cls, c: ThemeColors) -> MatchColours:
        if c.dark:
            return cls(QColor("#6b5514"), QColor("#c26a06"))
        return cls(QColor("#fde68a"), QColor("#f59e0b"))


SUMMARY_SUFFIX = summary_key("")
"""A compaction summary's header link ends so; its text follows the header."""
CHROME_SCHEMES = (COPY_CODE_SCHEME + ":", OPEN_TABLE_SCHEME + ":")
"""Links the view adds around a message's text ("Copy", "⤢ Open table"): not searched."""


class MatchHighlighter:
    """What the view paints over a document: every occurrence of the query in it, and the current
    match distinctly. Occurrences are looked up in the rendered document (what is painted),
    cached per document revision, and only for rows the view paints.

    Only text the count includes is highlighted (``core.find_text`` searches the same text
    through ``find_shown_text``): what the view adds around a message — a box's header, a
    code box's language and "Copy", "⤢ Open table", text marked ``UNSEARCHED_TITLE`` — is
    skipped, so the n-th match counted is the n-th highlighted.
    """

    def __init__(self) -> None:
        self.query = ""
        self.case_sensitive = False
        self.current: tuple[str, int] | None = None
        """(message id, index of the current match among the document's occurrences)."""
        self.colours = MatchColours.of(LIGHT)
        self._found: dict[tuple[int, int, int], list[QTextCursor]] = {}

    def reset(self, query: str, case_sensitive: bool) -> None:
        if (query, case_sensitive) != (self.query, self.case_sensitive):
            self._found.clear()
        self.query, self.case_sensitive = query, case_sensitive

    def occurrences(self, doc: QTextDocument) -> list[QTextCursor]:
        """The query's occurrences in ``doc`` (cached while the document is unchanged)."""
        key = (id(doc), doc.revision(), doc.characterCount())
        found = self._found.get(key)
        if found is None:
            if len(self._found) > 64:
                self._found.clear()
            found = []
            flags = (
                QTextDocument.FindFlag.FindCaseSensitively
                if self.case_sensitive
                else QTextDocument.FindFlag(0)
            )
            chrome: list[tuple[int, int]] | None = None
            cursor = doc.find(self.query, 0, flags)
            while not cursor.isNull() and len(found) < MAX_MATCHES:
                if chrome is None:
                    chrome = _chrome(doc)
                if not _overlaps(chrome, cursor.selectionStart(), cursor.selectionEnd()):
                    found.append(cursor)
                cursor = doc.find(self.query, cursor, flags)
            self._found[key] = found
        return found

    def __call__(self, message_id: str, doc: QTextDocument) -> list[QAbstractTextDocumentLayout.Selection]:
        if not self.query:
            return []
        current = self.current[1] if self.current and self.current[0] == message_id else -1
        out = []
        for i, cursor in enumerate(self.occurrences(doc)):
            selection = QAbstractTextDocumentLayout.Selection()
            selection.cursor = cursor
            fmt = QTextCharFormat()
            fmt.setBackground(self.colours.current if i == current else self.colours.match)
            selection.format = fmt
            out.append(selection)
        return out


def _chrome(doc: QTextDocument) -> list[tuple[int, int]]:
    """The (start, end) ranges of ``doc`` that are not a message's searched text, in order:
    each block holding a box's header link, the view's own links, and marked text."""
    ranges: list[tuple[int, int]] = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            char_format = fragment.charFormat()
            href = char_format.anchorHref()
            if href.startswith(TOGGLE_SCHEME + ":"):
                ranges.append((block.position(), block.position() + block.length()))
                break
            if href.startswith(CHROME_SCHEMES) or char_format.toolTip() == UNSEARCHED_TITLE:
                ranges.append((fragment.position(), fragment.position() + fragment.length()))
            it += 1
        block = block.next()
    return ranges


def _overlaps(ranges: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(a < end and start < b for a, b in ranges)


def _region_start(doc: QTextDocument, part: str) -> tuple[int, int]:
    """Where a part of a message is in its document: (first position, end position).

    A reply's thinking block comes first: a table whose header block holds the link
    ``toggle:<message id>:thinking``, its reasoning below the header, inside the table. The
    text follows the thinking block and ends at the first tool box; a tool box's body
    follows the block of its header, the link ``toggle:<key>``.
    """
    end = doc.characterCount()
    text_start = 0
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            href = it.fragment().charFormat().anchorHref()
            if href.startswith(TOGGLE_SCHEME + ":"):
                key = href[len(TOGGLE_SCHEME) + 1 :]
                if is_thinking_part(key):
                    table = QTextCursor(block).currentTable()
                    table_end = table.lastPosition() + 1 if table is not None else block.position()
                    if part == key:
                        return block.position() + block.length(), table_end
                    text_start = table_end
                elif key.endswith(SUMMARY_SUFFIX):
                    text_start = block.position() + block.length()  # a summary's text follows its header
                elif part == TEXT_PART:
                    return text_start, block.position()
                elif key == part:
                    return block.position() + block.length(), end
            it += 1
        block = block.next()
    return (text_start, end) if part == TEXT_PART else (0, end)


class FindBar(QFrame):
    """The find bar of one chat tab (made hidden; :meth:`open` shows it)."""

    closed = Signal()

    def __init__(self, view: ChatView, model: ConversationModel) -> None:
        super().__init__(view)
        self.setObjectName("FindBar")
        self.setAccessibleName("Find in chat")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self._view = view
        self._model = model
        self._index = FindIndex()
        self.shown_texts = ShownTexts()
        """This chat's messages as their documents show them, made once each: kept with the
        bar, so they go when the tab closes."""
        self._matches: list[Match] = []
        self._messages: list[Message] = []
        self._current = -1
        self._more = False
        self._path: tuple[list[Message], list[int]] | None = None
        self._unprepared: list[Message] | None = None
        """Messages whose shown text is still to be made (``None``: not looked at since the
        conversation last changed)."""
        self._waiting: Callable[[], None] | None = None
        """What runs once every text is made: ``_search_made``, or ``_search_again`` (streaming)."""
        self._early: EarlySearch | None = None
        """While texts are made for the query: the search of those made so far (the matches
        are the ones it found; the count says "searching…")."""
        self.highlighter = MatchHighlighter()

        self.edit = QLineEdit()
        self.edit.setObjectName("FindText")
        self.edit.setPlaceholderText("Find in chat")
        self.edit.setAccessibleName("Find in chat")
        self.edit.setClearButtonEnabled(True)
        self.edit.setMinimumWidth(220)
        self.edit.installEventFilter(self)
        self.count = QLabel("")
        self.count.setObjectName("FindCount")
        self.count.setMinimumWidth(92)
        self.count.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.case = self._button("Aa", "Match case", checkable=True)
        self.previous_button = self._button("↑", "Previous match (Shift+Enter)")
        self.next_button = self._button("↓", "Next match (Enter)")
        self.close_button = self._button("✕", "Close (Esc)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 5, 5, 5)
        layout.setSpacing(4)
        for widget in (
            self.edit,
            self.count,
            self.case,
            self.previous_button,
            self.next_button,
            self.close_button,
        ):
            layout.addWidget(widget)

        self._typing = QTimer(self)
        self._typing.setSingleShot(True)
        self._typing.setInterval(TYPING_MS)
        self._typing.timeout.connect(self.search)
        self._refresh = QTimer(self)
        self._refresh.setSingleShot(True)
        self._refresh.setInterval(REFRESH_MS)
        self._refresh.timeout.connect(self._search_again)
        self._preparing = QTimer(self)
        self._preparing.setInterval(0)
        self._preparing.timeout.connect(self._prepare_some)
        self.edit.textChanged.connect(lambda _text: self._typing.start())
        self.case.toggled.connect(lambda _on: self.search())
        self.previous_button.clicked.connect(self.previous)
        self.next_button.clicked.connect(self.next)
        self.close_button.clicked.connect(self.close_bar)
        for signal in (model.dataChanged, model.rowsInserted, model.rowsRemoved, model.modelReset):
            signal.connect(self._conversation_changed)
        view.installEventFilter(self)
        self.set_colors(view.colors)
        self.hide()

    def _button(self, text: str, tip: str, *, checkable: bool = False) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip.split(" (")[0])
        button.setCheckable(checkable)
        button.setAutoRaise(True)
        button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        return button

    def set_colors(self, c: ThemeColors) -> None:
        self.highlighter.colours = MatchColours.of(c)
        self.setStyleSheet(
            f"QFrame#FindBar {{ background: {c.surface}; border: 1px solid {c.border}; border-radius: 8px; }}"
            f"QLabel#FindCount {{ color: {c.muted}; padding: 0 6px; }}"
            f"QLineEdit#FindText {{ background: {c.base}; color: {c.text}; border: 1px solid {c.border};"
            f" border-radius: 5px; padding: 3px 6px; }}"
            f"QToolButton {{ color: {c.text}; min-width: 24px; min-height: 24px; border-radius: 5px; }}"
            f"QToolButton:hover {{ background: {c.hover}; }}"
            f"QToolButton:checked {{ background: {c.selection}; }}"
        )
        self._view.viewport().update()

    # -- opening and closing -------------------------------------------------------------

    def open(self) -> None:
        """Show the bar with its text selected (Ctrl+F again selects it for a new query)."""
        self._place()
        self.show()
        self.raise_()
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.edit.selectAll()
        self._view.text_highlights = self.highlighter
        if self.edit.text():
            self.search()
        else:
            self.warm_up()

    def close_bar(self) -> None:
        """Hide the bar and its highlights; the tab puts the focus back in the composer."""
        self._typing.stop()
        self._refresh.stop()
        self._waiting = None
        self._early = None
        self._view.text_highlights = None
        self.hide()
        self._view.viewport().update()
        self.closed.emit()

    def _place(self) -> None:
        self.adjustSize()
        viewport = self._view.viewport().geometry()
        width = min(self.sizeHint().width(), max(200, viewport.width() - 2 * OVERLAY_MARGIN))
        self.setGeometry(
            viewport.right() - width - OVERLAY_MARGIN,
            viewport.top() + OVERLAY_MARGIN,
            width,
            self.sizeHint().height(),
        )

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self._view and event.type() == QEvent.Type.Resize and self.isVisible():
            self._place()
        if obj is self.edit and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return self._key(event)
        return super().eventFilter(obj, event)

    def _key(self, event: QKeyEvent) -> bool:
        key, shift = event.key(), bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_F3):
            if self._typing.isActive():
                self._typing.stop()
                self.search()
            self.previous() if shift else self.next()
            return True
        if key == Qt.Key.Key_Escape:
            self.close_bar()
            return True
        return False

    # -- searching -----------------------------------------------------------------------

    def search(self) -> None:
        """Find the query in the whole conversation and go to the first match from the top of
        the view down (where a reader expects it).

        If texts are still to be made, they are made from the view's first row on, and the
        ones made are searched meanwhile (``_search_early``): the first match near the view
        shows long before the whole chat is searchable. Which match is shown first is the
        same either way (``match_to_show``)."""
        view = self._view_rows()
        if self._unprepared:
            self._unprepared = None  # still to be made: from where the view is now
        if not self._prepared(view):
            self._waiting = self._search_made
            self._begin_early(view)
            return
        self._early = None
        self._run()
        count = len(self._messages)
        shown = match_to_show(self._matches, view, 0, count, count)
        self._go(-1 if shown is None else shown)

    def _search_made(self) -> None:
        """Every text is made: search it all, staying on the match the early search showed
        (its place in the count may change: matches above it are counted now)."""
        if self._early is not None and self.current_match is not None:
            self._early = None
            self._search_again()
        else:
            self.search()

    def _begin_early(self, view: ViewRows) -> None:
        """Search the texts made so far, around the view (see ``EarlySearch``)."""
        messages, _versions = self._snapshot()
        self._early = EarlySearch.of(messages, self.shown_texts, view)
        self._messages = messages
        self._matches, self._current, self._more = [], -1, False
        self.highlighter.reset(self.edit.text(), self.case.isChecked())
        self._view.text_highlights = self.highlighter
        self._search_early()
        self._show_count()

    def _search_early(self) -> None:
        """Search the rows made since the last time and, if nothing is shown yet, go to the
        match to show once it is known (``match_to_show``)."""
        self._extend_early()
        early = self._early
        if early is None or self._current >= 0 or not self._matches:
            return
        shown = match_to_show(self._matches, early.view, early.low, early.high, len(early.messages))
        if shown is not None:
            self._go(shown)

    def _extend_early(self) -> None:
        """Search the rows made since the last time: matches above the run searched go
        before those found so far (the current one stays the same match), those below after."""
        early = self._early
        if early is None or self._path is None or self._path[0] is not early.messages:
            return  # the conversation changed: the search when all is made counts it
        above, below = early.ready_rows()
        query, case_sensitive = self.edit.text(), self.case.isChecked()
        if not query:
            return
        for rows, before in ((above, True), (below, False)):
            room = MAX_MATCHES + 1 - len(self._matches)
            if not rows or room <= 0:
                continue
            found = search_rows(
                early.messages, early.shown, rows, query, case_sensitive=case_sensitive, limit=room
            )
            if before:
                self._matches[:0] = found
                if self._current >= 0:
                    self._current += len(found)
            else:
                self._matches.extend(found)
        if len(self._matches) > MAX_MATCHES:
            self._more = True
            del self._matches[MAX_MATCHES:]
            self._current = min(self._current, MAX_MATCHES - 1)

    def _search_again(self) -> None:
        """The conversation changed: count again, staying on the current match."""
        if not self.isVisible() or not self.edit.text():
            return
        if not self._prepared():
            if self._waiting is None:
                self._waiting = self._search_again
            return
        keep = self._matches[self._current] if 0 <= self._current < len(self._matches) else None
        keep_id = self._messages[keep.message_index].id if keep is not None else None
        self._run()
        index = -1
        if keep is not None and keep_id is not None:
            for i, match in enumerate(self._matches):
                same = self._messages[match.message_index].id == keep_id and match.part == keep.part
                if same and match.offset >= keep.offset:
                    index = i
                    break
        self._current = index if index >= 0 else min(self._current, len(self._matches) - 1)
        self._show_count()
        self._mark_current(scroll=False)

    def _run(self) -> None:
        query = self.edit.text()
        case_sensitive = self.case.isChecked()
        self._messages, versions = self._snapshot()
        found = find_matches(
            self._messages,
            query,
            case_sensitive=case_sensitive,
            index=self._index,
            versions=versions,
            limit=MAX_MATCHES + 1,
            shown_text=self.shown_texts,
        )
        self._more = len(found) > MAX_MATCHES
        self._matches = found[:MAX_MATCHES]
        self.highlighter.reset(query, case_sensitive)
        self._view.text_highlights = self.highlighter

    def _snapshot(self) -> tuple[list[Message], list[int]]:
        """The path's messages and their revisions, read from the model once per change of it
        (reading 10,000 rows costs more than searching them)."""
        if self._path is None:
            model = self._model
            messages = [m for m in (model.message_at(r) for r in range(model.rowCount())) if m is not None]
            self._path = (messages, [model.revision(m.id) for m in messages])
            self._unprepared = None
        return self._path

    def _prepared(self, view: ViewRows | None = None) -> bool:
        """Whether every message's shown text is made; if not, start making it between frames
        (a long chat's Markdown takes seconds to parse: the GUI must not wait for all of it),
        around ``view`` (by default where the view is) in ``ViewRows.order``."""
        messages, _versions = self._snapshot()
        if self._unprepared is None:
            around = self._view_rows() if view is None else view
            self._unprepared = preparation_order(messages, self.shown_texts, around)
            if len(self._unprepared) <= PREPARE_AT_ONCE:
                for message in self._unprepared:
                    self.shown_texts(message)
                self._unprepared = []
        if self._unprepared and not self._preparing.isActive():
            self._preparing.start()
        return not self._unprepared

    def _prepare_some(self) -> None:
        deadline = time.perf_counter() + PREPARE_SLICE_MS / 1000
        pending = self._unprepared or []
        while pending and time.perf_counter() < deadline:
            self.shown_texts(pending.pop())
        if pending:
            if self._early is not None and self._current < 0 and self.isVisible():
                self._search_early()
            return
        self._preparing.stop()
        waiting, self._waiting = self._waiting, None
        if waiting is not None and self.isVisible():
            waiting()
        else:
            self.warm_up()

    @property
    def preparing(self) -> bool:
        """Whether the bar is still making the chat's text searchable (the count says so)."""
        return self._preparing.isActive()

    def warm_up(self) -> None:
        """Read the messages and build the search text now, so the first key is fast."""
        if not self._prepared():
            return  # built when the texts are ready
        messages, versions = self._snapshot()
        self._index.corpus(messages, versions, self.case.isChecked(), self.shown_texts)

    def _conversation_changed(self, *_args: object) -> None:
        self._path = None
        if self.isVisible() and self.edit.text() and not self._refresh.isActive():
            self._refresh.start()

    def _view_rows(self) -> ViewRows:
        """The rows on screen now (and the two screens above them), in the path's rows."""
        messages, _versions = self._snapshot()
        rows = [r for r in (self._model.row_of(i) for i in self._view.visible_message_ids()) if r >= 0]
        top, end = (min(rows), max(rows) + 1) if rows else (0, 1)
        return ViewRows.around(top, end, len(messages))

    # -- stepping ------------------------------------------------------------------------

    def next(self) -> None:
        """Go to the next match (after the last, the first; while the chat is still being
        searched, the next one found so far, stopping at the last)."""
        if self._early is not None:
            self._extend_early()
            if self._matches:
                self._go(min(self._current + 1, len(self._matches) - 1))
        elif self._matches:
            self._go((self._current + 1) % len(self._matches))

    def previous(self) -> None:
        """Go to the previous match (before the first, the last; while the chat is still being
        searched, stopping at the first found: those above it are not known yet)."""
        if self._early is not None:
            self._extend_early()  # matches found above since: the current one's index moved
            if self._matches:
                self._go(max(self._current - 1, 0))
        elif self._matches:
            self._go((self._current - 1) % len(self._matches))

    @property
    def current_match(self) -> Match | None:
        return self._matches[self._current] if 0 <= self._current < len(self._matches) else None

    @property
    def match_count(self) -> int:
        return len(self._matches)

    def _go(self, index: int) -> None:
        self._current = index
        self._show_count()
        self._mark_current(scroll=True)

    def _show_count(self) -> None:
        if not self.edit.text():
            text = ""
        elif self._early is not None and self._current < 0:
            text = "Searching…"
        elif not self._matches:
            text = "No matches"
        else:
            more = self._more or self._early is not None
            text = f"{self._current + 1:,} of {len(self._matches):,}{'+' if more else ''}"
            if self._early is not None:
                text += " · searching…"
        if text != self.count.text():
            self.count.setText(text)
            announce(self.count, text)
            if self.isVisible() and self.sizeHint().width() != self.width():
                self._place()  # "· searching…" widens the bar; it narrows again after

    def _mark_current(self, *, scroll: bool) -> None:
        """Paint the current match distinctly (opening its tool box, thinking block or
        summary card) and scroll to it."""
        match = self.current_match
        self.highlighter.current = None
        if match is None:
            self._view.viewport().update()
            return
        message = self._messages[match.message_index]
        if is_thinking_part(match.part):
            self._view.open_thinking(message)
        elif match.part != TEXT_PART:
            self._view.open_tool_box(message.id, match.part)
        elif message.kind is MessageKind.SUMMARY:
            self._view.open_tool_box(message.id, summary_key(message.id))  # same expanded set as a tool box
        doc = self._view.rendered_document(message.id)
        if doc is None:
            return
        ordinal = sum(
            1
            for m in self._matches[: self._current]
            if m.message_index == match.message_index and m.part == match.part
        )
        start, end = _region_start(doc, match.part)
        in_part = [
            i for i, c in enumerate(self.highlighter.occurrences(doc)) if start <= c.selectionStart() < end
        ]
        if in_part:
            doc_index = in_part[min(ordinal, len(in_part) - 1)]
            self.highlighter.current = (message.id, doc_index)
            if scroll:
                cursor = self.highlighter.occurrences(doc)[doc_index]
                top, bottom = _cursor_span(doc, cursor)
                self._view.reveal_text(message.id, top, bottom, clear_top=self.geometry().bottom() + 4)
                left, right = _cursor_x(doc, cursor)
                self._view.tables.reveal(message.id, doc, left, right, (top + bottom) / 2)
        elif scroll:
            self._view.bring_into_view(message.id)
        self._view.viewport().update()


def _cursor_x(doc: QTextDocument, cursor: QTextCursor) -> tuple[float, float]:
    """Left and right of a match in document coordinates (a wide table may need scrolling to it)."""
    block = doc.findBlock(cursor.selectionStart())
    left = doc.documentLayout().blockBoundingRect(block).left()
    layout = block.layout()
    start, end = cursor.selectionStart() - block.position(), cursor.selectionEnd() - block.position()
    line = layout.lineForTextPosition(start) if layout else None
    if line is None or not line.isValid():
        return left, left
    # PySide returns (x, position) here, though its stubs say a float.
    x0: Any = line.cursorToX(start)
    x1: Any = line.cursorToX(end)
    return left + float(x0[0]), left + float(x1[0])


def _cursor_span(doc: QTextDocument, cursor: QTextCursor) -> tuple[float, float]:
    """Top and bottom of the line a match is on, in document coordinates."""
    block = doc.findBlock(cursor.selectionStart())
    rect = doc.documentLayout().blockBoundingRect(block)
    layout = block.layout()
    line = layout.lineForTextPosition(cursor.selectionStart() - block.position()) if layout else None
    if line is None or not line.isValid():
        return rect.top(), rect.bottom()
    return rect.top() + line.y(), rect.top() + line.y() + line.height()


def install_find(
    tab: QWidget, view: ChatView, model: ConversationModel, focus_back: Callable[[], None]
) -> FindBar:
    """A find bar over ``view`` with the tab's keys: Ctrl+F opens it, F3 / Shift+F3 step."""
    bar = FindBar(view, model)
    bar.closed.connect(focus_back)
    install_find_keys(tab, lambda: bar)
    return bar
