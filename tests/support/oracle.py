"""A brute-force reference scheduler for tiny workloads, written for obviousness, not speed.

It shares no code with the core: resources are plain dicts, the future is a per-second
usage grid, and every search tries each integer second in turn. Tests compare the real
engine's start times with this oracle's on random workloads (small times only).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class OracleJob:
    id: int
    submit: int
    runtime: int
    estimate: int
    resources: dict[str, int]


@dataclass
class _State:
    capacity: dict[str, int]
    running: dict[int, tuple[int, int]] = field(default_factory=dict)  # id -> (start, end)
    expected: dict[int, int] = field(default_factory=dict)  # id -> start + estimate
    queue: list[int] = field(default_factory=list)


def _fits(amounts: dict[str, int], free: dict[str, int]) -> bool:
    return all(amounts.get(r, 0) <= free[r] for r in free)


def _rejected(job: OracleJob, capacity: dict[str, int]) -> bool:
    return (
        any(r not in capacity for r in job.resources)
        or any(a > capacity[r] for r, a in job.resources.items())
        or sum(job.resources.values()) == 0
    )


def oracle(
    jobs: list[OracleJob], capacity: dict[str, int], policy: str
) -> dict[int, tuple[int, int] | None]:
    """Map each job id to (start, end), or None if rejected."""
    by_id = {j.id: j for j in jobs}
    result: dict[int, tuple[int, int] | None] = {}
    state = _State(dict(capacity))
    horizon = max(j.submit for j in jobs) + sum(max(j.estimate, j.runtime) for j in jobs) + 2
    grid = [dict.fromkeys(capacity, 0) for _ in range(horizon * 2)]  # conservative only
    reservation: dict[int, int] = {}

    def place(job: OracleJob, start: int, sign: int) -> None:
        for t in range(start, start + job.estimate):
            for r, a in job.resources.items():
                grid[t][r] += sign * a

    def earliest(job: OracleJob, now: int) -> int:
        t = now
        while True:
            if all(
                grid[u][r] + job.resources.get(r, 0) <= capacity[r]
                for u in range(t, t + job.estimate)
                for r in capacity
            ):
                return t
            t += 1

    def free_now() -> dict[str, int]:
        free = dict(capacity)
        for jid in state.running:
            for r, a in by_id[jid].resources.items():
                free[r] -= a
        return free

    def start(jid: int, now: int) -> None:
        job = by_id[jid]
        end = now + min(job.runtime, job.estimate)
        state.running[jid] = (now, end)
        state.expected[jid] = now + job.estimate
        state.queue.remove(jid)
        result[jid] = (now, end)

    order = sorted(jobs, key=lambda j: (j.submit, j.id))
    for now in range(horizon):
        ended = [jid for jid, (_, end) in state.running.items() if end == now]
        for jid in ended:
            del state.running[jid]
            if policy == "conservative":
                job = by_id[jid]
                for t in range(now, state.expected[jid]):
                    for r, a in job.resources.items():
                        grid[t][r] -= a
        if policy == "conservative" and ended:
            for jid in list(state.queue):
                job = by_id[jid]
                place(job, reservation[jid], -1)
                reservation[jid] = min(reservation[jid], earliest(job, now))
                place(job, reservation[jid], +1)
        for job in order:
            if job.submit != now:
                continue
            if _rejected(job, capacity):
                result[job.id] = None
                continue
            state.queue.append(job.id)
            if policy == "conservative":
                reservation[job.id] = earliest(job, now)
                place(job, reservation[job.id], +1)
        if policy == "conservative":
            for jid in [j for j in state.queue if reservation[j] == now]:
                start(jid, now)
            continue
        while state.queue and _fits(by_id[state.queue[0]].resources, free_now()):
            start(state.queue[0], now)
        if policy == "easy" and len(state.queue) > 1:
            head = by_id[state.queue[0]]
            shadow, extra = None, None
            for moment in sorted({state.expected[j] for j in state.running}):
                avail = free_now()
                for jid in state.running:
                    if state.expected[jid] <= moment:
                        for r, a in by_id[jid].resources.items():
                            avail[r] += a
                if _fits(head.resources, avail):
                    shadow = moment
                    extra = {r: avail[r] - head.resources.get(r, 0) for r in avail}
                    break
            assert shadow is not None
            assert extra is not None
            for jid in list(state.queue[1:]):
                job = by_id[jid]
                if not _fits(job.resources, free_now()):
                    continue
                if now + job.estimate <= shadow:
                    start(jid, now)
                elif _fits(job.resources, extra):
                    for r, a in job.resources.items():
                        extra[r] -= a
                    start(jid, now)
    return result
