"""Queries: answers computed from the engine's committed state for the routes.

Owns the start-time answer with its guarantee, dependencies and what-if
(:mod:`~berth.service.queries.answers`). The predicted starts it reads are the
planner's read model (:mod:`berth.service.planning.forecasts`). No I/O.
"""
