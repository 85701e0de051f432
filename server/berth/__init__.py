"""Berth: a resource manager for parallel jobs that makes promises.

The package is layered (see ``docs/architecture.md``): ``core`` is the pure scheduling
engine, ``emulate`` replays workloads through it on a virtual clock, and ``runtime`` wires
the console entry points. Importing this package has no side effects.
"""

__version__ = "0.1.0"
