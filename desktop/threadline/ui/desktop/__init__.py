"""Threadline on the desktop: one instance, the tray, notifications, files and links (docs/desktop.md)."""
