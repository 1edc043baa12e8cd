"""The sidebar's list of sessions: a lazy model over every session in the store.

Rows arrive in pages (``canFetchMore`` / ``fetchMore``; the view asks when it is
scrolled to the bottom) from a *page source*, normally the engine's
``list_sessions(after=…)``, which continues right after the last session
fetched. The store's order (pinned, then recent) is the list's order, so what is
loaded is always a prefix of the whole list, however many thousands of chats
there are; nothing is held back at some fixed count.

Group headers (see ``session_groups``: Pinned, Today, Yesterday, Previous 7 and
30 days, months, years) are rows of their own, not selectable. The same model,
built with ``archived=True``, lists the archived sessions (the sidebar's
"Archived" view).

Live changes from the engine (a new title, a pin, a new message moving a chat to
the top, a chat created elsewhere) are applied row by row — an insertion, a
removal or a ``beginMoveRows`` — found by ``bisect`` on the rows' sort keys, so
the selection and the scroll position survive, nothing resets, and one update
costs the same with 100 or 100,000 rows loaded. A session that sorts below the
loaded part is left for its page.
"""

from __future__ import annotations

import bisect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QMimeData,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from threadline.core.session import SessionInfo
from threadline.ui.common.tasks import spawn
from threadline.ui.sessions.preview_text import plain_preview
from threadline.ui.sessions.session_groups import (
    ARCHIVED,
    PINNED,
    group_key,
    store_order,
)

KindRole = Qt.ItemDataRole.UserRole + 1
SessionRole = Qt.ItemDataRole.UserRole + 2
SessionIdRole = Qt.ItemDataRole.UserRole + 3
PreviewRole = Qt.ItemDataRole.UserRole + 4
NO_MESSAGES = "No messages yet"
"""A chat's preview line before anything was said in it."""
PinnedRole = Qt.ItemDataRole.UserRole + 5

HEADER = "header"
SESSION = "session"
SESSION_IDS_MIME = "application/x-threadline-session-ids"
"""The drag payload of chats dragged from the list (onto a project): their ids, one per line."""
PAGE_SIZE = 200
"""Sessions per page: a screenful many times over, and a few milliseconds to fetch."""

__all__ = [
    "ARCHIVED",
    "HEADER",
    "PAGE_SIZE",
    "PINNED",
    "SESSION",
    "KindRole",
    "PageSource",
    "PinnedRole",
    "PreviewRole",
    "SessionIdRole",
    "SessionListModel",
    "SessionRole",
]

AnyIndex = QModelIndex | QPersistentModelIndex
PageSource = Callable[[SessionInfo | None, int], Awaitable[list[SessionInfo]]]
"""``source(after, limit)``: the next ``limit`` sessions in list order after ``after`` (None: the first)."""
RowKey = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class _Row:
    key: str
    kind: str
    group: str
    session: SessionInfo | None = None


