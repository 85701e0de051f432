"""MRT: modified real-time admission (Islam et al. 2003, section 2.2.2, Figure 2).

On arrival, every waiting job and the new one are taken out, sorted by the heuristic
(EDF or LLF), and the schedule is rebuilt from the running jobs by depth-first search
(Ramamritham et al.): at each step the first remaining job in heuristic order whose
reservation (at its earliest start) keeps the partial schedule *strongly feasible* —
every placed job meets its deadline, and each remaining job, placed alone next, would
meet its own — extends the schedule. Every candidate discarded counts as a backtrack;
when a step has no candidate left the search returns to the previous step and tries its
next candidate. Past ``max_backtracks`` the job is rejected and the old schedule kept.
Pure; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from berth.core.policies.base import Waiting
from berth.core.policies.deadline import Broken, DeadlinePolicy, Plan, non_negative
from berth.core.profile import Profile
from berth.core.resources import ResourceSpace

#: Default backtrack limit (the paper gives no value).
DEFAULT_MAX_BACKTRACKS = 10


@dataclass(slots=True)
class _Step:
    """One level of the search: the partial schedule before it and the next candidate."""

    profile: Profile
    remaining: list[Waiting]
    bounds: dict[int, int]
    candidate: int


class Mrt(DeadlinePolicy):
    """Modified real-time deadline admission: rebuild by search with strong feasibility."""

    name = "mrt"

    def __init__(
        self,
        space: ResourceSpace,
        heuristic: str = "edf",
        relaxation: float = 5.0,
        max_backtracks: int = DEFAULT_MAX_BACKTRACKS,
    ) -> None:
        super().__init__(space, heuristic, relaxation)
        self.max_backtracks = non_negative("max_backtracks", max_backtracks)

    def plan(self, new: Waiting, now: int) -> Plan | Broken:
        key = self.order_key()
        remaining = sorted([*self.waiting.values(), new], key=key)
        # Earliest-start lower bounds: a partial schedule only fills up as it grows, so
        # a job's earliest start never moves earlier; scans resume from the last one.
        bounds = {e.job.id: now for e in remaining}
        profile = self.released(self.waiting.values())
        steps: list[_Step] = []
        starts: dict[int, int] = {}
        candidate = 0
        backtracks = 0
        failure: Broken | None = None
        while remaining:
            extended = False
            while candidate < len(remaining):
                entry = remaining[candidate]
                trial = profile.copy()
                start = trial.earliest_start(entry.demand, entry.job.estimate, bounds[entry.job.id])
                assert start is not None
                trial.reserve(start, entry.job.estimate, entry.demand)
                rest = remaining[:candidate] + remaining[candidate + 1 :]
                broken = self.late(entry, start)
                trial_bounds = dict(bounds)
                if broken is None:
                    broken = self._strongly_feasible(trial, rest, trial_bounds)
                if broken is None:
                    steps.append(_Step(profile, remaining, bounds, candidate))
                    profile, remaining, bounds = trial, rest, trial_bounds
                    starts[entry.job.id] = start
                    candidate = 0
                    extended = True
                    break
                failure = failure or broken
                backtracks += 1
                if backtracks > self.max_backtracks:
                    return failure
                candidate += 1
            if extended:
                continue
            if not steps:
                assert failure is not None
                return failure
            step = steps.pop()
            profile, remaining, bounds = step.profile, step.remaining, step.bounds
            del starts[remaining[step.candidate].job.id]
            candidate = step.candidate + 1
        return Plan(profile, starts)

    def _strongly_feasible(
        self, profile: Profile, rest: list[Waiting], bounds: dict[int, int]
    ) -> Broken | None:
        """Whether each job of ``rest``, placed alone next, meets its deadline."""
        for other in rest:
            job_id = other.job.id
            start = profile.earliest_start(other.demand, other.job.estimate, bounds[job_id])
            assert start is not None
            bounds[job_id] = start
            broken = self.late(other, start)
            if broken is not None:
                return broken
        return None
