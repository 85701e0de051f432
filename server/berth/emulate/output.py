"""Writers for replay results: per-job JSONL, SWF (as the archive fills it), and the
text report."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TextIO

from berth.core.dependencies import Need
from berth.emulate.metrics import REPORT_KEYS
from berth.emulate.records import JobRecord

#: SWF status codes: 1 completed, 0 failed (killed at its estimate), 5 cancelled (rejected,
#: or a dependency never satisfied).
_SWF_STATUS = {"completed": "1", "killed": "0", "rejected": "5", "queued": "5", "cancelled": "5"}


def write_jobs_jsonl(records: Iterable[JobRecord], stream: TextIO) -> None:
    """One JSON object per job: id, submit, start, end, resources, estimate, runtime,
    guarantee, status, reason."""
    for record in records:
        stream.write(json.dumps(record.as_dict(), separators=(",", ":")) + "\n")


def write_swf(records: Iterable[JobRecord], stream: TextIO, header: Sequence[str] = ()) -> None:
    """An SWF trace of the replay: wait (3), run (4), allocated processors (5) and status
    (11) come from the replay; the other fields are the input trace's, or -1."""
    stream.write("; Produced by berth emulate; wait, run, allocation and status are simulated\n")
    for line in header:
        stream.write(line + "\n")
    for record in records:
        fields = record.swf_line.split() if record.swf_line else ["-1"] * 18
        fields[0] = str(record.id)
        fields[1] = str(record.submit)
        # SWF knows processors only: other resources of a K-resource job are not written.
        processors = str(record.resources.get("cpus", -1))
        if record.swf_line is None:
            fields[7] = processors
            fields[8] = str(record.estimate)
        if record.start is None:
            fields[2], fields[3], fields[4] = "-1", "-1", "-1"
        else:
            fields[2] = str(record.start - record.submit)
            fields[3] = str(record.ran)
            fields[4] = processors
        fields[10] = _SWF_STATUS[record.status]
        stream.write(" ".join(fields) + "\n")


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, Mapping) and all(isinstance(v, Mapping) for v in value.values()):
        # priority classes: "political=1,user=1: jobs 5,695, avg_wait 1,234.50; ..."
        return "; ".join(
            f"{k}: " + ", ".join(f"{name} {_cell(v)}" for name, v in inner.items())
            for k, inner in value.items()
        )
    if isinstance(value, Mapping):
        return " ".join(f"{k}={v:.1%}" for k, v in value.items())
    return str(value)


def format_report(report: Mapping[str, object], title: str = "") -> str:
    """The report as an aligned two-column text table."""
    keys = [k for k in REPORT_KEYS if k in report] + [k for k in report if k not in REPORT_KEYS]
    width = max(len(k) for k in keys)
    lines = [title] if title else []
    lines += [f"  {key:<{width}}  {_cell(report[key])}" for key in keys]
    return "\n".join(lines)


def format_table(rows: Sequence[Mapping[str, object]], columns: Sequence[str]) -> str:
    """Rows of reports as a table with the given columns (for per-month output)."""
    cells = [[_cell(row.get(c, "")) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    out = ["  ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True))]
    out += ["  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(out)


def format_starts(records: Sequence[JobRecord], needs: Mapping[int, Sequence[Need]]) -> str:
    """When each job was guaranteed to start, started and ended, and what it waited
    for: a workflow's plan before it is submitted (``berth emulate --starts``)."""
    rows = [
        {
            "job": r.id,
            "waits_for": _needs_text(needs.get(r.id, ())),
            "guaranteed": "-" if r.guarantee is None else r.guarantee,
            "start": "-" if r.start is None else r.start,
            "end": "-" if r.end is None or r.start is None else r.end,
            "status": r.status,
        }
        for r in records
    ]
    return format_table(rows, ["job", "waits_for", "guaranteed", "start", "end", "status"])


def _needs_text(needs: Sequence[Need], shown: int = 3) -> str:
    """A job's needs, the first few and how many more."""
    text = ",".join(map(str, needs[:shown])) or "-"
    return text if len(needs) <= shown else f"{text} +{len(needs) - shown} more"