class SessionListModel(QAbstractListModel):
    renameRequested = Signal(str, str)  # session id, new title
    pageLoaded = Signal(int)
    """A page arrived (its number of new rows); also after the last, empty one."""

    def __init__(self, parent: QObject | None = None, *, archived: bool = False) -> None:
        super().__init__(parent)
        self.archived = archived
        """Whether this model lists the archived sessions rather than the others."""
        self.project_id: str | None = None
        """With a project chosen in the sidebar, only that project's chats are listed."""
        self._sessions: dict[str, SessionInfo] = {}
        self._hidden: dict[str, SessionInfo] = {}
        self._rows: list[_Row] = []
        self._keys: list[RowKey] = []
        self._today: date = datetime.now().astimezone().date()
        self._source: PageSource | None = None
        self._cursor: SessionInfo | None = None
        self._complete = True
        self._fetching = False

    # -- Qt interface ------------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def canFetchMore(self, parent: AnyIndex) -> bool:
        return not parent.isValid() and not self._complete and not self._fetching and self._source is not None

    def fetchMore(self, parent: AnyIndex) -> None:
        if self.canFetchMore(parent):
            self._fetching = True
            spawn(self._fetch_page(), tell=self, context="Could not load more chats")

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self._rows)):
            return None
        row = self._rows[index.row()]
        if role == KindRole:
            return row.kind
        if row.kind == HEADER:
            return row.group if role == Qt.ItemDataRole.DisplayRole else None
        info = row.session
        assert info is not None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, Qt.ItemDataRole.ToolTipRole):
            return info.display_title
        if role == SessionRole:
            return info
        if role == SessionIdRole:
            return info.id
        if role == PreviewRole:
            return info.preview
        if role == Qt.ItemDataRole.AccessibleDescriptionRole:  # what the row shows under the title
            return plain_preview(info.preview) or NO_MESSAGES
        if role == PinnedRole:
            return info.pinned
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if self._rows[index.row()].kind == HEADER:
            return Qt.ItemFlag.ItemIsEnabled
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemIsEditable
            | Qt.ItemFlag.ItemIsDragEnabled
        )

    def mimeTypes(self) -> list[str]:
        return [SESSION_IDS_MIME]

    def mimeData(self, indexes: Sequence[QModelIndex]) -> QMimeData:
        """Chats dragged out of the list (onto a project): their ids, one per line."""
        mime = QMimeData()
        ids = [str(i.data(SessionIdRole)) for i in indexes if i.isValid() and i.data(SessionIdRole)]
        mime.setData(SESSION_IDS_MIME, QByteArray("\n".join(dict.fromkeys(ids)).encode("utf-8")))
        return mime

    def supportedDragActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        row = self._rows[index.row()]
        if row.kind != SESSION or row.session is None:
            return False
        title = str(value).strip()
        if not title or title == row.session.display_title:
            return False
        self.upsert(replace(row.session, title=title, title_set_by_user=True))
        self.renameRequested.emit(row.session.id, title)
        return True

    # -- queries -------------------------------------------------------------------------------

    @property
    def complete(self) -> bool:
        """Whether every session of this list is loaded."""
        return self._complete

    def session(self, session_id: str) -> SessionInfo | None:
        return self._sessions.get(session_id)

    def sessions(self) -> list[SessionInfo]:
        """The loaded sessions in list order."""
        return [r.session for r in self._rows if r.session is not None]

    def loaded_count(self) -> int:
        return len(self._sessions)

    def row_of(self, session_id: str) -> int:
        info = self._sessions.get(session_id)
        return -1 if info is None else self._find(info)

    def index_of(self, session_id: str) -> QModelIndex:
        row = self.row_of(session_id)
        return self.index(row, 0) if row >= 0 else QModelIndex()

    # -- loading -----------------------------------------------------------------------------------

    async def start(self, source: PageSource) -> None:
        """Forget what is loaded and show the first page of ``source``; later pages come on demand."""
        self._source = source
        self.beginResetModel()
        self._sessions, self._rows, self._keys = {}, [], []
        self._today = datetime.now().astimezone().date()
        self._cursor, self._complete, self._fetching = None, False, True
        self.endResetModel()
        try:
            await self._fetch_page()
        except BaseException:
            self._fetching = False
            raise

    async def fetch_all(self) -> None:
        """Load every remaining page (scripts and tests; the view fetches as it scrolls)."""
        while not self._complete and self._source is not None:
            self._fetching = True
            await self._fetch_page()

    async def _fetch_page(self) -> None:
        assert self._source is not None
        source = self._source
        try:
            page = await source(self._cursor, PAGE_SIZE)
        finally:
            self._fetching = False
        if source is not self._source:
            return  # restarted meanwhile
        added = self.append_page(page)
        self.pageLoaded.emit(added)

    def set_sessions(self, sessions: Iterable[SessionInfo]) -> None:
        """Show exactly ``sessions`` (no page source: the list is complete)."""
        self.beginResetModel()
        self._source, self._cursor, self._complete, self._fetching = None, None, True, False
        self._today = datetime.now().astimezone().date()
        self._sessions = {s.id: s for s in sessions if self._listed(s)}
        ordered = sorted(self._sessions.values(), key=self._row_key)
        self._rows, self._keys = self._rows_for(ordered, previous_rank=None)
        self.endResetModel()

    def append_page(self, page: list[SessionInfo]) -> int:
        """Add a page that continues the list; an empty page means the end. Returns rows added."""
        if not page:
            self._complete = True
            return 0
        self._cursor = page[-1]
        fresh = [
            s for s in page if self._listed(s) and s.id not in self._sessions and s.id not in self._hidden
        ]
        fresh.sort(key=self._row_key)
        if not fresh:
            return 0
        if not self._keys or self._row_key(fresh[0]) > self._keys[-1]:
            previous = self._keys[-1][0] if self._keys else None
            rows, keys = self._rows_for(fresh, previous_rank=previous)
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
            self._rows.extend(rows)
            self._keys.extend(keys)
            for info in fresh:
                self._sessions[info.id] = info
            self.endInsertRows()
        else:  # the page overlaps rows that arrived by live updates meanwhile
            for info in fresh:
                self._sessions[info.id] = info
                self._insert(info)
        return len(fresh)

    # -- live updates ------------------------------------------------------------------------------

    def _listed(self, info: SessionInfo) -> bool:
        """Whether ``info`` belongs in this list (archived or not; the chosen project, if any)."""
        return info.archived == self.archived and (
            self.project_id is None or info.project_id == self.project_id
        )

    def upsert(self, info: SessionInfo) -> None:
        if not self._listed(info):
            self.remove(info.id)
            return
        if info.id in self._hidden:
            self._hidden[info.id] = info
            return
        old = self._sessions.get(info.id)
        if not self._loaded_range(info):
            if old is not None:
                self.remove(info.id)  # it moved below what is loaded: its page brings it back
            return
        self._sessions[info.id] = info
        if old is None:
            self._insert(info)
        else:
            self._move(old, info)

    def remove(self, session_id: str) -> None:
        self._hidden.pop(session_id, None)
        info = self._sessions.pop(session_id, None)
        if info is not None:
            self._remove_row(self._find(info))

    def hide(self, session_id: str) -> SessionInfo | None:
        """Take a session out of view (a delete waiting for its undo window)."""
        info = self._sessions.get(session_id)
        if info is not None:
            self.remove(session_id)
            self._hidden[session_id] = info
        return info

    def unhide(self, session_id: str) -> None:
        info = self._hidden.pop(session_id, None)
        if info is not None:
            self.upsert(info)

    def refresh_groups(self) -> None:
        """Call when the day changes: "Today" becomes "Yesterday"."""
        today = datetime.now().astimezone().date()
        if today == self._today:
            return
        self.beginResetModel()
        self._today = today
        ordered = sorted(self._sessions.values(), key=self._row_key)
        self._rows, self._keys = self._rows_for(ordered, previous_rank=None)
        self.endResetModel()

    # -- rows ------------------------------------------------------------------------------------

    def _group(self, info: SessionInfo) -> tuple[int, str]:
        return group_key(info.pinned, info.updated_at, self._today, archived=self.archived)

    def _row_key(self, info: SessionInfo) -> RowKey:
        rank, _label = self._group(info)
        return (rank, 1, *store_order(info.pinned, info.updated_at, info.id))

    def _loaded_range(self, info: SessionInfo) -> bool:
        """Whether ``info`` sorts within the loaded part (everything, once complete)."""
        if self._complete or self._cursor is None:
            return self._complete
        mine = store_order(info.pinned, info.updated_at, info.id)
        last = self._cursor
        return mine <= store_order(last.pinned, last.updated_at, last.id)

    def _rows_for(
        self, ordered: list[SessionInfo], previous_rank: int | None
    ) -> tuple[list[_Row], list[RowKey]]:
        rows: list[_Row] = []
        keys: list[RowKey] = []
        current = previous_rank
        for info in ordered:
            rank, label = self._group(info)
            if rank != current:
                rows.append(_Row("group:" + label, HEADER, label))
                keys.append((rank, 0))
                current = rank
            rows.append(_Row(info.id, SESSION, label, info))
            keys.append(self._row_key(info))
        return rows, keys

    def _find(self, info: SessionInfo) -> int:
        i = bisect.bisect_left(self._keys, self._row_key(info))
        if i < len(self._rows) and self._rows[i].key == info.id:
            return i
        return next((j for j, r in enumerate(self._rows) if r.key == info.id), -1)  # not expected

    def _header_at(self, rank: int) -> int:
        """The row of group ``rank``'s header, or -1."""
        i = bisect.bisect_left(self._keys, (rank, 0))
        return i if i < len(self._keys) and self._keys[i] == (rank, 0) else -1

    def _insert(self, info: SessionInfo) -> None:
        rank, label = self._group(info)
        key = self._row_key(info)
        row = _Row(info.id, SESSION, label, info)
        if self._header_at(rank) < 0:
            at = bisect.bisect_left(self._keys, (rank, 0))
            self.beginInsertRows(QModelIndex(), at, at + 1)
            self._rows[at:at] = [_Row("group:" + label, HEADER, label), row]
            self._keys[at:at] = [(rank, 0), key]
            self.endInsertRows()
            return
        at = bisect.bisect_left(self._keys, key)
        self.beginInsertRows(QModelIndex(), at, at)
        self._rows.insert(at, row)
        self._keys.insert(at, key)
        self.endInsertRows()

    def _remove_row(self, i: int) -> None:
        if i < 0:
            return
        first = i
        header_alone = self._rows[i - 1].kind == HEADER and (
            i + 1 == len(self._rows) or self._rows[i + 1].kind == HEADER
        )
        if header_alone:
            first = i - 1
        self.beginRemoveRows(QModelIndex(), first, i)
        del self._rows[first : i + 1]
        del self._keys[first : i + 1]
        self.endRemoveRows()

    def _move(self, old: SessionInfo, new: SessionInfo) -> None:
        """Replace ``old``'s row by ``new``'s, moving it (selection follows) if its place changed."""
        i = self._find(old)
        rank, label = self._group(new)
        key = self._row_key(new)
        row = _Row(new.id, SESSION, label, new)
        before_ok = self._keys[i - 1] < key
        after_ok = i + 1 == len(self._keys) or key < self._keys[i + 1]
        if before_ok and after_ok and self._group(old)[0] == rank:
            self._rows[i], self._keys[i] = row, key
            self.dataChanged.emit(self.index(i, 0), self.index(i, 0))
            return
        old_rank = self._group(old)[0]
        if self._header_at(rank) < 0:
            at = bisect.bisect_left(self._keys, (rank, 0))
            self.beginInsertRows(QModelIndex(), at, at)
            self._rows.insert(at, _Row("group:" + label, HEADER, label))
            self._keys.insert(at, (rank, 0))
            self.endInsertRows()
            if at <= i:
                i += 1
        dest = bisect.bisect_left(self._keys, key)
        if dest in (i, i + 1):
            self._rows[i], self._keys[i] = row, key
            target = i
        else:
            self.beginMoveRows(QModelIndex(), i, i, QModelIndex(), dest)
            del self._rows[i]
            del self._keys[i]
            target = dest - 1 if i < dest else dest
            self._rows.insert(target, row)
            self._keys.insert(target, key)
            self.endMoveRows()
        self.dataChanged.emit(self.index(target, 0), self.index(target, 0))
        if old_rank != rank:
            header = self._header_at(old_rank)
            if header >= 0 and (header + 1 == len(self._rows) or self._rows[header + 1].kind == HEADER):
                self.beginRemoveRows(QModelIndex(), header, header)
                del self._rows[header]
                del self._keys[header]
                self.endRemoveRows()
