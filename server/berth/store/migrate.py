"""Apply the Alembic migrations of ``migrations/`` to a database URL."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

import berth


def migrations_dir() -> Path:
    """The migrations shipped in the wheel, or those of the source checkout."""
    for candidate in (
        Path(berth.__file__).parent / "migrations",
        Path(berth.__file__).resolve().parents[2] / "migrations",
    ):
        if (candidate / "env.py").exists():
            return candidate
    raise FileNotFoundError("Berth's migrations/ folder was not found beside the package")


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)
