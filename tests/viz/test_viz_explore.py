"""The explorer page (tga.viz.explore): its data, checked here against the engine, and the page
itself, loaded in a real headless Chromium (tests/browser.py).

``python tests/viz/test_viz_explore.py`` writes the README's screenshots (docs/explorer_*.png)."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import sys
import warnings
from pathlib import Path

import browser as browser_
import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn
from tinygrad_attn.engine.backward import run_backward
from tinygrad_attn.viz import explore
from tinygrad_attn.viz.explore import MAX_CELLS, from_f16, heat_map
from tinygrad_attn.viz.graph import Walk

ROOT = Path(__file__).resolve().parents[2]


def _mha_loss(causal: bool = True, device: str = "cpu"):
    tga.manual_seed(0)
    m = tga.models.BatchFirstAttention(16, 2).to(device)
    x = Tensor(
        Tensor.randn(1, 4, 16).detach().numpy(), device=device, requires_grad=True, name="x"
    )  # (a leaf on device)
    return (lambda x: (m(x, is_causal=causal) ** 2).mean()), x, m


def _engine_order(loss: Tensor) -> list[int]:
    """The ops whose backward the engine calls, in order (as indices of the walk), found by
    wrapping each op instance's class here, independently of the explorer's own recording."""
    w = Walk(loss)
    index = {id(t._ctx): i for i, t in enumerate(w.ops)}
    order: list[int] = []
    classes = {type(t._ctx) for t in w.ops}
    own = {c: c.__dict__.get("backward") for c in classes}
    origs = {c: c.backward for c in classes}  # (all read first: a subclass may inherit its backward)
    try:
        for c in classes:
            orig = origs[c]

            def wrapped(self, g, ns, inputs, out, _orig=orig):
                order.append(index[id(self)])
                return _orig(self, g, ns, inputs, out)

            c.backward = wrapped
        loss.backward(retain_graph=True)
    finally:
        for c, b in own.items():
            if b is None:
                del c.backward
            else:
                c.backward = b
    return order


# -- the data ------------------------------------------------------------------------------
def test_steps_are_the_engines_order_and_shares_fill_up():
    tga.manual_seed(1)
    x = Tensor.randn(3, 4, requires_grad=True, name="x")
    w = Tensor.randn(4, 4, requires_grad=True, name="w")
    h = (x @ w).tanh()
    loss = (h * h + h.exp() * x).sum()  # h used three times, x twice
    expected = _engine_order(loss)
    page = explore(loss)
    got = [int(s["node"][2:]) for s in page.data["steps"]]
    assert got == expected and len(got) == len(Walk(loss).ops)
    shares: dict[str, list] = {}
    for s in page.data["steps"]:
        for d in s["sends"]:
            if "shares" in d:
                shares.setdefault(d["to"], []).append((d["share"], d["shares"]))
    assert shares, "a reused tensor's gradient is a sum of shares"
    for seq in shares.values():  # each sum fills one share at a time, up to all of them
        assert [k for k, _ in seq] == list(range(1, len(seq) + 1)) and seq[-1][0] == seq[-1][1]


def test_every_step_sends_along_an_edge_of_the_backward_picture():
    import html as html_

    f, x, _ = _mha_loss()
    page = explore(f, x)
    backward = page.html[page.html.index('id="tga-backward"') :]
    titles = {html_.unescape(t) for t in re.findall(r"<title>([^<]*)</title>", backward)}
    sends = [d for s in page.data["steps"] for d in s["sends"]]
    assert sends and all(d["edge"] in titles and d["to"] in titles for d in sends)
    assert all(s["node"] in titles for s in page.data["steps"])


def test_saved_arrays_in_the_picture_are_the_tensors_they_hold():
    import html as html_

    f, x, _ = _mha_loss()
    page = explore(f, x)
    backward = page.html[page.html.index('id="tga-backward"') :]
    nodes = dict(re.findall(r'<g id="node\d+" class="node saved">\s*<title>(sv\d+)</title>(.*?)</g>', backward, re.S))
    assert len(nodes) >= 5 and set(nodes) <= set(page.data["nodes"])
    for sid, svg in nodes.items():
        rec = page.data["tensors"][page.data["nodes"][sid]]
        words = html_.unescape(re.sub(r"<[^>]+>", " ", svg))
        assert rec["shape"] in words, (sid, rec["shape"], words)
    intermediate = [page.data["tensors"][k] for k in page.data["nodes"].values() if k.startswith("sv")]
    assert intermediate and all(r["value"] is not None for r in intermediate)


def test_a_non_scalar_output_is_seeded_with_ones(device):
    x = Tensor.randn(2, 3, requires_grad=True, name="x", device=device)
    y = x.softmax(-1) * 2.0
    with pytest.warns(UserWarning, match="~0 next to their values"):  # (rows of a softmax sum to 1: d/dx is 0)
        page = explore(y)
    assert [s["op"] for s in page.data["steps"]] == ["mul", "softmax"]
    rec = page.data["tensors"][page.data["nodes"]["t0"]]
    assert rec["device"] == str(x.device) and rec["grad"] is not None
    np.testing.assert_allclose(rec["grad"]["max"], 0.0, atol=1e-6)  # softmax rows sum to 1: d sum / d x = 0


def test_an_op_class_that_inherits_its_backward_is_logged_once_per_step():
    from tinygrad_attn.engine.function import Function

    class Double(Function):
        def forward(self, ns, a):
            return a * 2

        def backward(self, g, ns, inputs, out):
            return (g * 2,)

    class Twice(Double):  # the same op under another name: inherits backward
        pass

    x = Tensor.randn(3, requires_grad=True)
    loss = Twice.apply(Double.apply(x)).sum()
    page = explore(loss)
    assert [s["op"] for s in page.data["steps"]] == ["sum", "twice", "double"]
    assert "backward" not in Twice.__dict__ and Double.__dict__["backward"].__name__ == "backward"


def test_gradients_match_backward_and_nothing_is_written():
    f, x, m = _mha_loss()
    page = explore(f(x))
    assert x.grad is None and all(p.grad is None for p in m.parameters()), "explore leaves .grad alone"
    loss = f(x)
    loss.backward()
    key = page.data["nodes"]["t0"]
    rec = page.data["tensors"][key]
    assert rec["title"] == "x" and rec["shape"] == "(1, 4, 16)" and rec["dtype"] == "float32"
    assert rec["grad"]["min"] == pytest.approx(float(x.grad.detach().numpy().min()), rel=1e-5)
    assert rec["grad"]["max"] == pytest.approx(float(x.grad.detach().numpy().max()), rel=1e-5)


def test_a_function_gives_the_program_lines_of_each_node_and_step():
    f, x, _ = _mha_loss()
    page = explore(f, x)
    code = page.data["program"]
    assert code and "def program" in code
    lines = {ln.strip() for ln in code.splitlines()}
    ops = [r for r in page.data["tensors"].values() if r["op"] in ("linear", "attention", "pow")]
    assert ops and all(r["line"] and set(r["line"]) <= lines for r in ops)
    stepped = [s for s in page.data["steps"] if s["lines"]]
    assert len(stepped) >= len(page.data["steps"]) // 2 and all(set(s["lines"]) <= lines for s in stepped)
    assert any(ln.startswith("grad_") for s in stepped for ln in s["lines"])


@pytest.mark.parametrize("decomposed", [False, True])
def test_attention_weights_of_the_library_block_fused_and_decomposed(decomposed, device):
    f, x, _ = _mha_loss(device=device)
    with tga.decompose() if decomposed else _null():
        page = explore(f, x, tokens=["a", "b", "c", "d"])
    (layer,) = page.data["attention"]
    w = from_f16(layer["w"])
    assert layer["heads"] == 2 and w.shape == (2, 4, 4) and layer["q"] == ["a", "b", "c", "d"]
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-3)
    assert np.all(np.triu(w, 1) < 1e-6), "causal: no weight on later tokens"
    return_ = _weights_and_grad()
    np.testing.assert_allclose(w, return_[0], atol=2e-4)
    np.testing.assert_array_equal(page.weights(0), w)
    np.testing.assert_array_equal(page.weights(0, grad=True), from_f16(layer["g"]))
    # (a masked weight stays 0 whatever its gradient: the page stores 0 there)
    np.testing.assert_allclose(from_f16(layer["g"]), np.where(return_[0] > 0, return_[1], 0.0), atol=1e-5, rtol=1e-3)


def _null():
    import contextlib

    return contextlib.nullcontext()


def _weights_and_grad():
    """The weights and d loss / d weights of _mha_loss's attention, from need_weights=True."""
    tga.manual_seed(0)
    m = tga.models.BatchFirstAttention(16, 2)
    x = Tensor.randn(1, 4, 16, requires_grad=True, name="x")
    with tga.decompose():
        out, wts = m(x, is_causal=True, need_weights=True)
    wts.retain_grad()
    ((out**2).mean()).backward()
    return wts.detach().numpy()[0], wts.grad.detach().numpy()[0]


