"""Switching a backfilling partition's policy, keeping every guarantee given.

The new policy is rebuilt from the records (a replan); a switch that would break a
guarantee, or drop the slots jobs asked for, is refused naming them unless forced. A
part of :class:`~berth.service.engine.Engine`. No I/O.
"""

from __future__ import annotations

from berth.core.policies import policy_problem
from berth.service.engine_base import EngineBase
from berth.service.model import RequestError
from berth.service.replan import places_on_nodes

#: Why a pool policy is refused on real nodes (agents): a job's command runs on its
#: nodes, which a pool policy does not choose.
REAL_NODES_NEED_PLACEMENT = (
    "real nodes (node agents) need jobs placed on named nodes: use fcfs, easy, "
    "conservative, qops, msb or mrt"
)


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
        if not places_on_nodes(name, options) and not self.backend.in_process:
            raise RequestError("invalid", REAL_NODES_NEED_PLACEMENT, "policy")
        if not places_on_nodes(name, options) and not force:
            shaped = [
                r.id
                for r in self.jobs.values()
                if r.shape is not None and not r.final and r.partition == partition
            ]
            if shaped:
                raise RequestError(
                    "conflict",
                    f"policy {name} plans on a pool and cannot honour slots, but job(s) "
                    f"{', '.join(map(str, shaped[:10]))}{', ...' if len(shaped) > 10 else ''} "
                    "asked for slots (force=true switches anyway; they are then planned by "
                    "their totals)",
                    "policy",
                )
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
        self._config_dirty = True
        self._install(replan, now, partition=partition)
        self._emit("policy.changed", now, policy=name, options=dict(options), partition=partition)
        self._pass(now)
