"""The sidebar's model: reordering moves rows (so the selection follows a chat) and ends in sort order."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta
from typing import Any

from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QListView

from threadline.core.messages import utcnow
from threadline.core.session import SessionInfo
from threadline.ui.sessions.session_list_model import SessionListModel, SessionRole


def keys(model: SessionListModel) -> list[str]:
    return [
        model.data(model.index(i, 0), SessionRole).id
        if model.data(model.index(i, 0), SessionRole)
        else "header"
        for i in range(model.rowCount())
    ]


def test_a_chat_moving_to_the_top_keeps_its_selection(qtbot: Any, qtmodeltester: Any) -> None:
    now = utcnow()
    sessions = [
        SessionInfo(id=f"s{i}", title=f"Chat {i}", updated_at=now - timedelta(minutes=i)) for i in range(6)
    ]
    model = SessionListModel()
    model.set_sessions(sessions)
    qtmodeltester.check(model)
    view = QListView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.setCurrentIndex(model.index_of("s4"))
    model.upsert(replace(sessions[4], updated_at=now + timedelta(minutes=1)))  # it just got a reply
    assert model.row_of("s4") == 1  # right under the "Today" header
    assert view.currentIndex() == model.index_of("s4")
    assert view.selectionModel().isSelected(model.index_of("s4"))
    view.selectionModel().setCurrentIndex(
        model.index_of("s0"), QItemSelectionModel.SelectionFlag.ClearAndSelect
    )
    model.upsert(replace(sessions[0], pinned=True))  # a new "Pinned" group above
    assert view.currentIndex() == model.index_of("s0") and model.row_of("s0") == 1


def test_random_updates_end_in_sort_order(qtmodeltester: Any) -> None:
    rng = random.Random(7)
    now = utcnow()
    infos = {
        f"s{i}": SessionInfo(id=f"s{i}", updated_at=now - timedelta(days=rng.randint(0, 40)))
        for i in range(25)
    }
    model = SessionListModel()
    model.set_sessions(infos.values())
    qtmodeltester.check(model)
    for _ in range(200):
        sid = rng.choice(list(infos))
        roll = rng.random()
        if roll < 0.15:
            model.remove(sid)
            infos.pop(sid)
            continue
        info = replace(
            infos[sid],
            updated_at=now - timedelta(days=rng.randint(0, 40), minutes=rng.randint(0, 600)),
            pinned=rng.random() < 0.2,
        )
        infos[sid] = info
        model.upsert(info)
        if roll > 0.9:
            new = SessionInfo(id=f"n{_}", updated_at=now - timedelta(days=rng.randint(0, 40)))
            infos[new.id] = new
            model.upsert(new)
    fresh = SessionListModel()
    fresh.set_sessions(infos.values())
    assert keys(model) == keys(fresh)
    assert [model.data(model.index(i, 0)) for i in range(model.rowCount())] == [
        fresh.data(fresh.index(i, 0)) for i in range(fresh.rowCount())
    ]
