"""Alembic revisions of advisor's schema, oldest first: 0001, 0002, ..."""
