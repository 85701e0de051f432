"""What the shepherd (:mod:`berth.agent.shepherd`) asks of the kernel for itself and its
job: to act as the job's account while it opens the job's files, to adopt the job's
orphaned descendants (a child subreaper) and go by its own name, and to signal the job's
process group. Linux calls through the standard library and ``ctypes``; each tolerates
what may already be gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from collections.abc import Iterator
from typing import IO, Any

PR_SET_CHILD_SUBREAPER = 36
PR_SET_NAME = 15


def become_subreaper() -> None:
    """Orphaned descendants of the job are re-parented to us, so we can find them; and
    the shepherd is named ``berth-shepherd`` (``ps -o comm``, ``top``), not after the
    agent it was forked from."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        libc.prctl(PR_SET_NAME, b"berth-shepherd", 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the process group still covers most
        pass


@contextlib.contextmanager
def as_account(spec: dict[str, Any]) -> Iterator[None]:
    """Act as the job's account (effective ids and groups) for the files opened for it,
    then be root again. A root shepherd that opened ``--output /etc/shadow`` itself and
    handed the file to the user would give the user that file; opened as the user, it
    is refused unless the user may write it, and one it creates is the user's. The
    shepherd has a single thread, so changing its ids changes nobody else's."""
    uid = spec.get("uid")
    if uid is None:  # the agent's own account runs the job
        yield
        return
    groups, egid = os.getgroups(), os.getegid()
    os.setgroups(spec.get("groups") or [spec["gid"]])
    os.setegid(spec["gid"])
    os.seteuid(uid)
    try:
        yield
    finally:
        os.seteuid(0)  # first: the real uid is still root's, so this is allowed
        os.setegid(egid)
        os.setgroups(groups)


def close_output(stdout: IO[bytes], stderr: IO[bytes]) -> None:
    """The shepherd's copies of the job's output files (the job has its own)."""
    stdout.close()
    if stderr is not stdout:
        stderr.close()


def signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
