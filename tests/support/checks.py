"""Checks on replay results shared by the property tests and the real-trace tests."""

from __future__ import annotations

from collections.abc import Mapping

from berth.emulate.records import JobRecord


def peak_use(records: Mapping[int, JobRecord], capacity: Mapping[str, int]) -> dict[str, int]:
    """The highest simultaneous use of each resource, by sweeping start/end events."""
    events: list[tuple[int, int, dict[str, int]]] = []
    for r in records.values():
        if r.start is not None and r.end is not None:
            events.append((r.start, 1, dict(r.resources)))
            events.append((r.end, 0, dict(r.resources)))  # ends sort before starts
    use = dict.fromkeys(capacity, 0)
    peak = dict(use)
    for _, is_start, amounts in sorted(events, key=lambda e: (e[0], e[1])):
        for name, amount in amounts.items():
            use[name] += amount if is_start else -amount
            peak[name] = max(peak[name], use[name])
    return peak
