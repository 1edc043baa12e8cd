"""Settings: providers (add, edit, test, remove), default model and agent, tools, MCP servers,
knowledge bases (``ui/knowledge/``), theme, data.

Keys go to the engine, which keeps them in the system keychain; the dialog never
reads one back — a stored key shows as "stored in the keychain" and an empty key
field means "keep it". Testing a connection lists the provider's models, which
also fills the default-model choice.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QIcon
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from threadline.core.config import AgentConfig, ProviderConfig, ProviderKind
from threadline.engine.api import EngineApi
from threadline.llm.timeouts import (
    CONNECT_SETTING,
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_FIRST_BYTE_TIMEOUT,
    FIRST_BYTE_SETTING,
)
from threadline.ui.common.inline_messages import claim_while_open, show_in_label
from threadline.ui.common.message_bridge import UserMessage, user_message_of
from threadline.ui.common.tasks import spawn
from threadline.ui.common.theme import ThemeChoice, ThemeColors, ThemeManager
from threadline.ui.knowledge.index_jobs import IndexJobs
from threadline.ui.knowledge.knowledge_page import KnowledgePage
from threadline.ui.settings.builtin_provider import BuiltinProviderPanel, is_builtin
from threadline.ui.settings.page_layout import scrolling_page
from threadline.ui.settings.secret_pairs import SecretPairsEditor
from threadline.ui.settings.settings_agents_page import AgentsPage
from threadline.ui.settings.settings_data_page import DatabaseSection
from threadline.ui.settings.settings_desktop_page import DesktopPage
from threadline.ui.settings.settings_mcp_page import McpServersPage
from threadline.ui.settings.settings_memory_page import MemoryPage
from threadline.ui.settings.settings_models_folder import ModelsFolderSection
from threadline.ui.settings.settings_models_page import ModelsPage
from threadline.ui.settings.settings_pages import SettingsPages
from threadline.ui.settings.settings_snapshots import SnapshotsSection
from threadline.ui.settings.settings_tools_page import ToolsPage
from threadline.ui.settings.settings_voice_page import VoicePage
from threadline.ui.settings.settings_web_page import WebPage

log = logging.getLogger("threadline.ui.settings.settings_dialog")

DEFAULT_URLS = {
    ProviderKind.OPENAI: "https://api.openai.com/v1",
    ProviderKind.ANTHROPIC: "https://api.anthropic.com",
}


MAX_TIMEOUT = 3600.0
TIMEOUTS_HINT = (
    "How long to wait for the server to accept the connection, and for the first words of a "
    "reply: a local server may need a minute to load a model. When time runs out the reply is "
    "retried, so the total wait before an error is at most twice the second value."
)


HEADERS_TIP = (
    "HTTP headers sent with every request to this provider. Values are kept in the system keychain, "
    "never in the database; write ${VAR} to read one from Threadline's environment instead."
)


class NoKeychainError(Exception):
    """Saving a key failed for want of a system keychain: what to do instead."""

    user_message = (
        "No system keychain is available to store the key. Put the key in an environment "
        "variable and enter its name under “Key variable”."
    )


async def told_without_keychain(work: Awaitable[None]) -> None:
    """Run ``work``; a failure of the keychain is told as :class:`NoKeychainError` (the way out)."""
    try:
        await work
    except Exception as err:
        text = user_message_of(err) or ""
        if "keyring" in type(err).__module__ or "keyring" in text.lower():
            raise NoKeychainError() from err
        raise


def timeout_box(default: float) -> QDoubleSpinBox:
    """Seconds, with 0 shown as "default (N s)": a provider without its own value follows the app's."""
    box = QDoubleSpinBox()
    box.setRange(0, MAX_TIMEOUT)
    box.setDecimals(1)
    box.setSingleStep(5)
    box.setSuffix(" s")
    box.setSpecialValueText(f"default ({default:g} s)")
    box.setValue(0)
    box.setFixedWidth(140)
    return box


def timeout_value(box: QDoubleSpinBox) -> float | None:
    return box.value() or None


