"""Threadline's own files on disk: the data folder, private modes, safe reading of zip members.

These helpers sit below every other package but ``core`` because the engine, the store,
the tools, the importers, the document readers and the logging set-up all write or read
files the same careful way: the data folder and its private modes (``data_dir``), files
made readable by their owner alone from the first byte (``private``), and zip members
inflated with a limit (``zip_members``). The engine and the store may not import the
start-up package (``app``), so these cannot live there. They import the standard library
(and ``platformdirs``) only, never another part of Threadline, and nothing slow at import:
the logging set-up uses them before the window's first paint. See docs/design.md, "Layers".
"""
