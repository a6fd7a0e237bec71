"""The explorer's pages as a user sees them, in a real headless Chromium (tests/browser.py): what
is drawn (computed styles, positions inside the window, elements shown after the pointer
leaves, the page's scroll height), not only which class names are set."""

from __future__ import annotations

import re

import browser as browser_
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser():
    d = browser_.driver()
    yield d
    d.quit()


@pytest.fixture(scope="module")
def mha_page(tmp_path_factory):
    tga.manual_seed(0)
    m = tga.models.BatchFirstAttention(16, 2)
    x = Tensor.randn(1, 4, 16, requires_grad=True, name="x")
    path = tmp_path_factory.mktemp("pages") / "mha.html"
    page = tga.viz.explore(lambda x: (m(x, is_causal=True) ** 2).mean(), x, tokens=["the", "cat", "sat", "down"],
                           path=path)  # fmt: skip
    return page, path


def _open(d, path, width=1400, height=900):
    browser_.set_viewport(d, width, height)
    browser_.open_page(d, path)
    assert browser_.errors(d) == []


STROKE = """return Array.prototype.map.call(document.querySelectorAll(arguments[0]), function (n) {
  var s = n.querySelector('path, polygon, ellipse'); var c = getComputedStyle(s);
  return [c.strokeWidth, c.stroke]; });"""


def test_a_selected_node_and_a_search_hit_are_outlined(browser, mha_page):
    _, path = mha_page
    _open(browser, path)
    plain = browser.execute_script(STROKE, "#tga-forward g.node.op")
    assert plain and all(w != "3px" for w, _ in plain)
    browser.execute_script(
        "document.querySelector('#tga-forward g.node.op').dispatchEvent(new MouseEvent('click', {bubbles: true}))"
    )
    selected = browser.execute_script(STROKE, "#tga-forward g.node.tga-selected")
    assert selected == [["3px", "rgb(47, 109, 181)"]], selected
    others = browser.execute_script(STROKE, "#tga-forward g.node.op:not(.tga-selected)")
    assert others and all(w != "3px" for w, _ in others)
    search = browser.find_element("id", "tga-search")
    search.send_keys("linear")
    hits = browser.execute_script(STROKE, "#tga-forward g.node.tga-match")
    assert len(hits) >= 4 and all(h == ["4px", "rgb(224, 168, 0)"] for h in hits), hits
    search.clear()
    search.send_keys(" ")  # (an input event: the search is empty again)
    assert browser.execute_script(STROKE, "#tga-forward g.node.tga-match") == []


VISIBLE_LINES = """return Array.prototype.filter.call(document.querySelectorAll('svg.tga-headview line'),
  function (l) { return getComputedStyle(l).display !== 'none' && l.getBoundingClientRect().width > 0; }).length;"""


def test_hovering_a_query_token_filters_its_lines_until_the_pointer_leaves(browser, mha_page):
    from selenium.webdriver.common.action_chains import ActionChains

    _open(browser, mha_page[1])
    browser.find_element("css selector", "#tga-tabs button[data-view=attention]").click()
    every = browser.execute_script(VISIBLE_LINES)
    assert every > 4
    tokens = browser.find_elements("css selector", "svg.tga-headview text.tga-query")
    for i in (0, 2, 3):
        ActionChains(browser).move_to_element(tokens[i]).perform()
        one = browser.execute_script(VISIBLE_LINES)
        # causal: query i sees keys 0..i, one line per head (weights under 0.01 are not drawn)
        assert 1 <= one <= 2 * (i + 1) and one < every, (i, one, every)
        ActionChains(browser).move_to_element(browser.find_element("tag name", "h1")).perform()
        assert browser.execute_script(VISIBLE_LINES) == every, "the filter goes when the pointer leaves"


IN_VIEW = """var box = document.querySelector('#tga-backward').getBoundingClientRect();
var n = document.querySelector('#tga-backward g.node.tga-current'); if (!n) return null;
var r = n.getBoundingClientRect();
return [r.left >= box.left, r.right <= box.right, r.top >= box.top, r.bottom <= box.bottom];"""


