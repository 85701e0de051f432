"""The core planning with the Python availability profile, for tests of its internals.

Where the C profile is built, ``berth.core.profile.Profile`` is that class, and every
module of the core that makes or calls profiles bound it at import. Tests that count or
steer the Python profile's own walks (its memos, its class constants) plan inside
:func:`python_profiles`, which gives those modules the Python class for the while.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from unittest import mock

from berth.core import (
    filler,
    node_blocks,
    node_search,
    node_selection,
    nodes,
    profile_sets,
    whole_nodes,
)
from berth.core.policies import boards, conservative
from berth.core.profile import PythonProfile

#: Every module of the core that names ``Profile``.
USERS = (filler, node_blocks, node_search, node_selection, nodes, profile_sets, whole_nodes,
         boards, conservative)  # fmt: skip


@contextmanager
def python_profiles() -> Iterator[None]:
    """Inside, the core makes and calls the Python profile (outside, the C one if built)."""
    with ExitStack() as stack:
        for module in USERS:
            stack.enter_context(mock.patch.object(module, "Profile", PythonProfile))
        yield
