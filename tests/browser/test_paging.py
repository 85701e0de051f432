"""The dashboard at a deep queue: the queue and the nodes come a page at a time.

A daemon on 250 nodes with 450 jobs waiting behind one that takes the whole cluster:
the queue view shows 200 jobs a page, each waiting job with the predicted start and
place in the queue the daemon gives with the page, and steps through the pages; the
nodes view does the same with the nodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from tests.browser.conftest import serving
from tests.browser.test_dashboard import attributes, call, click, sign_in, submit, texts, wait
from tests.integration.conftest import OPERATOR, DaemonProcess

NODES, WAITING = 250, 450


@pytest.fixture(scope="module")
def deep(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    yield from serving(tmp_path_factory, "deep", "--nodes", f"{NODES}x cpus=2,mem_gb=8",
                       "--submit-rate", "0")  # fmt: skip


def rows(driver: Any, table: str) -> list[Any]:
    found: list[Any] = driver.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr")
    return found


def test_a_deep_queue_is_shown_a_page_at_a_time(browser: Any, deep: DaemonProcess) -> None:
    submit(deep, 2 * NODES, 3600)  # the whole cluster for an hour
    for _ in range(WAITING):
        submit(deep, 1, 600)
    listing = call(deep, "GET", "/v1/jobs", params={"state": "PENDING", "limit": 3})
    assert listing["total"] == WAITING
    # All start together when the big job ends: each has the 449 others no later.
    starts = {j["predicted_start"] for j in listing["jobs"]}
    assert len(starts) == 1
    assert None not in starts
    assert [j["queued_before"] for j in listing["jobs"]] == [WAITING - 1] * 3
    sign_in(browser, deep, OPERATOR)
    # The page holds jobs in order of id: the running one, then 199 waiting.
    wait(browser, lambda d: len(rows(d, "pending")) == 199, "a first page of 199 waiting jobs")
    assert len(rows(browser, "running")) == 1
    first = attributes(browser, "#pending tbody tr", "data-job")
    pages = browser.find_element(By.ID, "queue-pages").text
    assert f"1–200 of {WAITING + 1}" in pages  # the running job is listed too
    predicted = rows(browser, "pending")[0].find_element(By.CSS_SELECTOR, "td.predicted")
    assert "in " in predicted.text  # the daemon's prediction, with how far off it is
    click(browser, "#queue-pages .page-on")
    wait(browser, lambda d: "201–400" in d.find_element(By.ID, "queue-pages").text, "page 2")
    second = attributes(browser, "#pending tbody tr", "data-job")
    assert second
    assert not set(first) & set(second)
    reasons = texts(browser, "#pending tbody tr td.reason")
    assert any("jobs planned first" in reason for reason in reasons)


def test_the_nodes_come_a_page_at_a_time(browser: Any, deep: DaemonProcess) -> None:
    sign_in(browser, deep, OPERATOR, "nodes")
    wait(browser, lambda d: len(rows(d, "nodes")) == 200, "a first page of 200 nodes")
    click(browser, "#node-pages .page-on")
    wait(browser, lambda d: len(rows(d, "nodes")) == NODES - 200, "the last 50 nodes")
    assert rows(browser, "nodes")[0].get_attribute("data-node") == "node201"


def test_the_plan_of_many_nodes_is_drawn_a_page_of_nodes_at_a_time(
    browser: Any, deep: DaemonProcess
) -> None:
    """50 node rows a page, with the jobs on those nodes only (the whole cluster's plan
    was drawn at once: 4,096 nodes took 35 s, again at every event)."""
    names = [n["name"] for n in call(deep, "GET", "/v1/cluster", params={"limit": 1000})["nodes"]]
    assert len(names) == NODES

    def drawn(d: Any) -> tuple[set[str | None], list[str]]:
        bars = attributes(d, "svg.gantt rect[data-node]", "data-node")
        labels = texts(d, "svg.gantt text")
        return set(bars), [t for t in labels if t in names]

    sign_in(browser, deep, OPERATOR, "plan")
    # The job that holds the whole cluster (the first test's) has a bar on every row.
    wait(browser, lambda d: drawn(d) == (set(names[:50]), names[:50]), "the first 50 nodes")
    assert "1–50 of 250" in browser.find_element(By.ID, "plan-nodes").text
    assert "on these 50 of 250 nodes" in browser.find_element(By.ID, "view").text
    click(browser, "#plan-nodes .page-on")
    wait(browser, lambda d: drawn(d) == (set(names[50:100]), names[50:100]), "the next 50")
