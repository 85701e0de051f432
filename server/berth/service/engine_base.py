"""What the engine's command mixins may use of the engine, declared once.

:class:`~berth.service.engine.Engine` is assembled from mixins (job commands, node
commands, partition commands) that keep its file about the scheduling steps; each mixin
reads and changes the engine's records through the attributes and methods declared
here, which the engine defines. Only type checkers read this. No I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections import Counter
    from collections.abc import Sequence

    from berth.core.decisions import Reject, Reserve
    from berth.core.dependencies import Bound, Need
    from berth.core.waits import Waits
    from berth.service.cluster import Cluster
    from berth.service.forecasts import Forecasts
    from berth.service.gang import GangPartition
    from berth.service.job_memory import JobMemory
    from berth.service.model import JobRecord, JobRequest, JobState, NodeRecord
    from berth.service.outbox import Outbox
    from berth.service.partition_specs import BackfillSpec
    from berth.service.planner import Planner
    from berth.service.ports import NodeBackend
    from berth.service.replan import Replan


class EngineBase:
    """The engine's state and internal steps, as its mixins see them."""

    if TYPE_CHECKING:
        cluster: Cluster
        backend: NodeBackend
        policy_name: str
        policy_options: dict[str, object]
        jobs: dict[int, JobRecord]
        pending: dict[int, JobRecord]
        running: dict[int, JobRecord]
        gang: dict[str, GangPartition]
        backfill: dict[str, BackfillSpec]
        planner: Planner
        node_tokens: dict[str, str]
        counters: Counter[str]
        outbox: Outbox
        forecasts: Forecasts
        memory: JobMemory

        next_id: int

        def validate(self, request: JobRequest, now: int) -> None: ...

        def enter_job(
            self,
            request: JobRequest,
            now: int,
            needs: Sequence[Need] = (),
            singleton: bool = False,
            task: tuple[int, int, bool] | None = None,
        ) -> JobRecord: ...

        def needs_of(
            self, request: JobRequest, first_id: int, count: int = 1
        ) -> tuple[list[Need], bool]: ...

        def array_needs(
            self, request: JobRequest, tasks: Sequence[int], limit: int | None
        ) -> list[list[Need]]: ...

        def singleton_needs(self, record: JobRecord) -> list[Need]: ...

        def wait_for(self, record: JobRecord, needs: Sequence[Need]) -> None: ...

        def cancel_job(self, job_id: int, now: int, reason: str) -> JobRecord: ...

        def node(self, name: str) -> NodeRecord: ...

        def job(self, job_id: int) -> JobRecord: ...

        def decide(self, record: JobRecord, now: int) -> Reserve | Reject | None: ...

        def withdraw(self, record: JobRecord, now: int) -> None: ...

        def replan(
            self,
            name: str,
            options: dict[str, object],
            now: int,
            keep_plan: bool,
            partition: str | None = None,
        ) -> Replan: ...

        def install(
            self,
            replan: Replan,
            now: int,
            restoring: bool = False,
            partition: str | None = None,
        ) -> None: ...

        def pool(self, partition: str | None = None) -> Cluster: ...

        def policy_spec(self, partition: str | None) -> tuple[str, dict[str, object]]: ...

        def lane_of_node(self, name: str) -> str | None: ...

        def schedule_pass(self, now: int) -> None: ...

        def admit(self, record: JobRecord, decision: Reserve | Reject | None, now: int) -> None: ...

        def _note_plan(self, record: JobRecord, decision: Reserve | None, now: int) -> None: ...

        def array_tasks(self, array_id: int) -> list[JobRecord]: ...

        def gang_of(self, record: JobRecord) -> GangPartition | None: ...

        waits: Waits

        def _held_back(self, record: JobRecord) -> Bound | None: ...

        def waiting_reason(self, bound: Bound) -> str: ...

        def _gang_reason(
            self,
            part: GangPartition,
            record: JobRecord,
            now: int,
            queued: set[int] | None = None,
        ) -> None: ...

        def end_job(self, record: JobRecord, state: JobState, end: int, reason: str) -> None: ...

        def requeue_ended(self, now: int, decide: bool = True) -> None: ...

        def set_state(self, record: JobRecord, state: JobState, reason: str) -> None: ...
