"""The launcher: a small process that forks the agent's shepherds, handing back pidfds.

Forking costs in proportion to the memory of the process forked, and a shepherd is a
fork: of the agent (some 24 MB with its HTTP client and threads) it costs the agent and
the shepherd together a few milliseconds of CPU more than of a process that loaded
nothing but the shepherd (some 14 MB). So the agent starts one launcher (``python -m
berth.agent.launcher``) and asks it, over a Unix socket pair, for each shepherd: it
sends the job directory, the launcher forks the shepherd and sends back a *pidfd* of it
(``SCM_RIGHTS``). The pidfd names that process for good: the agent signals it
(``pidfd_send_signal``) and sees it exit (the pidfd becomes readable) with no race
against a reused pid, although the shepherd is the launcher's child, not its own.

The launcher reaps its children and leaves when the agent closes its end (the agent
exited, or was killed); the shepherds, in sessions of their own, keep running. If the
launcher dies, or does not answer within ``ANSWER_SECONDS`` (then it is killed), the
agent starts another; if none can be started the agent forks the shepherd itself.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from berth.agent.shepherd import spawn

#: The longest request or reply: a job directory's path.
MESSAGE_LIMIT = 4096
#: Seconds the agent waits for the launcher's answer before replacing it (a fork takes
#: milliseconds; a launcher that takes this long is stuck, or stopped).
ANSWER_SECONDS = 10.0


def serve(channel: socket.socket) -> None:
    """Answer requests on ``channel`` until the agent closes it: each request is a job
    directory, each reply the shepherd's pid with a pidfd of it, or ``error ...``."""

    def reap(_signal: int, _frame: object) -> None:
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass

    signal.signal(signal.SIGCHLD, reap)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the agent's to handle
    while request := channel.recv(MESSAGE_LIMIT):
        try:
            pid = spawn(Path(request.decode()))
            pidfd = os.pidfd_open(pid)  # not reaped yet: this pid is the shepherd
        except (OSError, UnicodeDecodeError) as error:
            channel.sendall(f"error {error}".encode()[:MESSAGE_LIMIT])
            continue
        try:
            socket.send_fds(channel, [str(pid).encode()], [pidfd])
        finally:
            os.close(pidfd)


class Launcher:
    """The agent's end: start shepherds through a launcher process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None

    def spawn(self, jobdir: Path) -> tuple[int, int]:
        """A shepherd for ``jobdir``: its pid and a pidfd of it (the caller closes it).
        Raises ``OSError`` when no launcher can start it."""
        with self._lock:
            for _attempt in range(2):  # a launcher that died is replaced once
                channel = self._channel or self._start()
                try:
                    channel.sendall(str(jobdir).encode())
                    message, fds, _flags, _address = socket.recv_fds(channel, MESSAGE_LIMIT, 1)
                except OSError:
                    message, fds = b"", []
                if fds:
                    return int(message), fds[0]
                if message.startswith(b"error "):
                    raise OSError(message[6:].decode(errors="replace"))
                self.close()
            raise OSError("the launcher stopped answering")

    def _start(self) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "berth.agent.launcher", str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
            )
        finally:
            theirs.close()
        ours.settimeout(ANSWER_SECONDS)  # a stuck launcher is replaced, not waited for
        self._channel = ours
        return ours

    def close(self) -> None:
        """Stop the launcher (its shepherds keep running): it leaves when its end of
        the channel closes; one that does not (stopped, stuck) is killed."""
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        if self._process is not None:
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None


def main() -> None:
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        raise SystemExit("usage: python -m berth.agent.launcher FD (started by berth agent)")
    serve(socket.socket(fileno=int(sys.argv[1])))


if __name__ == "__main__":
    main()
