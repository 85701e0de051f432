"""Dependencies between jobs: who waits for whom, and from when a waiting job may start.

Slurm's kinds, with Slurm's meaning: ``after`` (the predecessor has started, or ended
without starting), ``afterany`` (it has ended, however), ``afterok`` (it completed
successfully), ``afternotok`` (it ended any other way). One more is Berth's own:
``throttle``, an array's ``%N`` lane (:mod:`berth.core.arrays`): as ``afterany``, except
that a predecessor cancelled before it started hands its own ``throttle`` need on to its
waiters, so a lane stays a lane and never more than N tasks run. :class:`Dependencies` keeps each
job's unresolved needs and resolves them as predecessors start and end, naming the
needs that can never be satisfied. :meth:`Dependencies.bound` is the time before which
a job may not start: the latest of its predecessors' *promised* starts (``after``) and
ends (the others), which the shell supplies from its guarantees. A planner that never
starts the job before that bound gives it a guarantee that follows its predecessors'
(their promises only ever come earlier, so the bound only falls). Pure: no clock, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

#: The kinds of need a user names, as Slurm spells them.
KINDS = ("after", "afterany", "afterok", "afternotok")
#: An array's lane under a ``%N`` limit (never written by a user).
THROTTLE = "throttle"


@dataclass(frozen=True, slots=True)
class Need:
    """``job_id`` must have started (``after``) or ended (the other kinds) first."""

    kind: str
    job_id: int

    def __str__(self) -> str:
        return f"{self.kind}:{self.job_id}"


@dataclass(frozen=True, slots=True)
class Bound:
    """From when a job may start: ``time`` (``None``: no need left), set by the need
    ``by``; unknown (``known`` false) while ``by`` has no promised start or end."""

    time: int | None
    by: Need | None = None
    known: bool = True


class DependencyCycle(ValueError):
    """A need that would make jobs wait for each other; ``job_id`` closes the cycle."""

    def __init__(self, job_id: int, message: str) -> None:
        super().__init__(message)
        self.job_id = job_id


def parse_dependency(text: str) -> tuple[list[tuple[str, str]], bool]:
    """``(kind, job reference)`` pairs and whether ``singleton`` is asked, from Slurm's
    ``afterok:12:13,afterany:14,singleton``; a reference is a job id, ``A_T`` (task T of
    array A) or an array id. Raises ``ValueError`` saying what cannot be read."""
    needs: list[tuple[str, str]] = []
    singleton = False
    if "?" in text:
        raise ValueError("'?' (any one of the dependencies) is not supported: use ','")
    for part in text.split(","):
        item = part.strip()
        if item == "singleton":
            singleton = True
            continue
        kind, _, refs = item.partition(":")
        if kind not in KINDS:
            known = ", ".join((*KINDS, "singleton"))
            raise ValueError(f"{item!r}: the kind must be one of {known}")
        if not refs:
            raise ValueError(f"{item!r}: name at least one job, as {kind}:JOBID")
        for ref in refs.split(":"):
            ref = ref.strip()
            if not re.fullmatch(r"\d+(_\d+)?", ref):
                raise ValueError(f"{item!r}: {ref!r} is not a job id (N, or A_T for a task)")
            needs.append((kind, ref))
    if not needs and not singleton:
        raise ValueError("no dependency given")
    return needs, singleton


def verdict(kind: str, started: bool, ended: bool, ok: bool) -> bool | None:
    """Whether a need of ``kind`` is satisfied (``True``), can never be (``False``), or
    not yet (``None``), for a predecessor that has ``started`` / ``ended`` (``ok``: it
    completed successfully)."""
    if kind == "after":
        return True if started or ended else None
    if not ended:
        return None
    if kind == "afterok":
        return ok
    if kind == "afternotok":
        return not ok
    return True  # afterany, throttle


def parse_needs(text: str | None) -> list[Need]:
    """Needs written by :func:`format_needs` (``afterok:12,throttle:14``)."""
    needs = []
    for item in (text or "").split(","):
        if item:
            kind, _, job_id = item.partition(":")
            needs.append(Need(kind, int(job_id)))
    return needs


def format_needs(needs: Iterable[Need]) -> str | None:
    """``afterok:12,throttle:14`` (``None``: no need)."""
    return ",".join(map(str, needs)) or None


class Dependencies:
    """Every waiting job's unresolved needs, and who waits for each predecessor."""

    __slots__ = ("_needs", "_waiters")

    def __init__(self) -> None:
        self._needs: dict[int, list[Need]] = {}
        self._waiters: dict[int, set[int]] = {}

    def add(self, job_id: int, needs: Iterable[Need]) -> None:
        """``job_id`` waits for ``needs`` (on jobs that have not ended); raises
        :class:`DependencyCycle` if one of them waits, directly or not, for ``job_id``."""
        needs = list(dict.fromkeys(needs))
        # Only a job something waits for can close a cycle (a new job never does).
        awaited = job_id in self._waiters
        for need in needs:
            if need.job_id == job_id or (awaited and job_id in self.ancestors(need.job_id)):
                raise DependencyCycle(
                    need.job_id,
                    f"job {need.job_id} waits for job {job_id}: depending on it makes a cycle",
                )
        if not needs:
            return
        self._needs.setdefault(job_id, []).extend(needs)
        for need in needs:
            self._waiters.setdefault(need.job_id, set()).add(job_id)

    def ancestors(self, job_id: int) -> set[int]:
        """Every job ``job_id`` waits for, directly or through others."""
        seen: set[int] = set()
        todo = [job_id]
        while todo:
            for need in self._needs.get(todo.pop(), ()):
                if need.job_id not in seen:
                    seen.add(need.job_id)
                    todo.append(need.job_id)
        return seen

    def needs(self, job_id: int) -> Sequence[Need]:
        """What ``job_id`` still waits for."""
        return self._needs.get(job_id, ())

    def waiters(self, job_id: int) -> list[int]:
        """The jobs waiting for ``job_id``, in id order."""
        return sorted(self._waiters.get(job_id, ()))

    def is_awaited(self, job_id: int) -> bool:
        return job_id in self._waiters

    def resolve(
        self, job_id: int, started: bool, ended: bool, ok: bool, handed: Sequence[Need] = ()
    ) -> tuple[list[int], list[tuple[int, Need]]]:
        """What ``job_id`` has done settles needs on it: ``(jobs whose needs changed,
        (job, need) pairs that can never be satisfied)``; both kinds leave the graph. A
        ``throttle`` need on a job that ended without starting is replaced by ``handed``
        (that job's own ``throttle`` needs, which :meth:`forget` returned)."""
        changed: list[int] = []
        doomed: list[tuple[int, Need]] = []
        for waiter in self.waiters(job_id):
            kept: list[Need] = []
            inherits: list[Need] = []
            for need in self._needs[waiter]:
                answer = None if need.job_id != job_id else verdict(need.kind, started, ended, ok)
                if answer is None:
                    kept.append(need)
                    continue
                changed.append(waiter)
                if not answer:
                    doomed.append((waiter, need))
                elif need.kind == THROTTLE and not started:
                    inherits.extend(handed)
            self._set(waiter, kept)
            if not any(n.job_id == job_id for n in kept):
                self._drop_waiter(job_id, waiter)
            if inherits:
                self.add(waiter, [n for n in inherits if n not in kept])
        return sorted(set(changed)), doomed

    def drop(self, job_id: int, need: Need) -> None:
        """Forget one need of ``job_id`` (the user chose to run it without)."""
        self._set(job_id, [n for n in self.needs(job_id) if n != need])
        if not any(n.job_id == need.job_id for n in self.needs(job_id)):
            self._drop_waiter(need.job_id, job_id)

    def forget(self, job_id: int) -> list[Need]:
        """``job_id`` left (it ended or was cancelled): its own needs go; those of them
        that are ``throttle`` needs are returned (for :meth:`resolve` to hand on)."""
        needs = self._needs.pop(job_id, [])
        for need in needs:
            self._drop_waiter(need.job_id, job_id)
        return [need for need in needs if need.kind == THROTTLE]

    def bound(self, job_id: int, promised: Callable[[Need], int | None]) -> Bound:
        """From when ``job_id`` may start: the latest ``promised(need)`` of its needs (a
        predecessor's promised start for ``after``, end for the others); unknown as soon
        as one predecessor has no promise."""
        latest: Bound = Bound(None)
        for need in self.needs(job_id):
            time = promised(need)
            if time is None:
                return Bound(None, need, known=False)
            if latest.time is None or time > latest.time:
                latest = Bound(time, need)
        return latest

    def _set(self, job_id: int, needs: list[Need]) -> None:
        if needs:
            self._needs[job_id] = needs
        else:
            self._needs.pop(job_id, None)

    def _drop_waiter(self, predecessor: int, waiter: int) -> None:
        waiting = self._waiters.get(predecessor)
        if waiting is not None:
            waiting.discard(waiter)
            if not waiting:
                del self._waiters[predecessor]
