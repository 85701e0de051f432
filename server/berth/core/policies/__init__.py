"""Scheduling policies behind one interface, registered under short names.

``make_policy("easy", space)`` builds a policy by name; :data:`POLICIES` lists them.
A policy's module is imported only when it is built, so a replay under EASY never loads
the deadline or slack policies (``berth emulate`` starts faster).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import import_module
from typing import cast

from berth.core.catalog import POLICY_NAMES, POLICY_OPTIONS
from berth.core.policies.base import Policy, QueuePolicy
from berth.core.resources import ResourceSpace

#: Each policy's name -> (module under ``berth.core.policies``, class).
POLICIES: dict[str, tuple[str, str]] = {
    "fcfs": ("fcfs", "Fcfs"),
    "easy": ("easy", "Easy"),
    "conservative": ("conservative", "Conservative"),
    "qops": ("qops", "Qops"),
    "msb": ("msb", "Msb"),
    "mrt": ("mrt", "Mrt"),
    "slack": ("slack", "SlackBackfilling"),
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
    return policy_class(name)(space, **options)


def policy_class(name: str) -> Callable[..., QueuePolicy]:
    """The class registered as ``name``, its module imported now."""
    module, attribute = POLICIES[name]
    return cast(
        "Callable[..., QueuePolicy]",
        getattr(import_module(f"berth.core.policies.{module}"), attribute),
    )


__all__ = [
    "POLICIES",
    "POLICY_NAMES",
    "POLICY_OPTIONS",
    "Policy",
    "QueuePolicy",
    "make_policy",
    "policy_class",
    "policy_problem",
]
