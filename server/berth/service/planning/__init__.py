"""Planning: each backfilling partition's policy over the core, and what it predicts.

Owns the planner (each partition's policy in its timeline, improvements deferred to
bounded slices: :mod:`~berth.service.planning.planner`), the rebuild of a policy from
the records (:mod:`~berth.service.planning.replan`), the time budgets of a pass and a
slice (:mod:`~berth.service.planning.budgets`) and the predicted starts, a read model
(:mod:`~berth.service.planning.forecasts`). No I/O.
"""
