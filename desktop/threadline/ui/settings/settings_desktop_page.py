"""Settings → Desktop: the tray, start at login, and which notifications to show.

Each switch takes effect at once: the tray and notification switches are saved through
``DesktopPrefs`` (``ui/common/desktop_prefs.py``), which the desktop room follows; "Start at
login" writes or removes the XDG autostart entry on Linux (``files/autostart.py``), and on
Windows and macOS says the installer's option does it (docs/desktop.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication, QCheckBox, QLabel, QSystemTrayIcon, QWidget

from threadline.engine.api import EngineApi
from threadline.files import autostart
from threadline.ui.common.desktop_prefs import DesktopPrefs, DesktopSwitches
from threadline.ui.common.tasks import spawn
from threadline.ui.settings.page_layout import hint_label, scrolling_page, section_title


class DesktopPage(QWidget):
    def __init__(self, engine: EngineApi, data_dir: Path | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("DesktopPage")
        self.engine = engine
        self.data_dir = data_dir
        app = QApplication.instance()
        assert app is not None
        self.prefs = DesktopPrefs.of(app)
        layout = scrolling_page(self, "Desktop settings")

        layout.addWidget(section_title("Tray and start"))
        self.keep_in_tray = QCheckBox("Keep running in the tray when the window closes")
        layout.addWidget(self.keep_in_tray)
        if not QSystemTrayIcon.isSystemTrayAvailable():
            layout.addWidget(hint_label("This desktop shows no tray icons, so closing the window quits."))
        self.start_at_login = QCheckBox("Start at login")
        layout.addWidget(self.start_at_login)
        self.login_hint = hint_label("")
        layout.addWidget(self.login_hint)
        if sys.platform.startswith("linux"):
            self.login_hint.setText(f"Adds {autostart.autostart_file()} for your desktop to start.")
            self.start_at_login.setChecked(autostart.is_enabled())
        else:
            self.start_at_login.setEnabled(False)
            self.login_hint.setText("Choose this in Threadline's installer (or your system's login items).")

        layout.addWidget(section_title("Notifications"))
        layout.addWidget(
            hint_label(
                "Shown when the chat is not in view: another tab, or the window hidden or in the background."
            )
        )
        self.notify_finished = QCheckBox("When a reply finishes")
        self.notify_failed = QCheckBox("When a reply fails")
        self.notify_approval = QCheckBox("When a tool call waits for approval")
        self.show_text = QCheckBox("Show message text in notifications")
        for box in (self.notify_finished, self.notify_failed, self.notify_approval, self.show_text):
            layout.addWidget(box)
        layout.addWidget(
            hint_label("Off: a notification names the chat only, so a locked screen shows no reply text.")
        )
        self.message = QLabel()
        self.message.setObjectName("Hint")
        self.message.setWordWrap(True)
        self.message.hide()
        layout.addWidget(self.message)
        layout.addStretch(1)

        self._show(self.prefs.switches)
        self.prefs.changed.connect(self._show)
        for box in self._switch_boxes():
            box.toggled.connect(self._save)
        self.start_at_login.toggled.connect(self._login_toggled)
        spawn(self.prefs.load(engine), tell=self, context="Could not read the desktop settings")

    def _switch_boxes(self) -> tuple[QCheckBox, ...]:
        return (
            self.keep_in_tray,
            self.notify_finished,
            self.notify_failed,
            self.notify_approval,
            self.show_text,
        )

    def _show(self, switches: DesktopSwitches) -> None:
        values = (
            switches.keep_in_tray,
            switches.notify_finished,
            switches.notify_failed,
            switches.notify_approval,
            switches.show_text,
        )
        for box, value in zip(self._switch_boxes(), values, strict=True):
            box.blockSignals(True)
            box.setChecked(value)
            box.blockSignals(False)

    def switches(self) -> DesktopSwitches:
        return DesktopSwitches(*(box.isChecked() for box in self._switch_boxes()))

    def _save(self) -> None:
        spawn(self.prefs.save(self.engine, self.switches()), tell=self, context="Not saved")

    def _login_toggled(self, on: bool) -> None:
        try:
            if on:
                autostart.enable(autostart.start_command(self.data_dir))
            else:
                autostart.disable()
        except OSError as err:
            self.message.setText(f"Could not change the login start: {err.strerror or err}")
            self.message.show()
            self.start_at_login.blockSignals(True)
            self.start_at_login.setChecked(autostart.is_enabled())
            self.start_at_login.blockSignals(False)
            return
        self.message.hide()
