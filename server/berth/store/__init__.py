"""Stores: where the engine's records are persisted (the ``Store`` port's adapters).

``SqlStore`` (SQLite embedded by default, PostgreSQL in production; schema managed by
the Alembic migrations in ``migrations/``) and ``MemoryStore`` (dry runs, unit tests).
"""
