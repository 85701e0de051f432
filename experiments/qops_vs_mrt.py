"""Why MRT sometimes admits more than QoPS: both asked about the very same arrivals.

Each deadline policy replays the workload as usual; at every arrival, before it
decides, a copy of its state (waiting jobs with their reservations, running jobs, the
deadlines) is handed to the other algorithm, which decides the same job on the same
schedule. Counting where they disagree separates the algorithms from the histories
they build: "QoPS rejects, MRT admits" on QoPS's own schedule is a job QoPS's search
missed, not a luckier past.

    .venv/bin/python experiments/qops_vs_mrt.py          # CTC, 430 processors, seed 0
    .venv/bin/python experiments/qops_vs_mrt.py --load 1.6 --stringency 0.2

Prints a table for the page (``docs/results/qops.md`` quotes it).
"""

from __future__ import annotations

import argparse
import copy
import time
from collections import Counter
from collections.abc import Callable

from tqdm import tqdm

from berth.core.decisions import Reject, Reserve
from berth.core.model import Job
from berth.core.policies.admission import Admission, AnyBoard, Queue, Rebuilt, try_insertion
from berth.core.policies.deadline import DeadlinePolicy
from berth.core.policies.deadline_rules import Broken, Deadlines, Queued
from berth.core.policies.mrt import Mrt
from berth.core.policies.qops import DEFAULT_K_FACTOR, Qops
from berth.core.resources import ResourceSpace
from berth.emulate.replay import replay
from berth.emulate.scenario import Scenario
from berth.emulate.traces import read_workload
from berth.runtime.paths import find_shared_trace

TRACE = "CTC-SP2-1996-3.1-cln.swf.gz"


class PointZero(Admission):
    """QoPS at insertion point 0 only (every waiting job and the new one re-placed in
    EDF order), with up to ``k_factor`` repairs. With none it is EDF greedy, the first
    option of both algorithms: when it meets every deadline, QoPS takes it (insertion
    point 0) and so does MRT (its search's first path is this one, and a feasible
    schedule is strongly feasible at every step). With QoPS's K it tells a repair from
    a later insertion point."""

    def __init__(self, k_factor: int) -> None:
        super().__init__("qops", k_factor=k_factor)

    def __call__(
        self,
        board: AnyBoard,
        rules: Deadlines,
        queue: Queue,
        new: Queued,
        now: int,
        rebuilt: Rebuilt | None = None,
    ) -> Broken | None:
        return try_insertion(board, rules, queue.jobs, new, now, self.k_factor, rebuilt)


EDF_GREEDY = PointZero(0)
FIRST_POINT = PointZero(DEFAULT_K_FACTOR)


def admits(decider: Admission, state: DeadlinePolicy, job: Job, now: int) -> bool:
    """Whether ``decider`` admits ``job`` on a deep copy of ``state``'s schedule (the
    copy a plain deadline policy, so that it asks no one in turn)."""
    twin = copy.deepcopy(state)
    twin.__class__ = DeadlinePolicy
    twin.admission = decider
    return isinstance(twin.submit(job, now), Reserve)


def watched(base: type[DeadlinePolicy], other: type[DeadlinePolicy], tally: Counter[str],
            tick: Callable[[int], object]) -> type[DeadlinePolicy]:  # fmt: skip
    """``base`` that, before each decision, asks ``other`` about the same arrival."""
    theirs_decider = Admission(other.name)

    class Watched(base):  # type: ignore[misc, valid-type]
        def submit(self, job: Job, now: int) -> Reserve | Reject | None:
            theirs = admits(theirs_decider, self, job, now)
            greedy = admits(EDF_GREEDY, self, job, now)
            first = admits(FIRST_POINT, self, job, now)
            decision: Reserve | Reject | None = super().submit(job, now)
            ours = isinstance(decision, Reserve)
            mine, their = base.name, other.name
            if ours == theirs:
                tally["both admit" if ours else "both reject"] += 1
            else:
                tally[f"only {mine} admits" if ours else f"only {their} admits"] += 1
            qops_admits = ours if base is Qops else theirs
            mrt_admits = theirs if base is Qops else ours
            if greedy:
                tally["greedy"] += 1
                # Both must then admit (see PointZero): counted to check the argument.
                tally["greedy, yet refused"] += not (qops_admits and mrt_admits)
            if qops_admits and not mrt_admits:
                tally["qops: repair at point 0" if first else "qops: a later point"] += 1
            if mrt_admits and not qops_admits:
                tally["mrt: greedy" if greedy else "mrt: search"] += 1
            tick(1)
            return decision

    return Watched


def compare(load: float, stringency: float, seed: int, processors: int, first: int) -> None:
    path = find_shared_trace(TRACE)
    assert path is not None, f"{TRACE} not found"
    capacity = {"cpus": processors}
    scenario = Scenario(first=first, estimates="exact", load=load, stringency=stringency, seed=seed)
    jobs = scenario.prepare(read_workload(path).jobs, capacity)
    print(f"CTC on {processors} processors, first {first} jobs, load {load}, S {stringency}, "
          f"seed {seed}: {len(jobs)} arrivals")  # fmt: skip
    print("| replayed by | asked | EDF greedy works | both admit | both reject | only QoPS "
          "admits (repair at point 0 / a later point) | only MRT admits (by its search) "
          "| seconds |\n|---|---|---:|---:|---:|---:|---:|---:|")  # fmt: skip
    pairs: tuple[tuple[type[DeadlinePolicy], type[DeadlinePolicy]], ...] = (
        (Qops, Mrt),
        (Mrt, Qops),
    )
    for base, other in pairs:
        tally: Counter[str] = Counter()
        began = time.perf_counter()
        with tqdm(total=len(jobs), desc=f"{base.name} (asking {other.name})", leave=False) as bar:
            policy = watched(base, other, tally, bar.update)(ResourceSpace(capacity))
            replay(jobs, policy)
        print(f"| {base.name} | {other.name} | {tally['greedy']} | {tally['both admit']} "
              f"| {tally['both reject']} | {tally['only qops admits']} "
              f"({tally['qops: repair at point 0']} / {tally['qops: a later point']}) "
              f"| {tally['only mrt admits']} ({tally['mrt: search']}) "
              f"| {time.perf_counter() - began:.0f} |")  # fmt: skip
        if tally["greedy, yet refused"]:
            print(f"  {tally['greedy, yet refused']} arrivals EDF greedy admits were refused")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--load", type=float, default=1.6)
    parser.add_argument("--stringency", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--processors", type=int, default=430)
    parser.add_argument("--first", type=int, default=5000)
    args = parser.parse_args()
    compare(args.load, args.stringency, args.seed, args.processors, args.first)


if __name__ == "__main__":
    main()
