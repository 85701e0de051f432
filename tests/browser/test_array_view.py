"""A job array in the dashboard's queue: its waiting tasks on one line, as squeue folds
them, linked to its first task; a job page links the jobs it waits for."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from tests.browser.conftest import serving
from tests.browser.test_dashboard import call, go, sign_in, submit, wait
from tests.integration.conftest import OPERATOR, DaemonProcess

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    yield from serving(tmp_path_factory, "array-ui", "--nodes", "1x cpus=8,mem_gb=32")


def test_waiting_array_tasks_fold_into_one_line(browser: Any, daemon: DaemonProcess) -> None:
    submit(daemon, 8, 3600)  # the node is busy for an hour: every task waits
    body = {"name": "sweep", "resources": {"cpus": 1}, "time_limit": 60, "array": "0-9,20"}
    answer = call(daemon, "POST", "/v1/jobs", json=body)
    array = answer["job"]["job_id"]
    sign_in(browser, daemon, OPERATOR)
    row = wait(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, f"#pending tr[data-job='{array}']"),
        "the array's line",
    )[0]
    assert f"{array}_[0-9,20] (11 tasks)" in row.text
    rows = browser.find_elements(By.CSS_SELECTOR, "#pending tbody tr")
    assert len(rows) == 1  # eleven tasks, one line


def test_a_job_page_links_what_the_job_waits_for(browser: Any, daemon: DaemonProcess) -> None:
    first = call(daemon, "POST", "/v1/jobs", json={"resources": {"cpus": 8}, "time_limit": 600})
    first_id = first["job"]["job_id"]
    body = {"resources": {"cpus": 1}, "time_limit": 60, "dependency": f"afterok:{first_id}"}
    then = call(daemon, "POST", "/v1/jobs", json=body)["job"]["job_id"]
    sign_in(browser, daemon, OPERATOR)
    go(browser, f"job/{then}")
    waits = wait(
        browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#job-waits-for li"), "waits for"
    )
    assert len(waits) == 1
    assert "(afterok, PENDING), promised to end by" in waits[0].text
    assert "sets its earliest start" in waits[0].text
    link = waits[0].find_element(By.TAG_NAME, "a")
    assert link.get_attribute("href").endswith(f"#/job/{first_id}")
    assert f"afterok:{first_id}" in browser.find_element(By.ID, "job-detail").text
