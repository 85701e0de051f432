"""Value types the policies reason about: what a job asks for.

A :class:`Job` is what the scheduler knows about a submitted job: its resources, its
runtime *estimate* (also its kill limit) and optional deadline, user and priority. It
never carries the job's real runtime: the core must not know the future. Times are
integer seconds supplied by the caller; this module does no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING

from berth.core.columns import build_frozen

if TYPE_CHECKING:
    from berth.core.shapes import Shape

#: Runtime estimates (and runtimes) are clamped to at least this many seconds.
MIN_DURATION = 1
#: The priority of a job that has none: one empty mapping shared by all of them (a replay
#: of a quarter-million-job trace would otherwise hold as many empty dicts). Typed as a
#: read-only Mapping, which the type checker holds every user to; a plain dict, so that
#: copies, pickles and JSON treat it as any other.
NO_PRIORITY: Mapping[str, float] = {}


def _no_priority() -> Mapping[str, float]:
    return NO_PRIORITY


@dataclass(frozen=True, slots=True)
class Job:
    """A job request as the scheduler sees it.

    ``estimate`` is the user's runtime estimate in seconds; the job is killed when it
    runs that long. ``deadline`` is an absolute time by which the job must complete, if
    any. ``resources`` may omit resources the job does not use.
    """

    id: int
    submit: int
    estimate: int
    resources: Mapping[str, int]
    deadline: int | None = None
    user: str | None = None
    priority: Mapping[str, float] = field(default_factory=_no_priority)
    #: On a node cluster: slots, node count and exclusivity (``None``: derived from
    #: ``resources`` by :func:`berth.core.shapes.shape_of`).
    shape: Shape | None = None
    #: The earliest time it may start (``None``: any time): the promised ends of the jobs
    #: it depends on (:mod:`berth.core.dependencies`), set by the shell, only lowered.
    not_before: int | None = None

    def __post_init__(self) -> None:
        if self.estimate < MIN_DURATION:
            object.__setattr__(self, "estimate", MIN_DURATION)

    def ready(self, now: int) -> int:
        """The earliest time from ``now`` on at which it may start."""
        not_before = self.not_before
        return now if not_before is None or not_before < now else not_before


def jobs_of_columns(
    ids: list[int],
    submits: Iterable[int],
    estimates: list[int],
    resources: Iterable[Mapping[str, int]],
    users: Iterable[str | None],
) -> list[Job]:
    """Jobs without deadline, priority or shape, one per id, built a column at a time (a
    trace reader's many jobs; :mod:`berth.core.columns`). ``estimates`` must already be
    at least :data:`MIN_DURATION`, as :class:`Job` would make them."""
    if estimates and min(estimates) < MIN_DURATION:
        raise ValueError(f"estimates must be at least {MIN_DURATION} s")
    columns = {
        "id": ids,
        "submit": submits,
        "estimate": estimates,
        "resources": resources,
        "deadline": repeat(None),
        "user": users,
        "priority": repeat(NO_PRIORITY),
        "shape": repeat(None),
        "not_before": repeat(None),
    }
    return build_frozen(Job, len(ids), columns)