@pytest.mark.parametrize("kind", ["MultiheadAttention", "AdditiveAttention", "GeneralAttention", "DotAttention"])
def test_attention_is_found_in_every_attention_module(kind):
    tga.manual_seed(0)
    q = Tensor.randn(2, 3, 8, requires_grad=True)
    kv = Tensor.randn(2, 5, 8, requires_grad=True)
    if kind == "MultiheadAttention":
        m = nn.MultiheadAttention(8, 2, batch_first=True)
        out = m(q, kv, kv, need_weights=False)[0]
        heads = 2
    else:
        m = {
            "AdditiveAttention": lambda: nn.AdditiveAttention(8, 8, 6),
            "GeneralAttention": lambda: nn.GeneralAttention(8, 8),
            "DotAttention": nn.DotAttention,
        }[kind]()
        out = m(q, kv, kv)[0]
        heads = 1
    page = explore(out.sum())
    (layer,) = page.data["attention"]
    w = from_f16(layer["w"])
    assert w.shape == (heads, 3, 5) and layer["heads"] == heads
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-3)
    assert layer["g"] is not None


@pytest.mark.parametrize("kind", ["AdditiveAttention", "GeneralAttention", "DotAttention"])
def test_masked_attention_weights_are_found_with_zeros_where_masked(kind):
    # A key padding mask makes the score attentions' weights one masked softmax: the page
    # shows them, zero on the padding, one per query over the keys it may see.
    tga.manual_seed(0)
    q = Tensor.randn(2, 3, 8, requires_grad=True)
    kv = Tensor.randn(2, 5, 8, requires_grad=True)
    keep = np.array([[True, True, True, False, False], [True] * 5])
    m = {
        "AdditiveAttention": lambda: nn.AdditiveAttention(8, 8, 6),
        "GeneralAttention": lambda: nn.GeneralAttention(8, 8),
        "DotAttention": nn.DotAttention,
    }[kind]()
    page = explore(m(q, kv, kv, mask=Tensor(keep))[0].sum())
    (layer,) = page.data["attention"]
    w = from_f16(layer["w"])
    assert w.shape == (1, 3, 5)  # (heads, queries, keys) of the first sequence
    assert np.all(w[:, :, 3:] == 0)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-3)


