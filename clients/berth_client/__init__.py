"""Python client for Berth's REST API, and the ``berth submit/queue/show/cancel`` CLI.

``BerthClient`` is loaded on first use, so importing the CLI's argument parsers costs
nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from berth_client.errors import BerthError

if TYPE_CHECKING:
    from berth_client.client import BerthClient

__all__ = ["BerthClient", "BerthError"]


def __getattr__(name: str) -> Any:
    if name == "BerthClient":
        from berth_client.client import BerthClient

        return BerthClient
    raise AttributeError(name)
