"""Reader for the Standard Workload Format (Parallel Workloads Archive).

Mapping (``docs/semantics.md``): processors are the resource ``cpus``, whose capacity
defaults to the header's MaxProcs (else MaxNodes); a job asks for its requested
processors (field 8) if positive, else its allocated processors (field 5); its estimate
is the requested time (field 9) if positive, else its runtime (field 4). Jobs with a
negative runtime or no processors are skipped and counted. Runtime and estimate are
clamped to at least 1 s. Jobs are sorted by (submit time, job id).

One reader for every file: the whole text is decompressed and decoded at once, each
line split on white space, and the seven fields read with ``int()``; only a line where
that fails (``-1.00``-style numbers, or a bad value) is read field by field, which also
names the line and field of a bad value. A compressed file that is damaged is read as a
stream instead, by the same parser, so that the error names the line it broke at. A job
keeps its original line, split only when a replay is written back as SWF: one string
per job instead of eighteen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from operator import itemgetter
from pathlib import Path

from berth.core.model import MIN_DURATION, jobs_of_columns
from berth.emulate.traces.opening import read_text, reading
from berth.emulate.workload import Workload, WorkloadError, trace_jobs

SWF_FIELDS = 18
#: The fields read, by their 0-based position: (number in the SWF definition, name).
FIELD_NAMES = {
    0: "1 (job number)",
    1: "2 (submit time)",
    3: "4 (run time)",
    4: "5 (allocated processors)",
    7: "8 (requested processors)",
    8: "9 (requested time)",
    11: "12 (user id)",
}
#: A job line as numbers: (line, job number, submit, run time, allocated processors,
#: requested processors, requested time, user id).
Row = tuple[str, int, int, int, int, int, int, int]
_LINE, _JOB_ID, _SUBMIT, _USER = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(7)


def _number(where: str, fields: list[str], index: int) -> int:
    """Field ``index`` as a whole number (SWF writes some as ``-1.00``)."""
    text = fields[index]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return int(float(text))
    except (ValueError, OverflowError):  # not a number, nan, inf
        raise WorkloadError(
            f"{where}: field {FIELD_NAMES[index]} must be a number, got {text[:40]!r}"
        ) from None


def _leading_int(value: str) -> int | None:
    """The first word of a header value as an int (``"338 (batch)"`` -> 338), if any."""
    words = value.split()
    return int(words[0]) if words and words[0].isdigit() else None


def read_swf(path: str | Path) -> Workload:
    """Read an SWF trace (``.swf`` or ``.swf.gz``) into a :class:`Workload`."""
    try:
        text = read_text(path)
    except WorkloadError:
        # Damaged: read it as a stream, which names the line it broke at.
        with reading(path) as numbered:
            return _workload(path, *_rows(path, (line for _, line in numbered)))
    return _workload(path, *_rows(path, _lines(text)))


def _lines(text: str) -> list[str]:
    """The lines of ``text`` as a text stream reads them (universal newlines), so that
    line numbers are the same whichever way a file is read."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


def _rows(path: str | Path, lines: Iterable[str]) -> tuple[list[str], list[Row]]:
    """Header lines and job rows of ``lines``; a bad line raises :class:`WorkloadError`
    naming the line and field."""
    header_lines: list[str] = []
    rows: list[Row] = []
    keep = rows.append
    for line_number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        if fields[0][0] == ";":  # the line, stripped, starts with ";"
            header_lines.append(line.strip())
            continue
        if len(fields) != SWF_FIELDS:
            raise WorkloadError(
                f"{path}:{line_number}: an SWF job line has {SWF_FIELDS} fields, found {len(fields)}"
            )
        try:  # whole numbers, as in the archive's cleaned traces: no call per field
            keep((line.strip(), int(fields[0]), int(fields[1]), int(fields[3]), int(fields[4]),
                  int(fields[7]), int(fields[8]), int(fields[11])))  # fmt: skip
        except ValueError:
            where = f"{path}:{line_number}"
            number = [_number(where, fields, index) for index in FIELD_NAMES]
            keep((line.strip(), *number))  # type: ignore[arg-type]
    return header_lines, rows


def _workload(path: str | Path, header_lines: list[str], rows: list[Row]) -> Workload:
    """The workload of parsed rows: jobs mapped and sorted, skips counted, header read.
    Built a column at a time (every job's submit, then every job's estimate, ...), not
    an object at a time."""
    # By submit time, then job number, then the file's order: two stable sorts on int
    # keys, which cost less than one on (submit, number) pairs made for every row.
    rows.sort(key=_JOB_ID)
    rows.sort(key=_SUBMIT)
    skipped: Counter[str] = Counter()
    usable = [row for row in rows if row[3] >= 0 and (row[5] if row[5] > 0 else row[4]) > 0]
    if len(usable) < len(rows):
        unknown = sum(1 for row in rows if row[3] < 0)
        if unknown:
            skipped["runtime unknown (field 4 < 0)"] = unknown
        if len(rows) - len(usable) - unknown:
            skipped["no processors (fields 8 and 5 <= 0)"] = len(rows) - len(usable) - unknown
    # Conditional expressions, not max(): a builtin call per job and column costs more.
    runtimes = [row[3] if row[3] >= MIN_DURATION else MIN_DURATION for row in usable]
    estimates = [
        row[6] if row[6] >= MIN_DURATION else runtime if row[6] <= 0 else MIN_DURATION
        for row, runtime in zip(usable, runtimes, strict=True)
    ]
    processors = [row[5] if row[5] > 0 else row[4] for row in usable]
    users = list(map(_USER, usable))
    # Jobs share one resources mapping per processor count and one user string per user:
    # a quarter-million-job trace holds a few hundred of each, not a quarter million.
    resources_of = {count: {"cpus": count} for count in set(processors)}
    user_of = {user: str(user) if user >= 0 else None for user in set(users)}
    jobs = jobs_of_columns(
        list(map(_JOB_ID, usable)),
        map(_SUBMIT, usable),
        estimates,
        map(resources_of.__getitem__, processors),
        map(user_of.__getitem__, users),
    )
    header = _header(header_lines)
    return Workload(
        jobs=trace_jobs(jobs, runtimes, map(_LINE, usable)),
        capacity=_capacity(header),
        skipped=skipped,
        unix_start=_leading_int(header.get("UnixStartTime", "")),
        timezone=header.get("TimeZoneString") or None,
        source=str(path),
        header=header_lines,
    )


def _header(lines: Sequence[str]) -> dict[str, str]:
    """``; Key: value`` header lines as a mapping (the first of a repeated key wins)."""
    header: dict[str, str] = {}
    for text in lines:
        key, sep, value = text.lstrip("; ").partition(":")
        if sep and key and key.strip() not in header:
            header[key.strip()] = value.strip()
    return header


def _capacity(header: dict[str, str]) -> dict[str, int]:
    for key in ("MaxProcs", "MaxNodes"):
        declared = _leading_int(header.get(key, ""))
        if declared is not None and declared > 0:
            return {"cpus": declared}
    return {}
