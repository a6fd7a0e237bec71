"""The explorer's pages as a user sees them, in a real headless Chromium (tests/browser.py): what
is drawn (computed styles, positions inside the window, elements shown after the pointer
leaves, the page's scroll height), not only which class names are set."""

from __future__ import annotations

import contextlib
import re

import browser as browser_
import numpy as np
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
        shown = [float(v) for v in re.findall(r"‖g‖ (\S+) to", text)]
        assert shown == pytest.approx([d["norm"] for d in step["sends"]], rel=6e-3), text  # (3 significant digits)
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


@pytest.fixture(scope="module")
def long_steps_page(tmp_path_factory):
    """An encoder block explored as primitives, its output raised to a tensor power (whose
    backward is one step of over ten lines): program steps of five lines and more."""
    tga.manual_seed(0)
    m = tga.models.EncoderBlock(16, 2, 32).eval()
    x = Tensor.randn(1, 4, 16, requires_grad=True, name="x")
    target = Tensor.randn(1, 4, 16)
    path = tmp_path_factory.mktemp("pages") / "encoder.html"
    with tga.decompose():
        page = tga.viz.explore(lambda x: tga.functional.mse_loss((m(x).abs() + 1.0) ** x, target), x, path=path)
    assert max(len(s["lines"]) for s in page.data["steps"]) >= 5
    return page, path


@pytest.mark.parametrize("which", ["mha_page", "long_steps_page"])
def test_the_page_fits_the_window_when_its_bars_wrap_and_in_a_notebook_frame(browser, request, which):
    page, path = request.getfixturevalue(which)
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
        line = browser.execute_script("return document.querySelector('#tga-step-line').getBoundingClientRect().bottom")
        assert line <= top, "the step's program lines stay above the graph"
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


FOLD = """var c = arguments[0], g = c.ownerSVGElement, box = c.getBoundingClientRect(), bad = [];
var shown = function (e) { return getComputedStyle(e).display !== 'none' && e.getBoundingClientRect().width > 0; };
var hiddenNodes = {};
g.querySelectorAll('g.node').forEach(function (n) {
  hiddenNodes[n.querySelector('title').textContent.trim()] = !shown(n); });
var crossing = 0;
g.querySelectorAll('g.edge').forEach(function (e) {
  var ends = e.querySelector('title').textContent.trim().replace('\\u2192', '->').split('->');
  var ha = hiddenNodes[ends[0]], hb = hiddenNodes[ends[1]];
  if (!shown(e)) return;
  if (ha && hb) bad.push('an edge between two hidden nodes is drawn: ' + ends);
  else if (ha || hb) { crossing++;  // the folded box must be drawn over it (later in the picture), opaque
    if (!(e.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING)) bad.push('edge over the box: ' + ends); }
});
var fill = getComputedStyle(c.querySelector('path, polygon')).fill;
var notes = Array.prototype.map.call(c.querySelectorAll('text.tga-fold-note'), function (t) {
  var r = t.getBoundingClientRect(); return [t.textContent, r.left >= box.left && r.right <= box.right,
  Math.abs((r.top + r.bottom) / 2 - (box.top + box.bottom) / 2) < 20]; });
return {bad: bad, crossing: crossing, fill: fill, notes: notes,
        hidden: Object.keys(hiddenNodes).filter(function (k) { return hiddenNodes[k]; }).length};"""


def test_folding_a_module_leaves_no_dangling_edge_and_says_what_it_holds(browser, mha_page):
    _open(browser, mha_page[1])
    clusters = browser.find_elements("css selector", "#tga-forward g.cluster")
    assert clusters
    c = clusters[0]
    before = browser.execute_script(FOLD, c)
    assert before["hidden"] == 0 and before["bad"] == []
    browser.execute_script(
        "arguments[0].querySelector('text').dispatchEvent(new MouseEvent('click', {bubbles: true}))", c
    )
    got = browser.execute_script(FOLD, c)
    # (which module comes first, and so how many nodes it holds, depends on the renderer: dot or graphviz-pure)
    assert got["bad"] == [] and got["hidden"] >= 2 and got["crossing"] >= 1, got
    assert got["fill"] not in ("none", "rgba(0, 0, 0, 0)"), got["fill"]
    assert got["notes"][0][0] == f"folded: {got['hidden']} nodes" and all(n[1] and n[2] for n in got["notes"]), got
    browser.execute_script(
        "arguments[0].querySelector('text').dispatchEvent(new MouseEvent('click', {bubbles: true}))", c
    )
    after = browser.execute_script(FOLD, c)
    assert after["hidden"] == 0 and after["notes"] == [] and after["bad"] == []
    assert browser_.errors(browser) == []


