"""Settings → Data: where the conversations are, and "Use a server database".

The section shows the database this window uses (the data folder's file, or a server
named without its password) and a form for a PostgreSQL server: host, port, database,
user, password, TLS mode and CA file. Nothing here opens the store: the window keeps the
database it started with, and the choice saved here (``database.json`` in the data
folder, see ``threadline.engine.database_choice``) takes effect at the next start. Every
step that touches a database, the keychain or the choice file goes through
``engine.database`` (``engine/database_setup.py``); this widget keeps the form and its words.

* **Test connection** asks the engine to connect once (``engine.database.probe``, off the
  event loop) and says in plain words whether it worked and what the database holds.
* **Copy my conversations there** is offered once a test found the server's database
  empty: the engine copies (progress, then counts and checksums compared).
* **Save** stores the password in the system keychain — only then, and never in a file —
  and writes the choice. **Back to the local file** switches back.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from threadline.engine.api import DatabaseApi
from threadline.engine.database_choice import (
    DEFAULT_PORT,
    PASSWORD_VARIABLE,
    DatabaseChoice,
    DatabaseChoiceError,
    ServerChoice,
)
from threadline.engine.database_probe import ProbeResult, ServerContents
from threadline.engine.database_setup import CopyResult
from threadline.ui.common.message_bridge import MessageLevel, UserMessage
from threadline.ui.common.tasks import spawn
from threadline.ui.settings.page_layout import hint_label, section_title

TLS_CHOICES = (
    ("prefer", "When the server offers it (prefer)"),
    ("require", "Always (require)"),
    ("verify-full", "Always, and check the certificate (verify-full)"),
    ("disable", "Never (disable)"),
)
SERVER_HINT = (
    "Keep your conversations in a PostgreSQL database to use them from several computers. "
    "The password is kept in the system keychain, never in a file. The switch happens when "
    "Threadline next starts."
)
STORED_PLACEHOLDER = "stored in the system keychain — type to replace"


class DatabaseSection(QWidget):
    """The "where" line and the server form; ``database`` (``engine.database``) does the work.

    Without a known data folder (``enabled`` false) the buttons are off: the choice lives there.
    """

    saved = Signal()

    def __init__(self, database: DatabaseApi, *, enabled: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("DatabaseSection")
        self.database_facet = database
        self.enabled = enabled
        self._tested_empty: ServerChoice | None = None
        self._copying = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)

        layout.addWidget(section_title("Where your conversations are"))
        self.in_use = QLabel(database.in_use())
        self.in_use.setObjectName("DatabaseInUse")
        self.in_use.setWordWrap(True)
        self.in_use.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.in_use)
        self.next_start = hint_label("")
        self.next_start.setObjectName("Hint")
        layout.addWidget(self.next_start)

        layout.addSpacing(8)
        layout.addWidget(section_title("Use a server database"))
        layout.addWidget(hint_label(SERVER_HINT))
        layout.addLayout(self._form())
        self.message = QLabel()
        self.message.setObjectName("DatabaseMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.message)
        layout.addLayout(self._buttons())
        self._fill_from_file()

    # -- building -------------------------------------------------------------------------

    def _form(self) -> QFormLayout:
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.host = QLineEdit()
        self.host.setPlaceholderText("e.g. db.example.org or 192.168.1.20")
        form.addRow("&Host", self.host)
        self.port = QSpinBox()
        self.port.setRange(1, 65535)
        self.port.setValue(DEFAULT_PORT)
        self.port.setFixedWidth(110)
        form.addRow("P&ort", self.port)
        self.database = QLineEdit("threadline")
        form.addRow("&Database", self.database)
        self.user = QLineEdit()
        form.addRow("&User", self.user)
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setPlaceholderText("not stored")
        form.addRow("&Password", self.password)
        self.tls = QComboBox()
        for value, label in TLS_CHOICES:
            self.tls.addItem(label, value)
        form.addRow("&TLS", self.tls)
        ca_row = QHBoxLayout()
        self.ca_file = QLineEdit()
        self.ca_file.setPlaceholderText("only needed to check the server's certificate")
        ca_row.addWidget(self.ca_file, 1)
        self.browse_ca = QPushButton("Browse…")
        self.browse_ca.setObjectName("SecondaryButton")
        self.browse_ca.clicked.connect(self._browse_ca)
        ca_row.addWidget(self.browse_ca)
        ca_label = QLabel("&CA file")
        ca_label.setBuddy(self.ca_file)
        form.addRow(ca_label, ca_row)
        for field in (self.host, self.port, self.database, self.user, self.password, self.tls):
            row_label = form.labelForField(field)
            if isinstance(row_label, QLabel):
                field.setAccessibleName(row_label.text().replace("&", ""))
        self.ca_file.setAccessibleName("CA file")
        for edit in (self.host, self.database, self.user, self.password, self.ca_file):
            edit.textEdited.connect(self._form_changed)
        self.port.valueChanged.connect(self._form_changed)
        self.tls.currentIndexChanged.connect(self._form_changed)
        return form

    def _buttons(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.test_button = QPushButton("Test connection")
        self.test_button.setObjectName("SecondaryButton")
        self.test_button.clicked.connect(self.test_connection)
        row.addWidget(self.test_button)
        self.copy_button = QPushButton("Copy my conversations there")
        self.copy_button.setObjectName("SecondaryButton")
        self.copy_button.setToolTip("Offered when a test found the server's database empty")
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy_conversations)
        row.addWidget(self.copy_button)
        row.addStretch(1)
        self.local_button = QPushButton("Back to the local file")
        self.local_button.setObjectName("SecondaryButton")
        self.local_button.clicked.connect(self.back_to_local_file)
        row.addWidget(self.local_button)
        self.save_button = QPushButton("Save")
        self.save_button.setObjectName("PrimaryButton")
        self.save_button.clicked.connect(self.save)
        row.addWidget(self.save_button)
        if not self.enabled:
            for b in (self.test_button, self.copy_button, self.local_button, self.save_button):
                b.setEnabled(False)
        return row

    def _fill_from_file(self) -> None:
        if not self.enabled:
            return
        try:
            choice = self.database_facet.load_choice()
        except DatabaseChoiceError as err:
            self._say(err.user_message, error=True)
            return
        server = choice.server
        if server is not None:
            self.host.setText(server.host)
            self.port.setValue(server.port)
            self.database.setText(server.database)
            self.user.setText(server.user)
            self.tls.setCurrentIndex(max(0, self.tls.findData(server.tls)))
            self.ca_file.setText(server.ca_file)
            spawn(
                self.database_facet.has_stored_password(server),
                tell=self,
                on_done=self._show_stored,
                name="database-keychain-check",
            )
        self._show_next_start(choice)

    def _show_stored(self, stored: bool) -> None:
        """The keychain is asked off the GUI thread (it may wait on D-Bus or an unlock prompt)."""
        if stored and shiboken6.isValid(self) and not self.password.text():
            self.password.setPlaceholderText(STORED_PLACEHOLDER)

    def _show_next_start(self, choice: DatabaseChoice) -> None:
        if choice.uses_server and choice.server is not None:
            text = f"Chosen for the next start: the server database {choice.server.describe()}."
        else:
            text = "Chosen for the next start: the local file in the data folder."
        self.next_start.setText(text)
        self.local_button.setEnabled(choice.uses_server)

    # -- the form -------------------------------------------------------------------------

    def server_choice(self) -> ServerChoice:
        return ServerChoice(
            host=self.host.text().strip(),
            port=self.port.value(),
            database=self.database.text().strip(),
            user=self.user.text().strip(),
            tls=str(self.tls.currentData()),
            ca_file=self.ca_file.text().strip(),
        )

    def _form_changed(self, *_: object) -> None:
        self._tested_empty = None
        if not self._copying:
            self.copy_button.setEnabled(False)

    def _browse_ca(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "CA file", self.ca_file.text(), "Certificates (*.pem *.crt *.cer);;All files (*)"
        )
        if path:
            self.ca_file.setText(path)
            self._form_changed()

    def show_user_message(self, message: UserMessage) -> None:
        """This section's line, for the settings dialog (docs/ui-layout.md, "Telling the user")."""
        if shiboken6.isValid(self):
            self._say(message.text, error=message.level is not MessageLevel.INFO)

    def _say(self, text: str, *, error: bool = False) -> None:
        self.message.setObjectName("FormError" if error else "DatabaseMessage")
        self.message.style().unpolish(self.message)
        self.message.style().polish(self.message)
        self.message.setText(text)

    def _checked_server(self) -> ServerChoice | None:
        server = self.server_choice()
        problems = server.problems()
        if problems:
            self._say(" ".join(problems), error=True)
            return None
        return server

    # -- actions --------------------------------------------------------------------------

    def test_connection(self) -> None:
        server = self._checked_server()
        if server is None:
            return
        typed = self.password.text()
        self._say(f"Connecting to {server.describe()}…")
        self.test_button.setEnabled(False)

        def done(result: ProbeResult) -> None:
            if not shiboken6.isValid(self):
                return
            self.test_button.setEnabled(True)
            usable = result.contents in (ServerContents.EMPTY, ServerContents.THREADLINE)
            self._say(result.message, error=not (result.ok and usable))
            empty = result.ok and result.contents is ServerContents.EMPTY
            self._tested_empty = server if empty else None
            self.copy_button.setEnabled(empty and not self._copying)

        def failed(_err: BaseException) -> None:
            if shiboken6.isValid(self):
                self.test_button.setEnabled(True)

        probe = self.database_facet.probe(server, typed)
        spawn(probe, tell=self, on_done=done, on_failed=failed, name="database-test")

    def copy_conversations(self) -> None:
        server = self._tested_empty
        if server is None or server != self.server_choice() or self._copying:
            return
        typed = self.password.text()
        self._copying = True
        self.copy_button.setEnabled(False)
        self._say(f"Copying your conversations to {server.describe()}…")

        def done(report: CopyResult) -> None:
            self._copying = False
            if not shiboken6.isValid(self):
                return
            self._tested_empty = None
            self._say(report.message, error=not report.identical)

        def failed(_err: BaseException) -> None:
            self._copying = False
            if shiboken6.isValid(self):
                self.copy_button.setEnabled(self._tested_empty is not None)

        copy = self.database_facet.copy_to(server, typed, self._progress)
        spawn(copy, tell=self, on_done=done, on_failed=failed, context="Not copied", name="database-copy")

    def _progress(self, table: str, rows: int) -> None:
        if self._copying and shiboken6.isValid(self):
            self._say(f"Copying your conversations… {table}: {rows:,} rows")

    def save(self) -> None:
        server = self._checked_server()
        if server is None or not self.enabled:
            return
        typed = self.password.text()

        def done(outcome: tuple[DatabaseChoice, bool]) -> None:
            if not shiboken6.isValid(self):
                return
            choice, stored = outcome
            self.password.clear()
            self.password.setPlaceholderText(STORED_PLACEHOLDER if stored else "not stored")
            note = (
                ""
                if stored or typed
                else (f" No password is stored: the server must not need one, or set {PASSWORD_VARIABLE}.")
            )
            self._say(
                f"Saved. Restart Threadline to switch to the server database {server.describe()}." + note
            )
            self._show_next_start(choice)
            self.saved.emit()

        spawn(self.database_facet.save_server(server, typed), tell=self, on_done=done, name="database-save")

    def back_to_local_file(self) -> None:
        if not self.enabled:
            return
        try:
            choice = self.database_facet.use_local_file()
        except DatabaseChoiceError as err:
            self._say(f"Not saved: {err.user_message}", error=True)
            return
        self._say("Saved. Restart Threadline to switch back to the local file in the data folder.")
        self._show_next_start(choice)
        self.saved.emit()
