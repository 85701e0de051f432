"""Long polls waiting for a node's wish to change (node agents' sync).

Each node has a version, bumped whenever intents for it are sent (after their commit);
a sync that had nothing new to say waits until the version moves past the one it saw
before its own command, or its time is up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable


class Waiters:
    """Long polls waiting for their node's wish to change."""

    def __init__(self) -> None:
        self._versions: dict[str, int] = {}
        self._events: dict[str, asyncio.Event] = {}
        #: The daemon is stopping: no sync waits any longer.
        self.closing = False

    def version(self, node: str) -> int:
        return self._versions.get(node, 0)

    def notify(self, nodes: Iterable[str]) -> None:
        for node in nodes:
            self._versions[node] = self._versions.get(node, 0) + 1
            event = self._events.pop(node, None)
            if event is not None:
                event.set()

    def release_all(self) -> None:
        """Answer every waiting sync now, and hold none from here on (shutdown)."""
        self.closing = True
        self.notify(list(self._events))

    async def wait(self, node: str, since: int, timeout: float) -> None:
        """Until the node's wish changed after version ``since``, or ``timeout`` passed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.version(node) == since and not self.closing:
            left = deadline - loop.time()
            if left <= 0:
                return
            event = self._events.setdefault(node, asyncio.Event())
            try:
                await asyncio.wait_for(event.wait(), left)
            except TimeoutError:
                return
