"""The settings an MCP bundle asks for (its ``user_config``), as a form in the install dialog.

One row per setting, in the manifest's order: text in a line (a ``sensitive`` one in a
password field, never shown again: on an update it is left empty and the stored one is
kept), a number in a spin box within the manifest's ``min``/``max``, a boolean as a check
box, a folder or file with a Choose… button; a ``multiple`` setting takes one entry per line.
Required rows are marked with ``*``, defaults are filled in. The engine checks the answers
again (``tools/mcp/bundle_launch.check_values``); this form only says early what is missing.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QWidget,
)

from threadline.tools.mcp.bundle_manifest import ConfigOption

Field = QLineEdit | QDoubleSpinBox | QCheckBox | QPlainTextEdit


class ExtensionConfigForm(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ExtensionConfigForm")
        self.layout_ = QFormLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.layout_.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        self.layout_.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.options: tuple[ConfigOption, ...] = ()
        self.fields: dict[str, Field] = {}
        self._kept: set[str] = set()

    def set_options(
        self, options: tuple[ConfigOption, ...], previous: dict[str, Any], kept_secrets: set[str]
    ) -> None:
        """Rows for ``options``; ``previous`` answers (an update) over the defaults; ``kept_secrets``
        are sensitive settings already in the keychain (their rows may stay empty)."""
        self.options = options
        self._kept = kept_secrets
        for option in options:
            value = previous.get(option.key, option.default)
            field = self._field(option, value)
            self.fields[option.key] = field
            field.setAccessibleName(option.title)
            field.setToolTip(option.description)
            label = QLabel(f"{option.title}{' *' if option.required else ''}")
            label.setToolTip(option.description)
            row = QWidget()
            box = QHBoxLayout(row)
            box.setContentsMargins(0, 0, 0, 0)
            box.addWidget(field, 1)
            if option.type in ("directory", "file"):
                choose = QPushButton("Choose…")
                choose.setObjectName("SecondaryButton")
                choose.clicked.connect(lambda _=False, o=option: self._choose(o))
                box.addWidget(choose, 0, Qt.AlignmentFlag.AlignTop)
            self.layout_.addRow(label, row)
            if option.description:
                hint = QLabel(option.description)
                hint.setObjectName("Hint")
                hint.setWordWrap(True)
                hint.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
                self.layout_.addRow("", hint)

    def _field(self, option: ConfigOption, value: Any) -> Field:
        if option.type == "boolean":
            box = QCheckBox()
            box.setChecked(value is True)
            return box
        if option.type == "number":
            spin = QDoubleSpinBox()
            spin.setRange(
                option.min if option.min is not None else -1e12,
                option.max if option.max is not None else 1e12,
            )
            spin.setDecimals(0 if _whole(option.min, option.max, value) else 2)
            if isinstance(value, int | float) and not isinstance(value, bool):
                spin.setValue(float(value))
            return spin
        if option.multiple:
            lines = QPlainTextEdit()
            lines.setPlaceholderText("one per line")
            lines.setFixedHeight(64)
            items = value if isinstance(value, list) else [] if value in (None, "") else [value]
            lines.setPlainText("\n".join(str(v) for v in items))
            return lines
        line = QLineEdit()
        if option.sensitive:
            line.setEchoMode(QLineEdit.EchoMode.Password)
            kept = option.key in self._kept
            line.setPlaceholderText(
                "kept in the keychain; type to replace" if kept else "kept in the keychain"
            )
        elif isinstance(value, str):
            line.setText(value)
        return line

    def _choose(self, option: ConfigOption) -> None:
        if option.type == "directory":
            chosen = [QFileDialog.getExistingDirectory(self, option.title)]
        elif option.multiple:
            chosen, _ = QFileDialog.getOpenFileNames(self, option.title)
        else:
            chosen = [QFileDialog.getOpenFileName(self, option.title)[0]]
        chosen = [c for c in chosen if c]
        if chosen:
            self.set_value(option.key, chosen if option.multiple else chosen[0], append=option.multiple)

    def set_value(self, key: str, value: Any, *, append: bool = False) -> None:
        field = self.fields[key]
        if isinstance(field, QCheckBox):
            field.setChecked(bool(value))
        elif isinstance(field, QDoubleSpinBox):
            field.setValue(float(value))
        elif isinstance(field, QPlainTextEdit):
            items = value if isinstance(value, list) else [value]
            old = field.toPlainText().strip() if append else ""
            field.setPlainText("\n".join([*([old] if old else []), *map(str, items)]))
        else:
            field.setText(str(value))

    def values(self) -> dict[str, Any]:
        """The answers as typed; an empty secret row left out (on an update: the stored one stays)."""
        out: dict[str, Any] = {}
        for option in self.options:
            field = self.fields[option.key]
            if isinstance(field, QCheckBox):
                out[option.key] = field.isChecked()
            elif isinstance(field, QDoubleSpinBox):
                number = field.value()
                out[option.key] = int(number) if field.decimals() == 0 else number
            elif isinstance(field, QPlainTextEdit):
                out[option.key] = [line.strip() for line in field.toPlainText().splitlines() if line.strip()]
            elif field.text() or not option.sensitive:
                out[option.key] = field.text()
        return out

    def missing(self) -> list[str]:
        """Titles of required settings left empty (a kept secret counts as given)."""
        values = self.values()
        return [
            o.title
            for o in self.options
            if o.required and values.get(o.key) in (None, "", []) and o.key not in self._kept
        ]


def _whole(*numbers: Any) -> bool:
    """Whether a number setting takes whole numbers only: its bounds and default are whole."""
    return all(
        n is None or isinstance(n, bool) or not isinstance(n, int | float) or float(n).is_integer()
        for n in numbers
    )
