"""Python client for Berth's REST API, and the ``berth submit/queue/show/cancel`` CLI."""

from berth_client.client import BerthClient, BerthError

__all__ = ["BerthClient", "BerthError"]
