"""What the links and the menu of a reply's Sources do in the tab (docs/knowledge.md, "In the chat").

The view paints the Sources box and the citations (``view/source_list.py``) and hands each
``source:`` link, and the "Sources…" command (S, the message's menu), to this helper:

* **Open** (a row's label or a citation ``[n]``) opens the source where it is
  (``source_opening``): the browser, the system's app (a PDF at its page), or Threadline's
  viewer at the passage's lines;
* **Pin** / **Unpin** asks ``engine.knowledge.set_pinned``: the reply is saved with the
  flag, and its new version repaints the box;
* **Exclude** / **Include again** asks ``engine.knowledge.set_excluded``: the chat's set
  of excluded passages, kept as a setting of the chat; the view strikes them out.

Built by the tab and typed against ``SourcesHost``; it imports no tab.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import shiboken6
from PySide6.QtCore import QPoint, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMenu, QWidget

from threadline.core.sources import Source, passage_key
from threadline.engine.api import EngineApi
from threadline.engine.errors import EngineError
from threadline.ui.chat.sources.source_opening import Opening, Way, opening_of
from threadline.ui.chat.sources.source_viewer import SourceViewer
from threadline.ui.chat.view import view_layout
from threadline.ui.chat.view.chat_view import ChatView
from threadline.ui.chat.view.conversation_model import ConversationModel
from threadline.ui.chat.view.source_list import SOURCES_ACTION, source_href, source_of
from threadline.ui.common.message_bridge import MessageBridge
from threadline.ui.common.tasks import LogOnly, spawn

VIEWER_LIMIT = 4_000_000
"""Bytes of a text file the viewer reads; a larger file opens in the system's app."""


class SourcesHost(Protocol):
    """What the helper needs of its tab."""

    engine: EngineApi
    model: ConversationModel
    view: ChatView
    bridge: MessageBridge

    @property
    def session_id(self) -> str: ...


def pdf_page_url(path: str, page: int | None) -> QUrl:
    """``file:///…/manual.pdf#page=3`` (no fragment without a page)."""
    url = QUrl.fromLocalFile(path)
    if page is not None:
        url.setFragment(f"page={page}")
    return url


