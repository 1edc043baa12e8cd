"""The main window and what looks across tabs: the tab container, the empty state, the approval router."""
