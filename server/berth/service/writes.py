"""What the single writer (:mod:`berth.service.coordinator`) takes, counts and answers.

A queued change (:class:`Queued`: the command, how to render its answer, who asked), the
writer's running totals (:class:`Stats`, read by ``/metrics``), and what a caller is
told when no writer will apply its command (:class:`StoreUnavailable`: the store
failed, or the daemon stops). Apart from the coordinator so that the API's error
handlers and its health route name them without the writer's protocol. Pure: no I/O.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from berth.service.commands import Command


@dataclass(frozen=True, slots=True)
class Queued:
    """A queued change: the command, ``answer`` to render its result at the end of
    its batch (``None``: the result as it is), and who asked for it (``by``, named in
    the events it causes: the audit trail)."""

    command: Command
    answer: Callable[[Any], Any] | None = None
    by: str | None = None

    def render(self, result: Any) -> Any:
        return result if self.answer is None else self.answer(result)


#: What a client is told once the store has failed.
RESTART = "the store failed; the daemon must restart"
#: What a command that no writer will apply is told.
SHUTTING_DOWN = "the daemon is shutting down"


class StoreUnavailable(RuntimeError):
    """The store failed; the daemon must restart to resume from committed state.

    ``public`` is what a client may be told; ``str()`` adds the store's own error, which
    can quote SQL and another job's values, so it goes to the log only."""

    def __init__(self, public: str, detail: object = None) -> None:
        super().__init__(public if detail is None else f"{public}: {detail}")
        self.public = public


@dataclass(slots=True)
class Stats:
    """The writer's running totals since start-up, for ``/metrics``."""

    batches: int = 0
    commands: int = 0
    last_pass_seconds: float = 0.0
    pass_seconds_total: float = 0.0
    commit_seconds_total: float = 0.0
    #: Store transactions: one per group of batches (see ``Coordinator._writer``).
    commits: int = 0


def unavailable(failed: BaseException | None) -> StoreUnavailable:
    """What a command no writer will apply is told: the store failed (``failed``), or
    the daemon stops."""
    return StoreUnavailable(SHUTTING_DOWN) if failed is None else StoreUnavailable(RESTART, failed)


def refuse(futures: Iterable[asyncio.Future[Any]], error: StoreUnavailable) -> None:
    """Answer each caller of ``futures`` not answered yet with ``error``."""
    for future in futures:
        if not future.done():
            future.set_exception(error)
