"""A chat tab's MCP helper: the servers' prompts in the ``/`` list and run as the user's turn,
their resources attached from the browser and marked when they change.

Built by the tab with itself as host (``McpHost``), so the tab grows by a line, not by this
behaviour. Everything goes through ``engine.mcp`` (docs/mcp.md, "Prompts and resources"):

* **Prompts**: the composer's ``/`` list shows ``engine.mcp.known_prompts()`` after the
  commands and lists every enabled server's prompts again when it is first built; a
  server's ``prompts/list_changed`` updates it while it is open. Sending
  ``/server:prompt name=value`` (typed, or from the prompt's form, ``prompt_form``) gets
  the prompt's messages and sends them as the user's turn through the composer: its text
  in the box, its images and embedded resources as chips, then Send, so the turn shows as
  any other. Required arguments that are missing open the form instead.
* **Resources**: Attach → From MCP server… opens the browser (``resource_browser``), and
  ``@`` in the text lists every enabled server's resources and templates by name
  (``resource_completer``: a resource picked is attached, a template opens the browser on
  its form); an
  attached resource becomes a chip naming its server and URI, read from the server, and the
  tab subscribes to it: when the server says it changed, the chip is marked and the
  resource read again, so what is sent is the resource as it is now.
* **Resources in tool results**: the Open and Attach links of a tool result's resources
  (``result_resources``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

import shiboken6

from threadline.core.mcp_catalog import (
    CatalogChange,
    PromptInfo,
    PromptTurn,
    ResourceInfo,
    ResourceTemplateInfo,
    command_text,
    missing_arguments,
    parse_prompt_command,
)
from threadline.engine.errors import EngineError
from threadline.ui.chat.mcp.result_resources import ResultResources
from threadline.ui.common.tasks import LogOnly, spawn

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from threadline.engine.api import EngineApi
    from threadline.engine.events import ErrorAction
    from threadline.ui.chat.composer.composer import Composer
    from threadline.ui.chat.composer.slash_completer import SlashCompleter
    from threadline.ui.chat.mcp.prompt_form import PromptForm
    from threadline.ui.chat.mcp.resource_browser import ResourceBrowser
    from threadline.ui.chat.mcp.resource_completer import ResourceCompleter
    from threadline.ui.chat.view.chat_view import ChatView
    from threadline.ui.chat.view.conversation_model import ConversationModel
    from threadline.ui.common.message_bridge import MessageBridge

log = logging.getLogger("threadline.ui.chat.mcp")


class McpHost(Protocol):
    """What the helper needs of its tab (the tab builds it and is not imported here)."""

    engine: EngineApi
    composer: Composer
    bridge: MessageBridge
    model: ConversationModel
    view: ChatView

    @property
    def session_id(self) -> str: ...
    def _show_local_error(self, text: str, actions: tuple[ErrorAction, ...]) -> None: ...


class ChatMcp:
    def __init__(self, tab: McpHost, widget: QWidget) -> None:
        self._tab = tab
        self._widget = widget
        """The tab as a widget: the parent of the dialogs, and alive while this helper is."""
        self._completer: SlashCompleter | None = None
        self.form: PromptForm | None = None
        self.browser: ResourceBrowser | None = None
        self.at_list: ResourceCompleter | None = None
        """The ``@`` list, built on the first "@" typed."""
        self.servers: list[str] = []
        """The enabled servers' names, as listed when the tab opened."""
        self.resources: list[ResourceInfo | ResourceTemplateInfo] = []
        """Every enabled server's resources and templates, as last listed (for ``@``)."""
        tab.composer.edit.textChanged.connect(self._typed)
        self._unwatch = tab.engine.mcp.watch(self._changed)
        widget.destroyed.connect(lambda *_: self._unwatch())
        tab.composer.mcpResourcesWanted.connect(self.open_browser)
        self.results = ResultResources(tab.engine, tab.model, tab.bridge, widget, self.attach)
        tab.view.actionTriggered.connect(self.results.run)
        spawn(
            tab.engine.mcp.servers(),
            on_done=self._servers_listed,
            tell=LogOnly("MCP servers not listed"),
        )

    def _servers_listed(self, names: list[str]) -> None:
        self.servers = names
        if shiboken6.isValid(self._widget):  # the tab may have closed meanwhile
            self._tab.composer.set_mcp_available(bool(names))

    # -- prompts -------------------------------------------------------------------------------

    def serve(self, completer: SlashCompleter) -> None:
        """List the prompts in ``completer`` (built on the first "/"), and list them anew now."""
        self._completer = completer
        completer.prompts = self._tab.engine.mcp.known_prompts
        completer.promptPicked.connect(lambda prompt: self.open_form(prompt))
        spawn(
            self._tab.engine.mcp.refresh_prompts(),
            on_done=lambda _prompts: self._prompts_changed(),
            tell=LogOnly("MCP prompts not listed", logging.INFO),
        )

    def _prompts_changed(self) -> None:
        completer = self._completer
        if completer is not None and shiboken6.isValid(completer):
            completer.follow_text()

    def run_prompt(self, text: str) -> bool:
        """Run ``text`` when it is ``/server:prompt …`` of a known prompt; False when it is not one."""
        command = parse_prompt_command(text)
        if command is None:
            return False
        catalog = self._tab.engine.mcp
        prompt = catalog.known_prompt(command.server, command.prompt)
        if prompt is None:
            known = any(p.server == command.server for p in catalog.known_prompts())
            if command.server not in self.servers and not known:
                return False  # not an MCP server: the text is sent as it is
            # Not listed yet (typed before the list came): the server is asked, then it runs.
            spawn(
                catalog.find_prompt(command.server, command.prompt),
                on_done=lambda found: self._run_found(found, command.arguments, command.problem),
                tell=self._tab.bridge,
                context=f"/{command.server}:{command.prompt} did not run",
                session_id=self._tab.session_id,
            )
            return True
        self._run_found(prompt, command.arguments, command.problem)
        return True

    def _run_found(self, prompt: PromptInfo, arguments: dict[str, str], problem: str) -> None:
        if not shiboken6.isValid(self._widget):
            return
        if problem:
            self._tab._show_local_error(problem, ())
        elif missing_arguments(prompt, arguments):
            self.open_form(prompt, arguments)
        else:
            self.send_prompt(prompt, arguments)

    def open_form(self, prompt: PromptInfo, values: dict[str, str] | None = None) -> PromptForm:
        from threadline.ui.chat.mcp.prompt_form import PromptForm

        catalog = self._tab.engine.mcp

        async def suggest(name: str, value: str, others: dict[str, str]) -> list[str]:
            return await catalog.complete_prompt(prompt.server, prompt.name, name, value, others)

        form = PromptForm(prompt, suggest, values, self._widget)
        form.accepted.connect(lambda: self._form_sent(form))
        form.finished.connect(form.deleteLater)
        self.form = form
        form.open()
        return form

    def _form_sent(self, form: PromptForm) -> None:
        values = form.values()
        self._tab.composer.set_text(command_text(form.prompt, values))  # what ran, should it fail
        self.send_prompt(form.prompt, values)

    def send_prompt(self, prompt: PromptInfo, values: dict[str, str]) -> None:
        """Get the prompt's messages, then send them as the user's turn."""
        spawn(
            self._tab.engine.mcp.get_prompt(prompt.server, prompt.name, values),
            on_done=self._send_turn,
            tell=self._tab.bridge,
            context=f"/{prompt.command} did not run",
            session_id=self._tab.session_id,
        )

    def _send_turn(self, turn: PromptTurn) -> None:
        if not shiboken6.isValid(self._widget):
            return
        composer = self._tab.composer
        text = "/" + turn.text if turn.text.startswith("/") else turn.text  # "//" sends a leading "/"
        composer.set_text(text)
        composer.chips.add_items([*turn.images, *turn.context])
        for note in turn.notes:
            log.info("%s", note)
        composer.submit()

    # -- resources -----------------------------------------------------------------------------

    def open_browser(self) -> ResourceBrowser:
        from threadline.ui.chat.mcp.resource_browser import ResourceBrowser

        if self.browser is not None and shiboken6.isValid(self.browser):
            self.browser.raise_()
            return self.browser
        browser = ResourceBrowser(self._tab.engine.mcp, self._widget)
        browser.attachRequested.connect(self.attach)
        browser.finished.connect(browser.deleteLater)
        self.browser = browser
        browser.open()
        return browser

    def attach(self, server: str, uri: str) -> None:
        """A chip for the resource, read from the server; told when it changes (if it can be)."""
        catalog = self._tab.engine.mcp
        self._tab.composer.chips.add_resource(server, uri, lambda: catalog.read(server, uri))
        spawn(catalog.subscribe(server, uri), tell=LogOnly("MCP resource not subscribed", logging.INFO))

    def _typed(self) -> None:
        if self.at_list is None and "@" in self._tab.composer.text():
            from threadline.ui.chat.mcp.resource_completer import ResourceCompleter

            edit = self._tab.composer.edit
            self.at_list = ResourceCompleter(edit, self._widget, lambda: self.resources, self._at_picked)
            self.refresh_resources()

    def refresh_resources(self) -> None:
        """List every enabled server's resources and templates again (a server that fails is left out)."""
        catalog = self._tab.engine.mcp

        async def everything() -> list[ResourceInfo | ResourceTemplateInfo]:
            found: list[ResourceInfo | ResourceTemplateInfo] = []
            for server in await catalog.servers():
                try:
                    found += [*await catalog.resources(server), *await catalog.templates(server)]
                except EngineError as err:
                    log.info("the resources of MCP server %s were not listed: %s", server, err)
            return found

        spawn(everything(), on_done=self._resources_listed, tell=LogOnly("MCP resources not listed"))

    def _resources_listed(self, found: list[ResourceInfo | ResourceTemplateInfo]) -> None:
        self.resources = found
        if not shiboken6.isValid(self._widget):
            return
        if self.at_list is not None and shiboken6.isValid(self.at_list):
            self.at_list.follow_text()

    def _at_picked(self, entry: ResourceInfo | ResourceTemplateInfo) -> None:
        if isinstance(entry, ResourceInfo):
            self.attach(entry.server, entry.uri)
        else:
            self.open_browser().want(entry.server, entry.label)

    def _changed(self, change: CatalogChange) -> None:
        if not shiboken6.isValid(self._widget):
            return
        if change.kind == "prompts":
            self._prompts_changed()
        elif change.kind == "resources":
            if self.browser is not None and shiboken6.isValid(self.browser):
                self.browser.refresh(change.server)
            if self.at_list is not None:
                self.refresh_resources()
        elif change.kind == "resource":
            catalog = self._tab.engine.mcp
            server, uri = change.server, change.uri
            self._tab.composer.chips.resource_changed(server, uri, lambda: catalog.read(server, uri))
