"""Importing the provider layer must not import the SDKs or keyring (the window paints first)."""

from __future__ import annotations

import os
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


def test_a_configured_fail_or_null_keychain_is_known_without_importing_keyring() -> None:
    code = (
        "import os, sys\n"
        "from threadline.core.config import ProviderConfig, ProviderKind\n"
        "from threadline.llm import credentials\n"
        "config = ProviderConfig('x', ProviderKind.OPENAI, 'http://127.0.0.1:9/v1', api_key_env='TL_KEY')\n"
        "assert credentials.get_api_key(config) == 'sk-env'\n"
        "assert not credentials.keychain_available() and not credentials.has_keychain_entry('x')\n"
        "assert 'keyring' not in sys.modules\n"
        # Once keyring is imported (a backend may have been set in-process), it is asked.
        "import keyring\n"
        "from keyring.backend import KeyringBackend\n"
        "class Stored(KeyringBackend):\n"
        "    priority = 1\n"
        "    def get_password(self, service, user): return 'sk-stored'\n"
        "    def set_password(self, service, user, password): pass\n"
        "    def delete_password(self, service, user): pass\n"
        "keyring.set_keyring(Stored())\n"
        "assert credentials.get_api_key(config) == 'sk-stored'\n"
    )
    for backend in ("keyring.backends.fail.Keyring", "keyring.backends.null.Keyring"):
        env = {**os.environ, "PYTHON_KEYRING_BACKEND": backend, "TL_KEY": "sk-env"}
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False, env=env
        )
        assert result.returncode == 0, result.stderr
