"""What every client command shares: a reader that stops early is not an error; the job
states it reads."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from berth.service.model import JobState
from berth_client.cli_support import JOB_STATES, SLURM_STATE_CODES, job_states

# A command that prints more than a pipe holds to a reader that reads one line.
_COMMAND = """
import argparse, sys
from berth_client.cli_support import guard

def run(args):
    for number in range(200_000):
        print("job", number)
    return 0

sys.exit(guard(run)(argparse.Namespace(command="queue", url="http://127.0.0.1:1")))
"""


def test_a_reader_that_stops_early_gets_no_traceback_and_no_false_error() -> None:
    command = subprocess.Popen(
        [sys.executable, "-c", _COMMAND], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert command.stdout is not None
    assert command.stderr is not None
    assert command.stdout.readline() == b"job 0\n"
    command.stdout.close()  # as `| head -1` does
    errors = command.stderr.read().decode()
    command.stderr.close()
    assert command.wait(timeout=30) == 1
    assert errors == ""  # neither "cannot reach" nor "Exception ignored ... BrokenPipeError"


def test_the_client_knows_the_daemon_s_job_states_and_slurm_s_codes() -> None:
    """The client stands alone (it imports nothing of the daemon), so its list of states
    is its own: it must name exactly the daemon's, and its codes only those."""
    assert set(JOB_STATES) == {state.value for state in JobState}
    assert set(SLURM_STATE_CODES.values()) <= set(JOB_STATES)
    assert job_states(" pd, Running ,R,held") == ["PENDING", "RUNNING", "HELD"]
    with pytest.raises(argparse.ArgumentTypeError, match="unknown job state 'DONE'"):
        job_states("pd,done")
    with pytest.raises(argparse.ArgumentTypeError, match="at least one job state"):
        job_states(" , ")
