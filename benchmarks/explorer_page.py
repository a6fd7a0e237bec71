"""The explorer at the size of a real model: a 12-layer GPT (d=128, T=64) page's size, the time to
build it, and, where Selenium and Chromium are installed, the time the page takes to open
(``window.tgaExplorer.readyAt``, best of three loads). A measurement, never a test assertion.

    PYTHONPATH=$PWD python benchmarks/explorer_page.py
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

import tinygrad_attn as tga


def build(path: Path) -> float:
    tga.manual_seed(0)
    gpt = tga.models.GPT(vocab_size=64, d_model=128, n_heads=4, n_layers=12, max_len=64)
    tokens = tga.Tensor(np.arange(64).reshape(1, 64) % 64)
    loss = tga.functional.cross_entropy(gpt(tokens).reshape(-1, 64), tga.Tensor((np.arange(64) + 1) % 64))
    start = time.perf_counter()
    tga.viz.explore(loss, tokens=[f"t{i}" for i in range(64)], params=dict(gpt.named_parameters()), path=path)
    return time.perf_counter() - start


def open_ms(path: Path) -> float | None:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        return None
    chrome, drv = shutil.which("chromium"), shutil.which("chromedriver")
    if not chrome or not drv:
        return None
    options = webdriver.ChromeOptions()
    options.binary_location = chrome
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,900"):
        options.add_argument(a)
    d = webdriver.Chrome(options=options, service=Service(drv))
    try:
        times = []
        for _ in range(3):
            d.get(path.resolve().as_uri())
            WebDriverWait(d, 30).until(lambda d: d.execute_script("return window.tgaExplorer !== undefined"))
            times.append(d.execute_script("return window.tgaExplorer.readyAt"))
        return min(times)
    finally:
        d.quit()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "gpt12.html"
        seconds = build(path)
        print(f"12-layer GPT page: {path.stat().st_size / 1e6:.2f} MB, built in {seconds:.1f} s")
        ms = open_ms(path)
        print("opens in: " + (f"{ms:.0f} ms (best of 3 loads)" if ms is not None else "(no Selenium/Chromium here)"))


if __name__ == "__main__":
    main()
