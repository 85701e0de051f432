"""MSB: modified slack-based admission (Islam et al. 2003, section 2.2.1, Figure 1).

The waiting jobs keep their current order (ascending scheduled time, AST). For each
position ``p`` from N down to 0, the jobs from ``p`` on are taken out, the new job is
reserved at its earliest start, and the jobs taken out are re-placed in AST order. A
schedule in which any job misses its deadline is infeasible; among feasible ones the
cheapest wins, where the price is Talby & Feitelson's basic form: the sum over jobs of
delay x size (the new job's delay counted from now, moved jobs' delays from their old
starts, negative when they move up; size = sum of the job's resource shares). Equal
prices keep the option that moved fewer jobs. The job is rejected if no position is
feasible. Slack is ``deadline - (arrival + estimate)``, implicit in the deadline test.
Pure; no I/O.
"""

from __future__ import annotations

from berth.core.policies.base import Waiting
from berth.core.policies.deadline import Broken, DeadlinePolicy, Plan
from berth.core.profile import Filler


class Msb(DeadlinePolicy):
    """Modified slack-based deadline admission: fixed order, cheapest insertion point."""

    name = "msb"

    def plan(self, new: Waiting, now: int) -> Plan | Broken:
        order = self.scheduled()
        capacity = self.space.unpack(self.space.packed_capacity)
        unpacked = self.space.unpack

        def size(entry: Waiting) -> float:
            amounts = unpacked(entry.demand)
            return sum(amounts[name] / capacity[name] for name in capacity)

        best: tuple[float, Plan] | None = None
        first_failure: Broken | None = None
        base = self.profile.copy()
        for position in range(len(order), -1, -1):
            if position < len(order):
                entry = order[position]
                assert entry.start is not None
                base.release(entry.start, entry.job.estimate, entry.demand)
            filler = Filler(base.copy())
            start = filler.place(new.demand, new.job.estimate, now)
            broken = self.late(new, start)
            price = (start - now) * size(new)
            starts = {new.job.id: start}
            for entry in order[position:] if broken is None else ():
                assert entry.start is not None
                moved = filler.place(entry.demand, entry.job.estimate, now)
                broken = self.late(entry, moved)
                if broken is not None:
                    break
                starts[entry.job.id] = moved
                price += (moved - entry.start) * size(entry)
            if broken is not None:
                first_failure = first_failure or broken
                continue
            if best is None or price < best[0]:
                for entry in order[:position]:
                    assert entry.start is not None
                    starts[entry.job.id] = entry.start
                best = (price, Plan(filler.profile, starts))
        if best is None:
            assert first_failure is not None
            return first_failure
        return best[1]
