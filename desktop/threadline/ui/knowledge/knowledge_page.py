"""Settings → Knowledge: the knowledge bases, their indexing, and where they are attached.

The list on the left holds the bases; the right side shows the selected one: its folders,
how it is searched (with an embedding model, or keyword search only, said plainly), what
is indexed, the run in progress (files, chunks, speed, time left) with Pause and Cancel,
the files the last run could not read and why, and the projects and agents it is attached
to (ticking one attaches it at once). Add and Edit open ``BaseEditor``; Remove asks first
and says the files are not touched. Runs belong to the window's ``IndexJobs``, so closing
Settings does not stop one (docs/knowledge.md, "In the window").
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from threadline.core.knowledge import KnowledgeBase
from threadline.ui.common.message_bridge import UserMessage
from threadline.ui.common.tasks import spawn
from threadline.ui.knowledge.base_editor import KEYWORD_ONLY, BaseEditor
from threadline.ui.knowledge.base_panels import AttachLists, ProblemList
from threadline.ui.knowledge.index_jobs import CANCELLED, PAUSED, IndexJobs, long_line, outcome_line

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi
    from threadline.knowledge import IndexReport, Progress

EMPTY = (
    "No knowledge bases yet.\n\nA knowledge base is a set of your folders and files that "
    "Threadline indexes on this computer, so a chat can draw on documents far larger than its "
    "context window. Add one, then attach it to a project, an agent or a chat."
)


def search_line(base: KnowledgeBase, unembedded: int = 0, chunks: int = 0) -> str:
    """How the base is searched, and how much of it has no vectors yet (found by keywords only)."""
    if not base.embeds:
        return f"Search: {KEYWORD_ONLY}"
    text = f"Search: keywords and meaning, with {base.embed_model} on {base.embed_provider}"
    if unembedded:
        text += (
            f"\n{unembedded:,} of {chunks:,} chunks have no vectors yet, so meaning does not find them: "
            "the embedding server did not answer. Index now makes them when it answers."
        )
    return text


def totals_line(files: int, chunks: int, chars: int) -> str:
    if not files:
        return "Not indexed yet: press Index now."
    size = f"{chars / 1_000_000:,.1f} MB" if chars >= 100_000 else f"{chars / 1000:,.1f} kB"
    return f"Indexed: {files:,} file{'s' if files != 1 else ''}, {chunks:,} chunks ({size} of text)"


class KnowledgePage(QWidget):
    def __init__(
        self, engine: EngineApi, jobs: IndexJobs | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("KnowledgePage")
        self.engine = engine
        self.jobs = jobs if jobs is not None else IndexJobs(engine.knowledge, self, self)
        self.bases: list[KnowledgeBase] = []
        self.editor: BaseEditor | None = None
        self.remove_question: QMessageBox | None = None
        self._loaded = False
        layout = QHBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 16)
        layout.setSpacing(14)

        left = QVBoxLayout()
        self.list = QListWidget()
        self.list.setObjectName("ProviderList")
        self.list.setAccessibleName("Knowledge bases")
        self.list.setMinimumWidth(180)
        self.list.setMaximumWidth(240)
        self.list.currentItemChanged.connect(lambda *_: self._show_selected())
        left.addWidget(self.list, 1)
        self.add_button = self._button("Add knowledge base…", self.add_base)
        left.addWidget(self.add_button)
        layout.addLayout(left)

        right = QVBoxLayout()
        right.setSpacing(6)
        self.title = QLabel()
        self.title.setObjectName("SectionTitle")
        self.folders = self._label("KnowledgeFolders", selectable=True)
        self.search_mode = self._label("KnowledgeSearchMode")
        self.totals = self._label("KnowledgeTotals")
        for widget in (self.title, self.folders, self.search_mode, self.totals):
            right.addWidget(widget)
        self.bar = QProgressBar()
        self.bar.setObjectName("KnowledgeProgress")
        self.bar.setAccessibleName("Indexing progress")
        self.bar.setTextVisible(False)
        self.bar.setMaximumHeight(8)
        right.addWidget(self.bar)
        self.progress = self._label("KnowledgeProgressText", hint=True)
        right.addWidget(self.progress)
        run_row = QHBoxLayout()
        self.index_button = self._button("Index now", self.index_now, primary=True)
        self.pause_button = self._button("Pause", lambda: self.jobs.pause(self.current_name()))
        self.cancel_button = self._button("Cancel", lambda: self.jobs.cancel(self.current_name()))
        self.rebuild_button = self._button("Drop index and rebuild", self.rebuild)
        self.rebuild_button.setToolTip("Forget what is indexed and read every file again")
        for button in (self.index_button, self.pause_button, self.cancel_button):
            run_row.addWidget(button)
        run_row.addStretch(1)
        run_row.addWidget(self.rebuild_button)
        right.addLayout(run_row)
        self.attach = AttachLists(engine.knowledge, self)
        self.attach.attachedChanged.connect(self._attached_changed)
        right.addWidget(self.attach)
        self.problems = ProblemList(self)
        right.addWidget(self.problems, 1)
        edit_row = QHBoxLayout()
        edit_row.addStretch(1)
        self.remove_button = self._button("Remove…", self.remove)
        self.edit_button = self._button("Edit…", self.edit_base)
        edit_row.addWidget(self.remove_button)
        edit_row.addWidget(self.edit_button)
        right.addLayout(edit_row)
        self.message = self._label("KnowledgeMessage", hint=True)
        right.addWidget(self.message)
        self.details: list[QWidget] = [
            self.title,
            self.folders,
            self.search_mode,
            self.totals,
            self.bar,
            self.progress,
            self.index_button,
            self.pause_button,
            self.cancel_button,
            self.rebuild_button,
            self.attach,
            self.problems,
            self.remove_button,
            self.edit_button,
        ]
        self.empty = QLabel(EMPTY)
        self.empty.setObjectName("Hint")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        right.addWidget(self.empty, 1)
        layout.addLayout(right, 1)
        self._order_tabs()  # now that the right side's widgets are the page's
        self.jobs.started.connect(self._run_changed)
        self.jobs.progressed.connect(self._progressed)
        self.jobs.finished.connect(self._finished)
        self.jobs.failed.connect(self._run_changed)
        self._show_selected()

    def _button(self, text: str, slot: object, *, primary: bool = False) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName("PrimaryButton" if primary else "SecondaryButton")
        button.setAutoDefault(False)
        button.clicked.connect(slot)
        return button

    def _order_tabs(self) -> None:
        """Tab in the order the page reads: the run's buttons come before the lists under them
        (they were reached after the attach lists, as the widgets joined the page)."""
        chain: list[QWidget] = [
            self.list,
            self.add_button,
            self.index_button,
            self.pause_button,
            self.cancel_button,
            self.rebuild_button,
            self.attach.projects,
            self.attach.agents,
            self.problems.tree,
            self.remove_button,
            self.edit_button,
        ]
        for before, after in pairwise(chain):
            QWidget.setTabOrder(before, after)

    def _label(self, name: str, *, selectable: bool = False, hint: bool = False) -> QLabel:
        label = QLabel()
        label.setObjectName("Hint" if hint else name)
        label.setAccessibleName(name)
        label.setWordWrap(True)
        if selectable:
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    # -- loading -----------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        """Read the bases again each time the page comes into view: Settings → Agents, a
        project or a chat may have attached one meanwhile."""
        super().showEvent(event)
        if self._loaded:
            spawn(self.load(), tell=self, context="Knowledge bases not listed")

    async def load(self, select: str | None = None) -> None:
        self._loaded = True
        self.bases = await self.engine.knowledge.bases()
        await self.attach.load_targets(self.engine)
        keep = select or self.current_name()
        self.list.blockSignals(True)
        self.list.clear()
        for base in self.bases:
            item = QListWidgetItem(base.name)
            item.setData(Qt.ItemDataRole.UserRole, base.name)
            self.list.addItem(item)
        self.list.blockSignals(False)
        names = [b.name for b in self.bases]
        self.list.setCurrentRow(names.index(keep) if keep in names else (0 if names else -1))
        self._show_selected()

    def current_name(self) -> str:
        item = self.list.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else ""

    def current(self) -> KnowledgeBase | None:
        name = self.current_name()
        return next((b for b in self.bases if b.name == name), None)

    def _show_selected(self) -> None:
        base = self.current()
        for widget in self.details:
            widget.setVisible(base is not None)
        self.empty.setVisible(base is None)
        if base is None:
            self.progress.hide()
            self.message.setText("")
            return
        self.title.setText(base.name)
        self.folders.setText("\n".join(base.paths))
        self.search_mode.setText(search_line(base))
        self.attach.show_base(base)
        self._show_run(base.name)
        spawn(self._facts(base.name), tell=self, context="Could not read the index")

    async def _facts(self, name: str) -> None:
        """Totals and problems are read from the index, which may take a moment on a large base."""
        files, chunks, chars = await self.engine.knowledge.totals(name)
        unembedded = await self.engine.knowledge.unembedded(name)
        report = self.jobs.report(name)
        problems = report.problems if report is not None else await self.engine.knowledge.problems(name)
        base = self.current()
        if base is None or name != base.name:
            return
        self.totals.setText(totals_line(files, chunks, chars))
        self.search_mode.setText(search_line(base, 0 if self.jobs.running(name) else unembedded, chunks))
        self.totals.setVisible(not self.jobs.running(name))
        stopped = self.jobs.how_stopped(name) in (PAUSED, CANCELLED) or (
            report is not None and report.cancelled
        )
        self.problems.show_problems(problems, base.paths, indexed=bool(files or problems), partial=stopped)

    def _show_run(self, name: str) -> None:
        running = self.jobs.running(name)
        progress = self.jobs.progress(name)
        report = self.jobs.report(name)
        self.bar.setVisible(running)
        self.totals.setVisible(not running)  # the run's own line says how far it is
        self.pause_button.setVisible(running)
        self.cancel_button.setVisible(running)
        self.index_button.setVisible(not running)
        self.rebuild_button.setEnabled(not running)
        self.edit_button.setEnabled(not running)
        paused = not running and self.jobs.how_stopped(name) == PAUSED
        self.index_button.setText("Resume" if paused else "Index now")
        if running:
            self.bar.setRange(0, 0)  # busy until the files are counted
            self.progress.setText("Reading the folders…")
            if progress is not None:
                self._progressed(name, progress)
        elif report is not None:
            text = outcome_line(name, report, self.jobs.how_stopped(name))
            base = self.current()
            if base is not None and base.embeds and report.embedding_notice:
                text += f" {report.embedding_notice}"
            self.progress.setText(text)
        else:
            self.progress.setText("")
        self.progress.setVisible(bool(self.progress.text()))

    # -- indexing ----------------------------------------------------------------------------

    def index_now(self) -> None:
        name = self.current_name()
        if name:
            self.jobs.start(name)

    def rebuild(self) -> None:
        name = self.current_name()
        if not name:
            return
        self.rebuild_button.setEnabled(False)
        spawn(
            self.engine.knowledge.drop_index(name),
            tell=self,
            on_done=lambda _r: self.jobs.start(name),
            on_failed=lambda _e: self._show_run(name),
            context="The index was not dropped",
        )

    def _run_changed(self, name: str) -> None:
        if name == self.current_name():
            self._show_run(name)

    def _progressed(self, name: str, progress: Progress) -> None:
        if name != self.current_name():
            return
        if progress.files_total:
            self.bar.setRange(0, progress.files_total)
            self.bar.setValue(progress.files_done)
        self.progress.setText(long_line(progress))
        self.progress.show()

    def _finished(self, name: str, _report: IndexReport) -> None:
        if name == self.current_name():
            self._show_run(name)
            spawn(self._facts(name), tell=self, context="Could not read the index")

    # -- editing -----------------------------------------------------------------------------

    def add_base(self) -> None:
        self._open_editor(None)

    def edit_base(self) -> None:
        base = self.current()
        if base is not None:
            self._open_editor(base)

    def _open_editor(self, base: KnowledgeBase | None) -> None:
        editor = BaseEditor(self.engine, base, self)
        self.editor = editor

        def closed(_code: int) -> None:
            if editor.saved is None:
                return
            if base is not None and base.name != editor.saved.name:
                self.jobs.forget(base.name)
            verb = "Added" if base is None else "Saved"
            self._reload(f"{verb} {editor.saved.name}.", editor.saved.name)

        editor.finished.connect(closed)
        editor.open()

    def _reload(self, text: str, select: str | None = None) -> None:
        async def run() -> None:
            await self.load(select)
            self.message.setText(text)

        spawn(run(), tell=self)

    def remove(self) -> None:
        name = self.current_name()
        if not name:
            return
        box = QMessageBox(self)
        box.setObjectName("RemoveKnowledgeQuestion")
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("Remove knowledge base")
        box.setText(f"Remove the knowledge base “{name}”?")
        box.setInformativeText(
            "Its index on this computer is deleted and chats no longer draw on it. "
            "Your files and folders are not touched."
        )
        confirm = box.addButton("Remove", QMessageBox.ButtonRole.DestructiveRole)
        keep = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        box.finished.connect(lambda _code: self._remove(name) if box.clickedButton() is confirm else None)
        self.remove_question = box
        box.open()

    def _remove(self, name: str) -> None:
        self.jobs.cancel(name)

        def done(_r: object) -> None:
            self.jobs.forget(name)
            self._reload(f"Removed {name}. Its files were not touched.")

        spawn(self.engine.knowledge.remove(name), tell=self, on_done=done, context="Not removed")

    def _attached_changed(self, base: KnowledgeBase) -> None:
        self.bases = [base if b.id == base.id else b for b in self.bases]

    def show_user_message(self, message: UserMessage) -> None:
        """This page's line, for the settings dialog (docs/ui-layout.md, "Telling the user")."""
        self.message.setText(message.text)
