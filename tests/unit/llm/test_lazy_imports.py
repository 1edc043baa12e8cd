"""Importing the provider layer must not import the SDKs or keyring (the window paints first)."""

from __future__ import annotations

import subprocess
import sys


def test_sdks_are_imported_only_when_a_provider_is_made_and_openai_never() -> None:
    code = (
        "import sys\n"
        "import threadline.llm, threadline.llm.base, threadline.llm.events, threadline.llm.errors\n"
        "import threadline.llm.accumulate, threadline.llm.retry, threadline.llm.factory\n"
        "import threadline.llm.credentials, threadline.llm.local, threadline.llm.convert\n"
        "import threadline.llm.openai_provider, threadline.llm.anthropic_provider\n"
        "heavy = [m for m in ('openai', 'anthropic', 'keyring', 'httpx2') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "from threadline.core.config import ProviderConfig, ProviderKind\n"
        "from threadline.llm.factory import make_provider\n"
        "make_provider(ProviderConfig('x', ProviderKind.OPENAI, 'http://127.0.0.1:9/v1'), None)\n"
        "assert 'httpx2' in sys.modules and 'openai' not in sys.modules and 'anthropic' not in sys.modules\n"
        "make_provider(ProviderConfig('y', ProviderKind.ANTHROPIC, 'http://127.0.0.1:9'), None)\n"
        "assert 'anthropic' in sys.modules and 'openai' not in sys.modules\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