def test_attention_from_primitives_needs_no_module():
    tga.manual_seed(0)
    q = Tensor.randn(1, 2, 4, 8, requires_grad=True)
    w = (q @ q.mT * 8**-0.5).softmax(-1)
    page = explore((w @ q).sum())
    (layer,) = page.data["attention"]
    assert layer["heads"] == 2 and from_f16(layer["w"]).shape == (2, 4, 4)


@pytest.mark.slow
def test_two_layer_gpt_page_is_small_and_full_values_are_one_option_away():
    tga.manual_seed(0)
    gpt = tga.models.GPT(vocab_size=64, d_model=64, n_heads=4, n_layers=2, max_len=32)
    tokens = Tensor(np.arange(24).reshape(1, 24) % 64)
    logits = gpt(tokens)
    loss = tga.functional.cross_entropy(logits.reshape(-1, 64), Tensor(np.arange(1, 25) % 64))
    page = explore(loss, tokens=[f"t{i}" for i in range(24)])
    assert len(page.html.encode()) < 3_000_000, len(page.html)
    assert len(page.data["attention"]) == 2 and all(a["heads"] == 4 for a in page.data["attention"])
    emb = next(r for r in page.data["tensors"].values() if r["shape"] == "(64, 64)" and r["value"])
    assert emb["value"]["rows"] * emb["value"]["cols"] <= MAX_CELLS and "u8" in emb["value"]
    full = explore(loss, full_values=True)
    femb = next(r for r in full.data["tensors"].values() if r["shape"] == "(64, 64)" and r["value"])
    assert femb["value"]["rows"] == 64 and femb["value"]["cols"] == 64 and "f32" in femb["value"]


