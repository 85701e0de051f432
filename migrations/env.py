"""Alembic environment for Berth: runs migrations online against ``sqlalchemy.url``."""

from __future__ import annotations

from alembic import context

from berth.store.tables import METADATA, create_db_engine

config = context.config


def run() -> None:
    url = config.get_main_option("sqlalchemy.url")
    assert url, "set sqlalchemy.url (berth db upgrade --database-url ...)"
    engine = create_db_engine(url)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=METADATA,
            render_as_batch=connection.dialect.name == "sqlite",
            compare_type=True,
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


run()
