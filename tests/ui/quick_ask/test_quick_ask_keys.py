"""A key sequence named for each platform's hot key API, and the selection as a Markdown quote."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

from threadline.ui.quick_ask.selection import MAX_QUOTE_CHARS, as_quote
from threadline.ui.quick_ask.shortcuts.keys import (
    chord_of,
    mac_keycode,
    portal_trigger,
    windows_vk,
    x11_keysym,
)


def test_the_default_shortcut_on_every_platform() -> None:
    chord = chord_of(QKeySequence("Ctrl+Alt+Space"))
    assert chord is not None and chord.ctrl and chord.alt and not chord.shift and not chord.meta
    assert x11_keysym(chord.key) == (0x20, "space")
    assert portal_trigger(chord) == "CTRL+ALT+space"  # the XDG shortcuts specification's form
    assert windows_vk(chord.key) == 0x20
    assert mac_keycode(chord.key) == 49  # kVK_Space


def test_letters_digits_and_function_keys() -> None:
    k = chord_of(QKeySequence("Meta+Shift+K"))
    assert k is not None
    assert x11_keysym(k.key) == (ord("k"), "k")  # X11 keysyms of letters are lower case
    assert portal_trigger(k) == "SHIFT+LOGO+k"
    assert windows_vk(k.key) == ord("K")
    assert mac_keycode(k.key) == 0x28  # kVK_ANSI_K
    one = chord_of(QKeySequence("Ctrl+1"))
    assert one is not None and mac_keycode(one.key) == 0x12 and x11_keysym(one.key) == (ord("1"), "1")
    f5 = chord_of(QKeySequence("Alt+F5"))
    assert f5 is not None and x11_keysym(f5.key) == (0xFFC2, "F5") and windows_vk(f5.key) == 0x74
    assert mac_keycode(f5.key) == 96  # kVK_F5


def test_no_key_no_chord() -> None:
    assert chord_of(QKeySequence()) is None
    assert chord_of(QKeySequence("Ctrl+Alt+Space, K")) is not None  # only the first combination counts


def test_selection_as_quote() -> None:
    assert as_quote("one\n\ntwo\n") == "> one\n>\n> two\n\n"
    assert as_quote("   \n") == ""
    long = as_quote("x" * (MAX_QUOTE_CHARS + 50))
    assert long.endswith("…\n\n") and len(long) < MAX_QUOTE_CHARS + 10