def test_heat_map_downsamples_and_full_keeps_every_number():
    a = np.arange(2 * 3 * 40 * 50, dtype=np.float64).reshape(2, 3, 40, 50)
    h = heat_map(a)
    assert h["lead"] == [2, 3] and h["rows"] * h["cols"] * 6 <= MAX_CELLS + 6 * 16
    assert h["shape"] == [2, 3, 40, 50] and h["min"] >= 0 and h["max"] <= a.max()
    f = heat_map(a, full=True)
    back = np.frombuffer(base64.b64decode(f["f32"]), dtype="<f4").reshape(a.shape)
    np.testing.assert_array_equal(back, a.astype(np.float32))
    assert heat_map(np.array(3.0))["rows"] == 1 and heat_map(np.zeros((0, 2))) is None


def test_page_is_self_contained():
    f, x, _ = _mha_loss()
    html = explore(f, x).html
    assert "<script src" not in html and "<link" not in html and "@import" not in html
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink",
                    "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"}, urls  # fmt: skip
    assert html.count("<svg") >= 2 and "tgaExplorer" in html


def test_graphviz_pure_draws_the_page_too(monkeypatch):
    monkeypatch.setenv("TINYGRAD_ATTN_RENDERER", "graphviz-pure")
    if tga.viz.renderer().name != "graphviz-pure":
        pytest.skip("graphviz-pure is not installed here")
    f, x, _ = _mha_loss()
    page = explore(f, x)
    assert page.data["renderer"] == "graphviz-pure" and "<title>bw0</title>" in page.html


def test_nan_and_inf_gradients_still_make_a_page():
    x = Tensor([0.0, 1.0, 4.0], requires_grad=True, name="x")
    with np.errstate(divide="ignore", invalid="ignore"):
        page = explore(x.sqrt().sum())  # d sqrt(x) / dx is inf at 0
    embedded = page.html.split('id="tga-data">', 1)[1].split("</script>", 1)[0]
    json.loads(embedded, parse_constant=lambda c: pytest.fail(f"{c} in the page's JSON"))  # what JSON.parse reads
    rec = page.data["tensors"][page.data["nodes"]["t0"]]
    assert rec["grad"] is not None and rec["grad"]["max"] == pytest.approx(0.5)


def test_without_a_renderer_the_page_says_how_to_get_one(monkeypatch):
    monkeypatch.setenv("TINYGRAD_ATTN_RENDERER", "none")
    f, x, _ = _mha_loss()
    page = explore(f, x)
    assert "<svg" not in page.html.split("<main>", 1)[1].split('<div id="tga-attention">', 1)[0]
    assert "pip install graphviz-pure" in page.html and page.data["steps"]


def test_bad_input_names_explore():
    with pytest.raises(TypeError, match="explore"):
        explore(3.0)
    with pytest.raises(ValueError, match="explore: max_cells"):
        explore(Tensor.ones(2, requires_grad=True).sum(), max_cells=2)
    with pytest.raises(TypeError, match="explore"):
        explore(Tensor.ones(2, requires_grad=True).sum(), 1)


def test_a_function_the_tracer_cannot_record_is_explored_eagerly():
    x = Tensor.randn(3, requires_grad=True, name="x")

    def reads_a_value(x):
        return x.exp().sum() * float(x.sum().item() > 0)  # a Python decision on a value: no program

    with pytest.warns(UserWarning, match="could not be traced"):
        page = explore(reads_a_value, x)
    assert page.data["program"] is None and [s["op"] for s in page.data["steps"]][-1] == "exp"


