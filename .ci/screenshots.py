"""Screenshots of the main window states, for review: ``python .ci/screenshots.py [OUT_DIR]``.

Runs under Xvfb (started here when there is no display; needs the ``xvfb`` package)
with a seeded database in a temporary folder and the replay server standing in for
a provider. Saves PNGs (by default to ``build/screenshots``) of: the empty state (no
provider), a long chat with code (light and dark), two tabs streaming at once, the
settings dialog, an inline error, a prompt with an attached image, the archived chats, a full
disk while a reply streams ("Saving…", the text kept in memory), a chat whose provider was removed,
the sticky context strip naming a missing file and the Context dialog, thirty tabs and their
list, the keyboard shortcuts sheet, F6 focus on the tab bar and the high-contrast theme.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from screenshot_run import run  # .ci/: the display, the app and its loop

LONG_REPLY = """Here is a small **LRU cache** in Python, with the reasoning behind each part.

## The idea

An `OrderedDict` remembers insertion order, and `move_to_end` makes a hit the most recent
entry in O(1). When the cache is full, the *least recently used* entry is the first one.

```python
from collections import OrderedDict


class LRUCache:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._data: OrderedDict[str, bytes] = OrderedDict()

    def get(self, key: str) -> bytes | None:
        if key not in self._data:
            return None
        self._data.move_to_end(key)
        return self._data[key]

    def put(self, key: str, value: bytes) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self.capacity:
            self._data.popitem(last=False)
```

| operation | cost |
|-----------|------|
| `get`     | O(1) |
| `put`     | O(1) |

Things to watch:

