"""Reader for the Standard Workload Format (Parallel Workloads Archive).

Mapping (``docs/semantics.md``): processors are the resource ``cpus``, whose capacity
defaults to the header's MaxProcs (else MaxNodes); a job asks for its requested
processors (field 8) if positive, else its allocated processors (field 5); its estimate
is the requested time (field 9) if positive, else its runtime (field 4). Jobs with a
negative runtime or no processors are skipped and counted. Runtime and estimate are
clamped to at least 1 s. Jobs are sorted by (submit time, job id).

Two ways to the same rows: a fast one (the whole file at once, one regular expression
for every job line, whole numbers only), taken when every job line is 18 plain fields
of whole numbers, as the archive's cleaned traces are; otherwise the careful one, line
by line, which also reads ``-1.00``-style numbers and names the line and field of a bad
value. Both give identical workloads (a test checks it), so the speed of the first costs
nothing in the messages of the second. A job keeps its original line, split only when a
replay is written back as SWF: one string per job instead of eighteen.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from berth.core.model import MIN_DURATION, Job
from berth.emulate.traces.opening import read_text, reading
from berth.emulate.workload import TraceJob, Workload, WorkloadError

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
#: One job line of 18 fields separated by spaces or tabs; the groups are the whole line
#: and the fields of :data:`FIELD_NAMES`, in order. A header line starts with ``;``.
_PLAIN_JOB_LINE = re.compile(
    r"^[ \t]*(([^;\s]\S*)[ \t]+(\S+)[ \t]+\S+[ \t]+(\S+)[ \t]+(\S+)[ \t]+\S+[ \t]+\S+"
    r"[ \t]+(\S+)[ \t]+(\S+)[ \t]+\S+[ \t]+\S+[ \t]+(\S+)(?:[ \t]+\S+){6})[ \t]*$",
    re.MULTILINE,
)
_HEADER_LINE = re.compile(r"^[^\S\n]*;.*$", re.MULTILINE)

#: A job line as numbers: (line, job number, submit, run time, allocated processors,
#: requested processors, requested time, user id).
Row = tuple[str, int, int, int, int, int, int, int]


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
        plain = _plain(read_text(path))
    except WorkloadError:
        plain = None  # damaged: the careful reader names the line it broke at
    if plain is not None:
        try:
            return _workload(path, *plain)
        except _NotPlain:
            pass
    return _workload(path, *_careful_rows(path))


def _plain(text: str, chunk: int = 1 << 20) -> tuple[list[str], Iterator[Row]] | None:
    """The header lines and (lazily) the job rows of ``text`` by the fast path; ``None``
    for a text that is not ASCII. Reading the rows raises :class:`_NotPlain` at a job
    line the fast path does not read."""
    if not text.isascii():
        return None
    if "\r" in text:  # universal newlines, as the careful reader's text stream reads them
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    header_lines = [line.strip() for line in _HEADER_LINE.findall(text)]
    return header_lines, _plain_rows(text, chunk)


class _NotPlain(Exception):
    """A job line the fast path does not read: the careful one reads the file."""


def _plain_rows(text: str, chunk: int = 1 << 20) -> Iterator[Row]:
    """The job rows of an ASCII text with universal newlines, a chunk of about ``chunk``
    characters at a time (a quarter-million-job trace never holds all its fields as
    strings at once); raises :class:`_NotPlain` at a job line it does not read."""
    begin = 0
    while begin < len(text):
        end = text.find("\n", begin + chunk)
        end = len(text) if end < 0 else end + 1
        piece = text[begin:end]
        begin = end
        found = _PLAIN_JOB_LINE.findall(piece)
        job_lines = 0
        for line in piece.split("\n"):
            stripped = line.strip()
            if stripped and not stripped.startswith(";"):
                job_lines += 1
        if len(found) != job_lines:
            raise _NotPlain  # some job line is not 18 plain fields
        try:
            yield from [
                (line, int(a), int(b), int(c), int(d), int(e), int(f), int(g))
                for line, a, b, c, d, e, f, g in found
            ]
        except ValueError:
            raise _NotPlain from None  # e.g. "-1.00"


def _fast_rows(text: str) -> tuple[list[str], list[Row]] | None:
    """Header lines and job rows by the fast path in small chunks, or ``None`` where it
    declines (the tests hold it to the careful path's answers)."""
    plain = _plain(text, chunk=64)
    if plain is None:
        return None
    try:
        return plain[0], list(plain[1])
    except _NotPlain:
        return None


def _careful_rows(path: str | Path) -> tuple[list[str], list[Row]]:
    """Header lines and job rows, line by line; a bad line raises :class:`WorkloadError`
    naming the line and field."""
    header_lines: list[str] = []
    rows: list[Row] = []
    with reading(path) as lines:
        for line_number, line in lines:
            text = line.strip()
            if not text:
                continue
            if text.startswith(";"):
                header_lines.append(text)
                continue
            fields = text.split()
            if len(fields) != SWF_FIELDS:
                raise WorkloadError(
                    f"{path}:{line_number}: an SWF job line has {SWF_FIELDS} fields, found {len(fields)}"
                )
            where = f"{path}:{line_number}"
            number = [_number(where, fields, index) for index in (0, 1, 3, 4, 7, 8, 11)]
            rows.append((text, *number))  # type: ignore[arg-type]
    return header_lines, rows


def _workload(path: str | Path, header_lines: list[str], rows: Iterable[Row]) -> Workload:
    """The workload of parsed rows: jobs mapped and sorted, skips counted, header read."""
    jobs: list[TraceJob] = []
    skipped: Counter[str] = Counter()
    # Jobs share one resources mapping per processor count and one user string per user:
    # a quarter-million-job trace holds a few hundred of each, not a quarter million.
    resources_of: dict[int, dict[str, int]] = {}
    user_of: dict[int, str | None] = {}
    for line, job_id, submit, runtime, allocated, requested, requested_time, user in rows:
        if runtime < 0:
            skipped["runtime unknown (field 4 < 0)"] += 1
            continue
        processors = requested if requested > 0 else allocated
        if processors <= 0:
            skipped["no processors (fields 8 and 5 <= 0)"] += 1
            continue
        runtime = max(runtime, MIN_DURATION)
        estimate = max(requested_time if requested_time > 0 else runtime, MIN_DURATION)
        resources = resources_of.get(processors)
        if resources is None:
            resources = resources_of[processors] = {"cpus": processors}
        if user not in user_of:
            user_of[user] = str(user) if user >= 0 else None
        job = Job(job_id, submit, estimate, resources, None, user_of[user])
        jobs.append(TraceJob(job, runtime, line))
    jobs.sort(key=lambda t: (t.job.submit, t.job.id))
    header = _header(header_lines)
    return Workload(
        jobs=jobs,
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
