"""Projects in the sidebar, driven as a person would: make one, move chats in by menu and by
drag and drop, choose it (the list and the search keep to it), start a chat in it, edit it,
delete it (its chats stay)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent, QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox, QPushButton
from tests.support.ui_driving import open_with_stored_chats
from tests.ui.conftest import AppHarness

from threadline.core.session import SessionInfo
from threadline.ui.sessions.project_dialog import ProjectDialog
from threadline.ui.sessions.project_list import ProjectIdRole
from threadline.ui.sessions.session_list_model import SessionIdRole

TIMEOUT = 15000
IDS = [f"chat{n}" for n in range(4)]


def open_with_chats(harness: AppHarness) -> None:
    open_with_stored_chats(
        harness, {sid: (f"Topic {n}", f"roses and topic {n}") for n, sid in enumerate(IDS)}
    )


def stored(harness: AppHarness, session_id: str) -> SessionInfo:
    info = harness.run(harness.engine.store.get_session(session_id))
    assert info is not None
    return info


def listed(harness: AppHarness) -> set[str]:
    model = harness.window.sidebar.model
    rows = (model.index(r, 0).data(SessionIdRole) for r in range(model.rowCount()))
    return {r for r in rows if r}


def make_project(harness: AppHarness, name: str, instructions: str = "") -> str:
    """Click "+", type the name (and instructions), click Create; returns the new project's id."""
    rows = harness.window.sidebar.project_scope.view
    harness.qtbot.mouseClick(rows.add_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: harness.window.findChild(ProjectDialog) is not None, timeout=TIMEOUT)
    dialog = harness.window.findChild(ProjectDialog)
    assert isinstance(dialog, ProjectDialog)
    harness.qtbot.keyClicks(dialog.name, name)
    if instructions:
        harness.qtbot.keyClicks(dialog.instructions, instructions)
    harness.qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: any(p.name == name for p in rows.projects), timeout=TIMEOUT)
    return next(p.id for p in rows.projects if p.name == name)


def choose_project_row(harness: AppHarness, project_id: str | None) -> None:
    rows = harness.window.sidebar.project_scope.view.rows
    row = next(i for i in range(rows.count()) if rows.item(i).data(ProjectIdRole) == project_id)
    rect = rows.visualItemRect(rows.item(row))
    harness.qtbot.mouseClick(rows.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def move_by_menu(harness: AppHarness, session_id: str, project_name: str) -> None:
    """Right-click the chat, open "Move to project" with the Right key, Enter on the project."""
    view = harness.window.sidebar.list
    steps: list[str] = []

    def pick_in_menu() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(10, pick_in_menu)
            return
        if not steps:
            move = next(a for a in menu.actions() if a.text() == "Move to project")
            menu.setActiveAction(move)
            QTest.keyClick(menu, Qt.Key.Key_Right)
            steps.append("opened")
            QTimer.singleShot(10, pick_in_menu)
            return
        if menu.title() != "Move to project":
            QTimer.singleShot(10, pick_in_menu)
            return
        target = next(a for a in menu.actions() if a.text() == project_name)
        menu.setActiveAction(target)
        QTest.keyClick(menu, Qt.Key.Key_Return)
        steps.append("chosen")

    QTimer.singleShot(0, pick_in_menu)
    index = harness.window.sidebar.model.index_of(session_id)
    view.scrollTo(index)
    pos = view.visualRect(index).center()
    QApplication.sendEvent(
        view.viewport(),
        QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, view.viewport().mapToGlobal(pos)),
    )
    harness.qtbot.waitUntil(lambda: steps == ["opened", "chosen"], timeout=TIMEOUT)


