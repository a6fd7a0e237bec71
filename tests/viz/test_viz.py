"""Graph pictures: structural checks on the DOT source, rendered files, attention heat maps.

The DOT source is read back with a small line parser (:class:`Dot`): node ids with their
kind (the ``class`` attribute) and label text, edges, and the nesting of clusters.
"""

from __future__ import annotations

import html
import re
import sys

import graphviz
import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.engine.function import Function
from tinygrad_attn.engine.switches import scope
from tinygrad_attn.models import LayerNorm, Linear, Module, ModuleList, Parameter
from tinygrad_attn.viz import GraphvizNotFoundError, draw_graph, plot_attention, render, renderer

F = tga.functional
OP_KINDS = ("op", "fused")


# -- reading DOT source back -----------------------------------------------------------
class Dot:
    """Nodes, edges and clusters of a Digraph's source."""

    _node = re.compile(r"^(\w+) \[(.*)\]$")
    _edge = re.compile(r"^(\w+) -> (\w+)(?: \[(.*)\])?$")

    def __init__(self, g: graphviz.Digraph) -> None:
        self.source = g.source
        self.nodes: dict[str, str] = {}  # id -> attribute text
        self.edges: list[tuple[str, str, str]] = []
        self.clusters: dict[str, str] = {}  # cluster name -> label text
        self.parent: dict[str, str | None] = {}  # node or cluster -> enclosing cluster
        stack: list[str] = []
        for raw in self.source.splitlines():
            line = raw.strip()
            if line.startswith("subgraph "):
                name = line.split()[1]
                self.parent[name] = stack[-1] if stack else None
                stack.append(name)
            elif line == "}":
                if stack:
                    stack.pop()
            elif stack and stack[-1] not in self.clusters and line.startswith(("color=", "label=")):
                self.clusters[stack[-1]] = _text(re.search(r"label=<(.*)> \w+=", line).group(1))
            elif m := self._edge.match(line):
                self.edges.append((m.group(1), m.group(2), m.group(3) or ""))
            elif (m := self._node.match(line)) and m.group(1) not in ("graph", "node", "edge"):
                self.nodes[m.group(1)] = m.group(2)
                self.parent[m.group(1)] = stack[-1] if stack else None

    def kind(self, nid: str) -> str:
        return re.search(r"\bclass=(\w+)", self.nodes[nid]).group(1)

    def of_kind(self, *kinds: str) -> list[str]:
        return [n for n in self.nodes if self.kind(n) in kinds]

    def label(self, nid: str) -> str:
        return _text(re.search(r"label=<(.*)> class=", self.nodes[nid]).group(1))

    def title(self, nid: str) -> str:
        return self.label(nid).split("\n")[0]

    def titles(self, *kinds: str) -> list[str]:
        return [self.title(n) for n in self.of_kind(*kinds)]

    def attr(self, nid: str, key: str) -> str:
        return re.search(rf'\b{key}=("[^"]*"|\S+)', self.nodes[nid]).group(1).strip('"')

    def into(self, nid: str) -> list[str]:
        return [a for a, b, _ in self.edges if b == nid]

    def out_of(self, nid: str) -> list[str]:
        return [b for a, b, _ in self.edges if a == nid]

    def cluster_of(self, nid: str) -> str | None:
        c = self.parent[nid]
        return self.clusters[c] if c else None

    def ancestors(self, nid: str) -> list[str]:
        out, c = [], self.parent[nid]
        while c is not None:
            out.append(self.clusters[c])
            c = self.parent[c]
        return out


def _text(label: str) -> str:
    """The label's lines of text (a blank spacer line under the title is not text)."""
    text = html.unescape(re.sub(r"<[^>]+>", "", label.replace("<BR/>", "\n")))
    return "\n".join(line for line in text.split("\n") if line.strip())


