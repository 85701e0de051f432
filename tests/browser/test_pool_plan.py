"""The plan on a pool cluster (a deadline policy plans the cluster as one pool): one
stacked-capacity lane, each bar at the API's times, heights never overlapping."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from tests.browser.conftest import serving
from tests.browser.test_dashboard import call, go, sign_in, submit
from tests.integration.conftest import OPERATOR, DaemonProcess

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    yield from serving(
        tmp_path_factory, "pool-ui", "--policy", "qops", "--nodes", "4x cpus=8,mem_gb=32"
    )


def test_a_pool_plan_stacks_jobs_in_one_capacity_lane(browser: Any, daemon: DaemonProcess) -> None:
    now = call(daemon, "GET", "/healthz")["now"]
    jobs = [submit(daemon, cpus, 3600, deadline=now + 50_000) for cpus in (16, 8, 24, 32)]
    schedule = call(daemon, "GET", "/v1/schedule")
    assert all(not w["nodes"] for w in schedule["planned"]), "qops plans the pool"
    sign_in(browser, daemon, OPERATOR)
    go(browser, "plan")
    svg = browser.find_element(By.CSS_SELECTOR, "svg.gantt")
    t0 = float(svg.get_attribute("data-t0"))
    per_second = float(svg.get_attribute("data-px-per-second"))
    left = float(svg.get_attribute("data-left"))
    windows = {w["job_id"]: w for w in schedule["running"] + schedule["planned"]}
    boxes = []
    for job in jobs:
        (bar,) = browser.find_elements(By.CSS_SELECTOR, f"rect[data-job='{job}']")
        assert bar.get_attribute("data-node") == "capacity"
        x, y = float(bar.get_attribute("x")), float(bar.get_attribute("y"))
        width, height = float(bar.get_attribute("width")), float(bar.get_attribute("height"))
        window = windows[job]
        assert x == pytest.approx(max(left, left + (window["start"] - t0) * per_second), abs=0.5)
        boxes.append((x, x + width, y, y + height))
    for i, (x1, x2, y1, y2) in enumerate(boxes):  # jobs at the same time never overlap
        for a1, a2, b1, b2 in boxes[i + 1 :]:
            assert not (x1 < a2 - 0.5 and a1 < x2 - 0.5 and y1 < b2 - 0.5 and b1 < y2 - 0.5)
