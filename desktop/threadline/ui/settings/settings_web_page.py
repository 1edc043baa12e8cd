"""Settings → Web: the web search provider (its address or key), a Test, and whether
``fetch_page`` may open addresses on this computer and the local network (docs/web.md).

Everything goes through ``engine.web``; a typed key goes to the system keychain and the field
is emptied (it shows "stored in the system keychain" from then on). The switch is saved the
moment it is clicked; the provider with Save. Test searches once with what the form holds,
saved or not.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from threadline.engine.capability_apis import WebApi
from threadline.ui.common.message_bridge import UserMessage
from threadline.ui.common.tasks import spawn
from threadline.ui.settings.page_layout import hint_label, scrolling_page, section
from threadline.web.config import WebConfig, WebProvider

PROVIDER_HINTS = {
    WebProvider.NONE: "The web_search tool says no provider is chosen. fetch_page still reads pages.",
    WebProvider.SEARXNG: "Your own SearXNG instance (no key). Its JSON format must be on: "
    "search: formats: [html, json] in its settings.yml.",
    WebProvider.BRAVE: "Brave Search API: the key is kept in the system keychain.",
    WebProvider.TAVILY: "Tavily search API: the key is kept in the system keychain.",
    WebProvider.DUCKDUCKGO: "No key. Reads DuckDuckGo's result pages, so it may stop working or be "
    "rate-limited at any time: best-effort.",
}
LOCAL_HINT = (
    "Off: fetch_page refuses this computer (127.0.0.1, localhost) and the local network (routers, "
    "printers, 192.168.x.x, 10.x.x.x), also after a redirect, so a page that tells the model to "
    "open them cannot reach them. Your SearXNG's own address is always allowed."
)
KEY_KEPT = "stored in the system keychain — type to replace"


class WebPage(QWidget):
    def __init__(self, web: WebApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.web = web
        layout = scrolling_page(self, "Web settings")
        for widget in section(
            "Web search",
            "The provider the web_search tool uses. Enable web_search "
            "and fetch_page for an agent on the Tools or Agents page.",
        ):
            if widget is not None:
                layout.addWidget(widget)
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.provider = QComboBox()
        self.provider.setObjectName("WebProvider")
        self.provider.setAccessibleName("Web search provider")
        for provider in WebProvider:
            self.provider.addItem(provider.label, provider.value)
        self.provider.currentIndexChanged.connect(self._provider_changed)
        form.addRow("Provider", self.provider)
        self.url = QLineEdit()
        self.url.setObjectName("SearxngUrl")
        self.url.setAccessibleName("SearXNG address")
        self.url.setPlaceholderText("http://localhost:8888")
        form.addRow("SearXNG address", self.url)
        self.api_key = QLineEdit()
        self.api_key.setObjectName("WebApiKey")
        self.api_key.setAccessibleName("API key")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        form.addRow("API key", self.api_key)
        self.key_env = QLineEdit()
        self.key_env.setObjectName("WebKeyVariable")
        self.key_env.setAccessibleName("Key variable")
        self.key_env.setPlaceholderText("optional: read the key from this environment variable")
        form.addRow("Key variable", self.key_env)
        layout.addLayout(form)
        self.provider_hint = hint_label("")
        layout.addWidget(self.provider_hint)
        buttons = QHBoxLayout()
        self.test_button = QPushButton("Test")
        self.test_button.setObjectName("SecondaryButton")
        self.test_button.clicked.connect(self.test)
        buttons.addWidget(self.test_button)
        buttons.addStretch(1)
        self.save_button = QPushButton("Save")
        self.save_button.setObjectName("PrimaryButton")
        self.save_button.clicked.connect(self.save)
        buttons.addWidget(self.save_button)
        layout.addLayout(buttons)
        self.message = QLabel()
        self.message.setObjectName("Hint")
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        for widget in section("Reading pages"):
            if widget is not None:
                layout.addWidget(widget)
        self.allow_local = QCheckBox("Allow local addresses")
        self.allow_local.setObjectName("AllowLocal")
        self.allow_local.toggled.connect(self._allow_local_toggled)
        layout.addWidget(self.allow_local)
        layout.addWidget(hint_label(LOCAL_HINT))
        layout.addStretch(1)
        self._loading = False
        self._provider_changed()

    async def load(self) -> None:
        config = await self.web.config()
        self._loading = True
        try:
            self.provider.setCurrentIndex(max(0, self.provider.findData(config.provider.value)))
            self.url.setText(config.searxng_url)
            self.key_env.setText(config.api_key_env)
            self.allow_local.setChecked(config.allow_local)
        finally:
            self._loading = False
        await self._show_key(config.provider)

    def chosen(self) -> WebProvider:
        return WebProvider(self.provider.currentData())

    def form_config(self) -> WebConfig:
        provider = self.chosen()
        return WebConfig(
            provider=provider,
            searxng_url=self.url.text().strip() if provider is WebProvider.SEARXNG else "",
            api_key_env=self.key_env.text().strip() if provider.needs_key else "",
            allow_local=self.allow_local.isChecked(),
        )

    def _provider_changed(self, *_: object) -> None:
        provider = self.chosen()
        self.url.setEnabled(provider is WebProvider.SEARXNG)
        self.api_key.setEnabled(provider.needs_key)
        self.key_env.setEnabled(provider.needs_key)
        self.test_button.setEnabled(provider is not WebProvider.NONE)
        self.provider_hint.setText(PROVIDER_HINTS[provider])
        if not self._loading:
            spawn(self._show_key(provider), tell=self)

    async def _show_key(self, provider: WebProvider) -> None:
        kept = provider.needs_key and await self.web.has_key(provider)
        self.api_key.setPlaceholderText(KEY_KEPT if kept else ("not set" if provider.needs_key else ""))

    def save(self) -> None:
        config = self.form_config()
        key = self.api_key.text().strip() or None

        async def do() -> WebConfig:
            saved = await self.web.use(
                config.provider, searxng_url=config.searxng_url, api_key=key, api_key_env=config.api_key_env
            )
            await self._show_key(saved.provider)
            return saved

        def done(saved: WebConfig) -> None:
            self.api_key.clear()
            self.message.setText(f"Saved: web search through {saved.provider.label}.")

        spawn(do(), tell=self, on_done=done, context="Not saved")

    def test(self) -> None:
        config = self.form_config()
        key = self.api_key.text().strip() or None
        self.message.setText("Searching…")
        self.test_button.setEnabled(False)

        def done(text: str) -> None:
            self.test_button.setEnabled(True)
            self.message.setText(text)

        spawn(
            self.web.test(config, key),
            tell=self,
            on_done=done,
            on_failed=lambda _err: self.test_button.setEnabled(True),
            context="Test failed",
        )

    def _allow_local_toggled(self, allowed: bool) -> None:
        if self._loading:
            return

        def done(saved: WebConfig) -> None:
            self.message.setText(
                "fetch_page may open addresses on this computer and the local network."
                if saved.allow_local
                else "fetch_page refuses addresses on this computer and the local network."
            )

        def failed(_err: BaseException) -> None:
            self._loading = True
            self.allow_local.setChecked(not allowed)
            self._loading = False

        spawn(
            self.web.set_allow_local(allowed),
            tell=self,
            on_done=done,
            on_failed=failed,
            context="Not changed",
        )

    def show_user_message(self, message: UserMessage) -> None:
        """This page's line, for the settings dialog (docs/ui-layout.md, "Telling the user")."""
        self.message.setText(message.text)
