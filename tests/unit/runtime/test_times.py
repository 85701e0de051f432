"""How the client commands print times: local date and time, with a readable distance."""

from __future__ import annotations

import time

import pytest

from berth_client.cli_support import span, when


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (45, "45s"), (60, "1m"), (754, "12m"), (3600, "1h"), (7980, "2h13m"),
     (47 * 3600, "47h"), (50 * 3600, "2d2h"), (3 * 86400, "3d")],
)  # fmt: skip
def test_span_reads_as_people_say_it(seconds: int, text: str) -> None:
    assert span(seconds) == text
    assert span(-seconds) == text


def test_when_is_local_time_with_the_distance_from_now() -> None:
    moment = 1_800_000_000
    local = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(moment))
    assert when(moment) == local
    assert when(moment, moment - 7980) == f"{local} (in 2h13m)"
    assert when(moment, moment + 300) == f"{local} (5m ago)"
    assert when(moment, moment) == f"{local} (now)"
    assert when(None, moment) == "-"
