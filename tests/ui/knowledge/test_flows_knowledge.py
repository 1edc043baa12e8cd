"""Knowledge bases in the window, typed and clicked as a person would, with the real engine and index.

Settings → Knowledge makes a base from a real folder (Markdown, text and a damaged PDF),
indexes it with progress on the page and in the status bar, lists the file it could not
read with the reason, and removes the base without touching the files. The project
dialog, Settings → Agents and a chat's Context… attach a base by ticking it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QListWidget, QMessageBox
from tests.support.ui_driving import new_tab_by_click
from tests.support.waiting import WAIT_MS

from threadline.core.config import DEFAULT_AGENT_ID
from threadline.core.knowledge import AttachScope
from threadline.knowledge import vector_support
from threadline.ui.chat.controls.context_dialog import ContextDialog
from threadline.ui.knowledge.base_editor import KEYWORD_ONLY, BaseEditor
from threadline.ui.sessions.project_dialog import ProjectDialog

FILES = 30


def handbook(root: Path) -> Path:
    """Markdown and text files with known words, and one damaged PDF."""
    root.mkdir(parents=True)
    for n in range(FILES):
        suffix = ".md" if n % 2 else ".txt"
        (root / f"page{n:02}{suffix}").write_text(
            f"# Page {n}\n\nThe kestrel number of this page is {n}. " + "Plain words follow. " * 40,
            encoding="utf-8",
        )
    (root / "broken.pdf").write_bytes(b"%PDF-1.7\n this is not a PDF at all \x00\x01\x02")
    return root


def open_knowledge_page(harness: Any) -> Any:
    harness.window.open_settings("knowledge")
    dialog = harness.window._settings_dialog
    harness.qtbot.waitUntil(lambda: dialog.isVisible() and dialog.loaded.done(), timeout=WAIT_MS)
    assert dialog.pages.currentWidget() is dialog.knowledge
    return dialog


def tick(qtbot: Any, widget: QListWidget, text: str) -> None:
    """Select the row and press Space, which ticks (or unticks) its box."""
    row = next(i for i in range(widget.count()) if widget.item(i).text() == text)
    widget.setFocus()
    widget.setCurrentRow(row)
    qtbot.keyClick(widget, Qt.Key.Key_Space)


def ticked(widget: QListWidget) -> set[str]:
    items = (widget.item(i) for i in range(widget.count()))
    return {item.text() for item in items if item.checkState() == Qt.CheckState.Checked}


def stored_base(harness: Any, name: str) -> Any:
    return harness.run(harness.engine.knowledge.base(name))


def test_make_a_base_index_it_see_progress_and_problems_then_remove_it(harness: Any, tmp_path: Path) -> None:
    folder = handbook(tmp_path / "handbook")
    window = harness.open()
    qtbot = harness.qtbot
    dialog = open_knowledge_page(harness)
    page = dialog.knowledge
    assert page.empty.isVisible() and not page.index_button.isVisible()

    qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: isinstance(page.editor, BaseEditor) and page.editor.isVisible(), timeout=WAIT_MS)
    editor = page.editor
    qtbot.waitUntil(editor.loaded.done, timeout=WAIT_MS)
    assert not editor.save_button.isEnabled()  # no name, no folder yet
    qtbot.keyClicks(editor.name, "handbook")
    editor.ask_folder = lambda: [folder]  # the folder picked in the system's file dialog
    qtbot.mouseClick(editor.add_folder, Qt.MouseButton.LeftButton)
    assert editor.chosen_paths() == [str(folder)]
    assert editor.provider.currentText() == KEYWORD_ONLY
    assert editor.provider.findText("replay") >= 0  # the configured OpenAI-compatible provider
    assert not editor.model.isEnabled() and not editor.list_models.isEnabled()
    with qtbot.waitSignal(editor.accepted, timeout=WAIT_MS):
        qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.list.count() == 1 and page.title.text() == "handbook", timeout=WAIT_MS)
    assert page.message.text() == "Added handbook."
    assert page.folders.text() == str(folder)
    assert page.search_mode.text() == "Search: Keyword search only (no embedding model)"
    qtbot.waitUntil(lambda: page.totals.text() == "Not indexed yet: press Index now.", timeout=WAIT_MS)

    seen_page: list[str] = []
    seen_status: list[str] = []
    jobs = window.indexing.jobs
    jobs.progressed.connect(lambda *_: seen_page.append(page.progress.text()))
    jobs.progressed.connect(lambda *_: seen_status.append(window.indexing.text()))
    qtbot.mouseClick(page.index_button, Qt.MouseButton.LeftButton)
    assert page.pause_button.isVisible() and page.cancel_button.isVisible()
    assert not page.index_button.isVisible() and not page.totals.isVisible()
    with qtbot.waitSignal(jobs.finished, timeout=WAIT_MS):
        pass
    total = FILES + 1
    assert seen_page and all(re.match(rf"\d+ of {total} files · \d+ chunks", t) for t in seen_page)
    assert seen_status and all(
        re.fullmatch(rf"Indexing handbook: \d+/{total} files(, \d+:\d\d left)?", t) for t in seen_status
    )
    assert seen_page[-1].startswith(f"{total} of {total} files")

    qtbot.waitUntil(lambda: page.totals.text().startswith(f"Indexed: {FILES} files"), timeout=WAIT_MS)
    ((shown, reason),) = page.problems.rows()
    assert shown == "handbook/broken.pdf"
    assert reason == "could not be read: the PDF is damaged or incomplete.", "the File column names it"
    assert page.problems.tree.topLevelItem(0).toolTip(0) == str(folder / "broken.pdf")
    assert page.problems.title.text() == "Files that could not be read (1)"
    assert page.problems.tree.isVisible()
    assert page.progress.text().startswith(f"Indexed handbook: {total} files")
    assert page.progress.text().endswith("1 file could not be read.")
    assert window.indexing.isVisible() and window.indexing.text() == page.progress.text()
    assert page.index_button.isVisible() and not page.pause_button.isVisible()
    hits = harness.run(harness.engine.knowledge.search("handbook", "kestrel number 17"))
    assert hits.hits and hits.hits[0].chunk.path == str(folder / "page17.md")

    qtbot.mouseClick(page.remove_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: page.remove_question is not None and page.remove_question.isVisible(), timeout=WAIT_MS
    )
    box = page.remove_question
    assert "Your files and folders are not touched." in box.informativeText()
    remove = next(b for b in box.buttons() if box.buttonRole(b) == QMessageBox.ButtonRole.DestructiveRole)
    qtbot.mouseClick(remove, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.list.count() == 0 and page.empty.isVisible(), timeout=WAIT_MS)
    assert page.message.text() == "Removed handbook. Its files were not touched."
    assert harness.run(harness.engine.knowledge.bases()) == []
    assert len(list(folder.iterdir())) == FILES + 1


def test_the_status_bar_follows_indexing_after_settings_close_and_opens_the_page(
    harness: Any, tmp_path: Path
) -> None:
    folder = handbook(tmp_path / "handbook")
    window = harness.open()
    qtbot = harness.qtbot
    harness.run(harness.engine.knowledge.add("handbook", [folder]))
    dialog = open_knowledge_page(harness)
    page = dialog.knowledge
    qtbot.waitUntil(lambda: page.title.text() == "handbook", timeout=WAIT_MS)
    jobs = window.indexing.jobs
    with qtbot.waitSignal(jobs.started, timeout=WAIT_MS):
        qtbot.mouseClick(page.index_button, Qt.MouseButton.LeftButton)
    dialog.close()  # the run belongs to the window, not to Settings
    with qtbot.waitSignal(jobs.finished, timeout=WAIT_MS):
        pass
    assert window.indexing.isVisible()
    assert window.indexing.text().startswith(f"Indexed handbook: {FILES + 1} files")
    assert harness.run(harness.engine.knowledge.totals("handbook"))[0] == FILES

    qtbot.mouseClick(window.indexing, Qt.MouseButton.LeftButton)  # opens Settings → Knowledge
    again = window._settings_dialog
    assert again is not dialog
    qtbot.waitUntil(lambda: again.isVisible() and again.loaded.done(), timeout=WAIT_MS)
    assert again.pages.currentWidget() is again.knowledge
    qtbot.waitUntil(lambda: again.knowledge.problems.tree.topLevelItemCount() == 1, timeout=WAIT_MS)
    assert again.knowledge.progress.text().startswith("Indexed handbook")  # the window's last run


def test_attach_a_base_in_the_project_dialog_the_agent_editor_and_a_chats_context(
    harness: Any, tmp_path: Path
) -> None:
    folder = handbook(tmp_path / "handbook")
    window = harness.open()
    qtbot = harness.qtbot
    harness.run(harness.engine.knowledge.add("handbook", [folder]))
    harness.run(harness.engine.knowledge.add("recipes", [tmp_path]))

    # The project dialog: a new project with "handbook" ticked.
    scope = window.sidebar.project_scope
    qtbot.mouseClick(scope.view.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.findChild(ProjectDialog) is not None, timeout=WAIT_MS)
    project_dialog = window.findChild(ProjectDialog)
    qtbot.waitUntil(project_dialog.knowledge_loaded.done, timeout=WAIT_MS)
    assert project_dialog.knowledge.list.count() == 2 and ticked(project_dialog.knowledge.list) == set()
    qtbot.keyClicks(project_dialog.name, "Pumps")
    tick(qtbot, project_dialog.knowledge.list, "handbook")
    assert ticked(project_dialog.knowledge.list) == {"handbook"}
    with qtbot.waitSignal(project_dialog.accepted, timeout=WAIT_MS):  # once the engine stored both
        qtbot.mouseClick(project_dialog.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: any(p.name == "Pumps" for p in scope.view.projects), timeout=WAIT_MS)
    pid = next(p.id for p in scope.view.projects if p.name == "Pumps")
    assert stored_base(harness, "handbook").attached == ((AttachScope.PROJECT, pid),)
    assert stored_base(harness, "recipes").attached == ()

    # Editing the project shows it ticked; unticking detaches it.
    scope.edit_project(pid)
    qtbot.waitUntil(lambda: isinstance(QApplication.activeModalWidget(), ProjectDialog), timeout=WAIT_MS)
    edit_dialog = QApplication.activeModalWidget()
    qtbot.waitUntil(lambda: ticked(edit_dialog.knowledge.list) == {"handbook"}, timeout=WAIT_MS)
    tick(qtbot, edit_dialog.knowledge.list, "handbook")
    tick(qtbot, edit_dialog.knowledge.list, "recipes")
    with qtbot.waitSignal(edit_dialog.accepted, timeout=WAIT_MS):
        qtbot.mouseClick(edit_dialog.save_button, Qt.MouseButton.LeftButton)
    assert stored_base(harness, "handbook").attached == ()
    assert stored_base(harness, "recipes").attached == ((AttachScope.PROJECT, pid),)

    # A chat's Context…: "handbook" for this chat alone.
    tab = new_tab_by_click(harness)
    qtbot.mouseClick(tab.context_strip.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.findChild(ContextDialog) is not None, timeout=WAIT_MS)
    context = tab.findChild(ContextDialog)
    qtbot.waitUntil(lambda: context.knowledge.list.count() == 2, timeout=WAIT_MS)
    tick(qtbot, context.knowledge.list, "handbook")
    with qtbot.waitSignal(context.accepted, timeout=WAIT_MS):
        qtbot.mouseClick(context.save_button, Qt.MouseButton.LeftButton)
    assert stored_base(harness, "handbook").attached == ((AttachScope.SESSION, tab.session_id),)

    # Settings → Agents: the default agent draws on "handbook" too.
    window.open_settings("agents")
    settings = window._settings_dialog
    qtbot.waitUntil(lambda: settings.isVisible() and settings.loaded.done(), timeout=WAIT_MS)
    agents = settings.agents
    agents.tabs.setCurrentIndex(agents.tabs.count() - 1)
    assert agents.tabs.tabText(agents.tabs.currentIndex()) == "Knowledge"
    qtbot.waitUntil(lambda: agents.knowledge.list.count() == 2, timeout=WAIT_MS)
    tick(qtbot, agents.knowledge.list, "handbook")
    qtbot.mouseClick(agents.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: agents.message.text() == "Saved Default.", timeout=WAIT_MS)
    assert set(stored_base(harness, "handbook").attached) == {
        (AttachScope.SESSION, tab.session_id),
        (AttachScope.AGENT, DEFAULT_AGENT_ID),
    }

    # Settings → Knowledge shows where it is attached; unticking the agent there detaches it.
    settings.open_page("knowledge")
    page = settings.knowledge
    page.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: ticked(page.attach.agents) == {"Default"}, timeout=WAIT_MS)  # read again
    assert page.title.text() == "handbook" and ticked(page.attach.projects) == set()
    assert page.attach.chats.text().startswith("Also attached to 1 chat")
    tick(qtbot, page.attach.agents, "Default")
    qtbot.waitUntil(
        lambda: stored_base(harness, "handbook").attached == ((AttachScope.SESSION, tab.session_id),),
        timeout=WAIT_MS,
    )
    tick(qtbot, page.attach.projects, "Pumps")
    qtbot.waitUntil(
        lambda: (AttachScope.PROJECT, pid) in stored_base(harness, "handbook").attached, timeout=WAIT_MS
    )


def test_edit_a_base_rename_it_and_change_its_folders(harness: Any, tmp_path: Path) -> None:
    first = handbook(tmp_path / "first")
    second = tmp_path / "second"
    second.mkdir()
    (second / "extra.md").write_text("# Extra\n\nThe osprey section.\n", encoding="utf-8")
    harness.open()
    qtbot = harness.qtbot
    harness.run(harness.engine.knowledge.add("handbook", [first]))
    dialog = open_knowledge_page(harness)
    page = dialog.knowledge
    qtbot.waitUntil(lambda: page.title.text() == "handbook", timeout=WAIT_MS)
    qtbot.mouseClick(page.edit_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.editor is not None and page.editor.isVisible(), timeout=WAIT_MS)
    editor = page.editor
    editor.name.selectAll()
    qtbot.keyClicks(editor.name, "manuals")
    editor.paths.setCurrentRow(0)
    qtbot.mouseClick(editor.remove_path, Qt.MouseButton.LeftButton)
    assert not editor.save_button.isEnabled()  # a base needs a folder
    editor.ask_files = lambda: [second / "extra.md"]
    qtbot.mouseClick(editor.add_files, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(editor.accepted, timeout=WAIT_MS):
        qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.title.text() == "manuals", timeout=WAIT_MS)
    assert page.message.text() == "Saved manuals."
    assert page.folders.text() == str(second / "extra.md")
    assert [b.name for b in harness.run(harness.engine.knowledge.bases())] == ["manuals"]


def test_pause_then_resume_and_cancel_from_the_page(harness: Any, tmp_path: Path) -> None:
    """Pause pressed at once after Index now stops the run after its first file (the engine's
    run had not begun when the click came); Resume carries on; Cancel stops too."""
    folder = handbook(tmp_path / "handbook")
    window = harness.open()
    qtbot = harness.qtbot
    harness.run(harness.engine.knowledge.add("handbook", [folder]))
    dialog = open_knowledge_page(harness)
    page = dialog.knowledge
    qtbot.waitUntil(lambda: page.title.text() == "handbook", timeout=WAIT_MS)
    jobs = window.indexing.jobs
    total = FILES + 1

    with qtbot.waitSignal(jobs.finished, timeout=WAIT_MS) as paused:
        qtbot.mouseClick(page.index_button, Qt.MouseButton.LeftButton)
        qtbot.mouseClick(page.pause_button, Qt.MouseButton.LeftButton)
    report = paused.args[1]
    assert report.cancelled and report.progress.files_done == 1
    assert page.progress.text().startswith(f"Paused handbook at 1 of {total} files; Resume carries on")
    assert window.indexing.text() == page.progress.text()
    assert page.index_button.text() == "Resume" and page.index_button.isVisible()

    with qtbot.waitSignal(jobs.finished, timeout=WAIT_MS) as resumed:
        qtbot.mouseClick(page.index_button, Qt.MouseButton.LeftButton)
    assert not resumed.args[1].cancelled and resumed.args[1].progress.files_done == total
    assert page.index_button.text() == "Index now"
    qtbot.waitUntil(lambda: page.totals.text().startswith(f"Indexed: {FILES} files"), timeout=WAIT_MS)

    def cancel_at_once(name: str) -> None:
        qtbot.mouseClick(page.cancel_button, Qt.MouseButton.LeftButton)

    jobs.started.connect(cancel_at_once)  # Cancel as soon as the button shows
    with qtbot.waitSignal(jobs.finished, timeout=WAIT_MS) as cancelled:
        qtbot.mouseClick(page.rebuild_button, Qt.MouseButton.LeftButton)  # drops the index, starts again
    jobs.started.disconnect(cancel_at_once)
    assert cancelled.args[1].cancelled and cancelled.args[1].progress.files_done == 1
    assert page.progress.text().startswith(f"Stopped indexing handbook at 1 of {total} files")
    assert "what was indexed is kept." in page.progress.text()
    assert page.index_button.text() == "Index now"
    qtbot.waitUntil(lambda: page.totals.text() == "Not indexed yet: press Index now.", timeout=WAIT_MS)


def test_pick_an_embedding_model_index_with_it_then_go_back_to_keywords(harness: Any, tmp_path: Path) -> None:
    from tests.support.embedding_server import EmbeddingServer

    from threadline.core.config import ProviderConfig, ProviderKind

    folder = handbook(tmp_path / "handbook")
    window = harness.open()
    qtbot = harness.qtbot
    with EmbeddingServer() as server:
        harness.run(
            harness.engine.providers.save_provider(
                ProviderConfig("embedder", ProviderKind.OPENAI, base_url=server.base_url)
            )
        )
        dialog = open_knowledge_page(harness)
        page = dialog.knowledge
        qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.editor is not None and page.editor.isVisible(), timeout=WAIT_MS)
        editor = page.editor
        qtbot.waitUntil(lambda: editor.provider.findText("embedder") >= 0, timeout=WAIT_MS)
        qtbot.keyClicks(editor.name, "handbook")
        editor.ask_folder = lambda: [folder]
        qtbot.mouseClick(editor.add_folder, Qt.MouseButton.LeftButton)
        editor.provider.setFocus()
        qtbot.keyClicks(editor.provider, "emb")  # typing a name picks it, as in any list
        assert editor.provider.currentText() == "embedder" and editor.model.isEnabled()
        assert not editor.save_button.isEnabled()  # a provider needs a model
        qtbot.keyClicks(editor.model.lineEdit(), "fake-embed")
        with qtbot.waitSignal(editor.accepted, timeout=WAIT_MS):
            qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.title.text() == "handbook", timeout=WAIT_MS)
        assert page.search_mode.text() == "Search: keywords and meaning, with fake-embed on embedder"

        with qtbot.waitSignal(window.indexing.jobs.finished, timeout=WAIT_MS) as done:
            qtbot.mouseClick(page.index_button, Qt.MouseButton.LeftButton)
        if vector_support():  # this Python's SQLite cannot load sqlite-vec: the page says so
            assert done.args[1].embedding_notice.startswith("Keyword search only")
            assert page.progress.text().endswith(done.args[1].embedding_notice)
        else:
            assert done.args[1].embedding_notice == "" and "chunks written." in page.progress.text()
            assert server.requests and all(r["model"] == "fake-embed" for r in server.requests)
        qtbot.waitUntil(lambda: page.totals.text().startswith(f"Indexed: {FILES} files"), timeout=WAIT_MS)

        qtbot.mouseClick(page.edit_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.editor is not editor and page.editor.isVisible(), timeout=WAIT_MS)
        again = page.editor
        qtbot.waitUntil(lambda: again.provider.currentText() == "embedder", timeout=WAIT_MS)
        assert again.model.currentText() == "fake-embed"
        again.provider.setFocus()
        qtbot.keyClicks(again.provider, "Key")
        assert again.provider.currentText() == KEYWORD_ONLY and not again.model.isEnabled()
        with qtbot.waitSignal(again.accepted, timeout=WAIT_MS):
            qtbot.mouseClick(again.save_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(
            lambda: (
                page.search_mode.text() == f"Search: {KEYWORD_ONLY}"
                and page.totals.text() == "Not indexed yet: press Index now."
            ),  # another model: rebuilt
            timeout=WAIT_MS,
        )


def test_a_run_that_fails_is_told_on_the_page_and_the_status_bar_lets_go(
    harness: Any, tmp_path: Path
) -> None:
    """The base was removed elsewhere (``threadline kb remove`` in a terminal) while the page showed it."""
    folder = handbook(tmp_path / "handbook")
    window = harness.open()
    qtbot = harness.qtbot
    harness.run(harness.engine.knowledge.add("handbook", [folder]))
    dialog = open_knowledge_page(harness)
    page = dialog.knowledge
    qtbot.waitUntil(lambda: page.title.text() == "handbook", timeout=WAIT_MS)
    harness.run(harness.engine.knowledge.remove("handbook"))
    with qtbot.waitSignal(window.indexing.jobs.failed, timeout=WAIT_MS):
        qtbot.mouseClick(page.index_button, Qt.MouseButton.LeftButton)
    assert page.message.text().startswith("Indexing handbook stopped: There is no knowledge base named")
    assert not window.indexing.isVisible()
    assert page.index_button.isVisible() and not page.pause_button.isVisible()


def test_a_refusing_embedding_server_is_waited_for_shown_and_every_chunk_embedded_when_it_answers(
    harness: Any, tmp_path: Path
) -> None:
    from tests.support.embedding_server import EmbeddingServer, closed_port

    from threadline.core.config import ProviderConfig, ProviderKind

    if vector_support():
        return  # this Python's SQLite cannot load sqlite-vec: no vectors to wait for
    folder = handbook(tmp_path / "handbook")
    window = harness.open()
    qtbot = harness.qtbot
    port = closed_port()
    address = f"http://127.0.0.1:{port}/v1"
    knowledge = harness.engine.knowledge
    harness.run(
        harness.engine.providers.save_provider(
            ProviderConfig("ollama", ProviderKind.OPENAI, base_url=address)
        )
    )
    harness.run(knowledge.add("handbook", [folder], embed_provider="ollama", embed_model="nomic-embed-text"))
    dialog = open_knowledge_page(harness)
    page = dialog.knowledge
    qtbot.waitUntil(lambda: page.title.text() == "handbook", timeout=WAIT_MS)
    waiting = (
        f"Waiting for the embedding server at {address} (connection refused); "
        "indexing resumes when it answers."
    )

    qtbot.mouseClick(page.index_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.progress.text().startswith(waiting), timeout=WAIT_MS)
    assert window.indexing.text() == "Indexing handbook: waiting for the embedding server"
    with qtbot.waitSignal(window.indexing.jobs.finished, timeout=WAIT_MS):
        qtbot.mouseClick(page.pause_button, Qt.MouseButton.LeftButton)
    chunks = harness.run(knowledge.totals("handbook"))[1]
    assert chunks > 0 and harness.run(knowledge.unembedded("handbook")) == chunks
    assert page.progress.text().startswith("Paused handbook while waiting for the embedding server;")
    assert (
        f"{chunks:,} chunks have no vectors yet: the embedding server at {address} (connection refused)"
        in (page.progress.text())
    )
    qtbot.waitUntil(
        lambda: f"{chunks:,} of {chunks:,} chunks have no vectors yet" in page.search_mode.text(),
        timeout=WAIT_MS,
    )

    qtbot.mouseClick(page.index_button, Qt.MouseButton.LeftButton)  # Resume: still refused, so it waits
    qtbot.waitUntil(lambda: page.progress.text().startswith(waiting), timeout=WAIT_MS)
    with (
        EmbeddingServer(port=port) as server,
        qtbot.waitSignal(window.indexing.jobs.finished, timeout=WAIT_MS) as done,
    ):
        pass  # the server answers now: the run carries on by itself
    assert done.args[1].embedding_notice == "" and server.requests
    assert harness.run(knowledge.unembedded("handbook")) == 0
    index = harness.run(knowledge.opened())
    base_id = harness.run(knowledge.base("handbook")).id
    vectors = index._db.execute("SELECT COUNT(*) FROM chunk_vectors").fetchone()[0]
    assert vectors == index.totals(base_id)[1] == chunks
    qtbot.waitUntil(
        lambda: page.search_mode.text() == "Search: keywords and meaning, with nomic-embed-text on ollama",
        timeout=WAIT_MS,
    )
