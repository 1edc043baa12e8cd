"""The provider "On this computer" (``engine/local_runtime.py``) with the real llama.cpp server:
a runtime killed in the middle of a reply fails that reply with a message naming the model
and the log, and is not taken for a network hiccup to retry."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from tests.support.tiny_gguf import make_tiny_gguf

from threadline.core.messages import Role
from threadline.core.request import BuiltRequest, SentMessage
from threadline.engine.local_runtime import LocalModels, RuntimeStopped
from threadline.engine.models import Models
from threadline.llm.base import ChatParams
from threadline.llm.events import TextDelta
from threadline.llm.timeouts import Timeouts
from threadline.models.runtime import llama_cpp_installed

pytestmark = pytest.mark.skipif(
    not llama_cpp_installed(), reason="needs the threadline[local] extra (llama-cpp-python[server])"
)


@pytest.mark.asyncio
async def test_a_runtime_killed_mid_reply_fails_the_reply_naming_the_model(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    make_tiny_gguf(tmp_path / "models" / "tiny.gguf")
    (tmp_path / "local-models.json").write_text(json.dumps({"runtime": {"context": 4096}}))  # a long reply
    models = Models(tmp_path)
    local = LocalModels(models)
    config = local.config()
    assert config is not None and config.name == "On this computer"
    provider = local.make_provider(config, Timeouts())
    request = BuiltRequest("", (SentMessage(Role.USER, text="go"),), 1)
    seen: list[object] = []
    try:
        with pytest.raises(RuntimeStopped) as stopped:
            async for event in provider.stream(request, ChatParams("tiny.gguf")):
                seen.append(event)
                if len(seen) == 1:  # the pid from the state file: asking the busy server would be too slow
                    pid = json.loads((tmp_path / "runtime" / "state.json").read_text())["pid"]
                    os.kill(pid, signal.SIGKILL)
        assert isinstance(seen[0], TextDelta)
        message = stopped.value.user_message
        assert message.startswith("The local runtime stopped while answering with tiny.gguf"), message
        assert str(tmp_path / "runtime" / "runtime.log") in message
        assert not stopped.value.retryable
    finally:
        await provider.aclose()
        models.runtime.stop()
