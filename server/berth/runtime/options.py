"""What the ``berth`` command line's shared options mean: ``--capacity``, ``--nodes``
groups, ``--estimates``, ``--reserve easy:S`` and the policy flags handed to a policy.

Parsed here once for every command that takes them (``emulate``, ``sweep``, ``serve``),
so that an argument error names the option and exits with status 2 the same way in all.
Imports only the standard library until an option is actually parsed.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from berth.agent.cli import parse_resources

#: ``--capacity`` reads like an agent's ``--resources``.
parse_capacity = parse_resources


#: ``berth emulate`` flags passed to the policy constructor (as keyword options).
POLICY_FLAGS = (
    "selection", "heuristic", "relaxation", "k_factor", "max_backtracks",
    "slack_factor", "awt", "alpha_u", "alpha_t", "alpha_p", "alpha_f",
)  # fmt: skip


def node_group(text: str) -> dict[str, int]:
    """One ``--nodes`` group, checked now (argument errors exit 2); kept as its text's
    resources, the count in key ``""``."""
    from berth.core.shapes import parse_node_groups

    try:
        nodes = parse_node_groups(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return {"": len(nodes), **next(iter(nodes.values()))}


def node_cluster(groups: Sequence[dict[str, int]]) -> dict[str, dict[str, int]]:
    """The ``--nodes`` groups as one cluster: node001, node002, ... in group order
    (:func:`~berth.core.shapes.node_names`)."""
    from berth.core.shapes import node_names

    listed = [{n: a for n, a in group.items() if n} for group in groups for _ in range(group[""])]
    return dict(zip(node_names(len(listed)), listed, strict=True))


def estimates_arg(text: str) -> str:
    """``--estimates``, checked now; kept as its text."""
    from berth.emulate.estimates import parse_estimates

    try:
        parse_estimates(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def stringency_arg(text: str) -> float:
    """``--reserve easy:S``: the stringency S in [0, 1)."""
    kind, _, value = text.partition(":")
    try:
        stringency = float(value)
    except ValueError:
        stringency = -1.0
    if kind != "easy" or not 0.0 <= stringency < 1.0:
        raise argparse.ArgumentTypeError(
            f"expected easy:S with a stringency S in [0, 1), got {text!r}"
        )
    return stringency
