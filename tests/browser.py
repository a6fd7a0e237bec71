"""A real headless Chromium for the explorer's tests, driven through Selenium and Debian's matching
``chromium-driver``. Where either is missing the tests skip, except under CI (``.ci/run`` sets
``TINYGRAD_ATTN_REQUIRE_BROWSER=1`` and installs both), where a missing browser is a failure."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest


def _missing(why: str) -> None:
    if os.environ.get("TINYGRAD_ATTN_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{why}; CI needs it (TINYGRAD_ATTN_REQUIRE_BROWSER=1)")
    pytest.skip(why)


def driver(width: int = 1400, height: int = 900) -> Any:
    try:
        from selenium import webdriver  # noqa: PLC0415
        from selenium.webdriver.chrome.service import Service  # noqa: PLC0415
    except ImportError:
        _missing("selenium is not installed (pip install selenium)")
    chrome = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    drv = shutil.which("chromedriver")
    if not chrome or not drv:
        _missing("chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
    o = webdriver.ChromeOptions()
    o.binary_location = chrome
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={width},{height}",
              "--disable-dev-shm-usage", "--hide-scrollbars"):  # fmt: skip
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(options=o, service=Service(drv))
    set_viewport(d, width, height)
    return d


def set_viewport(d: Any, width: int, height: int) -> None:
    """The page's window (its innerWidth x innerHeight) exactly ``width`` x ``height``."""
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})  # fmt: skip


def errors(d: Any) -> list:
    return [e for e in d.get_log("browser") if e["level"] == "SEVERE"]


def open_page(d: Any, path: Path) -> None:
    d.get(path.resolve().as_uri())  # a file:// URL: the page needs no server
    assert d.current_url.startswith("file://")
    from selenium.webdriver.support.ui import WebDriverWait  # noqa: PLC0415

    try:  # (a packed page draws once its data is unpacked, just after the load event)
        WebDriverWait(d, 20).until(lambda d: d.execute_script("return window.tgaExplorer !== undefined"))
    except Exception:  # noqa: BLE001 - a timeout: say what the console said
        pytest.fail(f"the page's script did not run: {errors(d)}")
