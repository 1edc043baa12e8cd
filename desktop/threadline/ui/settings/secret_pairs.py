"""Rows of name / value pairs whose values are secrets unless marked otherwise (MCP env and headers,
provider headers).

Each row has a name, a password-style value with a Show toggle, a "Not a secret" check box and
a remove button. A value kept in the keychain comes back as the marker ``STORED_IN_KEYCHAIN``:
its row shows an empty field whose placeholder says so, and leaving the field empty keeps the
stored value (the way the Providers page treats API keys); typing replaces it. A row marked
"Not a secret" shows its value in clear text and the server manager keeps it in the settings.
Provider headers have no such box (``allow_public=False``): their values are always secrets.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from threadline.tools.mcp.config import InvalidServerConfig
from threadline.tools.mcp.secrets import STORED_IN_KEYCHAIN

KEPT_PLACEHOLDER = "•••••• stored in keychain (type to replace)"


class SecretPairRow(QWidget):
    """One name / value pair."""

    def __init__(self, name_hint: str, parent: QWidget | None = None, *, allow_public: bool = True) -> None:
        super().__init__(parent)
        self.stored = False
        """The value is in the keychain; an empty field keeps it."""
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        self.name = QLineEdit()
        self.name.setPlaceholderText(name_hint)
        self.value = QLineEdit()
        self.value.setPlaceholderText("value, or ${VAR} to read it from Threadline's environment")
        self.value.setEchoMode(QLineEdit.EchoMode.Password)
        self.show_value = QToolButton()
        self.show_value.setText("Show")
        self.show_value.setCheckable(True)
        self.show_value.setToolTip("Show the value typed here (a value kept in the keychain stays hidden)")
        self.show_value.toggled.connect(self._update_echo)
        self.public = QCheckBox("Not a secret")
        self.public.setToolTip("Keep this value in Threadline's settings instead of the system keychain")
        self.public.toggled.connect(self._update_echo)
        self.remove = QToolButton()
        self.remove.setText("✕")
        self.remove.setToolTip("Remove this row")
        row.addWidget(self.name, 2)
        row.addWidget(self.value, 3)
        row.addWidget(self.show_value)
        row.addWidget(self.public)
        self.public.setVisible(allow_public)
        row.addWidget(self.remove)

    def set_pair(self, name: str, value: str, public: bool) -> None:
        self.name.setText(name)
        self.stored = value == STORED_IN_KEYCHAIN
        self.value.setText("" if self.stored else value)
        if self.stored:
            self.value.setPlaceholderText(KEPT_PLACEHOLDER)
        self.public.setChecked(public)
        self._update_echo()

    def masked(self) -> bool:
        return self.value.echoMode() is QLineEdit.EchoMode.Password

    def pair(self) -> tuple[str, str] | None:
        """``(name, value)``; ``None`` for an empty row. The keychain marker for a kept value."""
        name, value = self.name.text().strip(), self.value.text()
        if not name:
            if value or self.stored:
                raise InvalidServerConfig("A row has a value but no name: give it a name or remove the row.")
            return None
        if self.stored and not value:
            return name, STORED_IN_KEYCHAIN
        return name, value.strip()

    def _update_echo(self, *_: object) -> None:
        clear = self.public.isChecked() or self.show_value.isChecked()
        self.value.setEchoMode(QLineEdit.EchoMode.Normal if clear else QLineEdit.EchoMode.Password)


class SecretPairsEditor(QWidget):
    """A list of ``SecretPairRow`` and an Add button; ``pairs()`` gives the values and public names."""

    def __init__(
        self, name_hint: str, add_label: str, parent: QWidget | None = None, *, allow_public: bool = True
    ) -> None:
        super().__init__(parent)
        self._name_hint = name_hint
        self._allow_public = allow_public
        self.rows: list[SecretPairRow] = []
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(4)
        self._rows_layout = QVBoxLayout()
        self._rows_layout.setSpacing(4)
        outer.addLayout(self._rows_layout)
        self.add_button = QPushButton(add_label)
        self.add_button.setObjectName("SecondaryButton")
        self.add_button.clicked.connect(lambda: self.add_row())
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addStretch(1)
        outer.addLayout(buttons)

    def add_row(self, name: str = "", value: str = "", public: bool = False) -> SecretPairRow:
        row = SecretPairRow(self._name_hint, self, allow_public=self._allow_public)
        row.set_pair(name, value, public)
        row.remove.clicked.connect(lambda: self._remove(row))
        self.rows.append(row)
        self._rows_layout.addWidget(row)
        row.show()  # the layout would show it only on the next event-loop turn
        if not name:
            row.name.setFocus()
        return row

    def set_pairs(self, pairs: dict[str, str], public: tuple[str, ...]) -> None:
        for row in list(self.rows):
            self._remove(row)
        for name, value in pairs.items():
            self.add_row(name, value, name in public)

    def pairs(self) -> tuple[dict[str, str], tuple[str, ...]]:
        """The values by name, and the names marked "Not a secret"; raises on a bad or repeated name."""
        values: dict[str, str] = {}
        public: list[str] = []
        for row in self.rows:
            pair = row.pair()
            if pair is None:
                continue
            name, value = pair
            if name in values:
                raise InvalidServerConfig(f"{name} is given twice: keep one row for it.")
            values[name] = value
            if row.public.isChecked():
                public.append(name)
        return values, tuple(public)

    def _remove(self, row: SecretPairRow) -> None:
        self.rows.remove(row)
        self._rows_layout.removeWidget(row)
        row.deleteLater()