1. It is **not thread-safe**; wrap calls in a lock if threads share it.
2. Sizes are counted in entries, not bytes.
3. See the [functools docs](https://docs.python.org/3/library/functools.html) for `lru_cache`.
"""


async def seed(engine: object, server: object) -> dict[str, str]:
    from threadline.core.messages import Message, MessageStatus, RequestMetadata

    eng = engine  # type: ignore[assignment]
    ids: dict[str, str] = {}
    titles = [
        "Planning the Lisbon trip",
        "Regex for ISO dates",
        "Explain Rust lifetimes",
        "Draft: quarterly update email",
        "Sourdough hydration maths",
        "SQL window functions",
    ]
    for title in titles:
        info = await eng.sessions.new_session(title)  # type: ignore[attr-defined]
        prompt = Message.prompt(f"A question about {title.lower()}")
        answer = Message.reply(
            parent_id=prompt.id,
            text=f"Some thoughts on {title.lower()}.",
            status=MessageStatus.COMPLETE,
            metadata=RequestMetadata(model="gpt-4o-mini"),
        )
        await eng.store.append_messages(info.id, [prompt, answer])  # type: ignore[attr-defined]
    info = await eng.sessions.new_session("LRU cache in Python")  # type: ignore[attr-defined]
    msgs = []
    parent = None
    for i in range(3):
        question = (
            "Can you write a small LRU cache in Python and explain it?"
            if i == 2
            else f"Earlier question {i + 1}: what is a cache eviction policy?"
        )
        answer = (
            LONG_REPLY
            if i == 2
            else "An eviction policy decides which entry leaves a full cache: LRU, LFU, FIFO or random."
        )
        p = Message.prompt(question, parent_id=parent)
        r = Message.reply(
            parent_id=p.id,
            text=answer,
            status=MessageStatus.COMPLETE,
            metadata=RequestMetadata(model="gpt-4o-mini"),
        )
        msgs += [p, r]
        parent = r.id
    await eng.store.append_messages(info.id, msgs)  # type: ignore[attr-defined]
    ids["long"] = info.id
    await eng.sessions.pin_session(info.id, True)  # type: ignore[attr-defined]
    return ids


async def shoot(app: object, out: Path) -> int:
    from tests.support.sse_server import (
        ReplayServer,
        openai_auth_error,
        openai_text_stream,
        split_text,
        sse_response,
    )

    from threadline.core.config import ProviderConfig, ProviderKind
    from threadline.engine.engine import Engine
    from threadline.ui.common.theme import ThemeChoice, ThemeManager
    from threadline.ui.window.main_window import MainWindow

    async def pause(ms: int) -> None:
        await asyncio.sleep(ms / 1000)

    def save(widget: object, name: str) -> None:
        path = out / f"{name}.png"
        widget.grab().save(str(path))  # type: ignore[attr-defined]
        print(path)

    theme = ThemeManager(app)  # type: ignore[arg-type]
    theme.set_choice(ThemeChoice.LIGHT)
    theme.apply()
    with tempfile.TemporaryDirectory() as tmp, ReplayServer() as server:
        data = Path(tmp)
        # 1. empty state, no provider
        engine = await Engine.open(data / "empty")
        window = MainWindow(theme, data / "empty")
        window.resize(1200, 780)
        window.show()
        await window.attach_engine(engine)
        await pause(400)
        save(window, "01-empty-state-light")
        window.hide()
        await engine.aclose()

        # 2. a long chat with code, light and dark
        engine = await Engine.open(data / "main")
        replay = ProviderConfig(
            "replay", ProviderKind.OPENAI, base_url=server.openai_base_url, default_model="gpt-4o-mini"
        )
        await engine.providers.save_provider(replay, "sk-test")
        ids = await seed(engine, server)
        window = MainWindow(theme, data / "main")
        window.resize(1200, 780)
        window.show()
        await window.attach_engine(engine)
        await window.session_tabs.open(ids["long"], focus=True)
        await pause(300)
        tab = window.tabs.current_tab()
        tab.view.scroll_to_bottom()
        await pause(200)
        save(window, "02-long-chat-code-light")
        window.set_theme(ThemeChoice.DARK)
        await pause(300)
        save(window, "03-long-chat-code-dark")
        window.set_theme(ThemeChoice.LIGHT)
        await pause(200)

        # 3. two tabs streaming
        long_a = LONG_REPLY
        long_b = "Sure. " + " ".join(f"Point {i}: keep steps small and measurable." for i in range(60))
        server.enqueue(
            sse_response(openai_text_stream(split_text(long_a, 3)), chunk_delay=0.02),
            sse_response(openai_text_stream(split_text(long_b, 3)), chunk_delay=0.02),
        )
        for n, prompt in enumerate(
            ("Write the LRU cache again, with tests", "Give me a long list of planning tips")
        ):
            info = await engine.sessions.new_session()
            t = await window.session_tabs.open(info.id, focus=True)
            t.composer.set_text(prompt)
            t.composer.submit()
            for _ in range(100):  # the replies are served in request order: each chat gets its own
                if len(server.stream_requests()) > n:  # type: ignore[attr-defined]
                    break
                await pause(20)
        await pause(1800)
        save(window, "04-two-tabs-streaming-light")
        window.set_theme(ThemeChoice.DARK)
        await pause(300)
        save(window, "05-two-tabs-streaming-dark")
        window.set_theme(ThemeChoice.LIGHT)
        for t in window.tabs.tabs():
            if t.busy:
                t.stop()
        await pause(500)

        # 4. settings
        window.open_settings("providers")
        dialog = window._settings_dialog
        await dialog.loaded
        await pause(300)
        save(dialog, "06-settings-providers")
        dialog.pages.setCurrentIndex(1)
        await pause(200)
        save(dialog, "07-settings-agent")
        dialog.reject()

        # 5. an error inline
        server.enqueue(openai_auth_error())
        info = await engine.sessions.new_session()
        t = await window.session_tabs.open(info.id, focus=True)
        t.composer.set_text("Summarise this week's notes")
        t.composer.submit()
        for _ in range(50):
            await pause(100)
            if t.banner.isVisible():
                break
        await pause(200)
        save(window, "08-error-inline-light")
        window.set_theme(ThemeChoice.DARK)
        await pause(300)
        save(window, "09-error-inline-dark")
        window.set_theme(ThemeChoice.LIGHT)

        # 6. a prompt with an attached image
        from PySide6.QtCore import QPointF
        from PySide6.QtGui import QColor, QImage, QLinearGradient, QPainter

        picture = QImage(480, 320, QImage.Format.Format_RGB32)
        painter = QPainter(picture)
        gradient = QLinearGradient(QPointF(0, 0), QPointF(0, 320))
        gradient.setColorAt(0.0, QColor("#f6a04d"))
        gradient.setColorAt(1.0, QColor("#6a3d9a"))
        painter.fillRect(picture.rect(), gradient)
        painter.end()
        image_path = data / "sunset.png"
        picture.save(str(image_path))
        server.enqueue(
            sse_response(
                openai_text_stream(
                    split_text(
                        "A sunset gradient: warm orange at the top fading into violet. "
                        "No objects are visible.",
                        4,
                    )
                )
            )
        )
        info = await engine.sessions.new_session()
        t = await window.session_tabs.open(info.id, focus=True)
        t.composer.attach_paths([image_path])
        t.composer.set_text("What is in this picture?")
        await pause(200)
        save(window, "10-image-attached-composer")
        t.composer.submit()
        for _ in range(50):
            await pause(100)
            if not t.busy and t.model.rowCount() == 2:
                break
        await pause(300)
        save(window, "11-image-in-prompt")

        # 7. the archived chats
        archived = [
            s
            for s in await engine.sessions.list_sessions()
            if s.title in ("Regex for ISO dates", "SQL window functions")
        ]
        for s in archived:
            await engine.sessions.archive_session(s.id, True)
        window.sidebar.show_archived(True)
        for _ in range(30):
            await pause(100)
            if window.sidebar.archived_model.rowCount():
                break
        await pause(200)
        save(window, "12-archived-chats")
        window.sidebar.show_archived(False)

        # 8. the disk refuses the reply's text: "Saving…", the text kept in memory
        import sqlite3

        db = data / "main" / "threadline.db"

        def sql(statement: str) -> None:
            connection = sqlite3.connect(db, timeout=30, isolation_level=None)
            try:
                connection.execute(statement)
            finally:
                connection.close()

        server.enqueue(
            sse_response(
                openai_text_stream(split_text("Point 1: keep the notes short. " * 6, 5)), chunk_delay=0.02
            )
        )
        info = await engine.sessions.new_session()
        t = await window.session_tabs.open(info.id, focus=True)
        sql(
            "CREATE TRIGGER full_disk BEFORE UPDATE ON messages "
            "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
        t.composer.set_text("Give me tips for short notes")
        t.composer.submit()
        for _ in range(100):
            await pause(100)
            if t.banner.isVisible() and t.composer.held_reason:
                break
        await pause(300)
        save(window, "13-disk-full-saving")
        sql("DROP TRIGGER full_disk")
        for _ in range(100):
            await pause(100)
            if not t.composer.held_reason:
                break

        # 9. the chat's provider was removed: the tab says so at once
        await engine.providers.save_provider(
            ProviderConfig(
                "old-server", ProviderKind.OPENAI, base_url=server.openai_base_url, default_model="m1"
            )
        )
        info = await engine.sessions.new_session("On a provider that goes away")
        await engine.sessions.set_session_model(info.id, "old-server", "m1")
        t = await window.session_tabs.open(info.id, focus=True)
        await pause(300)
        await engine.providers.remove_provider("old-server")
        await window.catalog.load(engine)  # what Settings does after removing a provider
        await pause(500)
        save(window, "14-provider-removed")

        # 10. sticky context: one file sent, one missing — the strip above the composer says so
        from threadline.core.sticky import ContextHook, ContextSource, StickyContext

        (data / "style-guide.md").write_text("Write short sentences. Prefer the active voice.\n")
        context = StickyContext(
            sources=(
                ContextSource(str(data / "style-guide.md")),
                ContextSource(str(data / "release-notes.md")),
            ),
            hooks=(
                ContextHook("git log --oneline -3 2>/dev/null || echo no repository", name="Recent commits"),
            ),
        )
        server.enqueue(
            sse_response(openai_text_stream(split_text("Here is a tighter version of the text.", 4)))
        )
        info = await engine.sessions.new_session("Tighten the release text")
        await engine.sessions.set_session_context(info.id, context)
        t = await window.session_tabs.open(info.id, focus=True)
        t.composer.set_text("Make the release text shorter")
        t.composer.submit()
        for _ in range(100):
            await pause(100)
            if not t.busy and t.context_strip.gathered is not None:
                break
        await pause(300)
        save(window, "15-context-strip-missing-file")
        dialog = t.edit_context()
        await pause(400)
        save(dialog, "16-context-dialog")
        dialog.reject()

        # 11. keyboard and accessibility: many tabs and their list, the shortcuts sheet, high contrast
        await shoot_keyboard_and_contrast(window, engine, theme, save, pause)
        window.hide()
        await engine.aclose()
    return 0


Save = Callable[[Any, str], None]
Pause = Callable[[int], Awaitable[None]]


async def shoot_keyboard_and_contrast(window: Any, engine: Any, theme: Any, save: Save, pause: Pause) -> None:
    """Thirty tabs (scrolling, readable titles) and their list, the shortcuts sheet, F6 focus, contrast."""
    from PySide6.QtCore import QPoint, Qt

    from threadline.ui.common.theme import ThemeChoice

    topics = ["Garden plan", "Tax return questions", "Rust lifetimes", "Trip to Lisbon", "Bread recipe"]
    for i in range(30):
        info = await engine.sessions.new_session()
        await engine.sessions.rename_session(info.id, f"{topics[i % len(topics)]} {i + 1}")
        await window.session_tabs.open(info.id, focus=True)
    await pause(400)
    save(window, "17-thirty-tabs-light")
    menu = window.tabs.tab_list_menu
    button = window.tabs.tab_list_button
    menu.popup(button.mapToGlobal(QPoint(button.width() - menu.sizeHint().width(), button.height())))
    await pause(300)
    save(menu, "18-list-all-tabs-menu")
    menu.close()
    window.show_shortcuts()
    await pause(300)
    save(window.shortcuts_sheet, "19-shortcuts-sheet")
    window.shortcuts_sheet.filter.setText("tab")
    await pause(200)
    save(window.shortcuts_sheet, "20-shortcuts-sheet-filtered")
    window.shortcuts_sheet.close()
    window.activateWindow()
    await pause(200)
    window.tabs.current_tab().composer.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
    window.menus.panes.next()  # F6 from the composer: the sidebar's chats
    window.menus.panes.next()  # the tab bar, with the keyboard focus shown
    await pause(200)
    save(window, "21-f6-focus-on-tabs")
    window.set_theme(ThemeChoice.HIGH_CONTRAST)
    await pause(400)
    save(window, "22-high-contrast")
    window.set_theme(ThemeChoice.DARK)
    await pause(300)
    save(window, "23-thirty-tabs-dark")
    window.set_theme(ThemeChoice.LIGHT)
    await pause(200)


if __name__ == "__main__":
    sys.exit(run(shoot))
