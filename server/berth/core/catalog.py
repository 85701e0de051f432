"""The names of the scheduling policies, their options and heuristics, as plain data.

Command lines and configuration check names against this catalogue without importing
the policies themselves, so ``berth --help`` and argument errors stay instant; the
registry in :mod:`berth.core.policies` maps the same names to their classes. No I/O.
"""

from __future__ import annotations

#: Every policy name, in the order the docs list them.
POLICY_NAMES = ("fcfs", "easy", "conservative", "qops", "msb", "mrt", "slack")

#: Gang scheduling allocation schemes (Zhou, Brent & Walsh): conventional buddy, buddy
#: with re-packing, with multiple slots, with multiple slots and fewest rows.
GANG_SCHEMES = ("bc", "br", "brms", "brmms")

#: The gang emulation's default slot length (the paper's five seconds).
GANG_SLOT_SECONDS = 5

#: Backfill job selection rules (Leinberger et al. 1999): first fit, Backfill Lowest,
#: Backfill Balanced.
SELECTIONS = ("ff", "bl", "bb")

#: Queue orders of the deadline policies (earliest deadline, least laxity first).
DEADLINE_HEURISTICS = ("edf", "llf")

#: The slack policy's permutation heuristics (Talby & Feitelson 1999, section 3.3).
SLACK_HEURISTICS = ("ast", "aat", "du", "dc", "dp")

#: How ``berth workload generate`` draws the K requirements (Leinberger et al. 1999).
DISTRIBUTIONS = ("uniform", "exponential")

#: Options each policy accepts (keyword arguments of its constructor).
POLICY_OPTIONS: dict[str, tuple[str, ...]] = {
    "easy": ("selection",),
    "conservative": ("selection",),
    "qops": ("heuristic", "relaxation", "k_factor"),
    "msb": ("heuristic", "relaxation"),
    "mrt": ("heuristic", "relaxation", "max_backtracks"),
    "slack": (
        "heuristic",
        "slack_factor",
        "awt",
        "alpha_u",
        "alpha_t",
        "alpha_p",
        "alpha_f",
        "selection",
    ),
}
