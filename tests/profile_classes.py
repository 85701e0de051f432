"""The core planning with the Python availability profile, for tests of its internals.

Where the C profile is built, ``berth.core.profile.Profile`` is that class, and every
module of the core that makes or calls profiles bound it at import. Tests that count or
steer the Python profile's own walks (its memos, its class constants) plan inside
:func:`python_profiles`, which gives those modules the Python class for the while (and
so the node search and booking written in Python, the C ones reading C profiles only).
Inside :func:`python_search`, plans keep the C profiles but search and book with the
Python code.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from functools import cache
from types import ModuleType
from unittest import mock

import berth.core
from berth.core import node_runs, node_search, nodes, profile
from berth.core.profile import PythonProfile

#: The modules that define the class in use rather than use it.
HOMES = {profile.__name__, "berth.core._profile_native"}


@cache
def users() -> list[ModuleType]:
    """Every module of the core that binds the name ``Profile`` to the class in use
    (found, not listed: a module that starts using profiles is patched too)."""
    found = []
    for info in pkgutil.walk_packages(berth.core.__path__, "berth.core."):
        if info.name in HOMES:
            continue
        module = importlib.import_module(info.name)
        if getattr(module, "Profile", None) is profile.Profile:
            found.append(module)
    return found


@contextmanager
def python_profiles() -> Iterator[None]:
    """Inside, the core makes and calls the Python profile (outside, the C one if built)."""
    with ExitStack() as stack:
        for module in users():
            stack.enter_context(mock.patch.object(module, "Profile", PythonProfile))
        yield


@contextmanager
def python_search() -> Iterator[None]:
    """Inside, the node search and booking are the Python ones whatever the profiles are
    (and no run of them is looped in C)."""
    with (
        mock.patch.object(node_search, "NATIVE_SEARCH", None),
        mock.patch.object(nodes, "BOOK_NODES", None),
        mock.patch.object(node_runs, "PLACE_RUN", None),
    ):
        yield
