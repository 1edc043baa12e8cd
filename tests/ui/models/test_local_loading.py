"""The first message to a downloaded model waits for the runtime to start and load it, which
can take many seconds: the tab's status says "Loading tiny.gguf…" meanwhile, not "Replying…",
and the usual state once the reply streams — with the real llama.cpp server of the
``threadline[local]`` extra."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.ui_driving import new_tab_by_click, texts, type_and_send, wait_idle
from tests.ui.models.test_local_chat import LOAD_MS, last_reply, pick_local, put_model

from threadline.core.messages import MessageStatus
from threadline.models.runtime import llama_cpp_installed

pytestmark = pytest.mark.skipif(
    not llama_cpp_installed(), reason="needs the threadline[local] extra (llama-cpp-python[server])"
)

LOADING = "Loading tiny.gguf…"


def test_the_status_says_the_model_is_loading_before_the_reply(harness: Any) -> None:
    put_model(harness.data_dir)
    harness.open(provider=False)
    tab = new_tab_by_click(harness)
    pick_local(harness, tab)
    seen: list[tuple[str, str]] = []  # (status, the reply's text so far) at each change of status
    tab.statusChanged.connect(lambda text: seen.append((text, "".join(texts(tab)[1:]))))

    type_and_send(harness.qtbot, tab, "Hello")
    harness.qtbot.waitUntil(lambda: len(texts(tab)) == 2 and texts(tab)[-1] != "", timeout=LOAD_MS)
    wait_idle(harness, tab, timeout=LOAD_MS)
    assert last_reply(tab).status is MessageStatus.COMPLETE, (tab.banner.error, last_reply(tab))

    loading = [i for i, (status, _) in enumerate(seen) if LOADING in status]
    assert loading, seen
    assert all(seen[i][1] == "" and "Replying…" not in seen[i][0] for i in loading), seen
    after = seen[loading[-1] + 1 :]
    assert after and "Replying…" in after[0][0], "the usual state once it is loaded"
    assert LOADING not in seen[-1][0], seen

    # The runtime is up: the next message does not wait for a load, and the status never says so.
    seen.clear()
    type_and_send(harness.qtbot, tab, "Again")
    harness.qtbot.waitUntil(lambda: len(texts(tab)) == 4, timeout=LOAD_MS)
    wait_idle(harness, tab, timeout=LOAD_MS)
    assert seen and not any(LOADING in status for status, _ in seen), seen
