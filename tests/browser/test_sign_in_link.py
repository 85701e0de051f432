"""``berth ui-login``'s link in a real browser: it signs the dashboard in as whoever ran
the command, and the token leaves the address bar at once."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from tests.browser.test_dashboard import wait
from tests.integration.conftest import ALICE, DaemonProcess

pytestmark = pytest.mark.browser


def test_the_ui_login_link_signs_the_dashboard_in(browser: Any, daemon: DaemonProcess) -> None:
    made = subprocess.run(
        [sys.executable, "-m", "berth.runtime.main", "ui-login", "--json", "--url", daemon.url,
         "--token", ALICE], capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    link = json.loads(made.stdout)["url"]
    token = link.split("#token=", 1)[1]
    assert token != ALICE  # a short-lived token of its own, not the caller's
    browser.get("about:blank")
    browser.get(f"{daemon.url}/ui")
    browser.execute_script("sessionStorage.clear()")
    browser.get(link)
    wait(browser, lambda d: d.find_element(By.ID, "who").text == "alice (user)", "alice signed in")
    wait(browser, lambda d: d.find_element(By.ID, "view").get_attribute("data-view") == "queue",
         "the queue")  # fmt: skip
    assert token not in browser.current_url  # gone from the address bar and the history
    assert browser.execute_script("return sessionStorage.getItem('berth.token')") == token
