"""``berth authd``: a login node's identity service, as munge is Slurm's.

Run by root (or a dedicated service account) on each login node, it listens on a Unix
socket anyone on the node may connect to, learns each caller's uid from the kernel
(``SO_PEERCRED``: the caller cannot choose it), and answers with a token for that
uid's account name, signed with its key, valid for an hour by default. A caller never
names who they are, so no caller can obtain a token for another name. The daemons
trust the key's public half (``berth serve --trust-keys KEY.pub``) for users only: a
stolen login-node key can make any user's token, never an operator's.

One request per connection: optionally a JSON line ``{"lifetime": SECONDS}`` (at most
the configured lifetime), then one JSON line back: ``{"token", "user", "expires_at"}``
or ``{"error"}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import pwd
import signal
import socket
import struct
import time
from pathlib import Path
from typing import Any

log = logging.getLogger("berth.authd")

#: The longest a caller waits to be served, and the longest request line read.
REQUEST_SECONDS = 2.0
REQUEST_BYTES = 1024


def run_authd(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s berth authd: %(message)s")
    if not 60 <= args.lifetime <= 7 * 86400:
        print("berth authd: --lifetime must be between 60 s and 7 days", flush=True)
        return 2
    from berth.runtime.keys import private_key

    try:
        signer = private_key(args.key, f"authd:{args.name or socket.gethostname()}")
    except (OSError, ValueError) as error:
        print(f"berth authd: --key: {error}", flush=True)
        return 2
    log.info("key %s (give %s.pub to the daemons' --trust-keys)", signer.key_id, args.key)
    return asyncio.run(_serve(args.socket, signer, args.lifetime))


async def _serve(path: Path, signer: Any, lifetime: int) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_socket():
        path.unlink()  # a socket left by an authd that died
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _answer(reader, writer, signer, lifetime)

    server = await asyncio.start_unix_server(serve, path=str(path))
    os.chmod(path, 0o666)  # every local user may ask (who they are is the kernel's word)
    log.info("listening on %s", path)
    async with server:
        await stop.wait()
    path.unlink(missing_ok=True)
    return 0


def peer_uid(connection: socket.socket) -> tuple[int, int]:
    """The connected process's pid and uid, from the kernel."""
    credentials = connection.getsockopt(
        socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
    )
    pid, uid, _gid = struct.unpack("3i", credentials)
    return pid, uid


async def _answer(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, signer: Any, lifetime: int
) -> None:
    try:
        pid, uid = peer_uid(writer.get_extra_info("socket"))
        try:
            user = pwd.getpwuid(uid).pw_name
        except KeyError:
            reply: dict[str, object] = {"error": f"uid {uid} has no account name on this node"}
        else:
            asked = lifetime
            try:
                line = await asyncio.wait_for(reader.readline(), REQUEST_SECONDS)
                if line.strip():
                    asked = int(json.loads(line[:REQUEST_BYTES]).get("lifetime", lifetime))
            except (TimeoutError, ValueError, AttributeError, TypeError):
                pass  # no request, or not one we read: the default lifetime
            now = int(time.time())
            token, claims = signer.sign(user, "user", now, max(1, min(asked, lifetime)))
            reply = {"token": token, "user": user, "expires_at": claims.expires}
            log.info("token %s for %s (uid %d, pid %d)", claims.token_id, user, uid, pid)
        writer.write(json.dumps(reply).encode() + b"\n")
        await writer.drain()
    except (ConnectionError, OSError) as error:
        log.warning("a caller went away: %s", error)
    finally:
        writer.close()
