"""Coming to the front with the activation token of whoever asked.

Window managers with focus-stealing prevention give the focus to a window the user just
asked for and refuse it to a process that raises itself. What proves the asking is a token
the launcher hands the process it starts: ``XDG_ACTIVATION_TOKEN`` on Wayland,
``DESKTOP_STARTUP_ID`` on X11. A second ``threadline`` hands its words to the running one and
exits (``app/single_instance``), so it sends its token along as a word and the running one
activates with it (docs/desktop.md, "Coming to the front"):

* Wayland: Qt's Wayland plugin reads ``XDG_ACTIVATION_TOKEN`` when a window asks for the
  activation (``QWindow.requestActivate``) and uses it once; it is set just before and
  removed after, so no later child process inherits a spent token.
* X11: ``ui/common/x11_activation.py`` puts the id on the window (``_NET_STARTUP_ID``), takes
  its time stamp as the window's user time, asks for the activation with that time stamp
  and ends the launcher's start-up feedback, as a window mapped by the start would have.

``offered`` holds the token while the words are acted on, so whichever window comes up for
them (the main window, Quick ask) activates with it; it is used once. A notification's
action offers the token its server sent with it the same way (``ui/desktop/notifier.py``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

log = logging.getLogger("threadline.ui.common.activation")

XDG_TOKEN_WORD = "--activation-token="
STARTUP_ID_WORD = "--startup-id="
"""The words ``app/single_instance.activation_words`` sends (kept equal by the tests)."""


@dataclass(frozen=True)
class ActivationToken:
    xdg: str = ""
    startup_id: str = ""


def split_token(words: Sequence[str]) -> tuple[list[str], ActivationToken | None]:
    """The words without the token words, and the token they carried (``None``: none)."""
    rest: list[str] = []
    xdg = startup_id = ""
    for word in words:
        if word.startswith(XDG_TOKEN_WORD):
            xdg = word[len(XDG_TOKEN_WORD) :]
        elif word.startswith(STARTUP_ID_WORD):
            startup_id = word[len(STARTUP_ID_WORD) :]
        else:
            rest.append(word)
    token = ActivationToken(xdg, startup_id) if xdg or startup_id else None
    return rest, token


def from_server(token: str) -> ActivationToken | None:
    """A token another program made for us (a notification server's ``ActivationToken``): the
    spec lets it be either kind, and ``bring_up`` uses the field this platform reads."""
    return ActivationToken(xdg=token, startup_id=token) if token else None


_offered: list[ActivationToken] = []
_last_used: list[ActivationToken | None] = [None]


def last_used() -> ActivationToken | None:
    """The token the latest ``bring_up`` activated with (``None``: none); tests read it."""
    return _last_used[0]


@contextmanager
def offered(token: ActivationToken | None) -> Iterator[None]:
    """While inside, the next ``bring_up`` activates with ``token``; unused, it is dropped after."""
    _offered[:] = [token] if token is not None else []
    try:
        yield
    finally:
        _offered.clear()


def bring_up(widget: QWidget) -> None:
    """Show ``widget``'s window over the others and ask for the focus, with the offered token.

    Without a token a window manager may refuse the focus and mark the window as wanting
    attention instead (docs/desktop.md).
    """
    window = widget.window()
    if window.isMinimized():
        window.setWindowState(window.windowState() & ~Qt.WindowState.WindowMinimized)
    window.show()
    window.raise_()
    token = _offered.pop() if _offered else None
    _last_used[0] = token
    if token is not None and token.xdg:
        os.environ["XDG_ACTIVATION_TOKEN"] = token.xdg  # read by Qt's Wayland plugin on activation
    try:
        window.activateWindow()
        handle = window.windowHandle()
        if handle is not None:
            handle.requestActivate()
    finally:
        if token is not None and token.xdg:
            os.environ.pop("XDG_ACTIVATION_TOKEN", None)
    if token is not None and token.startup_id and QGuiApplication.platformName() == "xcb":
        from threadline.ui.common.x11_activation import activate_with_startup_id

        try:
            activate_with_startup_id(int(window.winId()), token.startup_id)
        except OSError as err:  # no libxcb to load: Qt's own request above stands
            log.info("could not use the start-up id: %s", err)
