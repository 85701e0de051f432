"""``berth serve`` (the daemon, optionally with a demo) and ``berth db upgrade|downgrade``.

The argument parsers load nothing heavy; the daemon's stack (uvicorn, FastAPI, pydantic,
SQLAlchemy, Alembic) is imported by the handlers, so other ``berth`` commands never pay
for it.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from berth.core.catalog import POLICY_NAMES
from berth.runtime.paths import path_arg

if TYPE_CHECKING:
    from pathlib import Path

    import uvicorn

    from berth.runtime.settings import Settings


def add_commands(commands: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    serve = commands.add_parser("serve")
    _settings_flags(serve)
    serve.add_argument("--host", help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (8080)")
    serve.add_argument(
        "--policy",
        help=f"scheduling policy: {', '.join(POLICY_NAMES)} (default conservative); on a "
        "fresh database only (then `berth partition set default --policy P`); gang "
        "scheduling runs in partitions of its own (`berth partition create`)",
    )
    serve.add_argument(
        "--policy-option",
        dest="policy_options",
        action="append",
        type=policy_option_arg,
        metavar="NAME=VALUE",
        help="one of the policy's options, e.g. selection=bb, k_factor=3, heuristic=llf "
        "(repeatable; each wins over the same key of the TOML's [policy_options])",
    )
    serve.add_argument("--nodes", help="emulated cluster, e.g. '16x cpus=32,mem_gb=128'")
    backend = serve.add_mutually_exclusive_group()
    backend.add_argument(
        "--emulate",
        dest="backend",
        action="store_const",
        const="emulated",
        help="emulated nodes (the default backend)",
    )
    backend.add_argument(
        "--agents",
        dest="backend",
        action="store_const",
        const="agents",
        help="real nodes: each runs `berth agent` and registers (make tokens with "
        "`berth admin node-token NAME`)",
    )
    serve.add_argument(
        "--agent-timeout", type=float, help="seconds of silence before a node is down (60)"
    )
    serve.add_argument(
        "--agent-grace", type=float, help="after a restart, seconds agents have to report (300)"
    )
    serve.add_argument(
        "--fence", dest="fence_seconds", type=float, help="agents cut off this long kill (1800)"
    )
    serve.add_argument("--kill-grace", type=float, help="SIGTERM to SIGKILL, seconds (30)")
    serve.add_argument("--sync-wait", type=float, help="longest an agent's sync is held (10)")
    serve.add_argument("--time-scale", type=float, help="run the emulated cluster N times faster")
    serve.add_argument("--tokens", help="TOKEN:USER:ROLE,... (default: generated in the data dir)")
    serve.add_argument(
        "--token-key",
        type=path_arg,
        help="private key for the tokens this daemon issues (default: made in the data dir)",
    )
    serve.add_argument(
        "--trust-keys",
        help="public keys of login nodes' berth authd (PEM files, comma-separated): "
        "their users' tokens are accepted",
    )
    serve.add_argument("--log-level", choices=["critical", "error", "warning", "info", "debug"])
    serve.add_argument(
        "--log-format",
        choices=["text", "json"],
        help="text (default), or JSON lines for log shippers",
    )
    serve.add_argument(
        "--event-retention-days", type=float, help="prune events older than this (7)"
    )
    serve.add_argument(
        "--max-body-bytes", type=int, help="largest request body read, 413 above (1048576)"
    )
    serve.add_argument(
        "--submit-rate", type=float, help="submits a second per user token, 0 for none (100)"
    )
    serve.add_argument("--submit-burst", type=int, help="submits at once above the rate (1000)")
    serve.add_argument(
        "--access-log",
        action="store_true",
        default=None,
        help="log every HTTP request (off: the daemon logs what happens, not each request)",
    )
    serve.add_argument(
        "--stall-report-ms",
        type=float,
        help="log what held the event loop when a turn waited longer than this (off)",
    )
    serve.add_argument(
        "--ha",
        action="store_true",
        default=None,
        help="high availability: run as one of several daemons on one PostgreSQL",
    )
    serve.add_argument("--lease-seconds", type=float, help="HA: leader lease (6)")
    serve.add_argument("--advertise-url", help="HA: this daemon's URL for redirects")
    serve.add_argument("--demo", action="store_true", help="submit a few demo jobs once up")

    db = commands.add_parser("db")
    actions = db.add_subparsers(dest="db_command", required=True)
    up = actions.add_parser("upgrade", help="apply migrations (to head by default)")
    _settings_flags(up)
    up.add_argument("--revision", default="head")
    down = actions.add_parser("downgrade", help="revert migrations to a revision ('base': all)")
    _settings_flags(down)
    down.add_argument("--revision", required=True)
    return {"serve": run_serve, "db": run_db}


def _settings_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=path_arg, help="TOML settings file")
    parser.add_argument(
        "--data-dir", type=path_arg, help="the database and tokens' folder (./berth-data)"
    )
    parser.add_argument("--database-url", help="e.g. postgresql://user@host/berth")


def _settings(args: argparse.Namespace) -> Settings:
    from berth.runtime.settings import load_settings

    flags = {
        name: getattr(args, name, None)
        for name in (
            "data_dir",
            "database_url",
            "host",
            "port",
            "policy",
            "policy_options",
            "nodes",
            "time_scale",
            "tokens",
            "token_key",
            "trust_keys",
            "log_level",
            "log_format",
            "backend",
            "agent_timeout",
            "agent_grace",
            "fence_seconds",
            "kill_grace",
            "sync_wait",
            "event_retention_days",
            "max_body_bytes",
            "submit_rate",
            "submit_burst",
            "stall_report_ms",
            "access_log",
            "ha",
            "lease_seconds",
            "advertise_url",
        )
    }
    if flags["policy_options"] is not None:
        flags["policy_options"] = dict(flags["policy_options"])
    return load_settings(args.config, **flags)


def policy_option_arg(text: str) -> tuple[str, object]:
    """argparse ``type=`` of ``--policy-option``: ``NAME=VALUE``, read as ``berth
    partition``'s ``--option`` is (:func:`berth_client.cli_support.option_pair`)."""
    from berth_client.cli_support import option_pair

    return option_pair(text)


