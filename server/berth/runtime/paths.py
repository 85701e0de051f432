"""A path argument for the command lines that does not load :mod:`pathlib` until a path
is actually given (it costs ``berth --help`` about 6 ms, a twentieth of its start-up)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def path_arg(text: str) -> Path:
    """argparse ``type=``: the text as a :class:`~pathlib.Path`."""
    from pathlib import Path

    return Path(text)
