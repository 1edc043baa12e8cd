"""The conversation's controls: the menu, compaction, checkpoints, context, tangents, slash commands."""
