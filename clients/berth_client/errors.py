"""The error every client call raises for an answer of 400 or more."""

from __future__ import annotations


class BerthError(Exception):
    def __init__(self, status: int, code: str, message: str, field: str | None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.field = field
