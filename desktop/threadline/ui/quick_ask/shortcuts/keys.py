"""A key sequence's first combination, named as each platform's API wants it.

Only what a global shortcut needs: letters, digits, Space, F1–F24 and a few named keys,
with Ctrl, Alt, Shift and Meta (the Windows/Super/Command key).
"""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

Key = Qt.Key
Mod = Qt.KeyboardModifier


class Chord(NamedTuple):
    key: Qt.Key
    ctrl: bool
    alt: bool
    shift: bool
    meta: bool


def chord_of(sequence: QKeySequence) -> Chord | None:
    """The first combination of ``sequence``; ``None`` when empty or without a key besides modifiers."""
    if sequence.isEmpty():
        return None
    combination = sequence[0]  # type: ignore[index]  # QKeySequence is indexable; its stubs miss it
    key = combination.key()
    if key in (Key.Key_unknown, Key.Key_Control, Key.Key_Alt, Key.Key_Shift, Key.Key_Meta):
        return None
    mods = combination.keyboardModifiers()
    return Chord(
        key,
        bool(mods & Mod.ControlModifier),
        bool(mods & Mod.AltModifier),
        bool(mods & Mod.ShiftModifier),
        bool(mods & Mod.MetaModifier),
    )


_NAMED_X11 = {
    Key.Key_Space: (0x0020, "space"),
    Key.Key_Return: (0xFF0D, "Return"),
    Key.Key_Enter: (0xFF8D, "KP_Enter"),
    Key.Key_Tab: (0xFF09, "Tab"),
    Key.Key_Backspace: (0xFF08, "BackSpace"),
    Key.Key_Insert: (0xFF63, "Insert"),
    Key.Key_Delete: (0xFFFF, "Delete"),
    Key.Key_Home: (0xFF50, "Home"),
    Key.Key_End: (0xFF57, "End"),
    Key.Key_PageUp: (0xFF55, "Prior"),
    Key.Key_PageDown: (0xFF56, "Next"),
    Key.Key_Left: (0xFF51, "Left"),
    Key.Key_Up: (0xFF52, "Up"),
    Key.Key_Right: (0xFF53, "Right"),
    Key.Key_Down: (0xFF54, "Down"),
    Key.Key_Period: (0x002E, "period"),
    Key.Key_Comma: (0x002C, "comma"),
    Key.Key_Slash: (0x002F, "slash"),
    Key.Key_Semicolon: (0x003B, "semicolon"),
    Key.Key_Minus: (0x002D, "minus"),
    Key.Key_Equal: (0x003D, "equal"),
}


def x11_keysym(key: Qt.Key) -> tuple[int, str] | None:
    """The X11 keysym and its name (the name is what the portal's triggers use)."""
    value = int(key.value) if hasattr(key, "value") else int(key)
    if Key.Key_A.value <= value <= Key.Key_Z.value:
        return value + 0x20, chr(value + 0x20)  # keysyms of letters are the lower-case ones
    if Key.Key_0.value <= value <= Key.Key_9.value:
        return value, chr(value)
    if Key.Key_F1.value <= value <= Key.Key_F24.value:
        n = value - Key.Key_F1.value
        return 0xFFBE + n, f"F{n + 1}"
    return _NAMED_X11.get(key)


def portal_trigger(chord: Chord) -> str | None:
    """The XDG shortcuts specification's trigger text ("CTRL+ALT+space"), or ``None``."""
    keysym = x11_keysym(chord.key)
    if keysym is None:
        return None
    mods = [
        name
        for on, name in (
            (chord.ctrl, "CTRL"),
            (chord.alt, "ALT"),
            (chord.shift, "SHIFT"),
            (chord.meta, "LOGO"),
        )
        if on
    ]
    return "+".join([*mods, keysym[1]])


_NAMED_VK = {
    Key.Key_Space: 0x20,
    Key.Key_Return: 0x0D,
    Key.Key_Tab: 0x09,
    Key.Key_Backspace: 0x08,
    Key.Key_Insert: 0x2D,
    Key.Key_Delete: 0x2E,
    Key.Key_Home: 0x24,
    Key.Key_End: 0x23,
    Key.Key_PageUp: 0x21,
    Key.Key_PageDown: 0x22,
    Key.Key_Left: 0x25,
    Key.Key_Up: 0x26,
    Key.Key_Right: 0x27,
    Key.Key_Down: 0x28,
}


def windows_vk(key: Qt.Key) -> int | None:
    """The Windows virtual-key code (letters and digits are their upper-case ASCII codes)."""
    value = key.value
    if Key.Key_A.value <= value <= Key.Key_Z.value or Key.Key_0.value <= value <= Key.Key_9.value:
        return value
    if Key.Key_F1.value <= value <= Key.Key_F24.value:
        return 0x70 + value - Key.Key_F1.value
    return _NAMED_VK.get(key)


_MAC_LETTERS = "asdfhgzxcv_bqweryt123465=97-80]ou[ip_lj'k;\\,/nm."
"""Carbon's virtual key codes of the ANSI keyboard, in code order ("_": not a letter key)."""
_NAMED_MAC = {Key.Key_Space: 49, Key.Key_Return: 36, Key.Key_Tab: 48, Key.Key_Backspace: 51}
_MAC_F = [122, 120, 99, 118, 96, 97, 98, 100, 101, 109, 103, 111]


def mac_keycode(key: Qt.Key) -> int | None:
    """Carbon's virtual key code (``kVK_ANSI_*``) on a US layout, or ``None``."""
    value = key.value
    if Key.Key_A.value <= value <= Key.Key_Z.value or Key.Key_0.value <= value <= Key.Key_9.value:
        index = _MAC_LETTERS.find(chr(value).lower())
        return index if index >= 0 else None
    if Key.Key_F1.value <= value <= Key.Key_F12.value:
        return _MAC_F[value - Key.Key_F1.value]
    return _NAMED_MAC.get(key)
