"""Knowledge bases in the window: Settings → Knowledge, the pickers, indexing in the status bar.

Why it is built this way: docs/knowledge.md, "In the window".
"""
