"""``MemoryStore``: the Store port kept in a dict, for dry runs and unit tests."""

from __future__ import annotations

import copy

from berth.service.model import JobRecord
from berth.service.ports import Changes, CommitMode, EventRow, JobFilter, Snapshot, UsageBy
from berth.service.rows import event_from_row, job_from_row, node_from_row, tally_usage


class MemoryStore:
    commits: CommitMode = "loop"  # no I/O

    def __init__(self) -> None:
        self.jobs: dict[int, dict[str, object]] = {}
        self.nodes: dict[str, dict[str, object]] = {}
        self.config: dict[str, object] = {}
        self.events: list[dict[str, object]] = []
        self.saves = 0

    def load(self) -> Snapshot:
        return Snapshot(
            jobs=[job_from_row(copy.deepcopy(row)) for row in self.jobs.values()],
            nodes=[node_from_row(copy.deepcopy(row)) for row in self.nodes.values()],
            config=copy.deepcopy(self.config),
            last_event_id=max((int(str(e["id"])) for e in self.events), default=0),
            last_job_id=max(self.jobs, default=0),
        )

    def save(self, changes: Changes) -> None:
        self.jobs.update(copy.deepcopy(changes.jobs))
        self.nodes.update(copy.deepcopy(changes.nodes))
        self.config.update(copy.deepcopy(changes.config))
        self.events.extend(copy.deepcopy(changes.events))
        self.saves += 1

    async def save_async(self, changes: Changes) -> None:
        self.save(changes)

    def job(self, job_id: int) -> JobRecord | None:
        row = self.jobs.get(job_id)
        return None if row is None else job_from_row(copy.deepcopy(row))

    def jobs_by_keys(self, keys: list[tuple[str, str]]) -> list[JobRecord]:
        wanted = set(keys)
        return [job_from_row(copy.deepcopy(r)) for r in self.jobs.values()
                if (r["user"], r["idempotency_key"]) in wanted]  # fmt: skip

    def usage(
        self, since: int, until: int, by: UsageBy, where: JobFilter
    ) -> dict[str, dict[str, float]]:
        ended = [(str(r.get(by) or r["user"]), r["resources"], r["start_time"], r["end_time"],
                  r.get("usage"))
                 for r in self.jobs.values() if where.admits(r)
                 and isinstance(r["start_time"], int) and isinstance(r["end_time"], int)
                 and since <= r["end_time"] < until]  # fmt: skip
        return tally_usage(ended)  # type: ignore[arg-type] # rows hold JSON values

    def history(self, where: JobFilter, before: int | None, limit: int) -> list[JobRecord]:
        rows = [r for i, r in sorted(self.jobs.items(), reverse=True)
                if where.admits(r) and (before is None or i < before)]  # fmt: skip
        return [job_from_row(copy.deepcopy(r)) for r in rows[:limit]]

    def events_after(self, after: int, limit: int, job_id: int | None = None) -> list[EventRow]:
        rows = [e for e in self.events if int(str(e["id"])) > after
                and (job_id is None or e["job_id"] == job_id)][:limit]  # fmt: skip
        return [event_from_row(copy.deepcopy(row)) for row in rows]

    def prune_events(self, before: float) -> int:
        kept = [e for e in self.events if float(str(e["recorded_at"])) >= before]
        pruned, self.events = len(self.events) - len(kept), kept
        return pruned