class ProvidersPage(QWidget):
    changed = Signal()
    manageModels = Signal()
    """The built-in provider's "Manage on the Models page" (``builtin_provider.py``)."""

    def __init__(self, engine: EngineApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.providers: list[ProviderConfig] = []
        self._editing: str | None = None  # name of the provider in the form, None = new
        self.remove_question: QMessageBox | None = None
        """The question Remove asks, while it is open."""
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 12, 12, 12)
        layout.setSpacing(14)

        left = QVBoxLayout()
        self.list = QListWidget()
        self.list.setObjectName("ProviderList")
        self.list.setAccessibleName("Providers")
        self.list.setMinimumWidth(170)
        self.list.currentItemChanged.connect(self._selected)
        left.addWidget(self.list, 1)
        self.add_button = QPushButton("Add provider")
        self.add_button.setObjectName("SecondaryButton")
        self.add_button.clicked.connect(self.new_provider)
        left.addWidget(self.add_button)
        layout.addLayout(left)

        self.form_box = QWidget()
        right = QVBoxLayout(self.form_box)
        right.setContentsMargins(0, 0, 0, 0)
        right.setSpacing(8)
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.name = QLineEdit()
        self.name.setPlaceholderText("e.g. openai, ollama, work-claude")
        form.addRow("Name", self.name)
        self.kind = QComboBox()
        self.kind.addItem("OpenAI-compatible (OpenAI, Ollama, LM Studio, vLLM…)", ProviderKind.OPENAI.value)
        self.kind.addItem("Anthropic", ProviderKind.ANTHROPIC.value)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        form.addRow("Kind", self.kind)
        self.base_url = QLineEdit()
        form.addRow("Server URL", self.base_url)
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        form.addRow("API key", self.api_key)
        self.key_env = QLineEdit()
        self.key_env.setPlaceholderText("optional: read the key from this environment variable")
        form.addRow("Key variable", self.key_env)
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.model.setMinimumContentsLength(24)
        model_edit = self.model.lineEdit()
        if model_edit is not None:
            model_edit.setPlaceholderText("test the connection to list models")
        form.addRow("Default model", self.model)
        self.connect_timeout = timeout_box(DEFAULT_CONNECT_TIMEOUT)
        self.connect_timeout.setObjectName("ConnectTimeout")
        form.addRow(CONNECT_SETTING, self.connect_timeout)
        self.first_byte_timeout = timeout_box(DEFAULT_FIRST_BYTE_TIMEOUT)
        self.first_byte_timeout.setObjectName("FirstByteTimeout")
        form.addRow(FIRST_BYTE_SETTING, self.first_byte_timeout)
        self.headers = SecretPairsEditor("Header, e.g. X-Org", "Add header", allow_public=False)
        self.headers.setObjectName("ProviderHeaders")
        self.headers.setToolTip(HEADERS_TIP)
        form.addRow("Headers", self.headers)
        self.timeouts_hint = QLabel(TIMEOUTS_HINT)
        self.timeouts_hint.setObjectName("Hint")
        self.timeouts_hint.setWordWrap(True)
        form.addRow("", self.timeouts_hint)
        right.addLayout(form)
        self.message = QLabel()
        self.message.setObjectName("Hint")
        self.message.setWordWrap(True)
        right.addWidget(self.message)
        buttons = QHBoxLayout()
        self.test_button = QPushButton("Test connection")
        self.test_button.setObjectName("SecondaryButton")
        self.test_button.clicked.connect(self.test_connection)
        buttons.addWidget(self.test_button)
        buttons.addStretch(1)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setObjectName("SecondaryButton")
        self.remove_button.clicked.connect(self.remove)
        buttons.addWidget(self.remove_button)
        self.save_button = QPushButton("Save provider")
        self.save_button.setObjectName("PrimaryButton")
        self.save_button.clicked.connect(self.save)
        buttons.addWidget(self.save_button)
        right.addLayout(buttons)
        right.addStretch(1)
        self.builtin = BuiltinProviderPanel(engine.models)
        self.builtin.manageModels.connect(self.manageModels)
        self.right = QStackedWidget()  # the form, or the built-in provider in its place
        self.right.addWidget(self.form_box)
        self.right.addWidget(self.builtin)
        layout.addWidget(self.right, 1)
        self.new_provider()

    async def load(self) -> None:
        self.providers = await self.engine.providers.list_providers()
        self._fill_list()

    def _fill_list(self, select: str | None = None, *, quiet: bool = False) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for p in self.providers:
            item = QListWidgetItem(f"{p.name} (built in)" if is_builtin(p.name) else p.name)
            item.setData(Qt.ItemDataRole.UserRole, p.name)
            self.list.addItem(item)
        # As wide as the longest name ("On this computer (built in)"), never a sideways scroll bar.
        self.list.setMinimumWidth(max(170, self.list.sizeHintForColumn(0) + 2 * self.list.frameWidth() + 16))
        self.list.blockSignals(quiet)
        try:
            self._select_in_list(select)
        finally:
            self.list.blockSignals(False)

    def _select_in_list(self, select: str | None) -> None:
        if select is not None:
            for i in range(self.list.count()):
                if self.list.item(i).data(Qt.ItemDataRole.UserRole) == select:
                    self.list.setCurrentRow(i)
        elif self.providers and self._editing is None:
            self.list.setCurrentRow(0)

    def _selected(self, item: QListWidgetItem | None, _prev: QListWidgetItem | None = None) -> None:
        if item is None:
            return
        name = item.data(Qt.ItemDataRole.UserRole)
        config = next((p for p in self.providers if p.name == name), None)
        if config is not None:
            self.show_provider(config)

    def show_provider(self, config: ProviderConfig) -> None:
        if is_builtin(config.name):
            self._editing = None  # nothing of it is edited here
            self.right.setCurrentWidget(self.builtin)
            self.builtin.refresh()
            return
        self.right.setCurrentWidget(self.form_box)
        self._editing = config.name
        self.name.setText(config.name)
        self.kind.setCurrentIndex(self.kind.findData(config.kind.value))
        self.base_url.setText(config.base_url)
        self.key_env.setText(config.api_key_env)
        self.api_key.clear()
        stored = self.engine.providers.has_api_key(config.name)
        self.api_key.setPlaceholderText(
            "stored in the system keychain — type to replace" if stored else "not set"
        )
        self.model.clear()
        self.model.setEditText(config.default_model)
        self.connect_timeout.setValue(config.connect_timeout or 0)
        self.first_byte_timeout.setValue(config.first_byte_timeout or 0)
        self.headers.set_pairs(dict(config.headers), ())
        self.remove_button.setEnabled(True)
        self.message.setText("")

    def new_provider(self) -> None:
        self.right.setCurrentWidget(self.form_box)
        self._editing = None
        self.list.clearSelection()
        self.name.clear()
        self.kind.setCurrentIndex(0)
        self.base_url.clear()
        self._kind_changed()
        self.api_key.clear()
        self.api_key.setPlaceholderText("not needed for local servers")
        self.key_env.clear()
        self.model.clear()
        self.model.setEditText("")
        self.connect_timeout.setValue(0)
        self.first_byte_timeout.setValue(0)
        self.headers.set_pairs({}, ())
        self.remove_button.setEnabled(False)
        self.message.setText("")
        self.name.setFocus()

    def _kind_changed(self, *_: object) -> None:
        kind = ProviderKind(self.kind.currentData())
        self.base_url.setPlaceholderText(f"default: {DEFAULT_URLS[kind]}")

    def config(self) -> ProviderConfig:
        return ProviderConfig(
            name=self.name.text().strip(),
            kind=ProviderKind(self.kind.currentData()),
            base_url=self.base_url.text().strip(),
            api_key_env=self.key_env.text().strip(),
            default_model=self.model.currentText().strip(),
            headers=tuple(self.headers.pairs()[0].items()),
            connect_timeout=timeout_value(self.connect_timeout),
            first_byte_timeout=timeout_value(self.first_byte_timeout),
        )

    def _checked_config(self) -> ProviderConfig | None:
        """The form's provider, or ``None`` with the reason shown (a header row without a name)."""
        try:
            config = self.config()
        except ValueError as err:
            self.message.setText(str(err))
            return None
        if is_builtin(config.name):  # saved, it would be hidden by the built-in one
            self.message.setText(f"“{config.name}” is Threadline's built-in provider. Choose another name.")
            return None
        return config

    def save(self) -> None:
        config = self._checked_config()
        if config is None:
            return
        if not config.name:
            self.message.setText("Give the provider a name.")
            return
        key = self.api_key.text().strip() or None

        async def do() -> None:
            await self.engine.providers.save_provider(config, key, previous_name=self._editing)
            self._editing = config.name
            await self.load()
            self._fill_list(select=config.name)

        def done(_r: object) -> None:
            self.message.setText(f"Saved {config.name}.")
            self.changed.emit()

        spawn(told_without_keychain(do()), tell=self, on_done=done, context="Not saved")

    def test_connection(self) -> None:
        config = self._checked_config()
        if config is None:
            return
        if not config.name:
            self.message.setText("Give the provider a name first.")
            return
        key = self.api_key.text().strip() or None
        self.message.setText("Connecting…")
        self.test_button.setEnabled(False)

        async def do() -> list[str]:
            # The engine lists models of saved providers: save first (keys go to the keychain).
            await self.engine.providers.save_provider(config, key, previous_name=self._editing)
            self._editing = config.name
            models = await self.engine.providers.list_models(config.name)
            return [m.id for m in models]

        def done(models: list[str]) -> None:
            self.test_button.setEnabled(True)
            current = self.model.currentText()
            self.model.clear()
            self.model.addItems(models)
            self.model.setEditText(current or (models[0] if models else ""))
            self.message.setText(
                f"Connected — {len(models)} model{'s' if len(models) != 1 else ''} available."
            )
            self.api_key.clear()
            self.api_key.setPlaceholderText(
                "stored in the system keychain — type to replace"
                if self.engine.providers.has_api_key(config.name)
                else "not set"
            )
            spawn(self._reload_keep(config.name), tell=self)
            self.changed.emit()

        spawn(
            do(),
            tell=self,
            on_done=done,
            on_failed=lambda _err: self.test_button.setEnabled(True),
            context="Could not connect",
        )

    async def _reload_keep(self, name: str) -> None:
        """Refresh the list after a test without resetting the form the user is filling."""
        self.providers = await self.engine.providers.list_providers()
        self._fill_list(select=name, quiet=True)

    def remove(self) -> None:
        """Ask first: removing a provider also deletes its key and header values from the
        keychain, which cannot be brought back from here."""
        name = self._editing
        if not name:
            return
        box = QMessageBox(self)
        box.setObjectName("RemoveProviderQuestion")
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("Remove provider")
        box.setText(f"Remove the provider “{name}”?")
        box.setInformativeText(
            "Its API key and header values are deleted from the system keychain. Chats that use it "
            "keep their messages and will ask you to choose another model."
        )
        confirm = box.addButton("Remove", QMessageBox.ButtonRole.DestructiveRole)
        keep = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        box.finished.connect(lambda _code: self._remove(name) if box.clickedButton() is confirm else None)
        self.remove_question = box
        box.open()

    def _remove(self, name: str) -> None:
        async def do() -> None:
            await self.engine.providers.remove_provider(name)
            await self.load()

        def done(_r: object) -> None:
            self.new_provider()
            self.message.setText(f"Removed {name}.")
            self.changed.emit()

        spawn(do(), tell=self, on_done=done, context="Not removed")

    def show_user_message(self, message: UserMessage) -> None:
        """This page's line, for the settings dialog (docs/ui-layout.md, "Telling the user")."""
        self.message.setText(message.text)


