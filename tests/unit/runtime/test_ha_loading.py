"""A daemon that has just taken the HA lease keeps renewing it while its state loads:
a center's database takes longer to load than a lease lasts, and a standby would
otherwise take over meanwhile (and lose the lease the same way in turn). If the lease
is lost while loading, the daemon steps down."""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from berth.runtime import ha

LEASE = 0.6


class CountingLease:
    """A lease that answers every renewal with ``keeps`` and counts them."""

    holder, epoch = "test:1", 1

    def __init__(self, keeps: bool = True) -> None:
        self.keeps = keeps
        self.renewals = 0

    def renew(self) -> bool:
        self.renewals += 1
        return self.keeps


def slow_build(loaded: threading.Event) -> Any:
    def build(*_: object) -> Any:
        time.sleep(4 * LEASE)  # (longer than a lease)
        loaded.set()
        raise RuntimeError("loaded")  # (ends the test here: no server to start)

    return build


def test_the_lease_is_renewed_while_the_state_loads() -> None:
    lease, loaded = CountingLease(), threading.Event()
    settings: Any = SimpleNamespace(lease_seconds=LEASE)
    with pytest.raises(RuntimeError, match="loaded"):
        asyncio.run(ha._lead(settings, lease, "http://x", slow_build(loaded)))  # type: ignore[arg-type]
    assert loaded.is_set()
    assert lease.renewals >= 3  # (every third of a lease, over four leases)


def test_a_lease_lost_while_loading_steps_down(monkeypatch: pytest.MonkeyPatch) -> None:
    stepped: list[tuple[str, bool]] = []
    lease, loaded = CountingLease(keeps=False), threading.Event()

    def step_down(_: object, why: str) -> None:
        stepped.append((why, loaded.is_set()))
        raise SystemExit(ha.STEPPED_DOWN)

    monkeypatch.setattr(ha, "_step_down", step_down)
    settings: Any = SimpleNamespace(lease_seconds=LEASE)
    with pytest.raises(SystemExit):
        asyncio.run(ha._lead(settings, lease, "http://x", slow_build(loaded)))  # type: ignore[arg-type]
    # It stepped down at the first renewal, before the state had loaded.
    assert stepped == [("the lease was taken by another daemon", False)]
