"""Property-based API testing: schemathesis generates requests from the live daemon's
OpenAPI schema (valid and invalid bodies, parameters and paths) and sends them over
real HTTP. No answer may be a 5xx, and every 4xx must name the field to fix.

The budget is bounded (``EXAMPLES`` per operation) so ``make test`` stays quick; set
``BERTH_FUZZ_EXAMPLES`` for a longer run. The event stream is left out: it never ends.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.core.result import Ok

from tests.integration.conftest import OPERATOR, DaemonProcess

EXAMPLES = int(os.environ.get("BERTH_FUZZ_EXAMPLES", "12"))


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    daemon = DaemonProcess(Path(tmp_path_factory.mktemp("fuzz")), "--submit-rate", "0")
    try:
        yield daemon
    finally:
        daemon.stop()


def check(case: Any, live: DaemonProcess, failures: list[str]) -> None:
    response = case.call(base_url=live.url, headers={"Authorization": f"Bearer {OPERATOR}"},
                         timeout=30)  # fmt: skip
    where = f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:300]}"
    if response.status_code >= 500:
        failures.append(where)
    elif response.status_code >= 400:
        error = response.json().get("error") or {}
        if not (error.get("field") and error.get("message")):
            failures.append(f"no field named: {where}")


@pytest.mark.parametrize("mode", list(GenerationMode), ids=lambda m: m.value)
def test_no_5xx_and_every_4xx_names_its_field(live: DaemonProcess, mode: GenerationMode) -> None:
    schema = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    failures: list[str] = []
    operations = 0
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), f"the schema has an operation it cannot read: {result.err()}"
        operation = result.ok()
        if operation.path == "/v1/events":
            continue  # the stream never ends

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        def run(case: Any) -> None:
            check(case, live, failures)

        try:
            run()
        except Unsatisfiable:
            continue  # nothing to make invalid (no parameter, no body)
        operations += 1
    assert operations >= (30 if mode is GenerationMode.POSITIVE else 15), (
        "every operation of the schema was tried"
    )
    assert not failures, "\n".join(sorted(set(failures))[:20])