def dot_of(roots, **kw) -> Dot:
    """Draw and read back, checking what every picture must satisfy."""
    d = Dot(draw_graph(roots, **kw))
    assert d.nodes, "nothing drawn"
    for a, b, _ in d.edges:  # no dangling ids
        assert a in d.nodes and b in d.nodes, f"edge {a} -> {b} names an undeclared node"
    assert "legend" in d.nodes
    return d


# -- small graphs used below -----------------------------------------------------------
def mlp_graph():
    x = Tensor.randn(2, 3, requires_grad=True, name="x")
    w = Parameter(Tensor.randn(3, 4))
    b = Tensor.randn(4)  # a constant: no gradient, no name
    loss = (x @ w + b).relu().sum()
    return x, w, b, loss


class Block(Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.ff = Linear(d, d)
        self.norm = LayerNorm(d)

    def forward(self, x: Tensor) -> Tensor:
        return self.norm(x + self.ff(x).relu())


class Encoder(Module):
    def __init__(self, d: int = 8, n: int = 2) -> None:
        super().__init__()
        self.layers = ModuleList([Block(d) for _ in range(n)])
        self.head = Linear(d, 2)

    def forward(self, x: Tensor) -> Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def encoder_graph(n: int = 2):
    model = Encoder(8, n)
    x = Tensor.randn(2, 3, 8, requires_grad=True, name="x")
    return model, x, model(x).sum()


# -- forward graph -----------------------------------------------------------------------
def test_forward_graph_draws_op_and_tensor_nodes():
    x, w, b, loss = mlp_graph()
    d = dot_of(loss, params={"fc.weight": w})
    assert sorted(d.titles(*OP_KINDS)) == ["add", "matmul", "relu", "sum"]
    (xi,) = d.of_kind("input")
    assert d.label(xi).split("\n") == ["x", "(2, 3)", "float32 · cpu"]
    (wi,) = d.of_kind("param")
    assert d.title(wi) == "fc.weight" and "(3, 4)" in d.label(wi)
    (bi,) = d.of_kind("const")
    assert "(4,)" in d.label(bi)
    (oi,) = d.of_kind("output")
    assert d.label(oi).split("\n")[1] == "()"
    # data flows x -> matmul -> add -> relu -> sum -> output
    (mm,) = d.out_of(xi)
    assert d.title(mm) == "matmul" and set(d.into(mm)) == {xi, wi}
    add = d.out_of(mm)[0]
    assert d.title(add) == "add" and set(d.into(add)) == {mm, bi}
    assert d.into(oi) and d.title(d.into(oi)[0]) == "sum"


def test_op_nodes_show_output_shape_constants_and_arguments():
    x = Tensor.randn(2, 3, 4, requires_grad=True, name="x")
    y = (x * 0.125).permute(2, 0, 1)
    z = y[0].reshape(3, 2).sum(axis=1)
    d = dot_of(z)
    labels = {d.title(n): d.label(n) for n in d.of_kind("op")}
    assert labels["mul"].split("\n")[1:] == ["(2, 3, 4)", "const 0.125"]
    assert "(4, 2, 3)" in labels["permute"] and "(2, 0, 1)" in labels["permute"]
    assert "[0]" in labels["getitem"]
    assert labels["sum"].split("\n")[1:] == ["(3,)", "axes (1,)"]
    assert labels["reshape"].split("\n")[1:] == ["(3, 2)"]  # no second copy of the shape


def test_kinds_have_their_own_colours_and_legend():
    x, w, b, loss = mlp_graph()
    d = dot_of(loss)
    fills = {d.kind(n): d.attr(n, "fillcolor") for n in d.of_kind("input", "param", "const", "output", "op")}
    assert len(set(fills.values())) == 5
    legend = d.label("legend")
    for word in ("input", "parameter", "constant", "output", "op"):
        assert word in legend
    assert "backward step" not in legend  # only the kinds drawn
    for kind, fill in fills.items():  # each swatch has its kind's colour
        assert f'BGCOLOR="{fill}"' in d.nodes["legend"], kind


def test_parameters_named_by_the_module_that_made_the_graph():
    model, x, loss = encoder_graph()
    d = dot_of(loss)
    names = set(d.titles("param"))
    assert names == {n for n, _ in model.named_parameters()}
    assert "layers.1.norm.weight" in names
    explicit = dot_of(loss, params={"w_ff0": model.layers[0].ff.weight})
    assert "w_ff0" in explicit.titles("param")


def test_show_values_prints_small_tensors_and_summarises_large_ones():
    x = Tensor([[1.0, -2.0], [0.5, 4.0]], requires_grad=True, name="x")
    big = Tensor.arange(100.0, name="big")  # float: an int64 one would be cast (a new, unnamed tensor) by the mul
    d = dot_of((x.sum() * big).sum(), show_values=True)
    (xi,) = [n for n in d.of_kind("input") if d.title(n) == "x"]
    assert "[[1, -2]," in d.label(xi) and "[0.5, 4]]" in d.label(xi)
    (bi,) = [n for n in d.of_kind("input") if d.title(n) == "big"]
    assert "min 0 · mean 49.5 · max 99" in d.label(bi)
    small = dot_of(x.sum())
    assert "min" not in small.label(small.of_kind("input")[0])


def _widths(d: Dot) -> dict[tuple[str, str], float]:
    return {(a, b): float(re.search(r"penwidth=([\d.]+)", attrs).group(1)) for a, b, attrs in d.edges}


def test_show_grads_puts_norms_on_nodes_and_widths_on_edges():
    x = Tensor.ones(3, requires_grad=True, name="x")
    h1 = x * 1e-3
    h2 = h1 * 1e-3
    loss = h2.sum()
    d = dot_of(loss, show_grads=True)
    (xi,) = d.of_kind("input")
    assert "‖∇‖ 1.73e-06" in d.label(xi)
    ops = {d.label(n).split("\n")[-1]: n for n in d.of_kind("op")}
    assert set(ops) == {"‖∇‖ 0.00173", "‖∇‖ 1.73", "‖∇‖ 1"}  # d loss / d (h1, h2, loss)
    w = _widths(d)
    m1, m2 = ops["‖∇‖ 0.00173"], ops["‖∇‖ 1.73"]
    assert w[(xi, m1)] < w[(m1, m2)] < w[(m2, d.out_of(m2)[0])]
    assert "edge width" in d.label("legend")
    assert "‖∇‖" not in dot_of(loss).source


def test_show_grads_after_backward_reads_grad_of_leaves():
    x = Tensor.ones(3, requires_grad=True, name="x")
    loss = (x * 2.0).sum()
    loss.backward()  # frees the graph's saved arrays
    d = dot_of(loss, show_grads=True)
    (xi,) = d.of_kind("input")
    assert f"‖∇‖ {2 * np.sqrt(3):.3g}" in d.label(xi)
    (mul,) = [n for n in d.of_kind("op") if d.title(n) == "mul"]
    assert "‖∇‖ —" in d.label(mul)  # intermediate gradients are gone after backward
    assert "dashed" in [attrs for a, b, attrs in d.edges if a == mul][0]


def test_roots_can_be_a_list_and_a_leaf():
    x = Tensor.randn(3, requires_grad=True, name="x")
    a, b = x.exp(), x.tanh()
    d = dot_of([a, b, a])
    assert len(d.of_kind("output")) == 2
    assert len(d.of_kind("input")) == 1
    d = dot_of(x)
    assert len(d.of_kind("output")) == 1 and not d.of_kind("op")


def test_ids_are_stable():
    def build():
        tga.manual_seed(3)
        return encoder_graph()[2]

    a, b = build(), build()
    assert draw_graph(a).source == draw_graph(a).source
    assert draw_graph(a).source == draw_graph(b).source
    assert draw_graph(a, backward=True, depth=1).source == draw_graph(b, backward=True, depth=1).source


def test_bad_options_raise():
    x = Tensor.randn(2, requires_grad=True)
    with pytest.raises(ValueError, match="rankdir"):
        draw_graph(x, rankdir="sideways")
    with pytest.raises(ValueError, match="depth"):
        draw_graph(x, depth=-1)
    with pytest.raises(TypeError, match="Tensors"):
        draw_graph([x, 3.0])


def test_rankdir_reaches_the_source():
    x = Tensor.randn(2, requires_grad=True)
    assert "rankdir=LR" in draw_graph(x.exp(), rankdir="LR").source


# -- backward graph ----------------------------------------------------------------------
def test_backward_graph_has_a_step_per_op_with_its_saved_arrays():
    x, w, b, loss = mlp_graph()
    fwd = dot_of(loss)
    d = dot_of(loss, backward=True, params={"fc.weight": w})
    assert sorted(d.titles("backward")) == sorted(f"{t} backward" for t in fwd.titles(*OP_KINDS))
    saved = {d.title(n): n for n in d.of_kind("saved")}
    (mm,) = [n for n in d.of_kind("backward") if d.title(n) == "matmul backward"]
    assert {saved["x"], saved["fc.weight"]} <= set(d.into(mm))  # matmul keeps both operands
    for a, bb, attrs in d.edges:
        if d.kind(a) == "saved":
            assert d.kind(bb) == "backward" and "dashed" in attrs
    # the gradient flows from the seed to every leaf that requires one, and nowhere else
    (seed,) = d.of_kind("seed")
    assert d.label(seed).split("\n") == ["∂output", "= 1"]
    grads = {d.title(n): n for n in d.of_kind("grad_input", "grad_param")}
    assert set(grads) == {"x.grad", "fc.weight.grad"}
    assert d.kind(grads["fc.weight.grad"]) == "grad_param"
    reach, todo = set(), [seed]
    while todo:
        n = todo.pop()
        reach.add(n)
        todo += [b for a, b, attrs in d.edges if a == n and "odot" not in attrs]
    assert set(grads.values()) | set(d.of_kind("backward")) <= reach


def _reads(d: Dot, step_title: str) -> list[str]:
    (step,) = [n for n in d.of_kind("backward") if d.title(n) == step_title]
    return sorted(d.title(n) for n in d.into(step) if d.kind(n) == "saved")


def test_backward_steps_show_only_the_arrays_their_formula_reads():
    x = Tensor.randn(2, 3, requires_grad=True, name="x")
    w = Parameter(Tensor.ones(3))
    b = Parameter(Tensor.zeros(3))
    y = (x + 1.0).exp().reshape(3, 2).sum()
    d = dot_of(y, backward=True)
    assert _reads(d, "add backward") == []  # d(a + b) needs no array
    assert _reads(d, "exp backward") == ["exp output"]  # g * exp(x): its own output
    assert _reads(d, "reshape backward") == []  # only a shape
    ln = dot_of(F.layer_norm(x, w.shape, w, b).sum(), backward=True, params={"w": w, "b": b})
    assert _reads(ln, "layer_norm backward") == [
        "layer_norm intermediate",
        "layer_norm intermediate",
        "w",
    ]  # x-hat, 1/std, weight


class Branchy(Function):
    """An op whose gradient formula looks at values: the probe cannot run it."""

    def forward(self, ns, a):
        return a * 2.0

    def backward(self, g, ns, inputs, out):
        return (g * 2.0 if bool(ns.all(inputs[0] > 0)) else g * 2.0,)


def test_a_formula_that_cannot_be_probed_shows_every_kept_array():
    x = Tensor.ones(3, requires_grad=True, name="x")
    y = Branchy.apply(x)
    assert tga.grad(y.sum(), x)[0].tolist() == [2.0, 2.0, 2.0]
    d = dot_of(Branchy.apply(x).sum(), backward=True)
    assert _reads(d, "branchy backward") == ["x"]


def test_backward_graph_accumulates_where_a_tensor_is_reused():
    x = Tensor.randn(3, requires_grad=True, name="x")
    loss = (x * x + x).sum()
    d = dot_of(loss, backward=True)
    (acc,) = d.of_kind("accumulate")
    assert d.label(acc) == "+\n3 shares"
    assert sorted(d.title(n) for n in d.into(acc)) == ["add backward", "mul backward", "mul backward"]
    (gx,) = d.of_kind("grad_input")
    assert d.into(gx) == [acc]
    # a tensor used once needs no accumulation
    assert not dot_of((x * 2.0).sum(), backward=True).of_kind("accumulate")


def test_backward_graph_after_backward_says_saved_arrays_were_freed():
    x = Tensor.randn(3, requires_grad=True, name="x")
    loss = x.exp().sum()
    loss.backward()
    d = dot_of(loss, backward=True)
    assert not d.of_kind("saved")
    for n in d.of_kind("backward"):
        assert "saved arrays freed" in d.label(n)


def test_backward_of_fused_attention_shows_its_saved_weights():
    q, k, v = (Tensor.randn(2, 4, 5, 8, requires_grad=True, name=n) for n in "qkv")
    loss = F.scaled_dot_product_attention(q, k, v).sum()
    d = dot_of(loss, backward=True)
    (att,) = [n for n in d.of_kind("backward") if d.title(n).startswith("attention backward")]
    assert d.title(att) == "attention backward · 4 heads"
    saved = [(d.title(n), d.label(n)) for n in d.into(att) if d.kind(n) == "saved"]
    # (as PyTorch's, it keeps v, the weights and scaled copies of q and k, so q and k may change in place)
    assert {title for title, _ in saved} == {"v", "attention intermediate"}
    assert any("(2, 4, 5, 5)" in label for _, label in saved)  # the attention weights
    assert sorted(d.titles("grad_input")) == ["k.grad", "q.grad", "v.grad"]


def test_backward_graph_with_show_grads_and_values():
    x = Tensor([1.0, 2.0], requires_grad=True, name="x")
    loss = (x * x).sum()
    d = dot_of(loss, backward=True, show_grads=True, show_values=True)
    (gx,) = d.of_kind("grad_input")
    assert "[2, 4]" in d.label(gx) and f"‖∇‖ {np.sqrt(20):.3g}" in d.label(gx)
    assert all("penwidth" in attrs for a, b, attrs in d.edges if "odot" not in attrs)


def test_gradient_from_create_graph_draws_as_a_graph_of_ops():
    x = Tensor.randn(3, requires_grad=True, name="x")
    y = (x.tanh() * x).sum()
    (gx,) = tga.grad(y, x, create_graph=True)
    d = dot_of(gx)
    (out,) = d.of_kind("output")
    assert "(3,)" in d.label(out)
    ops = d.titles(*OP_KINDS)
    assert "tanh" in ops and "mul" in ops and len(ops) > 3
    both = dot_of([y, gx], backward=True)
    assert len(both.of_kind("seed")) == 2


# -- structure: clusters, composites, heads, depth ---------------------------------------------
def test_one_cluster_per_module_with_path_and_class():
    model, x, loss = encoder_graph()
    d = dot_of(loss)
    labels = sorted(d.clusters.values())
    assert labels == sorted(
        ["Encoder", "head : Linear"]
        + [f"layers.{i}{s}" for i in range(2) for s in (" : Block", ".ff : Linear", ".norm : LayerNorm")]
    )
    (w,) = [n for n in d.of_kind("param") if d.title(n) == "layers.1.ff.weight"]
    assert d.cluster_of(w) == "layers.1.ff : Linear"
    assert d.ancestors(w) == ["layers.1.ff : Linear", "layers.1 : Block", "Encoder"]
    (xi,) = d.of_kind("input")
    assert d.cluster_of(xi) is None  # inputs stay outside the model
    assert len(set(d.clusters.values())) == len(d.clusters)
    assert not dot_of(loss, group_modules=False).clusters


def test_composites_draw_as_clusters_when_decomposed():
    x = Tensor.randn(2, 5, requires_grad=True, name="x")
    with tga.decompose():
        y = x.layer_norm().softmax(-1).sum()
    d = dot_of(y)
    assert {"layer_norm", "softmax"} <= set(d.clusters.values())
    (exp,) = [n for n in d.of_kind("op") if d.title(n) == "exp"]
    assert d.ancestors(exp) == ["softmax"]
    fused = dot_of(x.layer_norm().softmax(-1).sum())
    assert sorted(fused.titles("fused")) == ["layer_norm", "softmax"]
    assert not fused.clusters


def test_attention_heads_are_labelled():
    q, k, v = (Tensor.randn(1, 3, 4, 8, requires_grad=True, name=n) for n in "qkv")
    d = dot_of(F.scaled_dot_product_attention(q, k, v))
    assert d.titles("fused") == ["attention · 3 heads"]
    with tga.decompose():
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    d = dot_of(out)
    assert "attention · 3 heads" in d.clusters.values()
    assert "attention · 3 heads" in dot_of(out.sum(), backward=True).clusters.values()


def test_simulated_module_scopes_nest():
    x = Tensor.randn(2, 4, requires_grad=True, name="x")
    with scope("encoder", kind="module"), scope("layers.0", kind="module"):
        with scope("self_attn", kind="module"):
            h = x.tanh()
        h = h * 2.0
    d = dot_of(h)
    assert set(d.clusters.values()) == {"encoder", "encoder.layers.0", "encoder.layers.0.self_attn"}
    (t,) = [n for n in d.of_kind("op") if d.title(n) == "tanh"]
    assert d.ancestors(t) == ["encoder.layers.0.self_attn", "encoder.layers.0", "encoder"]


def _op_count(d: Dot) -> int:
    visible = len(d.of_kind(*OP_KINDS))
    hidden = sum(int(re.search(r"(\d+) ops?\b", d.label(n)).group(1)) for n in d.of_kind("module"))
    return visible + hidden


def test_depth_collapses_deeper_modules_into_one_node_each():
    model, x, loss = encoder_graph()
    full = dot_of(loss)
    n_ops = len(full.of_kind(*OP_KINDS))
    d1 = dot_of(loss, depth=1)
    mods = {d1.title(n): n for n in d1.of_kind("module")}
    assert set(mods) == {"layers.0 : Block", "layers.1 : Block", "head : Linear"}
    lab = d1.label(mods["layers.0 : Block"]).split("\n")
    assert lab[1:] == ["in (2, 3, 8)", "out (2, 3, 8)", lab[3], "4 parameters (88 weights)"]
    assert d1.into(mods["layers.1 : Block"]) == [mods["layers.0 : Block"]]
    assert not d1.of_kind("param")  # each went inside its module
    assert set(d1.clusters.values()) == {"Encoder"}
    assert _op_count(d1) == n_ops  # nothing lost, nothing counted twice
    d0 = dot_of(loss, depth=0)
    (m,) = d0.of_kind("module")
    assert d0.title(m) == "Encoder" and "in (2, 3, 8)" in d0.label(m) and "out (2, 3, 2)" in d0.label(m)
    assert _op_count(d0) == n_ops
    d2 = dot_of(loss, depth=2)
    assert sorted(d2.titles("module")) == [
        f"layers.{i}.{m}" for i in range(2) for m in ("ff : Linear", "norm : LayerNorm")
    ]
    assert set(d2.clusters.values()) == {"Encoder", "layers.0 : Block", "layers.1 : Block", "head : Linear"}
    assert _op_count(d2) == n_ops


def test_depth_collapses_the_backward_graph_too():
    model, x, loss = encoder_graph(3)
    d = dot_of(loss, backward=True, depth=1)
    mods = [d.title(n) for n in d.of_kind("module")]
    assert sorted(mods) == ["head : Linear", "layers.0 : Block", "layers.1 : Block", "layers.2 : Block"]
    assert all("backward step" in d.label(n) for n in d.of_kind("module"))
    assert not d.of_kind("grad_param") and d.of_kind("grad_input")


@pytest.mark.slow  # (over half a second: the full suite runs it, the fast loop does not)
def test_a_long_chain_in_nested_scopes_draws_whole_and_collapsed():
    x = Tensor.randn(4, 8, requires_grad=True, name="x")
    w = Tensor.randn(8, 8, requires_grad=True, name="w")
    h = x
    with scope("", kind="module"):
        for b in range(6):
            with scope(f"layers.{b}", kind="module"):
                for _ in range(100):
                    with scope("mlp", kind="module"):
                        h = (h @ w).tanh() * 0.5 + h
    loss = h.sum()  # 2401 ops: deeper than any recursion limit
    d = dot_of(loss, max_nodes=None)
    assert len(d.of_kind("op")) == 2401
    assert len(d.clusters) == 1 + 6 + 600
    small = dot_of(loss, depth=1)
    assert len(small.of_kind("module")) == 6 and len(small.nodes) == 6 + 1 + 1 + 2 + 1  # + w, x, sum, out, legend
    assert _op_count(small) == 2401
    assert len(dot_of(loss, backward=True, max_nodes=None).of_kind("backward")) == 2401


# -- models (BatchFirstAttention, GPT) ---------------------------------------------------------
def test_multi_head_attention_graph():
    from tinygrad_attn.models import BatchFirstAttention

    mha = BatchFirstAttention(16, 4)
    x = Tensor.randn(2, 5, 16, requires_grad=True, name="x")
    out = mha(x)
    d = dot_of(out)
    root = [c for c in d.clusters.values() if c.startswith("BatchFirstAttention")]
    assert root == ["BatchFirstAttention · 4 heads"]
    names = set(d.titles("param"))
    assert {"q_proj.weight", "k_proj.weight", "v_proj.weight", "out_proj.weight"} <= names
    assert "attention · 4 heads" in d.titles("fused")
    bw = dot_of(out.sum(), backward=True)
    assert len(bw.of_kind("backward")) == len(d.of_kind(*OP_KINDS)) + 1  # + the sum
    assert "attention backward · 4 heads" in bw.titles("backward")


def test_gpt_at_depth_1_is_small_and_its_full_graph_is_large():
    from tinygrad_attn.models import GPT

    model = GPT(vocab_size=50, d_model=32, n_heads=4, n_layers=6, max_len=16)
    tokens = Tensor(np.arange(16).reshape(2, 8) % 50)
    loss = model(tokens).sum()
    d = dot_of(loss, depth=1)
    mods = d.of_kind("module")
    assert len(mods) >= 6 and len(d.nodes) <= 40
    layers = [d.title(n) for n in mods if re.match(r"\S+\.\d+ ", d.title(n))]
    assert len(layers) == 6
    full = dot_of(loss, max_nodes=None)
    assert len(full.of_kind(*OP_KINDS)) > 100
    assert _op_count(d) == len(full.of_kind(*OP_KINDS))


# -- output files ------------------------------------------------------------------------------
@pytest.fixture
def loss():
    return mlp_graph()[3]


def test_render_dot_svg_png_pdf(tmp_path, loss):
    p = render(loss, tmp_path / "g.dot")
    assert p.read_text().startswith("digraph forward {")
    svg = render(loss, tmp_path / "g.svg", backward=True).read_text()
    assert re.search(r"<svg[\s>]", svg) and "matmul backward" in svg
    assert render(loss, tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if "pdf" in renderer().formats:  # Graphviz's dot; graphviz-pure writes no PDF (tests/viz/test_viz_render.py)
        assert render(loss, tmp_path / "g.pdf").read_bytes()[:5] == b"%PDF-"
    dot = draw_graph(loss, depth=0)
    assert render(dot, tmp_path / "d.dot").read_text() == dot.source
    assert not (tmp_path / "g.dot").with_name("g2.dot").exists()


def test_render_rejects_an_unknown_suffix(tmp_path, loss):
    with pytest.raises(ValueError, match=r"\.svg"):
        render(loss, tmp_path / "g.gif")


@pytest.mark.parametrize("how", ["env", "which"])
def test_render_without_a_renderer_raises_a_clear_error_and_writes_the_source(tmp_path, monkeypatch, loss, how):
    if how == "env":
        monkeypatch.setenv("TINYGRAD_ATTN_RENDERER", "none")
    else:  # neither dot nor graphviz-pure is found anywhere
        monkeypatch.setattr("shutil.which", lambda *a, **k: None)
    assert render(loss, tmp_path / "ok.dot").exists()  # .dot needs no binary
    with pytest.raises(RuntimeError) as err:
        render(loss, tmp_path / "g.svg")
    assert isinstance(err.value, GraphvizNotFoundError)
    msg = str(err.value)
    for part in ("pip install graphviz-pure", "apt-get install graphviz", "brew install graphviz",
                 "conda install graphviz", "g.dot"):  # fmt: skip
        assert part in msg
    assert (tmp_path / "g.dot").read_text() == draw_graph(loss).source
    assert not (tmp_path / "g.svg").exists()


def test_digraph_displays_inline_in_jupyter(loss):
    g = draw_graph(loss)
    assert isinstance(g, graphviz.Digraph)
    bundle = g._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"]


# -- attention heat maps -----------------------------------------------------------------------
def _images(fig):
    return [ax.images[0].get_array() for ax in fig.axes if ax.images]


@pytest.mark.parametrize("shape,heads", [((4, 5), 1), ((3, 4, 5), 3), ((2, 6, 4, 5), 6)])
@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_plot_attention_one_panel_per_head(shape, heads):
    w = np.random.default_rng(0).random(shape)
    fig = plot_attention(Tensor(w))
    images = _images(fig)
    assert len(images) == heads
    first = w.reshape((-1,) + w.shape[-3:])[0] if w.ndim == 4 else w.reshape((-1, 4, 5))
    for h, im in enumerate(images):
        np.testing.assert_allclose(np.asarray(im), first[h])


@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_plot_attention_labels_and_file(tmp_path):
    w = F.softmax(Tensor.randn(2, 3, 4), -1)
    keys, queries = ["the", "cat", "sat", "down"], ["a", "b", "c"]
    fig = plot_attention(w, x_labels=keys, y_labels=queries, path=tmp_path / "w.png")
    ax = [a for a in fig.axes if a.images][0]
    assert [t.get_text() for t in ax.get_xticklabels()] == keys
    assert [t.get_text() for t in ax.get_yticklabels()] == queries
    assert (tmp_path / "w.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_attention_rejects_bad_shapes_and_labels():
    with pytest.raises(ValueError, match="Tq, Tk"):
        plot_attention(np.ones(5))
    with pytest.raises(ValueError, match="3 key labels for 4"):
        plot_attention(np.ones((2, 4)), x_labels=["a", "b", "c"])


def test_plot_attention_without_matplotlib_says_so(monkeypatch):
    for mod in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, mod, None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plot_attention(np.ones((2, 2)))


def test_values_freed_by_backward_are_drawn_as_freed():
    from tinygrad_attn.engine.function import FREE_MIN_SIZE

    x = Tensor(np.linspace(-1, 1, FREE_MIN_SIZE), requires_grad=True)
    loss = ((x * 2.0).exp() * 3.0).sum()
    loss.backward()
    from tinygrad_attn.engine.switches import _CAN_COUNT_REFS

    for backward in (False, True):
        src = draw_graph(loss, backward=backward, show_values=True, show_grads=True).source
        assert "mul" in src
        assert ("values freed by backward" in src) == (_CAN_COUNT_REFS and not backward)
