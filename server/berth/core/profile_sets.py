"""Operations over many profiles at once: their sum, and forgetting the past in all.

A node plan keeps one :class:`~berth.core.profile.Profile` per node and summed profiles
over groups of nodes (the nodes able to hold a slot, the blocks of
:mod:`berth.core.node_blocks`). These functions work through the profiles' methods
only (the class may be the C one, :mod:`berth.core.profile`): the sum is built from
the parts' steps, and forgetting calls only the profiles with a step to drop. Pure: no
clock, no I/O.
"""

from __future__ import annotations

from berth.core.profile import WITH_PAST, NativeProfile, Profile


def summed(parts: list[Profile]) -> Profile:
    """One profile of the free resources of ``parts`` together (each keeps its own;
    the sum is a new profile that the caller keeps up to date with theirs)."""
    all_steps = [part.steps() for part in parts]
    times = sorted({time for steps in all_steps for time, _ in steps})
    free = [0] * len(times)
    for own in all_steps:
        step = 0
        for at, time in enumerate(times):
            while step + 1 < len(own) and own[step + 1][0] <= time:
                step += 1
            free[at] += own[step][1]  # before its first step: that step
    steps = [(times[0], free[0])]
    for time, amount in zip(times[1:], free[1:], strict=True):
        if amount != steps[-1][1]:
            steps.append((time, amount))
    return Profile.from_steps(sum(part.capacity for part in parts), parts[0].guard, steps)


def forget_all_before(profiles: list[Profile], now: int, owned: bytearray | None = None) -> None:
    """:meth:`Profile.forget_before` on each of ``profiles``; most of a plan's node
    profiles have no step to drop at a given time, and are passed over without a call
    (C profiles are asked in one C call). With ``owned``, a profile whose flag is 0 is
    shared (copy on write): it is replaced in ``profiles`` by a copy of its own,
    flagged 1, before it forgets."""
    if WITH_PAST is not None and profiles and type(profiles[0]) is NativeProfile:
        indexes = WITH_PAST(profiles, now)
    else:
        indexes = [i for i, profile in enumerate(profiles) if profile.has_past(now)]
    for index in indexes:
        profile = profiles[index]
        if owned is not None and not owned[index]:
            profile = profiles[index] = profile.copy()
            owned[index] = 1
        profile.forget_before(now)
