"""Paths on the command lines: an argument that does not load :mod:`pathlib` until a
path is actually given (it costs ``berth --help`` about 6 ms, a twentieth of its
start-up), and where the shared traces are found."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def path_arg(text: str) -> Path:
    """argparse ``type=``: the text as a :class:`~pathlib.Path`."""
    from pathlib import Path

    return Path(text)


DEMO_TRACE = "KTH-SP2-1996-2.1-cln.swf.gz"


def find_shared_trace(name: str) -> Path | None:
    """Where trace ``name`` is: in ``$BERTH_TRACES``, else in a ``shared/traces`` folder
    beside the checkout or the working directory (or one of their parents), else None."""
    from pathlib import Path

    folders = [Path(os.environ["BERTH_TRACES"])] if os.environ.get("BERTH_TRACES") else []
    for start in (Path(__file__).resolve(), Path.cwd().resolve()):
        folders += [parent / "shared" / "traces" for parent in start.parents]
    for folder in folders:
        if (folder / name).exists():
            return folder / name
    return None
