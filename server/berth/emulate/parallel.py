"""Many replays at once, on Dask: the reproductions' runs and ``berth emulate --sweep``.

``on_dask(target, workers)`` gives a ``distributed.Client`` on one of three clusters:

* ``None`` or ``local`` — a ``LocalCluster`` of ``workers`` processes of one thread
  each on this machine (the embedded default, as a process pool was);
* ``tcp://host:port`` (or ``tls://``) — a Dask scheduler someone runs;
* ``berth://host:port`` (``berth+https://`` for TLS) — a
  :class:`~berth_client.dask.BerthCluster` on that Berth daemon: ``workers`` Berth jobs
  of one cpu each, cancelled at the end (the token from ``BERTH_TOKEN``; other options,
  such as ``memory``, ``walltime``, ``python`` or ``job-script-prologue``, from Dask's
  configuration under ``jobqueue.berth``; by default the workers' ``PYTHONPATH`` is this
  process's path, for nodes that share its file system).

:func:`run_all` submits one task per item and yields ``(item, result)`` as they finish,
so a caller can save each at once; it stops with the reason when a Berth cluster's
worker jobs have all ended without a worker (their node refused to start them, say),
where it would otherwise wait for ever. A run is a pure function of its item: the results
are the same whichever cluster runs them. Dask is imported only here, when asked for
(``pip install 'berth[dask]'``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from distributed import Client, SpecCluster

T = TypeVar("T")
R = TypeVar("R")

#: How long :func:`run_all` waits for a result before it asks whether the cluster
#: will ever have a worker.
STALL_SECONDS = 5.0


@contextmanager
def on_dask(target: str | None, workers: int) -> Iterator[Client]:
    """A Dask client on ``target`` (see the module), closed (and its cluster with it)
    at the end."""
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise SystemExit(
            "running on Dask needs the dask extra: pip install 'berth[dask]'"
        ) from None
    cluster: SpecCluster
    if target in (None, "local"):
        # Dask's statistical profiler samples each worker's stack every 10 ms, which a
        # replay has no use for (its cost here was within the noise of single runs).
        with dask.config.set({"distributed.worker.profile.enabled": False}):
            # No dashboard; the scheduler's own HTTP endpoint (it has one even so) on a
            # free port, not 8787: another cluster on this host (a second sweep, a
            # reproduction running) must not make this one fail or warn.
            cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            )
    elif target.startswith(("berth://", "berth+https://")):
        from berth_client.dask import BerthCluster

        scheme = "https" if target.startswith("berth+https://") else "http"
        prologue = [
            f"export PYTHONPATH={':'.join(p for p in sys.path if p)}",
            "export DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False",  # as locally
        ]
        cluster = BerthCluster(
            url=f"{scheme}://{target.split('://', 1)[1]}",
            cores=1,
            memory=_berth_setting("memory") or "2GiB",
            job_script_prologue=_berth_setting("job-script-prologue") or prologue,
        )
        cluster.scale(jobs=workers)  # type: ignore[no-untyped-call]
    elif "://" in target:
        with Client(target) as client:  # type: ignore[no-untyped-call]
            yield client
        return
    else:
        raise SystemExit(f"--dask {target!r}: expected local, tcp://HOST:PORT or berth://HOST:PORT")
    with cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]
        yield client


def _berth_setting(key: str) -> Any:
    import dask

    return dask.config.get(f"jobqueue.berth.{key}", None)


def run_all(
    client: Client, function: Callable[[T], R], items: Sequence[T]
) -> Iterator[tuple[T, R]]:
    """``(item, function(item))`` for every item, as each finishes."""
    from distributed import wait

    futures = {client.submit(function, item, pure=False): item for item in items}
    # A cluster that can tell it will never have a worker (a BerthCluster whose worker
    # jobs all failed) is asked whenever nothing finished for a while: waiting on it
    # would wait for ever.
    ended = getattr(getattr(client, "cluster", None), "ended_without_workers", None)
    pending = set(futures)
    while pending:
        try:
            done, pending = wait(  # type: ignore[no-untyped-call]
                pending, timeout=STALL_SECONDS, return_when="FIRST_COMPLETED"
            )
        except TimeoutError:
            problem = ended() if ended is not None else None
            if problem is not None:
                raise SystemExit(f"berth: {problem}") from None
            continue
        for future in done:
            yield futures[future], future.result()
