"""Shared below every room: theme, tasks, Qt runtime tweaks, error banner, code box (no other room)."""
