"""The settings dialog, one file a page."""