def test_the_view_follows_each_step_and_says_what_it_sends(browser, mha_page):
    page, path = mha_page
    _open(browser, path)
    browser.find_element("id", "tga-next").click()
    svg = "document.querySelector('#tga-backward svg')"
    for _ in range(12):  # zoom well in around the top-left corner
        browser.execute_script(f"{svg}.dispatchEvent(new WheelEvent('wheel', {{deltaY: -100, clientX: 20, "
                               "clientY: 150, bubbles: true, cancelable: true}))")  # fmt: skip
    status = browser.find_element("id", "tga-step-status")
    ids = re.compile(r"\b(bw|acc|g|sv|op|t)\d+\b")
    for k in range(1, len(page.data["steps"])):
        browser.find_element("id", "tga-next").click()
        assert browser.execute_script(IN_VIEW) == [True] * 4, f"step {k + 1}'s node is off screen"
        text = status.text
        assert not ids.search(text), text  # the labels on screen, not internal ids
        step = page.data["steps"][k]
        assert text.count("‖g‖") == len(step["sends"]), text
        for d in step["sends"]:
            shown = float(re.search(r"‖g‖ ([-0-9.e+]+)", text[text.index("‖g‖") :]).group(1))
            assert shown == pytest.approx(d["norm"], rel=5e-3) or any(
                float(v) == pytest.approx(d["norm"], rel=5e-3) for v in re.findall(r"‖g‖ ([-0-9.e+]+)", text)
            )
    assert browser_.errors(browser) == []


def test_heat_maps_keep_every_token_and_have_a_colour_scale(browser, mha_page):
    page, path = mha_page
    _open(browser, path)
    node = next(n for n, k in page.data["nodes"].items() if n == "t0")  # x: (1, 4, 16)
    browser.execute_script("window.tgaExplorer.showNode(arguments[0], 'forward')", node)
    sizes = browser.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('#tga-panel .tga-heat canvas:not(.tga-scale canvas)'),"
        " function (c) { return [c.width, c.height]; })"
    )
    assert len(sizes) == 2 and all(w / h == 16 / 4 for w, h in sizes), sizes  # 4 tokens x 16, nothing averaged
    scales = browser.find_elements("css selector", "#tga-panel .tga-heat .tga-scale")
    assert len(scales) == 2 and all(s.find_element("css selector", "canvas").is_displayed() for s in scales)
    rec = page.data["tensors"][page.data["nodes"]["t0"]]["value"]
    lo, hi = (s.text for s in scales[0].find_elements("css selector", "span"))
    assert float(lo) == pytest.approx(rec["min"], rel=1e-2) and float(hi) == pytest.approx(rec["max"], rel=1e-2)
    # attention matrices: every axis labelled with the tokens, and a scale
    browser.find_element("css selector", "#tga-tabs button[data-view=attention]").click()
    mats = browser.find_elements("css selector", ".tga-matrices svg.tga-matrix")
    assert len(mats) == 2
    for m in mats:
        assert [t.text for t in m.find_elements("css selector", "text.tga-axis-q")] == ["the", "cat", "sat", "down"]
        assert [t.text for t in m.find_elements("css selector", "text.tga-axis-k")] == ["the", "cat", "sat", "down"]
    assert browser.find_elements("css selector", "#tga-attention > .tga-scale")


def test_the_page_fits_the_window_when_its_bars_wrap_and_in_a_notebook_frame(browser, mha_page):
    page, path = mha_page
    fits = """var g = document.querySelector(arguments[0]).getBoundingClientRect();
    return [document.scrollingElement.scrollHeight, window.innerHeight, g.top, g.bottom];"""
    for width, height in ((1400, 900), (520, 720), (900, 720)):
        _open(browser, path, width, height)
        k = max(range(len(page.data["steps"])), key=lambda i: len(page.data["steps"][i]["lines"]))
        browser.execute_script("window.tgaExplorer.step(arguments[0])", k)
        wraps = browser.execute_script("return document.querySelector('#tga-stepbar').getBoundingClientRect().height")
        scroll, inner, top, bottom = browser.execute_script(fits, "#tga-backward")
        assert scroll <= inner, f"{width}x{height}: the page scrolls ({scroll} > {inner})"
        assert bottom <= inner and bottom - top >= 0.4 * inner, (width, height, top, bottom)
        if width == 520:
            assert wraps > 40, "the step bar wraps on a narrow window"


def test_a_page_of_rounding_noise_gradients_says_so_on_screen(browser, tmp_path):
    tga.manual_seed(0)
    m = tga.models.EncoderBlock(16, 2, 32)
    x = Tensor.randn(1, 4, 16, requires_grad=True, name="x")
    with pytest.warns(UserWarning, match="~0 next to their values"):
        tga.viz.explore(lambda x: m(x).sum(), x, path=tmp_path / "sum.html")
    _open(browser, tmp_path / "sum.html", 1000, 720)
    banner = browser.find_element("id", "tga-warning")
    assert banner.is_displayed() and "LayerNorm" in banner.text
    r = browser.execute_script("return arguments[0].getBoundingClientRect().bottom", banner)
    assert 0 < r < 200
    assert browser.execute_script("return document.scrollingElement.scrollHeight <= window.innerHeight")
    browser.execute_script("window.tgaExplorer.showNode('t0', 'forward')")  # x: its gradient is noise
    heads = [h.text for h in browser.find_elements("css selector", "#tga-panel .tga-heat h3")]
    assert heads[0] == "value" and "~0 next to the values" in heads[1], heads
