"""What every client command shares: a reader that stops early is not an error."""

from __future__ import annotations

import subprocess
import sys

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
