"""A real daemon on emulated nodes and Debian's headless Chromium driven by Selenium.

Nothing downloads a browser: the driver is ``/usr/bin/chromedriver`` from Debian's
``chromium-driver`` package, pointed at ``/usr/bin/chromium``. Without them every test
here skips, saying how to install them (``make test`` installs them where it can).
Set ``BERTH_SCREENSHOTS=DIR`` to keep a screenshot of each page (``make screenshots``
writes the README's into ``docs/images/``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import DaemonProcess

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
MISSING = (
    "Chromium is not installed: `apt-get install chromium chromium-driver` "
    "(Debian's packages; `make test` installs them when it runs as root)"
)


def serving(factory: pytest.TempPathFactory, name: str, *flags: str) -> Iterator[DaemonProcess]:
    """A module's daemon: ``berth serve FLAGS`` in its own folder, stopped after."""
    process = DaemonProcess(factory.mktemp(name), *flags)
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    yield from serving(tmp_path_factory, "ui", "--nodes", "6x cpus=8,mem_gb=32")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip(MISSING)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    # Chromium's profile and its singleton socket's folder go in this module's temp
    # folder, not in /tmp, where each run left a folder behind.
    scratch = tmp_path_factory.mktemp("chromium")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--window-size=1280,900", "--disable-dev-shm-usage",
                     f"--user-data-dir={scratch / 'profile'}"):  # fmt: skip
        options.add_argument(argument)
    service = Service(CHROMEDRIVER, env={**os.environ, "TMPDIR": str(scratch)})
    driver = webdriver.Chrome(service=service, options=options)
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver: Any, name: str) -> None:
    """Keep a picture of the page when ``BERTH_SCREENSHOTS`` names a folder."""
    folder = os.environ.get("BERTH_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / f"dashboard-{name}.png"))