def test_after_backward_the_page_says_why_there_are_no_steps():
    x = Tensor.randn(3, requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    with pytest.warns(UserWarning, match="retain_graph"):
        page = explore(loss)
    assert page.data["steps"] == [] and page.data["tensors"]


def test_jupyter_reprs_are_offline(tmp_path):
    f, x, _ = _mha_loss()
    page = explore(f, x, path=tmp_path / "p.html")
    assert (tmp_path / "p.html").read_text(encoding="utf-8") == page.html
    frame = page._repr_html_()
    assert frame.startswith("<iframe srcdoc=") and "<script" not in frame.replace("&lt;script", "")
    prog = tga.jit.trace(f, x)
    assert "<pre" in prog._repr_html_() and "def program" in prog._repr_html_()


def test_cli_explore_writes_a_page(tmp_path, capsys):
    from tinygrad_attn.viz.cli import main

    out = tmp_path / "mha.html"
    assert main(["explore", "mha", "--out", str(out), "--tokens", "a b c d"]) == 0
    html = out.read_text(encoding="utf-8")
    assert "tgaExplorer" in html and '"q":["a","b","c","d"]' in html and "wrote" in capsys.readouterr().out


def test_run_backward_is_left_as_it_was():
    """The explorer wraps op classes' backward only while it runs: afterwards they are the originals."""
    from tinygrad_attn.ops import fused

    before = fused.Attention.__dict__.get("backward")
    f, x, _ = _mha_loss()
    explore(f, x)
    assert fused.Attention.__dict__.get("backward") is before
    loss = f(x)
    (g,) = run_backward([loss], [np.ones((), np.float32)], retain_graph=False, create_graph=False, targets=[x])
    assert g.shape == (1, 4, 16)


# -- the page in a real browser -------------------------------------------------------------
def _driver():
    return browser_.driver()


@pytest.fixture(scope="module")
def browser():
    d = _driver()
    yield d
    d.quit()


_errors, _open = browser_.errors, browser_.open_page


@pytest.mark.slow
def test_browser_node_panel_and_backward_steps(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    f, x, _ = _mha_loss()
    page = explore(f, x, tokens=["the", "cat", "sat", "down"], path=tmp_path / "mha.html")
    _open(browser, tmp_path / "mha.html")
    assert _errors(browser) == []
    node = browser.find_element(By.CSS_SELECTOR, "#tga-forward g.node.op")
    node.click()
    rec = page.data["tensors"][page.data["nodes"][node.find_element(By.TAG_NAME, "title").get_attribute("textContent")]]
    assert browser.find_element(By.CSS_SELECTOR, "#tga-panel .tga-shape").text == rec["shape"]
    assert browser.find_element(By.CSS_SELECTOR, "#tga-panel .tga-dtype").text == "float32"
    expected = [f"bw{i}" for i in _engine_order(f(x))]
    seen = []
    for _ in range(3):
        browser.find_element(By.ID, "tga-next").click()
        cur = browser.find_elements(By.CSS_SELECTOR, "#tga-backward g.node.tga-current")
        assert len(cur) == 1
        seen.append(cur[0].find_element(By.TAG_NAME, "title").get_attribute("textContent"))
        sent = browser.find_elements(By.CSS_SELECTOR, "#tga-backward g.edge.tga-sent")
        assert sent, "the gradient edge the step sends along is highlighted"
    assert seen == expected[:3]
    # a 4-D value: a slider per leading axis longer than 1 picks the 2-D slice shown
    four = next(n for n, k in page.data["nodes"].items() if n.startswith("op") and
                page.data["tensors"][k]["shape"] == "(1, 2, 4, 8)")  # fmt: skip
    browser.execute_script("window.tgaExplorer.showNode(arguments[0], 'forward')", four)
    sliders = browser.find_elements(By.CSS_SELECTOR, "#tga-panel .tga-heat input.tga-slider")
    assert len(sliders) == 2  # value and gradient: axis 1 (2 heads) each; axis 0 has one slice
    info = browser.find_element(By.CSS_SELECTOR, "#tga-panel .tga-heat-info")
    assert info.text.startswith("[0, 0, :, :]")
    browser.execute_script("arguments[0].value = 1; arguments[0].dispatchEvent(new Event('input'))", sliders[0])
    assert info.text.startswith("[0, 1, :, :]")
    assert "step 3 of" in browser.find_element(By.ID, "tga-step-status").text
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)  # the arrow keys step too
    assert "step 4 of" in browser.find_element(By.ID, "tga-step-status").text
    # the program: a click on a line opens the node it computes
    browser.find_element(By.CSS_SELECTOR, "#tga-tabs button[data-view=program]").click()
    line = next(
        ln for ln in browser.find_elements(By.CSS_SELECTOR, "#tga-program span.tga-linked") if "linear" in ln.text
    )
    line.click()
    assert browser.find_element(By.CSS_SELECTOR, "#tga-panel .tga-op").text == "linear"
    assert browser.find_element(By.CSS_SELECTOR, "#tga-panel .tga-line").text.strip() == line.text.strip()
    assert _errors(browser) == []


@pytest.mark.slow
def test_browser_head_view_draws_one_line_set_per_head(browser, tmp_path):
    from selenium.webdriver.common.by import By

    tga.manual_seed(0)
    gpt = tga.models.GPT(vocab_size=16, d_model=16, n_heads=4, n_layers=2, max_len=8)
    explore(gpt(Tensor(np.array([[1, 2, 3, 4, 5]]))).sum(), tokens=list("abcde"), path=tmp_path / "gpt.html")
    _open(browser, tmp_path / "gpt.html")
    browser.find_element(By.CSS_SELECTOR, "#tga-tabs button[data-view=attention]").click()
    heads = browser.find_elements(By.CSS_SELECTOR, "svg.tga-headview g.tga-head")
    assert len(heads) == 4 and all(h.find_elements(By.TAG_NAME, "line") for h in heads)
    assert [t.text for t in browser.find_elements(By.CSS_SELECTOR, "svg.tga-headview text.tga-query")] == list("abcde")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".tga-modelview svg.tga-thumb")) == 2 * 4
    assert len(browser.find_elements(By.CSS_SELECTOR, ".tga-matrices svg.tga-matrix")) == 4
    browser.find_element(By.ID, "tga-grad-overlay").click()
    assert browser.find_elements(By.CSS_SELECTOR, "svg.tga-headview line")
    browser.find_element(By.CSS_SELECTOR, ".tga-head-toggle[data-head='1']").click()
    assert not browser.find_element(By.CSS_SELECTOR, "svg.tga-headview g.tga-head[data-head='1']").is_displayed()
    # search and folding a module
    browser.find_element(By.CSS_SELECTOR, "#tga-tabs button[data-view=forward]").click()
    browser.find_element(By.ID, "tga-search").send_keys("attention")
    assert browser.find_elements(By.CSS_SELECTOR, "#tga-forward g.node.tga-match")
    zoom = "return document.querySelector('#tga-forward svg').viewBox.baseVal.width"
    before = browser.execute_script(zoom)
    browser.execute_script("document.querySelector('#tga-forward svg').dispatchEvent(new WheelEvent('wheel', "
                           "{deltaY: -100, clientX: 200, clientY: 200, bubbles: true, cancelable: true}))")  # fmt: skip
    assert browser.execute_script(zoom) < before, "the wheel zooms in"
    cluster = browser.find_element(By.CSS_SELECTOR, "#tga-forward g.cluster text")
    browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", cluster)
    assert browser.find_elements(By.CSS_SELECTOR, "#tga-forward g.cluster.tga-folded")
    assert browser.find_elements(By.CSS_SELECTOR, "#tga-forward g.node.tga-in-fold")
    assert _errors(browser) == []


