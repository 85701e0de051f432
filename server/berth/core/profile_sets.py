"""Operations over many profiles at once: their sum, and forgetting the past in all.

A node plan keeps one :class:`~berth.core.profile.Profile` per node and summed profiles
over groups of nodes (the nodes able to hold a slot, the blocks of
:mod:`berth.core.node_blocks`). These functions read and write the profiles' steps
directly, as friends of the class: one pass over every profile, without a call per
profile that has nothing to do. Pure: no clock, no I/O.
"""

from __future__ import annotations

from berth.core.profile import Profile


def summed(parts: list[Profile]) -> Profile:
    """One profile of the free resources of ``parts`` together (each keeps its own;
    the sum is a new profile that the caller keeps up to date with theirs)."""
    guard = parts[0]._guard
    times = sorted({time for part in parts for time in part._times})
    free = [0] * len(times)
    for part in parts:
        own_times, own_free = part._times, part._free
        step = 0
        for at, time in enumerate(times):
            while step + 1 < len(own_times) and own_times[step + 1] <= time:
                step += 1
            free[at] += own_free[step] ^ guard  # before its first step: that step
    total = Profile(sum(part.capacity for part in parts), guard, times[0])
    total._times, total._free = [times[0]], [free[0] | guard]
    for time, amount in zip(times[1:], free[1:], strict=True):
        if amount | guard != total._free[-1]:
            total._times.append(time)
            total._free.append(amount | guard)
    return total


def forget_all_before(profiles: list[Profile], now: int, owned: bytearray | None = None) -> None:
    """:meth:`Profile.forget_before` on each of ``profiles``; most of a plan's node
    profiles have no step to drop at a given time, and are passed over without a call.
    With ``owned``, a profile whose flag is 0 is shared (copy on write): it is replaced
    in ``profiles`` by a copy of its own, flagged 1, before it forgets."""
    if owned is None:
        for profile in profiles:
            times = profile._times
            if len(times) > 1 and times[1] <= now:
                profile.forget_before(now)
        return
    for index, profile in enumerate(profiles):
        times = profile._times
        if len(times) > 1 and times[1] <= now:
            if not owned[index]:
                profile = profiles[index] = profile.copy()
                owned[index] = 1
            profile.forget_before(now)
