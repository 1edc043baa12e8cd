"""The hidden entry that runs llama.cpp's server from a frozen build of Threadline.

In a PyInstaller build ``sys.executable`` is the ``threadline`` program, not a Python that
can run ``-m llama_cpp.server``. So ``runtime.server_command`` starts
``threadline --run-local-runtime ARGS…`` there, and ``threadline.__main__`` hands everything
after that word to ``serve`` before it parses anything or imports Qt
(docs/local-models.md, "Packaging"). Only the standard library is imported at module level:
the entry point imports this module on every start.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

RUN_LOCAL_RUNTIME = "--run-local-runtime"
"""The first argument that makes the ``threadline`` program llama.cpp's server (not in ``--help``)."""


def serve(args: Sequence[str]) -> int:
    """Run ``llama_cpp.server`` with ``args`` as its command line, as ``python -m llama_cpp.server`` would.

    Its settings come from these arguments and from its environment (the key, ``HOST`` and
    ``PORT``), which ``runtime.LocalRuntime`` sets for the child. Returns when the server stops.
    """
    try:
        server = importlib.import_module("llama_cpp.server.__main__")
    except ImportError as err:
        sys.stderr.write(f"threadline: this build has no local runtime ({err}).\n")
        return 1
    sys.argv = ["llama_cpp.server", *args]  # its main() parses sys.argv
    server.main()
    return 0
