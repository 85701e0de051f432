"""Scheduling policies behind one interface, registered under short names.

``make_policy("easy", space)`` builds a policy by name; :data:`POLICIES` lists them.
"""

from __future__ import annotations

from collections.abc import Callable

from berth.core.policies.base import Policy
from berth.core.policies.conservative import Conservative
from berth.core.policies.easy import Easy
from berth.core.policies.fcfs import Fcfs
from berth.core.policies.mrt import Mrt
from berth.core.policies.msb import Msb
from berth.core.policies.qops import Qops
from berth.core.resources import ResourceSpace

POLICIES: dict[str, Callable[[ResourceSpace], Policy]] = {
    "fcfs": Fcfs,
    "easy": Easy,
    "conservative": Conservative,
    "qops": Qops,
    "msb": Msb,
    "mrt": Mrt,
}


def make_policy(name: str, space: ResourceSpace) -> Policy:
    """The policy registered as ``name`` for a cluster; ``KeyError`` names the known ones."""
    try:
        factory = POLICIES[name]
    except KeyError:
        raise KeyError(f"unknown policy {name!r}; known: {', '.join(POLICIES)}") from None
    return factory(space)


__all__ = ["POLICIES", "Policy", "make_policy"]
