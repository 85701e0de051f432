"""The gang partition's time-slot matrix in a real browser: each cell shows the job the
API puts there, and the running row is marked."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By

from tests.browser.conftest import screenshot, serving
from tests.browser.test_dashboard import call, go, sign_in, submit, wait
from tests.integration.conftest import OPERATOR, DaemonProcess
from tests.support.waiting import wait_until

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    yield from serving(tmp_path_factory, "gang-ui", "--nodes", "4x cpus=8,mem_gb=32")


def test_the_matrix_shows_each_job_where_the_api_puts_it(
    browser: Any, daemon: DaemonProcess
) -> None:
    body = {"name": "gang", "nodes": ["node003", "node004"], "policy": "gang",
            "options": {"slot_seconds": 5}}  # fmt: skip
    call(daemon, "POST", "/v1/admin/partitions", OPERATOR, json=body)
    jobs = [submit(daemon, cpus, 3600, partition="gang") for cpus in (16, 8, 8, 12)]
    beside = submit(daemon, 8, 3600)  # the default partition goes on beside it
    # Jobs enter the matrix at its next slot boundary.
    matrix = wait_until(lambda: (m := call(daemon, "GET", "/v1/partitions/gang/matrix"))["rows"]
                        and not m["waiting"] and m, what="the jobs in the matrix")  # fmt: skip
    assert len(matrix["rows"]) >= 2, "16 processors and 44 asked: more than one row"
    expected = [["" if job is None else str(job) for job in row] for row in matrix["rows"]]
    assert {int(j) for row in expected for j in row if j} == set(jobs)
    sign_in(browser, daemon, OPERATOR)
    go(browser, "gang")

    def drawn(driver: Any) -> Any:
        # The page redraws at every slot boundary: read a whole drawing, or try again.
        try:
            table = driver.find_element(By.CSS_SELECTOR, "table.matrix[data-partition='gang']")
            cells = [[c.get_attribute("data-job") for c in row.find_elements(By.TAG_NAME, "td")]
                     for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")]  # fmt: skip
            marked = len(table.find_elements(By.CSS_SELECTOR, "tbody tr.running"))
        except StaleElementReferenceException:
            return None
        return cells == expected and marked == 1

    wait(browser, drawn, "the API's matrix, one row marked running")
    screenshot(browser, "gang")
    # The plan draws the default partition per node; gang jobs are left to this page.
    go(browser, "plan")
    bars = browser.find_elements(By.CSS_SELECTOR, f"rect[data-job='{beside}']")
    assert [b.get_attribute("data-node") for b in bars] == ["node001"]
    assert not browser.find_elements(By.CSS_SELECTOR, f"rect[data-job='{jobs[0]}']")
