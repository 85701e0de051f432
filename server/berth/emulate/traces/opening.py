"""Open a text file that may be gzip-compressed (by its ``.gz`` suffix), and read its
lines so that a damaged file ends in a :class:`WorkloadError` naming the line, never in
a traceback: a truncated or corrupt ``.gz`` file, a file that is not text at all."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from berth.emulate.workload import WorkloadError


def open_text(path: str | Path) -> TextIO:
    """A text stream over ``path``, transparently gunzipped when it ends in ``.gz``."""
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_text(path: str | Path) -> str:
    """The whole text of ``path`` at once (gunzipped by its ``.gz`` suffix); a damaged
    compressed file raises :class:`WorkloadError` (without a line: :func:`reading` finds
    it)."""
    try:
        with open(path, "rb") as stream:
            data = stream.read()
        if str(path).endswith(".gz"):
            data = gzip.decompress(data)
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise WorkloadError(f"{path}: the compressed file is damaged ({error})") from None
    return data.decode("utf-8", errors="replace")


@contextmanager
def reading(path: str | Path) -> Iterator[Iterator[tuple[int, str]]]:
    """``(line number, line)`` of ``path``; a file that breaks off raises
    :class:`WorkloadError` naming the line it broke at."""
    with open_text(path) as stream:
        yield _numbered(path, stream)


def _numbered(path: str | Path, stream: TextIO) -> Iterator[tuple[int, str]]:
    line_number = 0
    try:
        for line_number, line in enumerate(stream, start=1):
            yield line_number, line
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise WorkloadError(
            f"{path}:{line_number + 1}: the compressed file is damaged or cut short ({error})"
        ) from None
