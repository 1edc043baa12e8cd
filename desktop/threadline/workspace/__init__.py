"""What tools change on disk: snapshots, scans, diffs and the way back (docs/workspace.md).

A layer beside the store, the providers and the tools: it imports only ``core`` (the
vocabulary in ``core/file_changes.py``) and ``files`` (private modes). The engine records
each tool call through ``recorder``, the store keeps the change sets, and restores are
planned and run here.
"""
