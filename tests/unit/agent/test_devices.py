"""The v2 device filter for real: an eBPF program attached to a cgroup v2 directory
refuses a process in it the devices it names and no other. Needs root and a cgroup v2
mount (this machine's has no controllers, which device filters do not need)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.agent import confine, devices
from berth.agent.confine import JobCgroup

#: ``/dev/zero`` is ``1:5``, ``/dev/null`` ``1:3``, ``/dev/full`` ``1:7``.
ZERO, NULL, FULL = (1, 5), (1, 3), (1, 7)


def _v2_mount() -> str | None:
    for line in Path("/proc/self/mounts").read_text().splitlines():
        kind, point = line.split()[2], line.split()[1]
        if kind == "cgroup2" and os.access(point, os.W_OK):
            return point
    return None


MOUNT = _v2_mount()
pytestmark = pytest.mark.skipif(
    MOUNT is None or os.geteuid() != 0 or not devices.filters_work(),
    reason="needs root, a writable cgroup v2 mount and eBPF device filters",
)

#: Joins the cgroup given, then says which of the devices named it could open.
OPENER = """
import sys
open(sys.argv[1] + "/cgroup.procs", "w").write(str(__import__("os").getpid()))
for device in sys.argv[2:]:
    try:
        open(device, "rb").close()
        print(device, "open")
    except PermissionError:
        print(device, "refused")
"""


@pytest.fixture
def cgroup() -> Iterator[str]:
    assert MOUNT is not None
    path = os.path.join(MOUNT, f"berth-devices-test-{uuid.uuid4().hex[:8]}")
    os.mkdir(path)
    yield path
    with contextlib.suppress(OSError):
        os.rmdir(os.path.join(path, "inner"))
    os.rmdir(path)  # the attached filter goes with it


def _opens(cgroup: str, *paths: str) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", OPENER, cgroup, *paths], capture_output=True,
                          text=True, check=True, timeout=30)  # fmt: skip
    return dict(line.split() for line in done.stdout.splitlines())


def test_a_filter_refuses_the_devices_it_names_and_no_other(cgroup: str) -> None:
    devices.deny(cgroup, [ZERO, FULL])
    assert _opens(cgroup, "/dev/zero", "/dev/full", "/dev/null") == {
        "/dev/zero": "refused", "/dev/full": "refused", "/dev/null": "open"}  # fmt: skip
    inner = os.path.join(cgroup, "inner")  # the job's freezer is a child: it inherits
    os.mkdir(inner)
    assert _opens(inner, "/dev/zero", "/dev/null") == {"/dev/zero": "refused",
                                                       "/dev/null": "open"}  # fmt: skip


def test_a_v2_job_cgroup_hides_the_gpus_it_was_not_given(
    cgroup: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the job's cgroup: GPUs are ``195:N``; here ``1:N`` stands for them, so
    that devices this machine has are refused (``1:5`` is ``/dev/zero``)."""
    monkeypatch.setattr(confine, "NVIDIA_MAJOR", ZERO[0])
    job = JobCgroup({"version": 2, "dirs": {"unified": cgroup}, "device_filter": True})
    job.create({"hidden_gpus": [ZERO[1]]})
    assert _opens(cgroup, "/dev/zero", "/dev/null") == {"/dev/zero": "refused",
                                                        "/dev/null": "open"}  # fmt: skip


def test_without_a_filter_every_device_opens(cgroup: str) -> None:
    assert _opens(cgroup, "/dev/zero", "/dev/null") == {"/dev/zero": "open", "/dev/null": "open"}
