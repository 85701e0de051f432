"""Switching a backfilling partition's policy, keeping every guarantee given.

The new policy is rebuilt from the records (a replan) on the nodes, as every policy
plans on named nodes; a switch that would break a guarantee is refused naming the jobs
unless forced. A part of :class:`~berth.service.engine.Engine`. No I/O.
"""

from __future__ import annotations

from berth.core.policies import policy_problem
from berth.service.engine_base import EngineBase
from berth.service.model import RequestError


class PolicyCommands(EngineBase):
    """The engine's policy command (a mixin)."""

    def change_policy(
        self,
        name: str,
        options: dict[str, object],
        now: int,
        force: bool = False,
        partition: str | None = None,
    ) -> None:
        """Switch a backfilling partition's policy (the default one's unless named),
        keeping every guarantee given, or refuse naming those it breaks."""
        if partition is not None and partition not in self.backfill:
            raise RequestError("not_found", f"no backfilling partition {partition!r}", "name")
        problem = policy_problem(name, options)
        if problem is not None:
            option, message = problem
            raise RequestError("invalid", message, "policy" if option is None else "options")
        try:
            replan = self._replan(name, options, now, keep_plan=False, partition=partition)
        except (ValueError, TypeError) as error:
            raise RequestError("invalid", str(error), "options") from None
        if replan.broken and not force:
            raise RequestError(
                "conflict",
                f"switching to {name} would break {len(replan.broken)} guarantee(s): "
                + "; ".join(replan.broken[:10])
                + ("" if len(replan.broken) <= 10 else "; ...")
                + " (force=true switches anyway)",
                "policy",
            )
        if partition is None:
            self.policy_name, self.policy_options = name, dict(options)
        else:
            self.backfill[partition].policy = name
            self.backfill[partition].options = dict(options)
        self.outbox.config_changed()
        self._install(replan, now, partition=partition)
        self.outbox.emit(
            "policy.changed", now, policy=name, options=dict(options), partition=partition
        )
        self._pass(now)
