"""What the assistant changed on disk, as the window shows it: the reply header's counts, a
turn's changes and their diffs, the restore preview and the session's totals.

The widgets take the plain values of ``threadline.core.file_changes`` and say what the user
chose through Qt signals; they never reach the engine themselves (docs/ui-layout.md).
"""
