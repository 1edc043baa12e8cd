"""Attach → From MCP server…: a server's resources and resource templates, to attach one.

A server picker, the list of what it offers (resources by name, templates marked as such),
what the chosen one is (its URI, type and description) and, for a template, a field per
variable with the server's suggestions (``completing_fields``). Attach hands the server and
URI to the tab's ``ChatMcp``, which puts its chip in the composer and reads it. A server's
``resources/list_changed`` lists them again (``refresh``). Everything goes through
``engine.mcp``; a server that fails says so in the dialog's own line.
"""

from __future__ import annotations

import contextlib

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from threadline.core.mcp_catalog import ResourceInfo, ResourceTemplateInfo
from threadline.engine.capability_apis import McpCatalogApi
from threadline.ui.chat.mcp.completing_fields import CompletingForm
from threadline.ui.common.inline_messages import claim_while_open, show_in_label
from threadline.ui.common.message_bridge import UserMessage
from threadline.ui.common.tasks import spawn

ItemRole = Qt.ItemDataRole.UserRole + 1


class ResourceBrowser(QDialog):
    """Browse one server's resources at a time; ``attachRequested(server, uri)`` on Attach."""

    attachRequested = Signal(str, str)

    def __init__(self, catalog: McpCatalogApi, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._catalog = catalog
        self.setObjectName("McpResourceBrowser")
        self.setWindowTitle("Attach from an MCP server")
        self.resize(620, 460)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 16, 18, 14)
        layout.setSpacing(10)
        row = QHBoxLayout()
        server_label = QLabel("&Server")
        self.servers = QComboBox()
        self.servers.setObjectName("McpResourceServer")
        self.servers.setAccessibleName("MCP server")
        server_label.setBuddy(self.servers)
        row.addWidget(server_label)
        row.addWidget(self.servers, 1)
        layout.addLayout(row)
        self.list = QListWidget()
        self.list.setObjectName("McpResourceList")
        self.list.setAccessibleName("Resources")
        self.list.currentItemChanged.connect(self._chosen)
        self.list.itemDoubleClicked.connect(lambda _item: self._attach())
        layout.addWidget(self.list, 1)
        self.details = QLabel()
        self.details.setObjectName("Hint")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.details)
        self.variables_box = QWidget()
        self.variables: CompletingForm | None = None
        layout.addWidget(self.variables_box)
        self.message = QLabel()
        self.message.setObjectName("InlineError")
        self.message.setWordWrap(True)
        self.message.hide()
        layout.addWidget(self.message)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.attach_button = buttons.addButton("Attach", QDialogButtonBox.ButtonRole.ActionRole)
        self.attach_button.setEnabled(False)
        self.attach_button.clicked.connect(self._attach)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._wanted: tuple[str, str] | None = None
        """A (server, label) to choose once listed (``want``)."""
        self.bridge = claim_while_open(self, self)
        self.servers.currentTextChanged.connect(lambda _name: self.refresh())
        spawn(catalog.servers(), on_done=self._servers_listed, tell=self, context="MCP servers not listed")

    def show_user_message(self, message: UserMessage) -> None:
        show_in_label(self.message, message)

    # -- what is listed ------------------------------------------------------------------------

    @property
    def server(self) -> str:
        return self.servers.currentText()

    def want(self, server: str, label: str) -> None:
        """Show ``server`` and choose its entry ``label`` once listed (a template picked with ``@``)."""
        self._wanted = (server, label)
        if self.servers.findText(server) >= 0:
            if self.server == server:
                self.refresh()
            else:
                self.servers.setCurrentText(server)

    def _servers_listed(self, names: list[str]) -> None:
        if not shiboken6.isValid(self):  # closed meanwhile
            return
        self.servers.blockSignals(True)
        self.servers.clear()
        self.servers.addItems(names)
        if self._wanted is not None and self._wanted[0] in names:
            self.servers.setCurrentText(self._wanted[0])
        self.servers.blockSignals(False)
        if not names:
            self.details.setText("No MCP server is set up: add one in Settings → MCP.")
            return
        self.refresh()

    def refresh(self, server: str | None = None) -> None:
        """List the shown server's resources and templates (again); ``server``: only when it is shown."""
        name = self.server
        if not name or (server is not None and server != name):
            return
        self.message.hide()

        async def both() -> tuple[list[ResourceInfo], list[ResourceTemplateInfo]]:
            return await self._catalog.resources(name), await self._catalog.templates(name)

        spawn(both(), on_done=lambda found: self._fill(name, *found), tell=self, context="Not listed")

    def _fill(
        self, server: str, resources: list[ResourceInfo], templates: list[ResourceTemplateInfo]
    ) -> None:
        if not shiboken6.isValid(self) or server != self.server:
            return
        current = self.current()
        self.list.clear()
        entries: list[ResourceInfo | ResourceTemplateInfo] = [*resources, *templates]
        for entry in entries:
            template = isinstance(entry, ResourceTemplateInfo)
            item = QListWidgetItem(f"{entry.label}  ·  template" if template else entry.label)
            item.setData(ItemRole, entry)
            item.setToolTip(entry.uri_template if isinstance(entry, ResourceTemplateInfo) else entry.uri)
            self.list.addItem(item)
            if entry == current:
                self.list.setCurrentItem(item)
        if not resources and not templates:
            self.details.setText(f"MCP server {server} offers no resources.")
        if self._wanted is not None and self._wanted[0] == server:
            label, self._wanted = self._wanted[1], None
            with contextlib.suppress(KeyError):  # gone from the list meanwhile
                self.select(label)

    def current(self) -> ResourceInfo | ResourceTemplateInfo | None:
        item = self.list.currentItem()
        found: ResourceInfo | ResourceTemplateInfo | None = None if item is None else item.data(ItemRole)
        return found

    def select(self, label: str) -> None:
        """Choose the entry whose text starts with ``label`` (for keyboard users and tests)."""
        for i in range(self.list.count()):
            if self.list.item(i).text().startswith(label):
                self.list.setCurrentRow(i)
                return
        raise KeyError(label)

    def _chosen(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        entry: ResourceInfo | ResourceTemplateInfo | None = None if item is None else item.data(ItemRole)
        self._set_variables(entry if isinstance(entry, ResourceTemplateInfo) else None)
        self.attach_button.setEnabled(entry is not None)
        if entry is None:
            self.details.clear()
            return
        uri = entry.uri_template if isinstance(entry, ResourceTemplateInfo) else entry.uri
        parts = [uri, entry.mime_type, entry.description]
        self.details.setText("\n".join(p for p in parts if p))

    def _set_variables(self, template: ResourceTemplateInfo | None) -> None:
        old = self.variables_box.layout()
        if old is not None:
            QWidget().setLayout(old)  # the old fields go with a throwaway parent
        self.variables = None
        if template is None:
            self.variables_box.hide()
            return
        catalog, server, uri = self._catalog, self.server, template.uri_template

        async def suggest(name: str, value: str, others: dict[str, str]) -> list[str]:
            return await catalog.complete_template(server, uri, name, value, others)

        self.variables = CompletingForm(suggest)
        for name in template.variables():
            self.variables.add_field(name, required=True)
        self.variables_box.setLayout(self.variables)
        self.variables_box.show()

    def _attach(self) -> None:
        entry = self.current()
        if entry is None:
            return
        if isinstance(entry, ResourceTemplateInfo):
            assert self.variables is not None
            missing = self.variables.missing()
            if missing:
                self.message.setText(f"Fill in {', '.join(missing)} first.")
                self.message.show()
                return
            uri = entry.expand(self.variables.values())
        else:
            uri = entry.uri
        self.attachRequested.emit(self.server, uri)
        self.details.setText(f"Attached {uri}")
