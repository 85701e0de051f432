"""Bounded waiting for something real processes do."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_until(check: Callable[[], Any], seconds: float = 20.0, what: str = "") -> Any:
    """``check()``'s first truthy value, polled every 20 ms; AssertionError after
    ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"not within {seconds} s: {what}")
