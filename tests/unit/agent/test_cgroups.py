"""Finding cgroups and writing a job's limits, on cgroup v2 as on a file tree.

This machine's v2 hierarchy has no controllers, so the v2 layout is checked on a tree
of plain files shaped like one (what is written where); v1 runs for real in
``tests/integration/agents/test_confinement.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from berth.agent import cgroups, devices
from berth.agent.confine import JobCgroup


@pytest.fixture(autouse=True)
def _no_device_filters(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether this kernel takes eBPF device filters is the machine's; here it is
    fixed (``test_v2_hides_gpus_with_a_device_filter_where_the_kernel_takes_one``)."""
    monkeypatch.setattr(devices, "filters_work", lambda: False)


def _v2_tree(tmp_path: Path, own: str = "/svc") -> tuple[Path, Path, Path]:
    root = tmp_path / "cg"
    here = root / own.lstrip("/")
    here.mkdir(parents=True)
    (here / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (here / "cgroup.procs").write_text("123\n456\n")
    (here / "cgroup.subtree_control").write_text("")
    mounts = tmp_path / "mounts"
    mounts.write_text(f"cgroup2 {root} cgroup2 rw,nosuid 0 0\n")
    proc = tmp_path / "cgroup"
    proc.write_text(f"0::{own}\n")
    return here, mounts, proc


def test_v2_moves_the_agents_cgroup_into_a_leaf_and_enables_the_controllers(
    tmp_path: Path,
) -> None:
    here, mounts, proc = _v2_tree(tmp_path)
    probe = cgroups.probe("n1", mounts, proc)
    layout = probe.layout
    assert layout is not None, probe.reason
    assert layout.version == 2
    assert layout.bases == {"unified": str(here / "berth-n1")}
    assert layout.homes == {"unified": str(here / cgroups.V2_LEAF)}
    assert layout.controllers == ("cpuset", "memory", "pids", "cpu", "freeze")
    # The agent's processes left for the leaf (a v2 cgroup that hands controllers to
    # its children holds none); the last one written is what a plain file keeps.
    assert (here / cgroups.V2_LEAF / "cgroup.procs").read_text() == "456"
    enabled = "+cpuset +memory +pids +cpu"
    assert (here / "cgroup.subtree_control").read_text() == enabled
    assert (here / "berth-n1" / "cgroup.subtree_control").read_text() == enabled
    assert layout.describe() == "cgroup v2: cpuset, memory, pids, cpu, freeze"
    job = str(here / "berth-n1" / "job-3.0")
    assert layout.spec("3.0") == {
        "version": 2,
        "dirs": {"unified": job},
        "homes": {"unified": str(here / cgroups.V2_LEAF)},
        "freezer": f"{job}/held",  # made on the first suspend, inside the job's cgroup
        "device_filter": False,
    }
    assert cgroups.bases_of("n1", mounts, proc) == [str(here / "berth-n1")]


def test_v2_hides_gpus_with_a_device_filter_where_the_kernel_takes_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _here, mounts, proc = _v2_tree(tmp_path)
    monkeypatch.setattr(devices, "filters_work", lambda: True)
    layout = cgroups.probe("n1", mounts, proc).layout
    assert layout is not None
    assert layout.controllers[-1] == "devices"
    assert layout.spec("3.0", devices=True)["device_filter"] is True
    assert layout.spec("3.0")["device_filter"] is False  # no GPU to hide
    attached: list[tuple[str, list[tuple[int, int]]]] = []
    monkeypatch.setattr(devices, "deny", lambda cgroup, denied: attached.append((cgroup, denied)))
    job = tmp_path / "job"
    job.mkdir()
    JobCgroup(layout.spec("3.0", devices=True) | {"dirs": {"unified": str(job)}}).create(
        {"hidden_gpus": [0, 2]}
    )
    assert attached == [(str(job), [(195, 0), (195, 2)])]


def test_v2_in_the_root_cgroup_needs_no_leaf(tmp_path: Path) -> None:
    here, mounts, proc = _v2_tree(tmp_path, own="/")
    layout = cgroups.probe("n1", mounts, proc).layout
    assert layout is not None
    assert layout.homes == {"unified": str(here)}
    assert not (here / cgroups.V2_LEAF).exists()


def test_no_controller_offered_means_unconfined_with_the_reason(tmp_path: Path) -> None:
    here, mounts, proc = _v2_tree(tmp_path)
    (here / "cgroup.controllers").write_text("")
    probe = cgroups.probe("n1", mounts, proc)
    assert probe.layout is None
    assert probe.describe() == "unconfined: no cgroup controller is mounted"


def test_a_v2_job_gets_its_cores_quota_memory_without_swap_and_task_limit(
    tmp_path: Path,
) -> None:
    job = tmp_path / "job-7.0"
    job.mkdir()
    for name in ("cpuset.cpus", "cpu.max", "memory.max", "memory.swap.max", "pids.max"):
        (job / name).write_text("")
    cgroup = JobCgroup({"version": 2, "dirs": {"unified": str(job)}})
    cgroup.create(
        {"cores": [2, 3], "cpus": 2, "memory_bytes": 2**30, "pids_max": 64, "hidden_gpus": [1]}
    )
    assert (job / "cpuset.cpus").read_text() == "2,3"
    assert (job / "cpu.max").read_text() == "200000 100000"
    assert (job / "memory.max").read_text() == str(2**30)
    assert (job / "memory.swap.max").read_text() == "0"
    assert (job / "pids.max").read_text() == "64"
    assert not (job / "devices.deny").exists()  # v2 hides devices with eBPF, not a file


def test_a_v2_jobs_usage_and_oom_kills_are_read_from_its_files(tmp_path: Path) -> None:
    job = tmp_path / "job-7.0"
    job.mkdir()
    (job / "memory.peak").write_text("1048576\n")
    (job / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    usage = JobCgroup({"version": 2, "dirs": {"unified": str(job)}}).usage()
    # CPU time is the shepherd's to count (from its reaped processes), not the cgroup's.
    assert usage == {"peak_memory_bytes": 1048576, "oom_kills": 1}


def test_cores_free_ones_first_then_the_least_shared() -> None:
    cores = (0, 1, 2, 3)
    assert cgroups.pick_cores(cores, {}, 2) == [0, 1]
    assert cgroups.pick_cores(cores, {0: 1, 1: 1}, 2) == [2, 3]
    assert cgroups.pick_cores(cores, {0: 2, 1: 1, 2: 1, 3: 1}, 1) == [1]
    assert cgroups.pick_cores(cores, {}, 9) == [0, 1, 2, 3]  # never more than there are
    assert cgroups.pick_cores(cores, {}, 0) == []


def test_cpu_lists_are_parsed_like_the_kernel_writes_them() -> None:
    assert cgroups.parse_cpu_list("0-3,8,10-11\n") == (0, 1, 2, 3, 8, 10, 11)
    assert cgroups.parse_cpu_list("") == ()


def test_v2_under_a_delegated_parent_puts_the_jobs_beside_the_agent(tmp_path: Path) -> None:
    """systemd's DelegateSubgroup=agent: the agent runs in service/agent, a leaf; the
    service's cgroup holds no process, so the jobs' base goes there and the agent's own
    cgroup is left alone (a restarted agent is placed in it again)."""
    here, mounts, proc = _v2_tree(tmp_path, own="/svc/agent")
    service = here.parent
    (service / "cgroup.controllers").write_text("cpuset cpu memory pids\n")
    (service / "cgroup.procs").write_text("")
    (service / "cgroup.subtree_control").write_text("")
    layout = cgroups.probe("n1", mounts, proc).layout
    assert layout is not None
    assert layout.bases == {"unified": str(service / "berth-n1")}
    assert layout.homes == {"unified": str(here)}
    assert (here / "cgroup.subtree_control").read_text() == ""  # untouched
    assert (service / "cgroup.subtree_control").read_text() == "+cpuset +memory +pids +cpu"
    assert not (here / cgroups.V2_LEAF).exists()
