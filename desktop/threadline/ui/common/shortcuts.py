"""Key sequences without conflicts.

Qt refuses a key that two enabled shortcuts claim in overlapping contexts: it does
nothing and prints "Ambiguous shortcut overload". The easy way to get there is to list
a standard key and its usual spelling together — ``[StandardKey.Close, "Ctrl+W"]``
expands to ``Ctrl+F4, Ctrl+W, Ctrl+W`` on Linux, and ``[StandardKey.Quit, "Ctrl+Q"]``
to ``Ctrl+Q, Ctrl+Q`` on GNOME and KDE — so ``unique_sequences`` drops repeats, and
``shortcut_conflicts`` finds the ones left between different actions (the shortcut
test walks the main window with it).

The same walk feeds the "Keyboard shortcuts" sheet (``registered_shortcuts``), so the
sheet lists what is really bound and cannot go stale; keys that widgets read themselves
are declared next to their handler as :class:`KeyHint` values.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QMenu, QWidget

KeySpec = QKeySequence | QKeySequence.StandardKey | str

SECTION_PROPERTY = "shortcutSection"
"""A ``QShortcut``'s section in the shortcuts sheet (an action's is the menu it sits in)."""


def unique_sequences(specs: Iterable[KeySpec]) -> list[QKeySequence]:
    """Each spec expanded (a standard key may stand for several), empties and repeats dropped, in order."""
    seen: set[str] = set()
    out: list[QKeySequence] = []
    for spec in specs:
        if isinstance(spec, QKeySequence.StandardKey):
            expanded = QKeySequence.keyBindings(spec)
        else:
            expanded = [QKeySequence(spec)]
        for sequence in expanded:
            text = sequence.toString(QKeySequence.SequenceFormat.PortableText)
            if sequence.isEmpty() or text in seen:
                continue
            seen.add(text)
            out.append(sequence)
    return out


@dataclass(frozen=True, slots=True)
class ShortcutOwner:
    """One action or QShortcut that claims a key, and where it applies."""

    name: str
    context: Qt.ShortcutContext
    scope: QWidget | None
    """The widget the context is about (the action's or shortcut's parent widget)."""
    item: QObject | None = None
    """The action or shortcut itself."""


def _owners(root: QWidget) -> Iterable[tuple[ShortcutOwner, list[QKeySequence]]]:
    objects: list[QObject] = [root, *root.findChildren(QObject)]
    seen: set[QObject] = set()
    for obj in objects:
        if isinstance(obj, QWidget):
            candidates: list[QObject] = [*obj.actions()]
        else:
            candidates = []
        candidates.append(obj)
        for item in candidates:
            if item in seen:
                continue
            if isinstance(item, QAction):
                seen.add(item)
                parent = item.parent()
                scope = parent if isinstance(parent, QWidget) else None
                owner = ShortcutOwner(item.text() or item.objectName(), item.shortcutContext(), scope, item)
                yield owner, list(item.shortcuts())
            elif isinstance(item, QShortcut):
                seen.add(item)
                parent = item.parent()
                scope = parent if isinstance(parent, QWidget) else None
                name = item.whatsThis() or item.objectName() or "QShortcut"
                owner = ShortcutOwner(name, item.context(), scope, item)
                yield owner, [item.key(), *[k for k in list(item.keys()) if k != item.key()]]


def _overlap(a: ShortcutOwner, b: ShortcutOwner) -> bool:
    """Whether two owners can be live at once for the same key press (conservatively: yes, unless
    both are bound to widgets that are not the same and neither contains the other)."""
    wide = (Qt.ShortcutContext.WindowShortcut, Qt.ShortcutContext.ApplicationShortcut)
    if a.context in wide or b.context in wide or a.scope is None or b.scope is None:
        return True
    return a.scope is b.scope or a.scope.isAncestorOf(b.scope) or b.scope.isAncestorOf(a.scope)


def shortcut_conflicts(root: QWidget) -> list[str]:
    """Every key claimed twice under ``root`` (within one action, or by two actions that overlap)."""
    problems: list[str] = []
    claims: dict[str, list[ShortcutOwner]] = {}
    for owner, sequences in _owners(root):
        texts = [s.toString(QKeySequence.SequenceFormat.PortableText) for s in sequences if not s.isEmpty()]
        for text in sorted({t for t in texts if texts.count(t) > 1}):
            problems.append(f"{text}: listed twice by {owner.name!r}")
        for text in dict.fromkeys(texts):
            for other in claims.get(text, []):
                if _overlap(owner, other):
                    problems.append(f"{text}: claimed by both {other.name!r} and {owner.name!r}")
            claims.setdefault(text, []).append(owner)
    return problems


@dataclass(frozen=True, slots=True)
class KeyHint:
    """A key a widget handles itself (in ``keyPressEvent``), for the shortcuts sheet.

    Actions and ``QShortcut`` objects are found by walking the window; keys a widget
    reads itself (Enter in the composer, F2 on a chat in the sidebar) are invisible to
    that walk, so the module that handles them lists them as hints.
    """

    section: str
    description: str
    keys: tuple[QKeySequence, ...]

    @classmethod
    def of(cls, section: str, description: str, *keys: KeySpec) -> KeyHint:
        return cls(section, description, tuple(unique_sequences(keys)))


@dataclass(frozen=True, slots=True)
class ShortcutEntry:
    """One line of the shortcuts sheet: where it applies, what it does, its keys."""

    section: str
    description: str
    keys: tuple[QKeySequence, ...]

    def key_text(self) -> str:
        """The keys as the platform spells them ("Ctrl+W, Ctrl+F4"), as printed on the keyboard."""
        return ", ".join(key_name(k) for k in self.keys)


def key_name(sequence: QKeySequence) -> str:
    """``sequence`` as a person reads it: Qt's name for Shift+Tab is "Backtab", which no key
    is labelled with."""
    return sequence.toString(QKeySequence.SequenceFormat.NativeText).replace("Backtab", "Tab")


_LAST_KEYBOARD_KEY = 0x0100005F
"""Qt's key codes above this are media and application keys (Zoom In, Find, Back…): a binding
for them is kept, but a keyboard seldom has them, so the sheet lists the keys people type."""


def typed_keys(sequences: Iterable[QKeySequence]) -> tuple[QKeySequence, ...]:
    """The sequences of ``sequences`` made of keys an ordinary keyboard has."""
    kept = []
    for sequence in sequences:
        if sequence.isEmpty():
            continue
        keys = [sequence[i].key() for i in range(sequence.count())]  # type: ignore[index]  # PySide6 stubs lack __getitem__
        if all(int(key.value) <= _LAST_KEYBOARD_KEY for key in keys):
            kept.append(sequence)
    return tuple(kept)


def plain_text(text: str) -> str:
    """An action's text as read: no mnemonic ``&``, no ``\\t`` key hint, no trailing ellipsis."""
    text = text.split("\t")[0].replace("&&", "\0").replace("&", "").replace("\0", "&")
    return text.removesuffix("…").removesuffix("...").strip()


def registered_shortcuts(root: QWidget, menu_titles: dict[QAction, str] | None = None) -> list[ShortcutEntry]:
    """Every enabled-or-not action and ``QShortcut`` under ``root`` that has a key, in discovery order.

    ``menu_titles`` names the section of an action (its menu); other actions go under
    "Window". Actions without a key are left out: the sheet is about keys.
    """
    titles = menu_titles or {}
    entries: list[ShortcutEntry] = []
    seen: set[tuple[str, str]] = set()
    for owner, sequences in _owners(root):
        keys = typed_keys(sequences)
        if not keys or not owner.name:
            continue
        if isinstance(owner.item, QAction) and owner.item not in titles and isinstance(owner.scope, QMenu):
            continue  # a context menu's entry: its text follows the selection ("Delete 2 chats")
        section = titles.get(owner.item, "Window") if isinstance(owner.item, QAction) else "Window"
        if owner.item is not None and isinstance(owner.item.property(SECTION_PROPERTY), str):
            section = owner.item.property(SECTION_PROPERTY)
        entry = ShortcutEntry(section, plain_text(owner.name), keys)
        marker = (entry.description, entry.key_text())
        if marker in seen:
            continue
        seen.add(marker)
        entries.append(entry)
    return entries
