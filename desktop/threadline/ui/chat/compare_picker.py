"""The composer's "Compare" button: pick two to four models to answer the next prompt at once.

A checkable menu of the models the model picker offers. With two or more ticked,
the button reads "Compare · 3" and the next Send goes to all of them
(``Engine.send_compare``); a fifth tick is refused (the entries grey out). "Stop
comparing" unticks all, and a sent compare leaves the choice as it was, so the
person can compare the next prompt too.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from threadline.core.compare import MAX_WORKERS, MIN_WORKERS, CompareTarget
from threadline.ui.chat.model_catalog import ModelChoice


class CompareButton(QToolButton):
    targetsChanged = Signal(object)  # tuple[CompareTarget, ...]: () when fewer than two are ticked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("FlatButton")
        self.setText("Compare")
        self.setAccessibleName("Compare models")
        self.setToolTip(f"Send the next message to {MIN_WORKERS}–{MAX_WORKERS} models at once, side by side")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setMinimumWidth(28)  # gives way on a narrow window rather than widening the chat's minimum
        self._menu = QMenu(self)
        self.setMenu(self._menu)
        self._models: list[ModelChoice] = []
        self._ticked: list[tuple[str, str]] = []
        self._rebuild()

    def targets(self) -> tuple[CompareTarget, ...]:
        """The ticked models, when there are enough to compare; ``()`` otherwise."""
        if len(self._ticked) < MIN_WORKERS:
            return ()
        return tuple(CompareTarget(provider, model) for provider, model in self._ticked)

    def set_models(self, models: list[ModelChoice]) -> None:
        self._models = list(models)
        known = {(m.provider, m.model) for m in models}
        self._ticked = [key for key in self._ticked if key in known] if models else self._ticked
        self._rebuild()

    def set_ticked(self, targets: tuple[CompareTarget, ...]) -> None:
        """Tick exactly ``targets`` (``/compare`` and tests)."""
        self._ticked = [(t.provider, t.model) for t in targets][:MAX_WORKERS]
        self._rebuild()
        self.targetsChanged.emit(self.targets())

    def clear(self) -> None:
        self.set_ticked(())

    def _rebuild(self) -> None:
        self._menu.clear()
        title = self._menu.addAction(f"Answer with {MIN_WORKERS}–{MAX_WORKERS} models at once")
        title.setEnabled(False)
        full = len(self._ticked) >= MAX_WORKERS
        for choice in self._models:
            key = (choice.provider, choice.model)
            action = QAction(choice.label, self._menu)
            action.setCheckable(True)
            action.setChecked(key in self._ticked)
            action.setEnabled(key in self._ticked or not full)
            action.toggled.connect(lambda on, key=key: self._toggle(key, on))
            self._menu.addAction(action)
        if not self._models:
            empty = self._menu.addAction("No models yet — add a provider in Settings")
            empty.setEnabled(False)
        self._menu.addSeparator()
        stop = self._menu.addAction("Stop comparing")
        stop.setEnabled(bool(self._ticked))
        stop.triggered.connect(self.clear)
        count = len(self._ticked)
        self.setText(f"Compare · {count}" if count >= MIN_WORKERS else "Compare")
        self.setCheckable(True)
        self.setChecked(count >= MIN_WORKERS)

    def _toggle(self, key: tuple[str, str], on: bool) -> None:
        if on and key not in self._ticked and len(self._ticked) < MAX_WORKERS:
            self._ticked.append(key)
        elif not on and key in self._ticked:
            self._ticked.remove(key)
        self._rebuild()
        self.targetsChanged.emit(self.targets())