TEXT_IN_VIEW = """var box = document.querySelector(arguments[0]).getBoundingClientRect();
var firsts = Array.prototype.map.call(document.querySelectorAll(arguments[0] + ' ' + arguments[1]),
  function (n) { return n.querySelector('text'); }).filter(function (t) { return t; });  // (each node's title)
return firsts.filter(function (t) {
  var r = t.getBoundingClientRect();
  return r.height > 0 && r.top >= box.top && r.bottom <= box.bottom && r.left >= box.left && r.right <= box.right;
}).map(function (t) { return t.getBoundingClientRect().height; });"""


def test_a_twelve_layer_gpt_page_is_small_opens_and_is_readable(browser, tmp_path):
    tga.manual_seed(0)
    gpt = tga.models.GPT(vocab_size=64, d_model=128, n_heads=4, n_layers=12, max_len=64)
    tokens = Tensor(np.arange(64).reshape(1, 64) % 64)
    loss = tga.functional.cross_entropy(gpt(tokens).reshape(-1, 64), Tensor((np.arange(64) + 1) % 64))
    path = tmp_path / "gpt12.html"
    page = tga.viz.explore(loss, tokens=[f"t{i}" for i in range(64)], params=dict(gpt.named_parameters()), path=path)
    assert path.stat().st_size < 2_000_000, path.stat().st_size
    assert len(page.data["attention"]) == 12 and len(page.data["steps"]) > 200
    _open(browser, path)  # (how long it takes is measured by benchmarks/explorer_page.py, never asserted)
    assert browser.execute_script("return window.tgaExplorer.readyAt") > 0
    # it opens as an overview, modules collapsed, its labels readable at fit
    assert browser.find_element("id", "tga-forward-overview").is_displayed()
    assert not browser.find_element("id", "tga-forward").is_displayed()
    labels = browser.execute_script(TEXT_IN_VIEW, "#tga-forward-overview", "g.node")
    assert len(browser.find_elements("css selector", "#tga-forward-overview g.node")) <= 40
    assert len(labels) >= 15 and min(labels) >= 5, labels
    # a click on a collapsed block expands it: the whole picture, framed on that block's nodes
    block = next(m for m in browser.find_elements("css selector", "#tga-forward-overview g.node.module")
                 if "blocks.3 " in m.text)  # fmt: skip
    browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", block)
    assert browser.find_element("id", "tga-forward").is_displayed()
    labels = browser.execute_script(TEXT_IN_VIEW, "#tga-forward", "g.node")
    assert len(labels) >= 5 and min(labels) >= 8, labels
    members = page.data["overview"]["forward"][block.find_element("tag name", "title").get_attribute("textContent")]
    inside = browser.execute_script(
        """var box = document.querySelector('#tga-forward').getBoundingClientRect();
        return arguments[0].filter(function (id) { var n = window.tgaExplorer.graphs.forward.nodes[id];
          var r = n.getBoundingClientRect(); return r.top >= box.top && r.bottom <= box.bottom; }).length;""",
        members,
    )
    assert inside >= min(5, len(members)), (inside, len(members))
    # the step is followed at a readable size
    browser.find_element("id", "tga-overview").click()
    assert browser.find_element("id", "tga-forward-overview").is_displayed()
    for _ in range(3):
        browser.find_element("id", "tga-next").click()
    cur = browser.execute_script(TEXT_IN_VIEW, "#tga-backward", "g.node.tga-current")
    assert cur and cur[0] >= 8, cur
    # the model view: a matrix per head past 16 tokens, every axis labelled
    browser.find_element("css selector", "#tga-tabs button[data-view=attention]").click()
    thumbs = browser.find_elements("css selector", ".tga-modelview svg.tga-thumb-matrix")
    assert len(thumbs) == 12 * 4
    assert all(t.find_elements("css selector", "text.tga-axis-q") for t in thumbs[:4])
    assert browser_.errors(browser) == []


NEURON = """var v = document.querySelector('svg.tga-neuron-view');
var nums = function (cls) { return Array.prototype.map.call(v.querySelectorAll(cls), function (t) { return +t.dataset.v; }); };
return {head: +v.dataset.head, query: +v.dataset.query, dots: nums('text.tga-neuron-dot'), w: nums('text.tga-neuron-w'),
        q: v.querySelectorAll('rect.tga-q-cell').length, k: v.querySelectorAll('rect.tga-k-cell').length,
        p: v.querySelectorAll('rect.tga-p-cell').length,
        keys: Array.prototype.map.call(v.querySelectorAll('text.tga-neuron-k'), function (t) { return t.textContent; })};"""