def drop_on_project(harness: AppHarness, session_ids: list[str], project_id: str | None) -> None:
    """What a drag of chats from the list onto a project's row delivers."""
    sidebar = harness.window.sidebar
    mime = sidebar.model.mimeData([sidebar.model.index_of(s) for s in session_ids])
    rows = sidebar.project_scope.view.rows
    row = next(i for i in range(rows.count()) if rows.item(i).data(ProjectIdRole) == project_id)
    point = QPointF(rows.visualItemRect(rows.item(row)).center())
    buttons, keys = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(point.toPoint(), Qt.DropAction.MoveAction, mime, buttons, keys)
    QApplication.sendEvent(rows.viewport(), enter)
    assert enter.isAccepted()
    move = QDragMoveEvent(point.toPoint(), Qt.DropAction.MoveAction, mime, buttons, keys)
    QApplication.sendEvent(rows.viewport(), move)
    assert move.isAccepted()
    assert harness.window.sidebar.project_scope.view.drop_row == row  # the row is marked as the target
    drop = QDropEvent(point, Qt.DropAction.MoveAction, mime, buttons, keys)
    QApplication.sendEvent(rows.viewport(), drop)
    assert drop.isAccepted()


def test_a_project_is_made_filled_chosen_searched_and_deleted(harness: AppHarness) -> None:
    open_with_chats(harness)
    sidebar = harness.window.sidebar
    assert not sidebar.project_scope.view.rows.isVisible()  # no projects yet: only the header and "+"
    garden = make_project(harness, "Garden", "Answer in metric units.")
    project = harness.run(harness.engine.store.get_project(garden))
    assert project is not None and project.instructions == "Answer in metric units."

    move_by_menu(harness, "chat1", "Garden")
    harness.qtbot.waitUntil(lambda: stored(harness, "chat1").project_id == garden, timeout=TIMEOUT)
    drop_on_project(harness, ["chat2", "chat3"], garden)
    harness.qtbot.waitUntil(
        lambda: all(stored(harness, s).project_id == garden for s in ("chat2", "chat3")), timeout=TIMEOUT
    )
    harness.qtbot.waitUntil(lambda: sidebar.project_scope.view.counts.get(garden) == 3, timeout=TIMEOUT)

    choose_project_row(harness, garden)
    harness.qtbot.waitUntil(lambda: listed(harness) == {"chat1", "chat2", "chat3"}, timeout=TIMEOUT)
    with harness.qtbot.waitSignal(sidebar.searchFinished, timeout=TIMEOUT):
        harness.qtbot.keyClicks(sidebar.filter, "roses")
    results = (sidebar.results.result(r) for r in range(sidebar.results.rowCount()))
    found = {r.session_id for r in results if r is not None}
    assert found == {"chat1", "chat2", "chat3"}  # every chat holds "roses"; chat0 is in no project
    sidebar.filter.clear()

    # A chat started while the project is chosen starts in it.
    harness.qtbot.mouseClick(sidebar.new_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: len(listed(harness)) == 4, timeout=TIMEOUT)
    (new_id,) = listed(harness) - {"chat1", "chat2", "chat3"}
    assert stored(harness, new_id).project_id == garden

    # Out again by dropping on "All chats"; the list of the project follows.
    drop_on_project(harness, ["chat3"], None)
    harness.qtbot.waitUntil(lambda: "chat3" not in listed(harness), timeout=TIMEOUT)
    assert stored(harness, "chat3").project_id is None

    # Delete the project: asked first, then its chats stay, outside any project.
    def confirm() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(10, confirm)
            return
        delete = next(b for b in box.findChildren(QPushButton) if b.text() == "Delete project")
        harness.qtbot.mouseClick(delete, Qt.MouseButton.LeftButton)

    QTimer.singleShot(0, confirm)
    sidebar.project_scope.delete_project(garden)
    harness.qtbot.waitUntil(lambda: not sidebar.project_scope.view.projects, timeout=TIMEOUT)
    assert stored(harness, "chat1").project_id is None
    harness.qtbot.waitUntil(lambda: listed(harness) >= set(IDS), timeout=TIMEOUT)


