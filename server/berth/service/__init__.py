"""The service layer: the live engine around the pure core, and the ports it drives.

It owns job and node records, applies commands (submit, cancel, hold, node changes,
policy changes) at a time given by its caller, and talks to the outside only through
the ports of :mod:`berth.service.ports` (store, node backend, clock). Adapters live in
``berth.store`` and ``berth.dispatch``; the shells (``berth.api``, ``berth.runtime``)
wire them together. Nothing here imports a web framework or a database driver.

The engine (:mod:`berth.service.engine`) is composed of parts kept in sub-packages by
concern: ``jobs`` (records, lifecycle, dependencies), ``nodes`` (node records, intents),
``partitions`` (with gang), ``planning`` (the planner, replans, forecasts); the command
handlers are in ``handlers`` and the answers to queries in ``queries``; the single
writer (:mod:`berth.service.coordinator`) applies the typed commands
(:mod:`berth.service.commands`) and commits what the engine's outbox holds.
"""
