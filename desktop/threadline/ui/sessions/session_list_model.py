"""The sidebar's list of sessions: pinned first, then grouped by recency.

Group headers ("Pinned", "Today", "Yesterday", "Previous 7 days", "Older") are rows
of their own, not selectable. The same model, built with ``archived=True``, lists
the archived sessions instead (the sidebar's "Archived" view). A change to one
session (a new title, a pin, a new
message moving it to the top) is applied as a diff of the flat row list —
removals, moves (as remove + insert) and insertions, then ``dataChanged`` for rows
whose content changed — so the selection and the scroll position survive and the
view never resets for a single update.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal

from threadline.core.session import SessionInfo

KindRole = Qt.ItemDataRole.UserRole + 1
SessionRole = Qt.ItemDataRole.UserRole + 2
SessionIdRole = Qt.ItemDataRole.UserRole + 3
PreviewRole = Qt.ItemDataRole.UserRole + 4
PinnedRole = Qt.ItemDataRole.UserRole + 5

HEADER = "header"
SESSION = "session"

GROUPS = ("Pinned", "Today", "Yesterday", "Previous 7 days", "Older")
ARCHIVED = "Archived"
"""The one group of the archived list (newest first)."""

AnyIndex = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True, slots=True)
class _Row:
    key: str
    kind: str
    group: str
    session: SessionInfo | None = None


def group_of(info: SessionInfo, today: date) -> str:
    if info.pinned:
        return "Pinned"
    when = info.updated_at
    local = when.astimezone() if when.tzinfo else when
    day = local.date()
    if day >= today:
        return "Today"
    if day == today - timedelta(days=1):
        return "Yesterday"
    if day > today - timedelta(days=7):
        return "Previous 7 days"
    return "Older"


def _sort_key(info: SessionInfo) -> tuple[int, float, str]:
    ts = info.updated_at.timestamp() if isinstance(info.updated_at, datetime) else 0.0
    return (0 if info.pinned else 1, -ts, info.id)


def _longest_increasing(seq: list[int]) -> set[int]:
    """Indices (into ``seq``) of one longest strictly increasing subsequence."""
    tails: list[int] = []
    tails_idx: list[int] = []
    prev = [-1] * len(seq)
    for i, v in enumerate(seq):
        j = bisect.bisect_left(tails, v)
        if j == len(tails):
            tails.append(v)
            tails_idx.append(i)
        else:
            tails[j] = v
            tails_idx[j] = i
        prev[i] = tails_idx[j - 1] if j > 0 else -1
    out: set[int] = set()
    k = tails_idx[-1] if tails_idx else -1
    while k >= 0:
        out.add(k)
        k = prev[k]
    return out


class SessionListModel(QAbstractListModel):
    renameRequested = Signal(str, str)  # session id, new title

    def __init__(self, parent: QObject | None = None, *, archived: bool = False) -> None:
        super().__init__(parent)
        self.archived = archived
        """Whether this model lists the archived sessions rather than the others."""
        self._sessions: dict[str, SessionInfo] = {}
        self._hidden: dict[str, SessionInfo] = {}
        self._rows: list[_Row] = []
        self._today: date = datetime.now().astimezone().date()

    # -- Qt interface ------------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

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
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return info.display_title
        if role == Qt.ItemDataRole.ToolTipRole:
            return info.display_title
        if role == SessionRole:
            return info
        if role == SessionIdRole:
            return info.id
        if role == PreviewRole:
            return info.preview
        if role == PinnedRole:
            return info.pinned
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if self._rows[index.row()].kind == HEADER:
            return Qt.ItemFlag.ItemIsEnabled
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        row = self._rows[index.row()]
        if row.kind != SESSION or row.session is None:
            return False
        title = str(value).strip()
        if not title or title == row.session.display_title:
            return False
        from dataclasses import replace

        self.upsert(replace(row.session, title=title, title_set_by_user=True))
        self.renameRequested.emit(row.session.id, title)
        return True

    # -- queries -------------------------------------------------------------------------------

    def session(self, session_id: str) -> SessionInfo | None:
        return self._sessions.get(session_id)

    def sessions(self) -> list[SessionInfo]:
        return sorted(self._sessions.values(), key=_sort_key)

    def row_of(self, session_id: str) -> int:
        return next((i for i, r in enumerate(self._rows) if r.key == session_id), -1)

    def index_of(self, session_id: str) -> QModelIndex:
        row = self.row_of(session_id)
        return self.index(row, 0) if row >= 0 else QModelIndex()

    # -- updates ----------------------------------------------------------------------------------

    def set_sessions(self, sessions: Iterable[SessionInfo]) -> None:
        """The initial page from the store: a reset is right here (nothing was shown before)."""
        self.beginResetModel()
        self._sessions = {s.id: s for s in sessions if s.archived == self.archived}
        self._today = datetime.now().astimezone().date()
        self._rows = self._build()
        self.endResetModel()

    def upsert(self, info: SessionInfo) -> None:
        if info.archived != self.archived:
            self.remove(info.id)
            return
        if info.id in self._hidden:
            self._hidden[info.id] = info
            return
        self._sessions[info.id] = info
        self._apply()

    def remove(self, session_id: str) -> None:
        self._hidden.pop(session_id, None)
        if self._sessions.pop(session_id, None) is not None:
            self._apply()

    def hide(self, session_id: str) -> SessionInfo | None:
        """Take a session out of view (a delete waiting for its undo window)."""
        info = self._sessions.pop(session_id, None)
        if info is not None:
            self._hidden[session_id] = info
            self._apply()
        return info

    def unhide(self, session_id: str) -> None:
        info = self._hidden.pop(session_id, None)
        if info is not None:
            self._sessions[session_id] = info
            self._apply()

    def refresh_groups(self) -> None:
        """Call when the day changes: "Today" becomes "Yesterday"."""
        self._today = datetime.now().astimezone().date()
        self._apply()

    # -- the diff ----------------------------------------------------------------------------------

    def _build(self) -> list[_Row]:
        rows: list[_Row] = []
        current = None
        for info in sorted(self._sessions.values(), key=_sort_key):
            g = ARCHIVED if self.archived else group_of(info, self._today)
            if g != current:
                rows.append(_Row("group:" + g, HEADER, g))
                current = g
            rows.append(_Row(info.id, SESSION, g, info))
        return rows

    def _apply(self) -> None:
        new = self._build()
        new_keys = [r.key for r in new]
        new_set = set(new_keys)
        # 1. removals
        for i in range(len(self._rows) - 1, -1, -1):
            if self._rows[i].key not in new_set:
                self.beginRemoveRows(QModelIndex(), i, i)
                del self._rows[i]
                self.endRemoveRows()
        # 2. moves and insertions: keep a longest run already in order; every other row is moved
        # (beginMoveRows, so the selection and the current row follow it) or inserted right after
        # the row that precedes it in the new order, in ascending target order.
        position = {k: i for i, k in enumerate(new_keys)}
        order = [position[r.key] for r in self._rows]
        kept = {self._rows[i].key for i in _longest_increasing(order)}
        for target, row in enumerate(new):
            if row.key in kept:
                continue
            keys = [r.key for r in self._rows]
            after = keys.index(new_keys[target - 1]) + 1 if target > 0 else 0
            if row.key in keys:
                source = keys.index(row.key)
                if source == after:
                    continue  # already right after its predecessor
                self.beginMoveRows(QModelIndex(), source, source, QModelIndex(), after)
                moved = self._rows.pop(source)
                self._rows.insert(after - 1 if source < after else after, moved)
                self.endMoveRows()
            else:
                self.beginInsertRows(QModelIndex(), after, after)
                self._rows.insert(after, row)
                self.endInsertRows()
        # 4. content changes
        for i, row in enumerate(new):
            if self._rows[i] != row:
                self._rows[i] = row
                idx = self.index(i, 0)
                self.dataChanged.emit(idx, idx)
