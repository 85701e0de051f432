"""Scheduling policies behind one interface, registered under short names.

``make_policy("easy", space)`` builds a policy by name; :data:`POLICIES` lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from berth.core.catalog import POLICY_NAMES, POLICY_OPTIONS
from berth.core.policies.base import Policy, QueuePolicy
from berth.core.policies.conservative import Conservative
from berth.core.policies.easy import Easy
from berth.core.policies.fcfs import Fcfs
from berth.core.policies.mrt import Mrt
from berth.core.policies.msb import Msb
from berth.core.policies.qops import Qops
from berth.core.policies.slack import SlackBackfilling
from berth.core.resources import ResourceSpace

POLICIES: dict[str, Callable[..., QueuePolicy]] = {
    "fcfs": Fcfs,
    "easy": Easy,
    "conservative": Conservative,
    "qops": Qops,
    "msb": Msb,
    "mrt": Mrt,
    "slack": SlackBackfilling,
}
assert tuple(POLICIES) == POLICY_NAMES, "the catalogue and the registry list the same policies"


def policy_problem(name: str, options: Iterable[str] = ()) -> tuple[str | None, str] | None:
    """Why ``name`` with these option names cannot be built, or ``None``.

    The answer is ``(None, message)`` for an unknown policy (the message names the known
    ones) and ``(option, message)`` for an option the policy does not take (the message
    names those it takes). Option *values* are checked by the policy's constructor.
    """
    if name not in POLICIES:
        return None, f"unknown policy {name!r}; known: {', '.join(POLICIES)}"
    accepted = POLICY_OPTIONS.get(name, ())
    for option in options:
        if option not in accepted:
            takes = ", ".join(accepted) if accepted else "no options"
            return option, f"policy {name!r} does not take {option!r} (it takes {takes})"
    return None


def make_policy(name: str, space: ResourceSpace, **options: object) -> QueuePolicy:
    """The policy registered as ``name`` for a cluster, with its options.

    Raises ``ValueError`` with :func:`policy_problem`'s message for an unknown policy or
    option, and the constructor's for a bad option value.
    """
    problem = policy_problem(name, options)
    if problem is not None:
        raise ValueError(problem[1])
    return POLICIES[name](space, **options)


__all__ = [
    "POLICIES",
    "POLICY_NAMES",
    "POLICY_OPTIONS",
    "Policy",
    "QueuePolicy",
    "make_policy",
    "policy_problem",
]
