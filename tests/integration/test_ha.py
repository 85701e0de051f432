"""High availability with real processes on a real PostgreSQL: two ``berth serve --ha``
daemons, one leads and one redirects; ``kill -9`` of the leader loses no acknowledged
job and the standby takes over within its lease; a leader paused past its lease is
fenced when it wakes (its writes refused) and steps down."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import httpx
import pytest

from berth_client import BerthClient
from tests.integration.conftest import ALICE, DaemonProcess
from tests.support.waiting import wait_until

LEASE = 2.0


def role(daemon: DaemonProcess) -> str | None:
    """``leader``, ``standby``, or None if it does not answer."""
    try:
        body = httpx.get(f"{daemon.url}/healthz", timeout=1.0).json()
    except (httpx.HTTPError, ValueError):
        return None
    return {"ok": "leader", "standby": "standby"}.get(body.get("status"))


def roles(daemons: Iterable[DaemonProcess]) -> list[str]:
    """The daemons' roles, sorted (``down`` for one that does not answer)."""
    return sorted(role(daemon) or "down" for daemon in daemons)


@pytest.fixture
def pair(tmp_path: Path, pg_database: str) -> Iterator[list[DaemonProcess]]:
    extra = ("--ha", "--database-url", pg_database, "--lease-seconds", str(LEASE))
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    daemons = [DaemonProcess(tmp_path / name, *extra) for name in ("a", "b")]
    try:
        wait_until(lambda: roles(daemons) == ["leader", "standby"], 30, "a leader")
        yield daemons
    finally:
        for daemon in daemons:
            if daemon.process.poll() is None:
                os.kill(daemon.process.pid, signal.SIGCONT)
            daemon.stop()


def read_events(url: str, last_id: int, count: int) -> list[tuple[int, str]]:
    """``count`` events ``(id, kind)`` from the stream, resuming after ``last_id``."""
    headers = {"Authorization": f"Bearer {ALICE}", "Last-Event-ID": str(last_id)}
    events: list[tuple[int, str]] = []
    with httpx.stream("GET", f"{url}/v1/events", headers=headers, timeout=20) as stream:
        event_id = 0
        for line in stream.iter_lines():
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("event: "):
                events.append((event_id, line[7:]))
                if len(events) == count:
                    break
    return events


def submit_all(urls: str, count: int, tag: str) -> dict[int, int | None]:
    """``count`` jobs through the client (it follows redirects); id -> guaranteed start."""
    acknowledged = {}
    with BerthClient(urls, ALICE) as client:
        for index in range(count):
            answer = client.submit({"cpus": 8}, 600, name=f"{tag}{index}",
                                   idempotency_key=f"{tag}-{index}")  # fmt: skip
            acknowledged[answer["job"]["job_id"]] = answer["job"]["guaranteed_start"]
    return acknowledged


def test_kill_9_of_the_leader_loses_nothing_and_the_standby_takes_over(
    pair: list[DaemonProcess],
) -> None:
    leader = next(d for d in pair if role(d) == "leader")
    standby = next(d for d in pair if d is not leader)
    urls = f"{standby.url},{leader.url}"  # the standby first: its redirect is followed
    acknowledged = submit_all(urls, 12, "before")
    redirected = httpx.post(f"{standby.url}/v1/jobs", headers={"Authorization": f"Bearer {ALICE}"},
                            json={"resources": {"cpus": 1}, "time_limit": 60})  # fmt: skip
    assert redirected.status_code == 307
    assert redirected.headers["location"] == f"{leader.url}/v1/jobs"
    seen = read_events(leader.url, last_id=0, count=4)  # the first two jobs' events
    leader.kill()
    killed_at = time.monotonic()
    wait_until(lambda: role(standby) == "leader", 20, "the standby to lead")
    takeover = time.monotonic() - killed_at
    print(f"takeover after kill -9: {takeover:.2f} s")
    assert takeover <= LEASE + 5  # the lease runs out, then one acquisition period
    with BerthClient(urls, ALICE) as client:
        jobs = {j["job_id"]: j for j in client.jobs(limit=1000)["jobs"]}
        for job_id, guarantee in acknowledged.items():
            assert jobs[job_id]["guaranteed_start"] == guarantee  # kept, not re-made
        again = submit_all(urls, 12, "before")  # the same keys: nothing new is created
        assert again == acknowledged
    after = submit_all(urls, 3, "after")
    assert not set(after) & set(acknowledged)  # numbering goes on from the store
    # The event stream resumes on the new leader from the last id seen on the old one.
    resumed = read_events(standby.url, last_id=seen[-1][0], count=3)
    assert [i for i, _ in resumed] == list(range(seen[-1][0] + 1, seen[-1][0] + 4))


def test_a_paused_leader_is_fenced_when_it_wakes_and_steps_down(
    pair: list[DaemonProcess],
) -> None:
    leader = next(d for d in pair if role(d) == "leader")
    standby = next(d for d in pair if d is not leader)
    submit_all(leader.url, 2, "first")
    os.kill(leader.process.pid, signal.SIGSTOP)  # paused: it cannot renew its lease
    wait_until(lambda: role(standby) == "leader", 20, "the standby to lead")
    taken = submit_all(standby.url, 2, "second")
    os.kill(leader.process.pid, signal.SIGCONT)
    # It wakes believing it leads; the first write it tries is refused by the database.
    try:
        answer = httpx.post(f"{leader.url}/v1/jobs", headers={"Authorization": f"Bearer {ALICE}"},
                            json={"resources": {"cpus": 1}, "time_limit": 60}, timeout=5)  # fmt: skip
        assert answer.status_code != 201, answer.text
    except httpx.HTTPError:
        pass  # it already stepped down
    assert leader.process.wait(timeout=3 * LEASE + 5) == 3  # stepped down
    with BerthClient(standby.url, ALICE) as client:
        names = [j["name"] for j in client.jobs(limit=1000)["jobs"]]
    assert sorted(names) == ["first0", "first1", "second0", "second1"]
    assert set(taken) == {3, 4}  # numbered on after the paused leader's jobs


def test_ha_needs_postgresql(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="needs PostgreSQL"):
        DaemonProcess(tmp_path, "--ha")