class AgentPage(QWidget):
    def __init__(self, engine: EngineApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.agent: AgentConfig | None = None
        form = QFormLayout(self)
        form.setContentsMargins(12, 12, 12, 12)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self.default_model = QComboBox()
        self.default_model.setMinimumWidth(280)
        form.addRow("Default model for new chats", self.default_model)
        self.system_prompt = QPlainTextEdit()
        self.system_prompt.setPlaceholderText("Instructions the model sees at the start of every chat")
        self.system_prompt.setMinimumHeight(140)
        form.addRow("System prompt", self.system_prompt)
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(-0.1, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setSpecialValueText("model default")
        self.temperature.setValue(-0.1)
        form.addRow("Temperature", self.temperature)
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(0, 1_000_000)
        self.max_tokens.setSingleStep(256)
        self.max_tokens.setSpecialValueText("model default")
        form.addRow("Maximum reply tokens", self.max_tokens)

    async def load(self) -> None:
        self.agent = await self.engine.agents.get_agent()
        a = self.agent
        self.system_prompt.setPlainText(a.system_prompt)
        self.temperature.setValue(a.temperature if a.temperature is not None else -0.1)
        self.max_tokens.setValue(a.max_tokens or 0)
        provider = await self.engine.settings.get_setting("default_provider", "") or ""
        model = await self.engine.settings.get_setting("default_model", "") or ""
        self.default_model.clear()
        self.default_model.addItem("(the provider's default)", ("", ""))
        for p in await self.engine.providers.list_providers():
            if p.default_model:
                self.default_model.addItem(f"{p.default_model}  ·  {p.name}", (p.name, p.default_model))
        if model and self.default_model.findData((provider, model)) < 0:
            self.default_model.addItem(f"{model}  ·  {provider}", (provider, model))
        index = self.default_model.findData((provider, model))
        self.default_model.setCurrentIndex(max(0, index))

    async def save(self) -> None:
        if self.agent is None:
            return
        temperature = self.temperature.value()
        # Read the stored agent again: the Tools pages (and a turn's "Always allow") change it meanwhile.
        stored = await self.engine.agents.get_agent(self.agent.id)
        agent = replace(
            stored,
            system_prompt=self.system_prompt.toPlainText(),
            temperature=None if temperature < 0 else round(temperature, 2),
            max_tokens=self.max_tokens.value() or None,
        )
        if agent != stored:
            await self.engine.agents.save_agent(agent)
            self.agent = agent
        provider, model = self.default_model.currentData() or ("", "")
        await self.engine.settings.set_setting("default_provider", provider)
        await self.engine.settings.set_setting("default_model", model)


class SettingsDialog(QDialog):
    providersChanged = Signal()
    agentsChanged = Signal()
    """An agent was added, edited or deleted: open tabs list the agents again."""
    themeChosen = Signal(object)  # ThemeChoice
    modelsPageRequested = Signal()
    """The built-in provider's "Manage on the Models page": the window opens that page."""

    def __init__(
        self,
        engine: EngineApi,
        theme: ThemeManager,
        data_dir: Path | None,
        parent: QWidget | None = None,
        *,
        knowledge_jobs: IndexJobs | None = None,
    ) -> None:
        """``knowledge_jobs``: the window's indexing runs, so one outlives the dialog."""
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setObjectName("SettingsDialog")
        self.resize(860, 640)
        self.theme = theme
        self.engine = engine
        self.data_dir = data_dir
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        self.pages = SettingsPages(self)  # a list of pages at the left, the page at the right
        self.providers = ProvidersPage(engine)
        self.providers.changed.connect(self.providersChanged)
        self.providers.manageModels.connect(self._manage_models)
        self.pages.addTab(self.providers, "Providers")
        self.agent = AgentPage(engine)
        self.pages.addTab(self.agent, "Model && agent")
        self.tools = ToolsPage(engine)
        self.pages.addTab(self.tools, "Tools")
        self.agents = AgentsPage(engine)
        self.agents.agentsChanged.connect(self.agentsChanged)
        self.pages.addTab(self.agents, "Agents")
        self.mcp = McpServersPage(engine, theme.colors)
        self.pages.addTab(self.mcp, "MCP servers")
        self.models = ModelsPage(engine)
        self.pages.addTab(self.models, "Models")
        self.knowledge = KnowledgePage(engine, knowledge_jobs)
        self.pages.addTab(self.knowledge, "Knowledge")
        self.voice = VoicePage(engine)
        self.pages.addTab(self.voice, "Voice")
        self.memory = MemoryPage(engine)
        self.pages.addTab(self.memory, "Memory")
        self.web = WebPage(engine.web)
        self.pages.addTab(self.web, "Web")
        self.pages.addTab(self._appearance(theme), "Appearance")
        self.pages.addTab(self._data_page(), "Data")
        self.desktop = DesktopPage(engine, data_dir)
        self.pages.addTab(self.desktop, "Desktop")
        body = QHBoxLayout()
        body.setSpacing(10)
        body.addWidget(self.pages.list)
        body.addWidget(self.pages, 1)
        layout.addLayout(body, 1)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        for b in self.buttons.buttons():
            b.setIcon(QIcon())
            b.setObjectName("SecondaryButton")
        self.buttons.rejected.connect(self.close_and_save)
        self.buttons.accepted.connect(self.close_and_save)
        layout.addWidget(self.buttons)
        self._apply_colors(theme.colors)
        theme.changed.connect(self._apply_colors)
        self.finished.connect(self._finished)
        self.message = QLabel()
        """The line for a page without its own (Model and agent, Appearance)."""
        self.message.setObjectName("FormError")
        self.message.setWordWrap(True)
        self.message.hide()
        layout.insertWidget(layout.indexOf(self.buttons), self.message)
        self.bridge = claim_while_open(self, self)
        """The window's bridge, claimed while the dialog is open: failures show on the page in view."""
        self.loaded = spawn(self._load(), tell=self)

    async def _load(self) -> None:
        await self.providers.load()
        await self.agent.load()
        await self.tools.load()
        await self.agents.load()
        await self.mcp.load()
        await self.models.load()
        await self.knowledge.load()
        await self.memory.load()
        await self.web.load()

    def _apply_colors(self, c: ThemeColors) -> None:
        """Styles of the Tools pages (the application stylesheet covers the rest)."""
        self.setStyleSheet(f"""
#FormError {{ color: {c.error_text}; }}
#SubTitle {{ color: {c.muted}; font-weight: 600; }}
#RulesTable {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 6px; color: {c.text};
               selection-background-color: {c.selection}; selection-color: {c.text}; }}
#RulesTable QHeaderView::section {{ background: {c.surface}; color: {c.muted}; border: none;
    border-bottom: 1px solid {c.border}; padding: 5px 8px; font-weight: 600; }}
#RulesTable QComboBox {{ margin: 2px 4px; }}
#RulesTable::item {{ padding: 0 6px; }}
#RemoveRule {{ border: none; border-radius: 4px; color: {c.muted}; font-size: 15px; padding: 0 5px; }}
#RemoveRule:hover {{ background: {c.hover}; color: {c.error_text}; }}
#SettingsPageBody {{ background: transparent; }}
#SettingsPageList {{ background: {c.surface}; border: 1px solid {c.border}; border-radius: 6px;
                     padding: 4px; outline: none; color: {c.text}; }}
#SettingsPageList::item {{ padding: 6px 8px; border-radius: 4px; }}
#SettingsPageList::item:hover:!selected {{ background: {c.hover}; }}
#SettingsPageList::item:selected {{ background: {c.selection}; color: {c.text}; }}
#SettingsPageList:focus {{ border-color: {c.link}; }}
#SecondaryButton:disabled {{ color: {c.muted}; background: {c.window}; }}
""")
        self.mcp.set_colors(c)

    def show_user_message(self, message: UserMessage) -> None:
        """A message while Settings is open: in the line of the page in view."""
        page = self.pages.currentWidget()
        target = self.database if page is self.data_page else page
        show = getattr(target, "show_user_message", None)
        if callable(show):
            show(message)
        else:
            show_in_label(self.message, message)

    def _finished(self, _result: int) -> None:
        self.mcp.detach()
        with contextlib.suppress(RuntimeError, TypeError):
            self.theme.changed.disconnect(self._apply_colors)

    def open_page(self, page: str) -> None:
        if page in ("", "providers"):
            self.pages.setCurrentWidget(self.providers)
        elif page == "agent":
            self.pages.setCurrentWidget(self.agent)
        elif page == "tools":
            self.pages.setCurrentWidget(self.tools)
        elif page == "agents":
            self.pages.setCurrentWidget(self.agents)
        elif page == "mcp":
            self.pages.setCurrentWidget(self.mcp)
        elif page == "models":
            self.pages.setCurrentWidget(self.models)
        elif page == "knowledge":
            self.pages.setCurrentWidget(self.knowledge)
        elif page == "voice":
            self.pages.setCurrentWidget(self.voice)
        elif page == "memory":
            self.pages.setCurrentWidget(self.memory)
        elif page == "web":
            self.pages.setCurrentWidget(self.web)
        elif page in ("data", "desktop"):
            self.pages.setCurrentWidget(self.data_page if page == "data" else self.desktop)
        else:  # a provider name: show it
            self.pages.setCurrentWidget(self.providers)

            async def select() -> None:
                await self.loaded
                self.providers._fill_list(select=page)
                self.providers.api_key.setFocus()

            spawn(select(), tell=self)

    def _appearance(self, theme: ThemeManager) -> QWidget:
        page = QWidget()
        v = QVBoxLayout(page)
        v.setContentsMargins(12, 12, 12, 12)
        title = QLabel("Theme")
        title.setObjectName("SectionTitle")
        v.addWidget(title)
        self.theme_buttons = QButtonGroup(page)
        for choice, label in (
            (ThemeChoice.SYSTEM, "Follow the system"),
            (ThemeChoice.LIGHT, "Light"),
            (ThemeChoice.DARK, "Dark"),
            (ThemeChoice.HIGH_CONTRAST, "High contrast (black and white; follows light or dark)"),
        ):
            b = QRadioButton(label)
            b.setChecked(theme.choice is choice)
            b.toggled.connect(lambda on, c=choice: self._theme_toggled(on, c))
            self.theme_buttons.addButton(b)
            v.addWidget(b)
        v.addStretch(1)
        return page

    def _theme_toggled(self, on: bool, choice: ThemeChoice) -> None:
        if on:
            self.themeChosen.emit(choice)

    def _data_page(self) -> QWidget:
        page = self.data_page = QWidget()
        v = scrolling_page(page, "Data")
        title = QLabel("Data folder")
        title.setObjectName("SectionTitle")
        v.addWidget(title)
        path = QLabel(str(self.data_dir) if self.data_dir else "(unknown)")
        path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        path.setObjectName("DataPath")
        v.addWidget(path)
        hint = QLabel(
            "Conversations, logs and backups are kept here. API keys are not: they live in the "
            "system keychain."
        )
        hint.setObjectName("Hint")
        hint.setWordWrap(True)
        v.addWidget(hint)
        row = QHBoxLayout()
        self.open_folder = QPushButton("Open folder")
        self.open_folder.setObjectName("SecondaryButton")
        self.open_folder.clicked.connect(self._open_folder)
        row.addWidget(self.open_folder)
        row.addStretch(1)
        v.addLayout(row)
        v.addSpacing(12)
        self.database = DatabaseSection(self.engine.database, enabled=self.data_dir is not None)
        v.addWidget(self.database)
        v.addSpacing(12)
        self.snapshots = SnapshotsSection(self.engine.workspace)
        v.addWidget(self.snapshots)
        self.models_folder = ModelsFolderSection(self.engine.models, page)
        v.addWidget(self.models_folder)
        v.addStretch(1)
        return page

    def _open_folder(self) -> None:
        if self.data_dir is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.data_dir)))

    def _manage_models(self) -> None:
        """Close, then the window opens its Models page (a page opened under this modal dialog
        could not be used)."""
        self.accepted.connect(self.modelsPageRequested)
        self.close_and_save()

    def close_and_save(self) -> None:
        def done(_r: object) -> None:
            self.providersChanged.emit()
            self.accept()

        spawn(self.agent.save(), tell=self, on_done=done, context="Not saved")
