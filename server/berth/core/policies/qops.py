"""QoPS deadline admission (Islam, Balaji, Sadayappan & Panda 2003, section 3, Figure 3).

On arrival, with ``N`` waiting jobs ordered by reserved start, try the insertion points
at positions 0, N/2, 3N/4, 7N/8, ... and N (after every waiting job), in that order. At
insertion point ``p`` (time slot ``ts``, the reserved start of the job at position ``p``):

1. keep the reservations of the jobs before ``p``; take the others out and, with the
   new job, into a temporary list TL sorted by the heuristic (EDF or LLF);
2. reserve each job of TL in order, at its earliest start;
3. when a job ``Jc`` placed at time ``T`` misses its deadline, count a violation; past
   ``k_factor`` violations the option fails. Otherwise take out again every job this
   option placed at or after ``mid = (ts + T) / 2`` (up to ``T``), re-sort TL, and put
   ``Jc`` at its head so that it is placed next, in the room just freed.

The job is admitted at the first option whose schedule meets every deadline; if none
does it is rejected and the schedule is left exactly as it was. Resolutions of the
paper's ambiguities are listed in ``docs/semantics.md``. Pure; no I/O.
"""

from __future__ import annotations

from berth.core.policies.base import Waiting
from berth.core.policies.deadline import Broken, DeadlinePolicy, Plan, non_negative
from berth.core.profile import Filler
from berth.core.resources import ResourceSpace

#: Default bound on deadline violations repaired per insertion point (the paper's
#: K-factor; it gives no value).
DEFAULT_K_FACTOR = 5


def insertion_points(n: int) -> list[int]:
    """Positions 0, n/2, 3n/4, 7n/8, ... (each below n), then n: about log2(n) + 2."""
    points = [0]
    step = n // 2
    while step > 0:
        position = n - step
        if position > points[-1]:
            points.append(position)
        step //= 2
    if n > points[-1]:
        points.append(n)
    return points


class Qops(DeadlinePolicy):
    """QoPS: deadline admission with reordering of the waiting jobs."""

    name = "qops"

    def __init__(
        self,
        space: ResourceSpace,
        heuristic: str = "edf",
        relaxation: float = 5.0,
        k_factor: int = DEFAULT_K_FACTOR,
    ) -> None:
        super().__init__(space, heuristic, relaxation)
        self.k_factor = non_negative("k_factor", k_factor)

    def plan(self, new: Waiting, now: int) -> Plan | Broken:
        order = self.scheduled()
        first_failure: Broken | None = None
        for position in insertion_points(len(order)):
            outcome = self.try_insertion(new, order, position, now)
            if isinstance(outcome, Plan):
                return outcome
            first_failure = first_failure or outcome
        assert first_failure is not None
        return first_failure

    def try_insertion(
        self, new: Waiting, order: list[Waiting], position: int, now: int
    ) -> Plan | Broken:
        """One option of Figure 3: ``order[position:]`` and the new job rescheduled."""
        moved = order[position:]
        slot = moved[0].start if moved and moved[0].start is not None else now
        filler = Filler(self.released(moved))
        key = self.order_key()
        pending = sorted([new, *moved], key=key)
        placed: dict[int, int] = {}
        entries = {e.job.id: e for e in pending}
        violations = 0
        while pending:
            entry = pending.pop(0)
            start = filler.place(entry.demand, entry.job.estimate, now)
            placed[entry.job.id] = start
            broken = self.late(entry, start)
            if broken is None:
                continue
            violations += 1
            if violations > self.k_factor:
                return broken
            middle = (slot + start) // 2
            lower = min(middle, start)
            back = [
                job_id
                for job_id, at in placed.items()
                if lower <= at <= start and job_id != entry.job.id
            ]
            for job_id in [*back, entry.job.id]:
                other = entries[job_id]
                filler.release(placed.pop(job_id), other.job.estimate, other.demand)
            pending = [entry, *sorted([*pending, *(entries[j] for j in back)], key=key)]
        starts = {e.job.id: e.start for e in order[:position] if e.start is not None}
        starts.update(placed)
        return Plan(filler.profile, starts)
