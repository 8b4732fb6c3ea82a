"""Headless Chromium for the tests of web pages (selenium + Debian's chromedriver), shared by the explorer's
and the server's browser tests.

:func:`chromium` starts one browser (a fresh profile, the flags below) and skips the calling test, saying
why, where Chromium, chromedriver or selenium is missing; ``RLSI_CHROMIUM`` and ``RLSI_CHROMEDRIVER`` name
them elsewhere. :func:`artifacts_dir` is where screenshots are kept: ``$RLSI_TEST_ARTIFACTS`` (e.g.
``docs/images`` to refresh the README's pictures), else the ``artifacts`` folder of pytest's temporary
directory. :func:`problems` reads the console errors and the requests the page made; :func:`open_page` opens a
page from disk and waits for its script.
"""

import contextlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

CHROMIUM = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars")


def _executable(env, names, fallback):
    found = os.environ.get(env) or next((shutil.which(n) for n in names if shutil.which(n)), None)
    return found or (fallback if Path(fallback).exists() else None)


@contextlib.contextmanager
def chromium(*, offline):
    """A selenium Chrome driver of headless Chromium at 1280 x 800, its console and network logged;
    ``offline`` turns the network off (pages opened from disk)."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install '.[test]')")
    from selenium.webdriver.chrome.service import Service

    binary = _executable("RLSI_CHROMIUM", CHROMIUM, "/usr/bin/chromium")
    driver_path = _executable("RLSI_CHROMEDRIVER", ("chromedriver",), "/usr/bin/chromedriver")
    if binary is None or driver_path is None:
        pytest.skip("no Chromium or chromedriver found (Debian: apt-get install chromium chromium-driver; or set "
                    "RLSI_CHROMIUM and RLSI_CHROMEDRIVER)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="rlsi-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument("--window-size=1280,800")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        if offline:
            driver.set_network_conditions(offline=True, latency=0, download_throughput=0, upload_throughput=0)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def artifacts_dir(tmp_path_factory, *, scratch=False):
    """The folder of screenshots (see the module docstring); ``scratch``: pytest's, whatever the environment."""
    chosen = None if scratch else os.environ.get("RLSI_TEST_ARTIFACTS")
    path = Path(chosen or tmp_path_factory.getbasetemp() / "artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def problems(driver, allowed=("file://", "data:")):
    """Console errors and warnings, and the URLs requested outside ``allowed`` (prefixes), since the last call."""
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    requests = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            url = message["params"]["request"]["url"]
            if not url.startswith(tuple(allowed)):
                requests.append(url)
    return errors, requests


def open_page(driver, path, timeout=10):
    """Open the file ``path`` and wait until its script marks the body ``data-ready="1"``."""
    driver.get(path.resolve().as_uri())
    deadline = time.monotonic() + timeout
    while driver.find_element("tag name", "body").get_attribute("data-ready") != "1":
        assert time.monotonic() < deadline, "the page's script did not finish"
        time.sleep(0.05)