def test_a_project_can_be_renamed_and_recoloured(harness: AppHarness) -> None:
    open_with_chats(harness)
    view = harness.window.sidebar.project_scope.view
    pid = make_project(harness, "Drafts")
    harness.window.sidebar.project_scope.edit_project(pid)
    harness.qtbot.waitUntil(
        lambda: isinstance(QApplication.activeModalWidget(), ProjectDialog), timeout=TIMEOUT
    )
    dialog = QApplication.activeModalWidget()
    assert isinstance(dialog, ProjectDialog)
    dialog.name.selectAll()
    harness.qtbot.keyClicks(dialog.name, "Letters")
    violet = next(b for b in dialog.colours.buttons() if b.toolTip() == "Violet")
    harness.qtbot.mouseClick(violet, Qt.MouseButton.LeftButton)
    harness.qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    harness.qtbot.waitUntil(lambda: [p.name for p in view.projects] == ["Letters"], timeout=TIMEOUT)
    assert view.projects[0].colour == "#8b5cf6"


def test_projects_edited_by_another_instance_show_without_activating_the_window(
    harness: AppHarness,
) -> None:
    """The change feed carries project edits: the sidebar follows another instance's rename,
    recolour and new project, and a chat it moves into that project, while this window is
    left alone (no activation, no timer)."""
    from threadline.engine.engine import Engine

    window = harness.open()
    rows = window.sidebar.project_scope.view
    project = harness.run(harness.engine.projects.create_project("Garden", colour="#10b981"))
    chat = harness.run(harness.engine.sessions.new_session())
    harness.qtbot.waitUntil(lambda: [p.name for p in rows.projects] == ["Garden"], timeout=TIMEOUT)

    async def edit_elsewhere() -> str:
        other = await Engine.open(harness.data_dir)
        try:
            edited = await other.projects.rename_project(project.id, "Allotment")
            await other.projects.save_project(replace(edited, colour="#ef4444"))
            shed = await other.projects.create_project("Shed", colour="#8b5cf6")
            await other.projects.set_session_project(chat.id, shed.id)
            return shed.id
        finally:
            await other.aclose()

    shed_id = harness.run(edit_elsewhere())
    harness.qtbot.waitUntil(
        lambda: (
            [(p.name, p.colour) for p in rows.projects] == [("Allotment", "#ef4444"), ("Shed", "#8b5cf6")]
        ),
        timeout=TIMEOUT,
    )
    harness.qtbot.waitUntil(lambda: rows.counts.get(shed_id) == 1, timeout=TIMEOUT)
    assert rows.colour_of(shed_id) == "#8b5cf6"


@pytest.mark.skipif(not os.environ.get("THREADLINE_SHOTS"), reason="screenshots only when asked for")
def test_screenshot_of_the_projects_section(harness: AppHarness) -> None:
    """Three coloured projects, chats dragged into one, that one chosen;
    then all chats, where a chat in a project shows its colour. Light and dark."""
    from threadline.ui.common.theme import ThemeChoice

    open_with_chats(harness)
    window = harness.window
    window.resize(980, 640)
    garden = make_project(harness, "Garden planning", "Answer in metric units.")
    for name in ("Thesis", "Taxes 2026"):  # the dialog is shown once above; these through the engine
        harness.run(harness.engine.projects.create_project(name))
    rows = window.sidebar.project_scope.view
    harness.qtbot.waitUntil(lambda: len(rows.projects) == 3, timeout=TIMEOUT)
    drop_on_project(harness, IDS[:3], garden)  # (the menu's popup would need a window manager)
    harness.qtbot.waitUntil(lambda: rows.counts.get(garden) == 3, timeout=TIMEOUT)
    folder = Path(os.environ["THREADLINE_SHOTS"])
    folder.mkdir(parents=True, exist_ok=True)
    harness.qtbot.wait(100)
    assert window.grab().save(str(folder / "projects-all-light.png"))
    choose_project_row(harness, garden)
    harness.qtbot.waitUntil(lambda: listed(harness) == set(IDS[:3]), timeout=TIMEOUT)
    harness.qtbot.wait(100)
    assert window.grab().save(str(folder / "projects-chosen-light.png"))
    window.set_theme(ThemeChoice.DARK)
    harness.qtbot.wait(300)
    assert window.grab().save(str(folder / "projects-chosen-dark.png"))
    window.set_theme(ThemeChoice.LIGHT)
