"""Open a text file that may be gzip-compressed (by its ``.gz`` suffix)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import TextIO


def open_text(path: str | Path) -> TextIO:
    """A text stream over ``path``, transparently gunzipped when it ends in ``.gz``."""
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")
