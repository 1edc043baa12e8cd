"""Local models: the Hub search, the models folder, downloads a person can trust, GGUF facts.

A lower layer beside ``store``, ``llm`` and ``tools``: it imports ``core`` and ``files`` only,
and the engine's ``models`` facet (``engine/models.py``) puts it in front of the window and
the command line. Why it is built this way: docs/local-models.md.
"""