@pytest.mark.parametrize("decomposed", [False, True])
def test_the_neuron_view_shows_the_scores_behind_each_weight(browser, tmp_path, decomposed):
    from selenium.webdriver.support.ui import Select

    from tinygrad_attn.viz.explore import from_f16

    tga.manual_seed(0)
    m = tga.models.BatchFirstAttention(16, 2)
    x = Tensor.randn(1, 4, 16, requires_grad=True, name="x")
    path = tmp_path / "mha.html"
    with tga.decompose() if decomposed else contextlib.nullcontext():
        page = tga.viz.explore(lambda x: (m(x, is_causal=True) ** 2).mean(), x, tokens=["the", "cat", "sat", "down"],
                               path=path)  # fmt: skip
    (layer,) = page.data["attention"]
    weights = from_f16(layer["w"])
    _open(browser, path)
    browser.find_element("css selector", "#tga-tabs button[data-view=attention]").click()
    for head, query in ((0, 3), (1, 2), (1, 0)):
        Select(browser.find_element("id", "tga-neuron-head")).select_by_value(str(head))
        browser.find_elements("css selector", "svg.tga-headview text.tga-query")[query].click()
        got = browser.execute_script(NEURON)
        assert (got["head"], got["query"]) == (head, query)
        assert got["keys"] == ["the", "cat", "sat", "down"] and got["q"] == 8 and got["k"] == got["p"] == 4 * 8
        np.testing.assert_allclose(got["w"], weights[head, query], atol=1e-3)
        # the weights follow from the scores shown: softmax(scale * q.k) over the keys the mask lets through
        s = np.array(got["dots"]) * layer["qk_scale"]
        s[query + 1 :] = -np.inf
        e = np.exp(s - s.max())
        np.testing.assert_allclose(e / e.sum(), weights[head, query], atol=0.02)
    assert browser_.errors(browser) == []


def _user_model():
    """A user's model written against PyTorch's API: nn.TransformerEncoder, batch first."""
    tga.manual_seed(0)
    layer = tga.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    model = tga.nn.TransformerEncoder(layer, 2).eval()
    x = Tensor.randn(1, 4, 16, requires_grad=True, name="x")
    target = Tensor.randn(1, 4, 16)
    return (lambda x: tga.functional.mse_loss(model(x), target)), (x,), dict(model.named_parameters())


@pytest.mark.parametrize("block", ["sdpa", "mha", "encoder", "decoder", "gpt", "vit", "user"])
def test_every_page_draws_what_it_says(browser, tmp_path, block):
    """Each page of the command line, and a user's model: outlined selection, the step in view,
    the page within the window, the hover filter gone when the pointer leaves, no script error."""
    from selenium.webdriver.common.action_chains import ActionChains

    from tinygrad_attn.viz.cli import main

    path = tmp_path / f"{block}.html"
    if block == "user":
        fn, args, params = _user_model()
        tga.viz.explore(fn, *args, params=params, tokens=["a", "b", "c", "d"], path=path)
    else:
        assert main(["explore", block, "--out", str(path)]) == 0
    _open(browser, path, 1200, 720)
    browser.execute_script(
        "document.querySelector('#tga-forward g.node').dispatchEvent(new MouseEvent('click', {bubbles: true}))"
    )
    assert browser.execute_script(STROKE, "#tga-forward g.node.tga-selected")[0][0] == "3px"
    for _ in range(4):
        browser.find_element("id", "tga-next").click()
        assert browser.execute_script(IN_VIEW) == [True] * 4
    assert browser.execute_script("return document.scrollingElement.scrollHeight <= window.innerHeight")
    browser.find_element("css selector", "#tga-tabs button[data-view=attention]").click()
    tokens = browser.find_elements("css selector", "svg.tga-headview text.tga-query")
    assert tokens, "every one of these pages has an attention"
    every = browser.execute_script(VISIBLE_LINES)
    ActionChains(browser).move_to_element(tokens[-1]).perform()
    ActionChains(browser).move_to_element(browser.find_element("tag name", "h1")).perform()
    assert browser.execute_script(VISIBLE_LINES) == every
    assert browser.find_elements("css selector", "svg.tga-neuron-view"), "the neuron view"
    mats = browser.find_elements("css selector", ".tga-matrices svg.tga-matrix")
    assert mats and all(m.find_elements("css selector", "text.tga-axis-k") for m in mats)
    assert browser_.errors(browser) == []
