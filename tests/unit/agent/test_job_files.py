"""A root agent's shepherd opens a job's output files as the job's account: a file that
account may not write is refused (never handed over), and one it creates is its own."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from berth.agent.jobs import LocalJobs, job_key
from tests.unit.agent.test_shepherd import ended, spec

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="jobs change account under root only")


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory the job's account can reach (pytest's own is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="berth-files-", dir="/tmp"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def as_nobody(tmp: Path, command: str, **files: str) -> dict[str, Any]:
    nobody = pwd.getpwnam("nobody")
    account = {"uid": nobody.pw_uid, "gid": nobody.pw_gid, "groups": [nobody.pw_gid]}
    return spec(tmp, command) | account | files


def test_a_file_the_account_may_not_write_is_refused_and_stays_roots(
    tmp_path: Path, shared: Path
) -> None:
    secret = shared / "root-only"
    secret.write_text("root's\n")
    secret.chmod(0o644)
    jobs = LocalJobs(tmp_path / "agent")
    jobs.launch(1, 0, as_nobody(shared, "echo owned", stdout=str(secret)))
    end = ended(jobs, job_key(1, 0))
    assert end["state"] == "FAILED"
    assert "cannot open the output file" in end["reason"]
    assert "Permission denied" in end["reason"]
    assert secret.stat().st_uid == 0
    assert secret.read_text() == "root's\n"


def test_files_the_job_creates_are_its_accounts_and_devices_stay_roots(
    tmp_path: Path, shared: Path
) -> None:
    jobs = LocalJobs(tmp_path / "agent")
    out = shared / "out"
    jobs.launch(1, 0, as_nobody(shared, "id -u; echo oops >&2", stdout=str(out),
                                stderr=os.devnull))  # fmt: skip
    assert ended(jobs, job_key(1, 0))["state"] == "COMPLETED"
    nobody = pwd.getpwnam("nobody").pw_uid
    assert out.read_text() == f"{nobody}\n"
    assert out.stat().st_uid == nobody
    assert os.stat(os.devnull).st_uid == 0  # opened, never given away


def test_a_working_directory_the_account_cannot_enter_is_refused(tmp_path: Path) -> None:
    private = tmp_path / "private"  # under pytest's directory, which is root's alone
    private.mkdir(mode=0o700)
    jobs = LocalJobs(tmp_path / "agent")
    jobs.launch(1, 0, as_nobody(private, "true", stdout=os.devnull, stderr=os.devnull))
    end = ended(jobs, job_key(1, 0))
    assert end["state"] == "FAILED"
    assert end["reason"] == f"working directory {private} is not open to the job's account"
