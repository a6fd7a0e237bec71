"""In-place changes before a ``create_graph`` backward through a fused op, against PyTorch.

A fused op's recorded gradient (``backward(create_graph=True)``) differentiates its primitive
definition applied again to its inputs (``FusedFunction._backward_by_reference``). An input
changed in place after the forward must then either raise, where the op keeps it (as
PyTorch's does), or be read as the forward saw it, where the op keeps something else
(cross-entropy its log-probabilities, attention its scaled queries and a copy of the keys):
never silently the new values. For each fused op and each of its operands (and its
output), changed in place between the forward and the backward, ours raises exactly where
PyTorch raises, and otherwise gives PyTorch's first- and second-order gradients.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402
import tinygrad_attn.functional as F  # noqa: E402
from tinygrad_attn.engine import FusedFunction  # noqa: E402

TF = torch.nn.functional


@dataclass
class Case:
    fn: Callable[..., Any]  # (lib, functional, *operands, *constants) -> output
    shapes: list[tuple[int, ...]]  # the float64 operands (each a non-leaf copy of a leaf)
    constants: Callable[[Any], list[Any]] = field(default=lambda lib: [])  # integer targets, masks
    frozen: tuple[int, ...] = ()  # operands that do not require grad


def _targets(lib):
    return [lib.tensor([0, 3, 1, 2])]


def _ignored(lib):
    return [lib.tensor([0, -100, 1, 2])]


def _causal_mask(lib):
    return [lib.tensor(np.tril(np.ones((3, 3), dtype=bool)))]


CASES = {
    "gelu": Case(lambda L, Fm, x: Fm.gelu(x), [(3, 4)]),
    "gelu_tanh": Case(lambda L, Fm, x: Fm.gelu(x, approximate="tanh"), [(3, 4)]),
    "layer_norm": Case(lambda L, Fm, x, w, b: Fm.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    "softmax": Case(lambda L, Fm, x: Fm.softmax(x, -1), [(3, 4)]),
    "log_softmax": Case(lambda L, Fm, x: Fm.log_softmax(x, -1), [(3, 4)]),
    "cross_entropy": Case(lambda L, Fm, x, t: Fm.cross_entropy(x, t), [(4, 5)], _targets),
    "cross_entropy_ignore": Case(lambda L, Fm, x, t: Fm.cross_entropy(x, t), [(4, 5)], _ignored),
    "cross_entropy_smoothing": Case(
        lambda L, Fm, x, t: Fm.cross_entropy(x, t, label_smoothing=0.2), [(4, 5)], _targets
    ),
    "sdpa": Case(lambda L, Fm, q, k, v: Fm.scaled_dot_product_attention(q, k, v), [(2, 3, 4)] * 3),
    "sdpa_mask": Case(
        lambda L, Fm, q, k, v, m: Fm.scaled_dot_product_attention(q, k, v, attn_mask=m), [(2, 3, 4)] * 3, _causal_mask
    ),
    "sdpa_causal_scale": Case(
        lambda L, Fm, q, k, v: Fm.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3), [(2, 3, 4)] * 3
    ),
    # past two blocks of query rows (ops.fused.CAUSAL_BLOCK): the blocked forward keeps its queries in parts
    "sdpa_causal_blocks": Case(
        lambda L, Fm, q, k, v: Fm.scaled_dot_product_attention(q, k, v, is_causal=True), [(1, 260, 2)] * 3
    ),
    "linear": Case(lambda L, Fm, x, w, b: Fm.linear(x, w, b), [(3, 4), (5, 4), (5,)]),
    "linear_frozen_weight": Case(lambda L, Fm, x, w: Fm.linear(x, w), [(3, 4), (5, 4)], frozen=(1,)),
    "conv1d": Case(lambda L, Fm, x, w, b: Fm.conv1d(x, w, b), [(2, 3, 6), (4, 3, 3), (4,)]),
    "avg_pool2d": Case(lambda L, Fm, x: Fm.avg_pool2d(x, 2), [(1, 2, 4, 4)]),
    "max_pool2d": Case(lambda L, Fm, x: Fm.max_pool2d(x, 2), [(1, 2, 4, 4)]),
    "adaptive_avg_pool2d": Case(lambda L, Fm, x: Fm.adaptive_avg_pool2d(x, (2, 3)), [(1, 2, 4, 5)]),
}


def _run(side: str, case: Case, where: str) -> tuple[str, list, list]:
    """Forward, change ``where`` in place, then the gradients with ``create_graph=True`` and
    a second order through them: ("raises", ...) or ("ok", first, second)."""
    ours = side == "ours"
    lib, Fm = (tga, F) if ours else (torch, TF)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in case.shapes]
    leaves = [lib.tensor(a.copy(), requires_grad=i not in case.frozen) for i, a in enumerate(arrays)]
    xs = [leaf * 1.0 for leaf in leaves]  # non-leaves: in-place changes are allowed on them
    y = case.fn(lib, Fm, *xs, *case.constants(lib))
    if ours:
        assert isinstance(y._ctx, FusedFunction), f"not the fused op: {y._ctx}"  # (else this tests nothing)
    weight = lib.tensor(rng.standard_normal(tuple(y.shape)))
    r = [lib.tensor(rng.standard_normal(s)) for s in case.shapes]
    target = y if where == "output" else xs[int(where.split()[1])]
    target.mul_(2.0)
    wanted = [leaf for leaf in leaves if leaf.requires_grad]
    try:
        first = lib.autograd.grad((y * weight).sum(), wanted, create_graph=True, allow_unused=True)
        s = sum((g * ri).sum() for g, ri, leaf in zip(first, r, leaves) if g is not None and g.requires_grad)
        second = [None] * len(wanted)
        if isinstance(s, (tga.Tensor, torch.Tensor)):
            second = lib.autograd.grad(s, wanted, allow_unused=True)
    except RuntimeError:
        return "raises", [], []

    def arrays_of(gs):
        return [np.zeros(w.shape) if g is None else g.detach().numpy() for g, w in zip(gs, wanted)]

    return "ok", arrays_of(first), arrays_of(second)


def _places(case: Case) -> list[str]:
    return ["output"] + [f"input {i}" for i in range(len(case.shapes))]


@pytest.mark.parametrize(
    "name,where", [(n, w) for n, c in CASES.items() for w in _places(c)], ids=lambda v: str(v).replace(" ", "")
)
def test_create_graph_after_an_inplace_change_is_pytorchs(name, where):
    case = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch warns about create_graph and .grad cycles)
        theirs = _run("theirs", case, where)
    ours = _run("ours", case, where)
    assert ours[0] == theirs[0], f"{name}, {where} changed in place: PyTorch {theirs[0]}, ours {ours[0]}"
    for order, got, want in (("first", ours[1], theirs[1]), ("second", ours[2], theirs[2])):
        for i, (a, b) in enumerate(zip(got, want)):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10, err_msg=f"{name}, {where}: {order} order, leaf {i}")


def test_an_input_whose_values_were_released_is_read_as_the_forward_saw_it():
    # A large product after the loss lets the graph drop the logits, which the fused loss
    # does not keep: its recorded gradient still needs their values, as the forward saw them.
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((8, 5))
    big = rng.standard_normal(1 << 14)
    grads = []
    for lib, Fm in ((tga, F), (torch, TF)):
        leaf = lib.tensor(logits.copy(), requires_grad=True)
        x = leaf * 1.0
        loss = Fm.cross_entropy(x, lib.tensor([0, 1, 2, 3, 4, 0, 1, 2]))
        del x  # nothing but the graph holds the logits now
        out = (loss * lib.tensor(big)).sum()
        (g,) = lib.autograd.grad(out, leaf, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), leaf)
        grads.append((g.detach().numpy(), h.detach().numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-9)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-9)


@pytest.mark.parametrize("op", ["cross_entropy", "sdpa"])
def test_a_view_whose_base_changed_after_the_forward_keeps_its_history(op):
    # The operand is a view of x; x changes in place after the forward. The recorded gradient
    # must depend on x as it was (through the view taken then), not on x's new history.
    results = []
    for lib, Fm in ((tga, F), (torch, TF)):
        rng = np.random.default_rng(2)
        leaf = lib.tensor(rng.standard_normal((4, 7)), requires_grad=True)
        x = leaf * 1.0
        v = x[:, :5]
        if op == "cross_entropy":
            y = Fm.cross_entropy(v, lib.tensor([0, 1, 2, 3]))
        else:
            q = v.reshape(1, 4, 5)
            y = Fm.scaled_dot_product_attention(q, q * 1.0, lib.tensor(rng.standard_normal((1, 4, 3))))
        x.mul_(2.0)
        weight = lib.tensor(rng.standard_normal(tuple(y.shape)))
        (g,) = lib.autograd.grad((y * weight).sum(), leaf, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), leaf)
        results.append((g.detach().numpy(), h.detach().numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-9, atol=1e-12)
