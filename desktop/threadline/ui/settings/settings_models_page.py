"""Settings → Models: the user's own prices and context windows, per provider and model.

A reply's cost comes from a price table: prices shipped for well-known models of the
official OpenAI and Anthropic endpoints, overlaid with the user's own entries, which
always win. Any other server shows no cost until the user adds a price here: no figure
is better than a wrong one. Likewise a server that reports no context window (or a
wrong one) gets the user's figure from this page.

Each Add or Remove is saved at once, read-modify-write on the setting as stored, so
``threadline usage --set-price`` or another window editing the same setting is not
overwritten with an older copy. A bad number is refused with a message and nothing
is saved.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from threadline.core.pricing import PRICES_TAKEN, SHIPPED_PRICES, PriceTable, UserPrice
from threadline.engine.api import EngineApi
from threadline.engine.providers import CONTEXT_WINDOWS_SETTING
from threadline.engine.usage_report import PRICES_SETTING
from threadline.ui.common.message_bridge import MessageLevel, UserMessage
from threadline.ui.common.tasks import spawn
from threadline.ui.settings.page_layout import hint_label, scrolling_page, section_title

SHIPPED_NOTE = (
    f"Shipped prices as of {PRICES_TAKEN}, official OpenAI and Anthropic endpoints only; "
    "other servers show no cost unless you add a price."
)
VENDOR_NAMES = {"openai": "OpenAI", "anthropic": "Anthropic"}


def parse_price(text: str) -> float | None:
    """US dollars per million tokens: a number ≥ 0 (a decimal comma is accepted), else ``None``."""
    try:
        value = float(text.strip().replace(",", "."))
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def parse_tokens(text: str) -> int | None:
    """A whole number of tokens > 0; thousands separators (spaces, commas, _) are accepted."""
    digits = text.strip().replace(",", "").replace("_", "").replace(" ", "")
    if not digits.isdigit():
        return None
    value = int(digits)
    return value if value > 0 else None


def _format_price(value: float) -> str:
    return f"{value:g}"


def _table(name: str, headers: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setObjectName("RulesTable")
    table.setAccessibleName(name)
    table.setHorizontalHeaderLabels(headers)
    table.verticalHeader().hide()
    table.setShowGrid(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
    header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    header.setHighlightSections(False)
    table.setMinimumHeight(110)
    return table


def _fill_rows(table: QTableWidget, rows: list[list[str]]) -> None:
    table.setRowCount(0)
    for row in rows:
        r = table.rowCount()
        table.insertRow(r)
        for column, text in enumerate(row):
            table.setItem(r, column, QTableWidgetItem(text))


def _line(name: str, placeholder: str) -> QLineEdit:
    edit = QLineEdit()
    edit.setAccessibleName(name)
    edit.setPlaceholderText(placeholder)
    return edit


def _button(text: str, name: str) -> QPushButton:
    button = QPushButton(text)
    button.setObjectName("SecondaryButton")
    button.setAccessibleName(name)
    return button


class ModelsPage(QWidget):
    """Two small tables: the user's prices and the user's context windows."""

    def __init__(self, engine: EngineApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.user_prices: list[UserPrice] = []
        self.windows: dict[str, int] = {}
        self._lock = asyncio.Lock()
        self._loaded = False

        v = scrolling_page(self, "Model settings")

        # -- prices
        v.addWidget(section_title("Prices (US$ per million tokens)"))
        v.addWidget(
            hint_label("Your own prices, per provider and model; they win over the shipped ones below.")
        )
        self.prices = _table("Your prices", ["Provider", "Model", "Input", "Output"])
        self.prices.itemSelectionChanged.connect(self._update_buttons)
        v.addWidget(self.prices)
        add = QHBoxLayout()
        add.setSpacing(6)
        self.price_provider = QComboBox()
        self.price_provider.setAccessibleName("New price: provider")
        self.price_model = _line("New price: model", "Model, e.g. llama3.1:70b")
        self.price_input = _line("New price: input, US$ per million tokens", "Input $/Mtok")
        self.price_output = _line("New price: output, US$ per million tokens", "Output $/Mtok")
        for edit in (self.price_model, self.price_input, self.price_output):
            edit.returnPressed.connect(self.add_price)
        self.add_price_button = _button("Add price", "Add price")
        self.add_price_button.clicked.connect(self.add_price)
        self.remove_price_button = _button("Remove", "Remove selected price")
        self.remove_price_button.clicked.connect(self.remove_price)
        add.addWidget(self.price_provider, 2)
        add.addWidget(self.price_model, 3)
        add.addWidget(self.price_input, 2)
        add.addWidget(self.price_output, 2)
        add.addWidget(self.add_price_button)
        add.addWidget(self.remove_price_button)
        v.addLayout(add)
        self.price_message = hint_label("")
        v.addWidget(self.price_message)

        self.shipped_note = hint_label(SHIPPED_NOTE)
        v.addWidget(self.shipped_note)
        self.shipped = _table("Shipped prices", ["Vendor", "Model", "Input", "Output"])
        _fill_rows(
            self.shipped,
            [
                [VENDOR_NAMES.get(vendor.value, vendor.value), model, _format_price(i), _format_price(o)]
                for vendor, models in SHIPPED_PRICES.items()
                for model, (i, o) in models.items()
            ],
        )
        v.addWidget(self.shipped)
        v.addSpacing(10)

        # -- context windows
        v.addWidget(section_title("Context windows"))
        v.addWidget(
            hint_label(
                "For servers that report no window (or a wrong one): how many tokens the model takes. "
                "Your figure wins over the server's."
            )
        )
        self.window_table = _table("Your context windows", ["Provider", "Model", "Tokens"])
        self.window_table.itemSelectionChanged.connect(self._update_buttons)
        v.addWidget(self.window_table)
        add = QHBoxLayout()
        add.setSpacing(6)
        self.window_provider = QComboBox()
        self.window_provider.setAccessibleName("New context window: provider")
        self.window_model = _line("New context window: model", "Model")
        self.window_tokens = _line("New context window: tokens", "Tokens, e.g. 32768")
        for edit in (self.window_model, self.window_tokens):
            edit.returnPressed.connect(self.add_window)
        self.add_window_button = _button("Add window", "Add context window")
        self.add_window_button.clicked.connect(self.add_window)
        self.remove_window_button = _button("Remove", "Remove selected context window")
        self.remove_window_button.clicked.connect(self.remove_window)
        add.addWidget(self.window_provider, 2)
        add.addWidget(self.window_model, 3)
        add.addWidget(self.window_tokens, 2)
        add.addWidget(self.add_window_button)
        add.addWidget(self.remove_window_button)
        v.addLayout(add)
        self.window_message = hint_label("")
        v.addWidget(self.window_message)
        v.addStretch(1)
        self._update_buttons()

    # -- loading ---------------------------------------------------------------------------------

    async def load(self) -> None:
        providers = [p.name for p in await self.engine.providers.list_providers()]
        for combo in (self.price_provider, self.window_provider):
            current = combo.currentText()
            combo.clear()
            combo.addItems(providers)
            if current in providers:
                combo.setCurrentText(current)
        self._show_prices(PriceTable.from_setting(await self.engine.settings.get_setting(PRICES_SETTING, [])))
        self._show_windows(await self.engine.settings.get_setting(CONTEXT_WINDOWS_SETTING, {}))
        self._loaded = True
        self._update_buttons()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # Providers may have been added on the Providers page since the page was filled.
        if self._loaded:
            spawn(self.load(), tell=self)

    def _show_prices(self, table: PriceTable) -> None:
        self.user_prices = sorted(table.user_prices(), key=lambda p: (p.provider, p.model))
        _fill_rows(
            self.prices,
            [
                [p.provider, p.model, _format_price(p.input_per_mtok), _format_price(p.output_per_mtok)]
                for p in self.user_prices
            ],
        )

    def _show_windows(self, setting: Any) -> None:
        entries = setting if isinstance(setting, dict) else {}
        self.windows = {
            k: v
            for k, v in sorted(entries.items())
            if isinstance(k, str) and "/" in k and isinstance(v, int) and not isinstance(v, bool) and v > 0
        }
        _fill_rows(
            self.window_table,
            [[*key.split("/", 1), f"{tokens:,}"] for key, tokens in self.windows.items()],
        )

    def _update_buttons(self) -> None:
        has_providers = self.price_provider.count() > 0
        self.add_price_button.setEnabled(has_providers)
        self.add_window_button.setEnabled(has_providers)
        self.remove_price_button.setEnabled(bool(self.prices.selectionModel().selectedRows()))
        self.remove_window_button.setEnabled(bool(self.window_table.selectionModel().selectedRows()))

    # -- prices ----------------------------------------------------------------------------------

    def add_price(self) -> None:
        provider = self.price_provider.currentText()
        model = self.price_model.text().strip()
        if not provider:
            self._error(self.price_message, "Add a provider first (Providers page).")
            return
        if not model:
            self._error(self.price_message, "Type the model's name.", self.price_model)
            return
        input_price = parse_price(self.price_input.text())
        if input_price is None:
            self._error(
                self.price_message, "Input price must be a number of 0 or more, e.g. 0.5.", self.price_input
            )
            return
        output_price = parse_price(self.price_output.text())
        if output_price is None:
            self._error(
                self.price_message, "Output price must be a number of 0 or more, e.g. 1.5.", self.price_output
            )
            return
        price = UserPrice(provider, model, input_price, output_price)
        self._run(
            self._write_price(price, provider, model), self.price_message, f"Saved the price of {model}."
        )
        for edit in (self.price_model, self.price_input, self.price_output):
            edit.clear()

    def remove_price(self) -> None:
        rows = self.prices.selectionModel().selectedRows()
        if not rows or rows[0].row() >= len(self.user_prices):
            return
        p = self.user_prices[rows[0].row()]
        self._run(
            self._write_price(None, p.provider, p.model),
            self.price_message,
            f"Removed the price of {p.model}.",
        )

    async def _write_price(self, price: UserPrice | None, provider: str, model: str) -> None:
        async with self._lock:
            table = PriceTable.from_setting(await self.engine.settings.get_setting(PRICES_SETTING, []))
            entries = [p for p in table.user_prices() if (p.provider, p.model) != (provider, model)]
            if price is not None:
                entries.append(price)
            await self.engine.settings.set_setting(PRICES_SETTING, [p.to_json() for p in entries])
            self._show_prices(PriceTable(entries))

    # -- context windows -------------------------------------------------------------------------

    def add_window(self) -> None:
        provider = self.window_provider.currentText()
        model = self.window_model.text().strip()
        if not provider:
            self._error(self.window_message, "Add a provider first (Providers page).")
            return
        if not model:
            self._error(self.window_message, "Type the model's name.", self.window_model)
            return
        tokens = parse_tokens(self.window_tokens.text())
        if tokens is None:
            self._error(
                self.window_message, "Tokens must be a whole number above 0, e.g. 32768.", self.window_tokens
            )
            return
        self._run(
            self._write_window(f"{provider}/{model}", tokens),
            self.window_message,
            f"Saved the context window of {model}.",
        )
        self.window_model.clear()
        self.window_tokens.clear()

    def remove_window(self) -> None:
        rows = self.window_table.selectionModel().selectedRows()
        keys = list(self.windows)
        if not rows or rows[0].row() >= len(keys):
            return
        key = keys[rows[0].row()]
        model = key.split("/", 1)[1]
        self._run(
            self._write_window(key, None), self.window_message, f"Removed the context window of {model}."
        )

    async def _write_window(self, key: str, tokens: int | None) -> None:
        async with self._lock:
            stored = await self.engine.settings.get_setting(CONTEXT_WINDOWS_SETTING, {})
            entries = dict(stored) if isinstance(stored, dict) else {}
            entries.pop(key, None)
            if tokens is not None:
                entries[key] = tokens
            await self.engine.settings.set_setting(CONTEXT_WINDOWS_SETTING, entries)
            self._show_windows(entries)

    # -- messages --------------------------------------------------------------------------------

    def _error(self, label: QLabel, text: str, field: QLineEdit | None = None) -> None:
        label.setObjectName("FormError")
        label.setText(text)
        label.style().unpolish(label)
        label.style().polish(label)
        if field is not None:
            field.setFocus()
            field.selectAll()

    def _said(self, label: QLabel, text: str) -> None:
        label.setObjectName("Hint")
        label.setText(text)
        label.style().unpolish(label)
        label.style().polish(label)

    def _run(self, work: Coroutine[Any, Any, None], label: QLabel, done_text: str) -> None:
        def done(_result: None) -> None:
            self._said(label, done_text)
            self._update_buttons()

        spawn(work, tell=self, on_done=done, context="Not saved")

    def show_user_message(self, message: UserMessage) -> None:
        """The prices' line, for the settings dialog (docs/ui-layout.md, "Telling the user")."""
        if message.level is MessageLevel.INFO:
            self._said(self.price_message, message.text)
        else:
            self._error(self.price_message, message.text)
