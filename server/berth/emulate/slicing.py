"""Cut a trace into calendar months (``--slice month``), in the trace's own time zone.

Each month of the trace is replayed separately from an empty machine, as in Feitelson &
Mu'alem Weil (1998, Table 2). Submit times are seconds since the header's
``UnixStartTime``; the month of a job is the local calendar month of
``UnixStartTime + submit`` in the header's ``TimeZoneString`` (UTC if absent).
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from berth.emulate.workload import TraceJob, Workload


def by_month(workload: Workload) -> list[tuple[str, list[TraceJob]]]:
    """``[("1996-10", jobs), ...]`` in time order; jobs keep their submit times."""
    origin = workload.unix_start or 0
    zone = ZoneInfo(workload.timezone) if workload.timezone else UTC
    months: dict[str, list[TraceJob]] = {}
    for trace_job in workload.jobs:
        local = datetime.fromtimestamp(origin + trace_job.job.submit, tz=zone)
        months.setdefault(f"{local.year:04d}-{local.month:02d}", []).append(trace_job)
    return sorted(months.items())
