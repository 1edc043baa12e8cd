"""One module per schema revision; Alembic skips this ``__init__``."""