def run_db(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from berth.runtime.startup_problems import database_problem, shown_url
    from berth.store.migrate import downgrade, upgrade

    try:
        settings = _settings(args)
    except (ValidationError, ValueError) as error:
        print(f"berth db: {error}", file=sys.stderr)
        return 2
    url = settings.url()
    try:
        if args.db_command == "upgrade":
            upgrade(url, args.revision)
        else:
            downgrade(url, args.revision)
    except Exception as error:
        problem = database_problem(error, url)
        if problem is None:
            raise
        print(f"berth db: {problem}", file=sys.stderr)
        return 2
    print(f"database {shown_url(url)}: {args.db_command} to {args.revision} done")
    return 0


def run_serve(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from berth.runtime.heap import freeze_after_full_collections
    from berth.runtime.logs import configure
    from berth.runtime.startup_problems import database_problem, listen_problem, shown_url

    # (For this process only: a test that builds the daemon in its own keeps its collector.)
    freeze_after_full_collections()

    settings: Settings | None = None
    try:
        settings = _settings(args)
        configure(settings.log_level, settings.log_format)
        cannot_listen = listen_problem(settings.host, settings.port)
        if cannot_listen is not None:
            raise ValueError(cannot_listen)
        # The web and database stack (two seconds of imports) only once the settings
        # hold: a mistyped option, policy name or token entry is answered at once
        # (option values are checked when the policy is built).
        from berth.core.policies import policy_problem

        unknown = policy_problem(settings.policy, settings.policy_options)
        if unknown is not None:
            raise ValueError(unknown[1])
        settings.configured_tokens()
        if settings.ha:
            from berth.runtime.ha import run_ha

            return run_ha(settings)
        from berth.runtime.bootstrap import build

        built = build(settings)
    except (ValidationError, ValueError, OSError) as error:
        print(f"berth serve: {error}", file=sys.stderr)
        return 2
    except Exception as error:
        problem = None if settings is None else database_problem(error, settings.url())
        if problem is None:
            raise
        print(f"berth serve: {problem}", file=sys.stderr)
        return 2
    url = f"http://{settings.host}:{settings.port}"
    engine = built.daemon.engine
    kind = "agent" if settings.backend == "agents" else "emulated"
    print(
        f"Berth on {url} — policy {engine.partitions.policy_name}, {len(engine.cluster.nodes)} "
        f"{kind} nodes {engine.cluster.full_capacity()}, database {shown_url(settings.url())}"
        + (f", time x{settings.time_scale:g}" if settings.time_scale != 1 else ""),
        flush=True,
    )
    kept = stored_policy_note(
        settings, engine.partitions.policy_name, engine.partitions.policy_options
    )
    if kept is not None:
        print(kept, flush=True)
    if built.tokens_note:
        print(built.tokens_note, flush=True)
    print(f"Dashboard: {url}/ui", flush=True)
    from berth.api.principals import Role
    from berth.runtime.web_server import DaemonServer, server_config

    server = DaemonServer(server_config(built.app, settings), built.daemon)
    agents: list[Any] = []
    if args.demo:
        token = built.daemon.tokens.token_for(Role.USER)
        operator = built.daemon.tokens.token_for(Role.OPERATOR)
        if settings.backend == "agents":
            demo_args = (server, url, operator, token, settings.data_dir, agents)
            threading.Thread(target=_agents_demo, args=demo_args, daemon=True).start()
        else:
            threading.Thread(target=_demo, args=(server, url, token), daemon=True).start()
    try:
        server.run()
    except KeyboardInterrupt:  # Ctrl-C: uvicorn has shut down cleanly and re-raised it
        pass
    finally:
        if agents:
            from berth.runtime.agents_demo import stop_agents

            stop_agents(agents)
    return 0


def stored_policy_note(settings: Settings, policy: str, options: dict[str, object]) -> str | None:
    """A line for a daemon that resumes a database whose policy (set at its first start
    or by ``PUT /v1/admin/policy``) is not the one its settings name, or ``None``: the
    settings' policy applies to a fresh database only, and a ``--policy`` that seemed to
    be ignored would be worse than one that is said to be."""
    if (policy, options) == (settings.policy, dict(settings.policy_options)):
        return None
    wanted = settings.policy + (
        f" {dict(settings.policy_options)}" if settings.policy_options else ""
    )
    stored = policy + (f" {options}" if options else "")
    return (
        f"policy: the database's {stored} is kept; the settings' {wanted} applies to a fresh "
        "database only (change it with `berth partition set default --policy P`)"
    )


def _agents_demo(
    server: uvicorn.Server,
    url: str,
    operator: str | None,
    user: str | None,
    data_dir: Path,
    agents: list[Any],
) -> None:
    """Two local agents, real commands, their ends and output (``make run``)."""
    import http.client

    from berth.runtime.agents_demo import run_demo, start_agents
    from berth.runtime.logs import events_muted
    from berth_client import BerthError

    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    if operator is None or user is None:
        print("demo: needs the generated tokens (run without --tokens)", file=sys.stderr)
        return
    try:
        with events_muted():
            agents.extend(start_agents(url, operator, data_dir))
            lines = run_demo(url, operator, user, data_dir)
    except (BerthError, OSError, http.client.HTTPException) as error:
        print(f"demo failed: {error}", file=sys.stderr, flush=True)
        return
    print("\n".join(lines), flush=True)
    # Under root the agents run jobs as nobody, who cannot write here: a folder it can.
    chdir = " --chdir /tmp" if os.geteuid() == 0 else ""
    print(
        f"""
Try it (the user token is shown above):
  export BERTH_URL={url} BERTH_TOKEN={user}
  .venv/bin/berth submit -r cpus=1,mem_gb=1 -t 60{chdir} --command 'hostname; sleep 5'
  .venv/bin/berth queue                     # jobs with start times, like squeue --start
  .venv/bin/berth show JOBID                # one job (the number submit printed)
  BERTH_TOKEN={operator} .venv/bin/berth admin agents   # the agents and launch delays
The dashboard: {url}/ui (sign in with a token above; the operator's shows the actions).
A real node runs the lean agent (pip install ./agent): `berth-agent --url {url} --token-file FILE` (docs/agents.md).
Ctrl-C stops the daemon and the two demo agents.
""",
        flush=True,
    )


def _demo(server: uvicorn.Server, url: str, token: str | None) -> None:
    """Once the server is up: a few jobs through the real API, then how to look at them."""
    import http.client

    from berth.runtime.logs import events_muted
    from berth_client import BerthClient, BerthError
    from berth_client.cli_support import start_words, when

    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        with events_muted(), BerthClient(url, token) as client:
            now = client.cluster()["now"]
            jobs = [
                ("big-sim", {"cpus": 384, "mem_gb": 1024}, 3600, None, 2400),
                ("analysis", {"cpus": 256, "mem_gb": 512}, 1800, None, 1500),
                ("quick-test", {"cpus": 64, "mem_gb": 64}, 600, None, 300),
                ("deadline-run", {"cpus": 128, "mem_gb": 256}, 900, now + 3 * 3600, 800),
                ("too-tight", {"cpus": 512, "mem_gb": 2048}, 3600, now + 4000, 3600),
            ]
            print("\nDemo: submitting five jobs through the API", flush=True)
            for name, resources, limit, deadline, runtime in jobs:
                answer = client.submit(
                    resources, limit, name=name, deadline=deadline, emulated_runtime=runtime
                )
                job = answer["job"]
                verdict = "accepted" if answer["accepted"] else "REJECTED"
                print(
                    f"  job {job['job_id']} {name:12} {verdict:8} {job['job_state']:8} "
                    f"{start_words(job, now)}  ({answer['reason']})",
                    flush=True,
                )
            plan = client.what_if({"cpus": 512}, 600)
            print(
                f"  what-if a 512-cpu, 10-minute job: predicted start "
                f"{when(plan['predicted_start'], now)}, guaranteed {when(plan['guaranteed_start'], now)}",
                flush=True,
            )
    except (BerthError, OSError, http.client.HTTPException) as error:
        print(f"demo failed: {error}", file=sys.stderr, flush=True)
        return
    print(
        f"""
Try it (the user token is shown above):
  export BERTH_URL={url} BERTH_TOKEN={token}
  .venv/bin/berth queue                     # jobs with start times, like squeue --start
  .venv/bin/berth show 2                    # one job and what blocks it
  curl -s -H "Authorization: Bearer $BERTH_TOKEN" $BERTH_URL/v1/jobs/2/start
  curl -s -N -H "Authorization: Bearer $BERTH_TOKEN" $BERTH_URL/v1/events
  open {url}/ui for the dashboard (sign in with a token above; the operator's shows
  the actions), {url}/docs for the OpenAPI documentation; Ctrl-C stops the daemon.
""",
        flush=True,
    )