class ChatSources:
    def __init__(self, host: SourcesHost, widget: QWidget) -> None:
        self._host = host
        self._widget = widget
        """The tab as a widget: the parent of the viewer and the menu."""
        self.excluded: frozenset[str] = frozenset()
        self.viewer: SourceViewer | None = None
        """The last viewer opened (tests look at it)."""
        self.menu: QMenu | None = None
        """The last "Sources…" menu (tests look at it)."""
        host.view.actionTriggered.connect(self.run)
        spawn(
            host.engine.knowledge.excluded(host.session_id),
            on_done=self._excluded_now,
            tell=LogOnly("excluded passages not read"),
        )

    def run(self, action: str, message_id: str) -> None:
        """Act on a view action when it is a ``source:`` link or the Sources command."""
        if action == SOURCES_ACTION:
            self.open_menu(message_id)
            return
        found = source_of(self._host.model.message(message_id), action)
        if found is None:
            return
        verb, number, source = found
        if verb in ("open", "cite"):
            self.open(source, number)
        elif verb in ("pin", "unpin"):
            self.pin(message_id, number, verb == "pin")
        else:
            self.exclude(message_id, number, verb == "exclude")

    # -- opening ---------------------------------------------------------------------------

    def open(self, source: Source, number: int) -> None:
        opening = opening_of(source)
        if opening.way is Way.BROWSER:
            QDesktopServices.openUrl(QUrl(opening.target))
        elif opening.way is Way.DESKTOP:
            self._desktop(opening)
        elif opening.way is Way.PASSAGE:
            self._show(source, number, source.text, whole_file=False)
        else:
            spawn(
                asyncio.to_thread(_read_text, Path(opening.target)),
                on_done=lambda text: self._file_read(source, number, text),
                tell=self._host.bridge,
                context=f"{Path(opening.target).name} could not be opened",
                session_id=self._host.session_id,
            )

    def _desktop(self, opening: Opening) -> None:
        if not Path(opening.target).exists():
            self._host.bridge.warning(
                f"{Path(opening.target).name} is no longer at {opening.target}.",
                session_id=self._host.session_id,
            )
            return
        QDesktopServices.openUrl(pdf_page_url(opening.target, opening.page))

    def _file_read(self, source: Source, number: int, text: str | None) -> None:
        if text is None:  # too large for the viewer: the system's app shows it
            QDesktopServices.openUrl(QUrl.fromLocalFile(source.locator.path))
            return
        self._show(source, number, text, whole_file=True)

    def _show(self, source: Source, number: int, text: str, *, whole_file: bool) -> None:
        if not shiboken6.isValid(self._widget):
            return
        viewer = SourceViewer(source, number, text, self._widget, whole_file=whole_file)
        viewer.openInAppRequested.connect(lambda: self._desktop(Opening(Way.DESKTOP, source.locator.path)))
        viewer.finished.connect(viewer.deleteLater)
        self.viewer = viewer
        viewer.open()
        if whole_file and source.locator.line_start is not None:  # centred once it has its size
            viewer.show_lines(source.locator.line_start, source.locator.line_end or source.locator.line_start)

    # -- pin and exclude -------------------------------------------------------------------

    def pin(self, message_id: str, number: int, pinned: bool) -> None:
        host = self._host
        spawn(
            host.engine.knowledge.set_pinned(host.session_id, message_id, number - 1, pinned),
            tell=host.bridge,
            context="Not pinned" if pinned else "Not unpinned",
            session_id=host.session_id,
        )

    def exclude(self, message_id: str, number: int, excluded: bool) -> None:
        host = self._host
        spawn(
            host.engine.knowledge.set_excluded(host.session_id, message_id, number - 1, excluded),
            on_done=self._excluded_now,
            tell=host.bridge,
            context="Not excluded" if excluded else "Not included again",
            session_id=host.session_id,
        )

    def _excluded_now(self, keys: frozenset[str]) -> None:
        self.excluded = keys
        if shiboken6.isValid(self._host.view):
            self._host.view.set_excluded_sources(keys)

    # -- the keyboard's way: a menu of the reply's sources ----------------------------------

    def open_menu(self, message_id: str) -> None:
        """A menu with a submenu per source: Open, Pin or Unpin, Exclude or Include again."""
        message = self._host.model.message(message_id)
        view = self._host.view
        if message is None or not message.sources or not view.bring_into_view(message_id):
            return
        menu = QMenu(self._widget)
        menu.setObjectName("SourcesMenu")
        for number, source in enumerate(message.sources, start=1):
            excluded = passage_key(source) in self.excluded
            marks = (" (pinned)" if source.pinned else "") + (" (excluded)" if excluded else "")
            sub = menu.addMenu(f"&{number} " + source.heading_line(number)[len(f"[{number}] ") :] + marks)
            sub.setToolTip(source.text[:300])
            for verb, label in (
                ("open", "Open"),
                ("unpin", "Unpin") if source.pinned else ("pin", "Pin"),
                ("include", "Include again") if excluded else ("exclude", "Exclude"),
            ):
                sub.addAction(label, self._later(source_href(verb, number), message_id))
        self.menu = menu
        geo = view.geometry_of(message_id)
        top = max(0, geo.top) + view.header_height if geo is not None else 0
        pos = QPoint(view_layout.content_left(view.viewport().width()), top)
        menu.popup(view.viewport().mapToGlobal(pos))

    def _later(self, href: str, message_id: str) -> Callable[[], None]:
        """A menu entry's callback that runs ``href`` on the message (binds both now)."""

        def trigger() -> None:
            self.run(href, message_id)

        return trigger


def _read_text(path: Path) -> str | None:
    """The file's text for the viewer; None when it is too large for it."""
    try:
        if path.stat().st_size > VIEWER_LIMIT:
            return None
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError as err:
        raise EngineError(f"it is no longer at {path}.") from err
    except OSError as err:
        raise EngineError(f"{err.strerror or err}.") from err