def screenshots(out: Path = ROOT / "docs") -> None:
    """The README's pictures of the explorer: the multi-head attention example, in Chromium."""
    import tempfile

    from selenium.webdriver.common.by import By

    d = _driver()
    try:
        f, x, _ = _mha_loss()
        with tempfile.TemporaryDirectory() as tmp:
            p = Path(tmp) / "mha.html"
            explore(f, x, tokens=["the", "cat", "sat", "down"], path=p)
            d.set_window_size(1280, 760)
            _open(d, p)
            for _ in range(5):
                d.find_element(By.ID, "tga-next").click()
            d.save_screenshot(str(out / "explorer_backward.png"))
            d.find_element(By.CSS_SELECTOR, "#tga-tabs button[data-view=attention]").click()
            d.save_screenshot(str(out / "explorer_attention.png"))
    finally:
        d.quit()


if __name__ == "__main__":
    screenshots(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs")


# -- the command line's pages ---------------------------------------------------------------
def _page_data(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return json.loads(text.split('id="tga-data">', 1)[1].split("</script>", 1)[0].replace("<\\/", "</"))


@pytest.mark.parametrize("block", ["encoder", "decoder", "gpt"])
def test_cli_default_loss_sends_real_gradients_to_every_tensor(block, tmp_path):
    from tinygrad_attn.viz.cli import main

    out = tmp_path / f"{block}.html"
    with warnings_as_errors():
        assert main(["explore", block, "--out", str(out)]) == 0
    data = _page_data(out)
    assert data["warning"] is None
    tiny = [r["title"] for r in data["tensors"].values() if r.get("grad_negligible")]
    assert all(t.endswith("k_proj.bias") for t in tiny), tiny  # (a key bias moves no softmax: its gradient is 0)
    grads = [r for r in data["tensors"].values() if r["grad"] is not None]
    assert len(grads) > 10 and all(max(abs(r["grad"]["min"]), abs(r["grad"]["max"])) > 0 for r in grads)


@contextlib.contextmanager
def warnings_as_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        yield


def test_a_loss_that_sends_only_rounding_noise_is_flagged(tmp_path):
    from tinygrad_attn.viz.cli import main

    out = tmp_path / "sum.html"
    with pytest.warns(UserWarning, match="~0 next to their values"):
        assert main(["explore", "encoder", "--loss", "sum", "--out", str(out)]) == 0
    data = _page_data(out)
    assert "LayerNorm" in data["warning"]
    x = next(r for r in data["tensors"].values() if r["title"] == "x")
    assert x["grad_negligible"]
    norm = [r for r in data["tensors"].values() if r["op"] == "layer_norm" and r["grad"] is not None][-1]
    assert not norm.get("grad_negligible"), "what the sum sees directly has a real gradient"


def test_tokens_of_the_wrong_length_are_refused_or_numbered_with_a_warning(tmp_path):
    from tinygrad_attn.viz.cli import main

    with pytest.raises(SystemExit, match="--tokens gives 3 tokens .* has 4"):
        main(["explore", "mha", "--out", str(tmp_path / "p.html"), "--tokens", "a b c"])
    f, x, _ = _mha_loss()
    with pytest.warns(UserWarning, match="tokens has 2 labels but .* has 4 queries"):
        page = explore(f, x, tokens=["a", "b"])
    assert page.data["attention"][0]["q"] == ["0", "1", "2", "3"]


def test_cli_device_option_and_an_unusable_device_in_one_line(tmp_path):
    import subprocess

    from tinygrad_attn.viz.cli import main

    out = tmp_path / "p.html"
    assert main(["explore", "sdpa", "--out", str(out), "--device", "cpu"]) == 0
    assert {r["device"] for r in _page_data(out)["tensors"].values()} == {"cpu"}
    assert main(["graph", "sdpa", "--out", str(tmp_path / "p.dot"), "--device", "cpu"]) == 0
    assert main(["graph", "sdpa", "--out", str(tmp_path / "p.dot"), "--device", "nowhere"]) == 2
    env = dict(__import__("os").environ, TINYGRAD_ATTN_DEVICE="nowhere", PYTHONPATH=str(ROOT))
    for cmd in (["explore", "mha", "--out", str(out)], ["graph", "mha", "--out", str(tmp_path / "q.dot")]):
        r = subprocess.run([sys.executable, "-m", "tinygrad_attn", *cmd], env=env, capture_output=True, text=True,
                           timeout=120)  # fmt: skip
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1 and "TINYGRAD_ATTN_DEVICE" in r.stderr, r.stderr
