"""What a picture tells a reader without help: which input is which, names as written,
labelled arguments, distinct saved arrays, one left-to-right order, a legend for every
word, a warning when nothing was recorded, a readable default for large graphs, and the
full record of each node on hover."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from test_viz import Dot, dot_of

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.models import GPT, BatchFirstAttention
from tinygrad_attn.viz import GraphvizNotFoundError, draw_graph, render

F = tga.functional


def _headlabel(attrs: str) -> str | None:
    m = re.search(r'headlabel=(?:"([^"]*)"|(\S+))', attrs)
    return None if m is None else m.group(1) or m.group(2)


def _labels_into(d: Dot, title: str) -> dict[str, str]:
    """{source node title: head label} of the edges into the op node titled ``title``."""
    (nid,) = [n for n in d.nodes if n != "legend" and d.title(n) == title]
    out = {}
    for a, b, attrs in d.edges:
        if b == nid:
            out[d.title(a)] = _headlabel(attrs)
    return out


@pytest.mark.parametrize(
    ("make", "op", "want"),
    [
        (lambda a, b: a - b, "sub", ("a", "b")),
        (lambda a, b: a / b, "div", ("a", "b")),
        (lambda a, b: a @ b.mT, "matmul", ("a", "b")),
        (lambda a, b: a.abs() ** b, "pow", ("base", "exponent")),
        (lambda a, b: tga.cat([a, b], axis=0), "cat", ("0", "1")),
    ],
)
def test_edges_into_non_commutative_ops_say_which_input_is_which(make, op, want):
    a = Tensor.randn(2, 2, requires_grad=True, name="p")
    b = Tensor.randn(2, 2, requires_grad=True, name="q")
    d = dot_of(make(a, b).sum())
    labels = _labels_into(d, op)
    first = "abs" if op == "pow" else "p"
    second = "mT" if op == "matmul" else "q"
    assert labels[first] == want[0] and labels[second] == want[1]
    assert "which input an edge is" in d.label("legend")
    back = dot_of(make(a, b).sum(), backward=True)
    assert {f"∂{w}" for w in want} <= {_headlabel(attrs) for *_, attrs in back.edges}


def test_where_labels_its_condition_and_branches_and_commutative_ops_stay_bare():
    a = Tensor.randn(3, requires_grad=True, name="p")
    b = Tensor.randn(3, requires_grad=True, name="q")
    d = dot_of(tga.where(a > 0, a, b).sum())
    assert set(_labels_into(d, "where").values()) == {"cond", "if true", "if false"}
    plain = dot_of((a + b) * a)
    assert all("headlabel" not in attrs for *_, attrs in plain.edges)
    assert "which input" not in plain.label("legend")


def test_transposes_are_drawn_as_the_user_wrote_them():
    x = Tensor.randn(2, 3, 4, requires_grad=True, name="x")
    m = Tensor.randn(3, 4, requires_grad=True, name="m")
    d = dot_of(x.transpose(0, 2).sum() + x.mT.sum() + m.T.sum() + x.permute(1, 0, 2).sum())
    titles = d.titles("op")
    assert {"transpose", "mT", "T", "permute"} <= set(titles)
    labels = {d.title(n): d.label(n) for n in d.of_kind("op")}
    assert "swap axes 0 ↔ 2" in labels["transpose"]
    assert "swap axes 1 ↔ 2" in labels["mT"]
    assert "axes (1, 0, 2)" in labels["permute"]


def test_axes_lines_say_they_are_axes():
    x = Tensor.randn(2, 3, requires_grad=True, name="x")
    d = dot_of(x.max(axis=1).sum() + x.sum(axis=0).sum())
    lines = [d.label(n).split("\n") for n in d.of_kind("op") if d.title(n) in ("max", "sum")]
    assert ["(2,)", "axes (1,)"] in [ln[1:] for ln in lines]
    assert ["(3,)", "axes (0,)"] in [ln[1:] for ln in lines]


def test_saved_arrays_are_told_apart_by_name_or_numbered_op():
    x = Tensor.randn(2, 3, 4, requires_grad=True, name="x")
    with tga.decompose():
        y = (x.softmax(-1) / 3.0).softmax(-1)
    d = dot_of(y.sum(), backward=True)
    titles = [d.title(n) for n in d.of_kind("saved")]
    assert len(titles) == len(set(titles)), titles
    assert any(re.fullmatch(r"div #\d output", t) for t in titles)
    steps = [d.title(n) for n in d.of_kind("backward")]
    assert len([s for s in steps if s.startswith("div #")]) == 3
    named = Tensor.randn(3, requires_grad=True, name="x")
    h = named.exp()
    h.name = "h"
    assert "h" in dot_of((h * h).sum(), backward=True).titles("saved")


def test_titles_with_underscores_keep_clear_of_the_line_below():
    w = Tensor.randn(2, 2, requires_grad=True, name="W_query0")
    d = dot_of((w * w).sum())
    (wi,) = d.of_kind("input")
    raw = re.search(r"label=<(.*)> class=", d.nodes[wi]).group(1)
    assert raw.startswith('<B>W_query0</B><BR/><FONT POINT-SIZE="3">')


def test_the_legend_explains_shares_and_intermediates():
    x = Tensor.randn(4, 5, requires_grad=True, name="x")
    w = Tensor.ones(5, requires_grad=True, name="w")
    d = dot_of(F.layer_norm(x, w.shape, w).sum() + x.sum(), backward=True)
    legend = d.label("legend")
    assert "one share per use" in legend and "intermediate" in legend
    assert any(d.title(n) == "layer_norm intermediate" for n in d.of_kind("saved"))


def test_a_graph_with_nothing_recorded_warns_and_says_what_to_do():
    x = Tensor.randn(2, 3, name="x")  # nothing requires grad: nothing is recorded
    y = (x * 2).softmax(-1)
    for backward in (False, True):
        with pytest.warns(UserWarning, match="requires_grad=True"):
            g = draw_graph(y, backward=backward)
        assert "tga.jit.trace" in g.source and "No op was recorded" in g.source
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        draw_graph((Tensor.randn(2, requires_grad=True) * 2).sum())  # a recorded graph: no warning


def test_large_graphs_collapse_to_fit_by_default_and_draw_whole_on_request():
    model = GPT(vocab_size=50, d_model=32, n_heads=4, n_layers=4, max_len=16)
    loss = model(Tensor(np.arange(16).reshape(2, 8) % 50)).sum()
    d = dot_of(loss)
    assert len(d.nodes) <= 150 + 1  # + the legend
    assert "collapsed to fit 150 nodes" in d.source and "max_nodes=None draws all" in d.source
    full = dot_of(loss, max_nodes=None)
    assert len(full.nodes) > 150 and "collapsed" not in full.source
    assert len(dot_of(loss, max_nodes=40).nodes) <= 41
    small = dot_of(Tensor.randn(3, requires_grad=True).exp().sum())
    assert "collapsed" not in small.source


def _tooltip(d: Dot, nid: str) -> str:
    return re.search(r'tooltip="([^"]*)"', d.nodes[nid]).group(1).replace("\\n", "\n")


def test_every_node_carries_its_full_record_for_hovering():
    mha = BatchFirstAttention(8, 2)
    x = Tensor.randn(1, 3, 8, requires_grad=True, name="x")
    out = mha(x)
    out.sum().backward(retain_graph=True)
    d = dot_of(out.sum())
    (xi,) = d.of_kind("input")
    tip = _tooltip(d, xi)
    assert tip.startswith("input x") and "shape (1, 3, 8) · float32 · cpu" in tip
    assert "values min" in tip and "grad min" in tip and "‖∇‖" in tip
    (w,) = [n for n in d.of_kind("param") if d.title(n) == "q_proj.weight"]
    assert "in q_proj" in _tooltip(d, w)
    ops = [n for n in d.of_kind(*("op", "fused")) if d.title(n).startswith("attention")]
    assert ops and "op attention" in _tooltip(d, ops[0]) or "fused op attention" in _tooltip(d, ops[0])
    back = dot_of(out.sum(), backward=True)
    for kind in ("backward", "saved", "grad_param", "grad_input", "accumulate"):
        for n in back.of_kind(kind):
            assert _tooltip(back, n), f"{kind} node {back.title(n)} has no hover text"


def test_hover_text_reaches_the_svg(tmp_path):
    x = Tensor.randn(2, 3, requires_grad=True, name="x")
    try:
        path = render((x * x).sum(), tmp_path / "g.svg")
    except GraphvizNotFoundError:
        pytest.skip("no Graphviz renderer on this machine")
    svg = path.read_text()
    assert re.search(r'<a xlink:title="input x&#10;shape \(2, 3\) · float32 · cpu', svg)
    assert "<title>legend</title>" in svg


def _cluster_x(svg: str, label: str) -> float:
    """The x coordinate of the label text of the cluster whose label starts with ``label``."""
    m = re.search(rf'<text[^>]*x="([\d.]+)"[^>]*>{re.escape(label)}', svg)
    assert m, f"no cluster labelled {label!r}"
    return float(m.group(1))


def test_forward_and_backward_pictures_keep_q_k_v_in_one_order(tmp_path):
    mha = BatchFirstAttention(8, 2)
    x = Tensor.randn(1, 3, 8, requires_grad=True, name="x")
    with tga.decompose():
        loss = mha(x).sum()
    xs = {}
    for backward in (False, True):
        try:
            svg = render(loss, tmp_path / f"g{backward}.svg", backward=backward).read_text()
        except GraphvizNotFoundError:
            pytest.skip("no Graphviz renderer on this machine")
        xs[backward] = [_cluster_x(svg, f"{p}_proj : Linear") for p in "qkv"]
        assert xs[backward] == sorted(xs[backward]), f"backward={backward}: q, k, v at x = {xs[backward]}"
