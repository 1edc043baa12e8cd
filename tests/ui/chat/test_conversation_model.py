from __future__ import annotations

from typing import Any

from PySide6.QtTest import QAbstractItemModelTester
from tests.support.ui_fakes import FakeLive
from tests.support.waiting import WAIT_MS

from threadline.ui.chat.view.conversation_model import (
    ConversationModel,
    MessageRole,
    RevisionRole,
    VersionRole,
)


def _tester(model: ConversationModel) -> QAbstractItemModelTester:
    return QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)


def test_rows_follow_the_path_and_pass_the_model_tester(qtbot: Any) -> None:
    live = FakeLive()
    live.exchange("hello", "hi there")
    model = ConversationModel(live)
    _tester(model)
    assert model.rowCount() == 2
    with qtbot.waitSignal(model.rowsInserted):
        live.user_says("again")
    assert model.rowCount() == 3
    assert model.data(model.index(2, 0), MessageRole).text == "again"


def test_deltas_coalesce_into_one_data_changed_per_frame(qtbot: Any) -> None:
    live = FakeLive()
    model = ConversationModel(live)
    _tester(model)
    live.user_says("q")
    reply = live.begin()
    changes: list[int] = []
    model.dataChanged.connect(lambda a, b, roles: changes.append(a.row()))
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    for i in range(200):
        live.delta(f"tok{i} ")
    assert changes == []  # nothing until the frame timer fires
    qtbot.waitUntil(lambda: changes == [1], timeout=WAIT_MS)
    qtbot.wait(40)
    assert changes == [1]
    assert model.data(model.index(1, 0), RevisionRole) == 200
    assert model.message(reply.id).text.startswith("tok0 tok1")
    assert resets == []


def test_version_switch_is_a_path_diff_not_a_reset(qtbot: Any) -> None:
    live = FakeLive()
    p1, _r1 = live.exchange("first", "one")
    # an edited version of the first prompt
    edited = live.conversation.edit(p1.id, "first, edited")
    from threadline.engine.events import MessageAdded

    live.emit(MessageAdded("s1", edited))
    live.begin()
    live.delta("two")
    live.finish()
    model = ConversationModel(live)
    _tester(model)
    assert [m.text for m in live.conversation.path()] == ["first, edited", "two"]
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    assert model.data(model.index(0, 0), VersionRole).index == 2
    live.switch_version(edited.id, -1)
    assert resets == []
    assert [model.data(model.index(r, 0)) for r in range(model.rowCount())] == ["first", "one"]
    assert model.data(model.index(0, 0), VersionRole).count == 2


def test_new_sibling_mid_path_is_synchronised(qtbot: Any) -> None:
    live = FakeLive()
    p1, _ = live.exchange("a", "b")
    model = ConversationModel(live)
    _tester(model)
    edited = live.conversation.edit(p1.id, "a2")
    from threadline.engine.events import MessageAdded

    live.emit(MessageAdded("s1", edited))  # parent is the root, not the last row
    assert [model.data(model.index(r, 0)) for r in range(model.rowCount())] == ["a2"]
