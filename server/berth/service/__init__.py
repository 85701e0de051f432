"""The service layer: the live engine around the pure core, and the ports it drives.

It owns job and node records, applies commands (submit, cancel, hold, node changes,
policy changes) at a time given by its caller, and talks to the outside only through
the ports of :mod:`berth.service.ports` (store, node backend, clock). Adapters live in
``berth.store`` and ``berth.dispatch``; the shells (``berth.api``, ``berth.runtime``)
wire them together. Nothing here imports a web framework or a database driver.
"""
