"""Damage met while the window runs: say so where it is met, and offer the backup to restore.

A chat whose pages are damaged fails to open long after the start-up's own recovery
(``startup_recovery``) let the window in; the database's damage may also be recorded
already, by the self-test or a backup's check in another process (``store.damage``).
Either way a banner above the chats shows the store's whole advice (the paths in it wrap
with the text, never cut mid-path) with **Restore Backup from <date>**: the newest backup
that passes its check. Restoring runs the start-up's flow again: the window lets go of the
engine, the engine closes, ``StartupRecovery.restore`` moves the damaged file aside and
puts the backup in place, and ``StartupRecovery.open_engine`` opens it (asking with the
start-up dialog if that fails); the window then attaches the new engine.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from threadline.ui.common.announce import announce
from threadline.ui.common.message_bridge import user_message_of
from threadline.ui.common.tasks import spawn

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi
    from threadline.ui.window.startup_recovery import StartupRecovery

log = logging.getLogger("threadline.ui.window.damage_recovery")


class DamageBanner(QFrame):
    """The damage advice and its way out: Restore Backup from <date>, or dismiss."""

    restoreRequested = Signal(object)  # Path of the backup

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ErrorBanner")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 8, 8)
        layout.setSpacing(8)
        self.label = QLabel()
        self.label.setObjectName("DamageText")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.label, 1)
        self.restore_button = QPushButton()
        self.restore_button.clicked.connect(self._restore_clicked)
        layout.addWidget(self.restore_button, 0, Qt.AlignmentFlag.AlignTop)
        self.close_button = QToolButton()
        self.close_button.setText("×")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Dismiss")
        self.close_button.setAccessibleName("Dismiss message")
        self.close_button.clicked.connect(self.hide)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.backup: Path | None = None
        self.hide()

    def show_damage(self, text: str, backup: Path | None) -> None:
        from threadline.ui.window.startup_dialog import backup_label

        self.backup = backup
        self.label.setText(_breakable(text))
        self.restore_button.setVisible(backup is not None)
        self.restore_button.setEnabled(True)
        if backup is not None:
            self.restore_button.setText(f"Restore Backup from {backup_label(backup)}")
            self.restore_button.setToolTip(str(backup))
        self.show()
        choices = f" Choices: {self.restore_button.text()}." if backup is not None else ""
        announce(self, f"{text}{choices}", assertive=True)

    def show_note(self, text: str) -> None:
        """A sentence with no way out but dismissing (the restore's progress and outcome)."""
        self.backup = None
        self.label.setText(_breakable(text))
        self.restore_button.hide()
        self.show()
        announce(self, text)

    def _restore_clicked(self) -> None:
        if self.backup is not None:
            self.restore_button.setEnabled(False)
            self.restoreRequested.emit(self.backup)


def _breakable(text: str) -> str:
    """``text`` as rich text with a break opportunity (``<wbr>``) after each path separator:
    a long path wraps with the rest of the text instead of being cut at the banner's edge,
    and a selection copies it whole."""
    escaped = html.escape(text, quote=False)
    return escaped.replace("/", "/<wbr>").replace("\\", "\\<wbr>")


def shown_text(banner: DamageBanner) -> str:
    """The banner's text as a person reads it (without the markup)."""
    from PySide6.QtGui import QTextDocumentFragment

    return QTextDocumentFragment.fromHtml(banner.label.text()).toPlainText()


class RecoveryHost(Protocol):
    """What damage recovery needs of the main window (typed apart so this module does not
    import ``main_window``, which imports it)."""

    engine: EngineApi | None
    damage_recovery: DamageRecovery | None

    def window(self) -> QWidget:
        """The top-level widget (Qt's ``QWidget.window``: the main window itself), the recovery's parent."""
        ...

    def damage_banner(self) -> DamageBanner: ...
    async def detach_engine(self) -> None: ...
    async def attach_engine(self, engine: EngineApi) -> None: ...
    def close(self) -> bool: ...


class DamageRecovery(QObject):
    """Shows ``DamageBanner`` in ``window`` when damage is met, and restores through ``recovery``."""

    engineReplaced = Signal(object)  # the engine opened on the restored file

    def __init__(self, window: RecoveryHost, recovery: StartupRecovery) -> None:
        super().__init__(window.window())
        self.window = window
        self.recovery = recovery
        self.banner = window.damage_banner()
        self.banner.restoreRequested.connect(self._restore)
        self.restoring = False

    @property
    def database(self) -> Path | None:
        return self.recovery.database

    def met(self, err: BaseException) -> bool:
        """Show the banner if ``err`` says the SQLite file is damaged; ``False`` for anything else."""
        from threadline.store.errors import CorruptDatabaseError

        if not isinstance(err, CorruptDatabaseError) or self.database is None or self.restoring:
            return False
        from threadline.ui.window.startup_recovery import offered_backup

        log.warning("damage met in the window: %s", err)
        self.banner.show_damage(user_message_of(err) or str(err), offered_backup(err, self.database))
        return True

    def check_recorded(self) -> None:
        """Show the banner when damage of the file was recorded (by any process) before now."""
        if self.database is None:
            return
        from threadline.store.backups import newest_healthy_backup
        from threadline.store.damage import seen_damage
        from threadline.store.errors import damaged_message

        record = seen_damage(self.database)
        if record is None:
            return
        backup = newest_healthy_backup(self.database)
        text = f"{damaged_message(backup, self.database)} (The damage was {record.describe()}.)"
        self.banner.show_damage(text, backup)

    def _restore(self, backup: Path) -> None:
        spawn(
            self.restore(backup),
            tell=self.window.window(),
            on_failed=self._failed,
            context="The backup could not be restored",
            name="restore-backup",
        )

    def _failed(self, err: BaseException) -> None:
        """Ready to be asked again; the bridge says why (a damaged file: the banner again)."""
        self.restoring = False
        log.info("restoring in the window failed: %s", user_message_of(err))

    async def restore(self, backup: Path) -> None:
        """Close the engine, put ``backup`` in place (the damaged file kept aside), open it again."""
        from threadline.ui.window.startup_dialog import backup_label

        window = self.window
        self.restoring = True
        self.banner.show_note(f"Restoring the backup from {backup_label(backup)}…")
        engine = window.engine
        await window.detach_engine()
        close = getattr(engine, "aclose", None)  # the window sees the engine's API, the app owns its close
        if close is not None:
            await close()
        note = await self.recovery.restore(backup)
        opened: Any = await self.recovery.open_engine()
        self.restoring = False
        if opened is None:  # the person chose Quit in the start-up dialog
            window.close()
            return
        self.engineReplaced.emit(opened)
        await window.attach_engine(opened)
        aside = self.recovery.last_aside
        if note:
            self.banner.show_note(note)
        else:
            kept = f" The damaged file is kept as {aside}." if aside is not None else ""
            self.banner.show_note(f"Restored the backup from {backup_label(backup)}.{kept}")


def install(
    window: RecoveryHost, recovery: StartupRecovery, on_engine: Callable[[Any], None]
) -> DamageRecovery:
    """Wire damage recovery into ``window`` (the app calls it once the engine is attached)."""
    damage = DamageRecovery(window, recovery)
    damage.engineReplaced.connect(on_engine)
    window.damage_recovery = damage
    damage.check_recorded()
    return damage
