"""The headless command line: ``threadline ask``, ``provider``, ``mcp``, ``list``, ``usage``,
``show``, ``export``, ``import``, ``agent``, ``db``, ``kb`` and ``memory``.

One module per command; ``run`` dispatches a parsed command line to them and ``common``
holds what they share (``CommandError``, opening the engine), so no command module imports
the dispatcher. The parser is built in ``threadline.__main__``, which imports this package
only for a command: a start of the window loads none of it (docs/performance.md).
"""
