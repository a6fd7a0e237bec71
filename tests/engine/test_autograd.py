"""The backward pass: accumulation, retain/create graph, higher orders, no_grad, memory."""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest
from helpers import close, rand

import tinygrad_attn as tga
import tinygrad_attn.engine as engine
from tinygrad_attn import Tensor
from tinygrad_attn.engine.function import Function


def test_gradients_accumulate_across_backwards(device, rng):
    x = rand(rng, 3, device=device)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    close(x.grad, [5.0, 5.0, 5.0])
    x.grad = None
    (x * 1).sum().backward()
    close(x.grad, [1.0, 1.0, 1.0])


def test_tensor_used_twice_sums_both_paths(device, rng):
    x = rand(rng, 4, device=device)
    y = x * x + x.exp() * x
    y.sum().backward()
    a = x.detach().numpy()
    close(x.grad, 2 * a + np.exp(a) * (a + 1), atol=1e-12)


def test_second_backward_through_freed_graph_raises():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    close(x.grad, [4.0, 8.0])


def test_backward_releases_saved_arrays():
    x = Tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    y = (h * x).sum()
    y.backward()
    assert h.grad_fn.freed and y.grad_fn.freed
    assert h.grad_fn.saved is None


def test_non_scalar_backward_needs_grad():
    x = Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="scalar"):
        (x * 2).backward()
    (x * 2).backward(Tensor([1.0, 10.0]))
    close(x.grad, [2.0, 20.0])


def test_backward_without_graph_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        Tensor([1.0]).sum().backward()


def test_grad_function_touches_no_grad_attribute(device, rng):
    x = rand(rng, 3, device=device)
    (g,) = tga.grad((x * x).sum(), x)
    close(g, 2 * x.detach().numpy())
    assert x.grad is None


def test_grad_of_several_inputs_and_unused():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = Tensor([3.0], requires_grad=True)
    z = Tensor([4.0], requires_grad=True)
    out = (x * y).sum()
    gx, gy = tga.grad(out, [x, y], retain_graph=True)
    close(gx, [3.0, 3.0])
    close(gy, [3.0])
    with pytest.raises(RuntimeError, match="not used"):
        tga.grad(out, [z], retain_graph=True)
    assert tga.grad(out, [z], allow_unused=True) == (None,)


@pytest.mark.parametrize(
    "f,d1,d2",
    [
        (lambda x: x**3, lambda a: 3 * a**2, lambda a: 6 * a),
        (lambda x: x.exp(), np.exp, np.exp),
        (lambda x: x.tanh(), lambda a: 1 - np.tanh(a) ** 2, lambda a: -2 * np.tanh(a) * (1 - np.tanh(a) ** 2)),
        (
            lambda x: x.sigmoid(),
            lambda a: _sig(a) * (1 - _sig(a)),
            lambda a: _sig(a) * (1 - _sig(a)) * (1 - 2 * _sig(a)),
        ),
        (lambda x: x.log(), lambda a: 1 / a, lambda a: -1 / a**2),
        (lambda x: x.sqrt(), lambda a: 0.5 / np.sqrt(a), lambda a: -0.25 * a**-1.5),
        (lambda x: 1.0 / x, lambda a: -1 / a**2, lambda a: 2 / a**3),
    ],
)
def test_second_order_elementwise(f, d1, d2, device):
    a = np.array([0.5, 1.0, 2.0])
    x = Tensor(a, device=device, requires_grad=True)
    (g,) = tga.grad(f(x).sum(), x, create_graph=True)
    close(g, d1(a), atol=1e-10)
    (h,) = tga.grad(g.sum(), x)
    close(h, d2(a), atol=1e-10)


def _sig(a):
    return 1 / (1 + np.exp(-a))


def test_third_order():
    x = Tensor([2.0], requires_grad=True, dtype=np.float64)
    (g,) = tga.grad((x**4).sum(), x, create_graph=True)
    (h,) = tga.grad(g.sum(), x, create_graph=True)
    (k,) = tga.grad(h.sum(), x)
    close(k, [24 * 2.0])


@pytest.mark.parametrize("decomposed", [False, True])
def test_second_order_softmax_matches_finite_differences(decomposed, device, rng):
    x = rand(rng, 2, 4, device=device)
    w = Tensor(rng.standard_normal((2, 4)), device=device)

    def grad_of(t):
        (g,) = tga.grad((t.softmax(-1) * w).sum(), t, create_graph=True)
        return g

    (plain,) = tga.grad((x.softmax(-1) * w).sum(), x)  # the recorded first order is the same
    close(grad_of(x), plain.detach().numpy(), atol=1e-12)
    if decomposed:
        with tga.decompose():
            assert tga.gradcheck(grad_of, x)
    else:
        assert tga.gradcheck(grad_of, x)


def test_backward_create_graph_makes_grad_differentiable():
    x = Tensor([3.0], requires_grad=True, dtype=np.float64)
    (x**3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    x.grad = None
    g.sum().backward()
    close(x.grad, [18.0])


def test_no_grad_records_nothing_and_decorates():
    x = Tensor([1.0], requires_grad=True)
    with tga.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None

    @tga.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad
    assert (x * 2).requires_grad


def test_detach_cuts_the_graph():
    x = Tensor([2.0], requires_grad=True)
    y = x * x.detach()
    y.sum().backward()
    close(x.grad, [2.0])


def test_integer_tensor_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating-point"):
        Tensor(np.array([1, 2]), requires_grad=True)


def test_retain_grad_on_intermediate():
    x = Tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    assert h.retain_grad() is None  # (PyTorch's returns nothing)
    (h * h).sum().backward()
    close(h.grad, [6.0, 12.0])


def test_a_retained_tensor_that_dies_leaves_nothing_behind(rng):
    x = rand(rng, 3)
    for _ in range(50):
        (x * 2.0).retain_grad()  # each dies at once; its id is free for the next tensor
    registry = engine.switches._State.retained
    assert all(ref() is not None for ref in registry.values())  # no entry outlives its tensor
    h = x * 3.0
    (h * h).sum().backward()
    assert h.grad is None  # never retained, whatever id it got
    kept = x * 4.0
    kept.retain_grad()
    (kept * 1.0).sum().backward()
    close(kept.grad, np.ones(3))


@pytest.mark.slow  # (over half a second: the full suite runs it, the fast loop does not)
def test_chain_of_100k_ops_backpropagates():
    x = Tensor([1.0], requires_grad=True)
    h = x
    for _ in range(100_000):
        h = h + 1.0
    h.sum().backward()
    close(x.grad, [1.0])


def test_graph_dies_with_its_last_tensor():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    node = weakref.ref(y.grad_fn)
    mid = weakref.ref(y.grad_fn.inputs[0])
    del y
    assert node() is None and mid() is None  # no cycle keeps them: freed without gc


@pytest.mark.slow  # about 3 s
def test_training_like_loop_keeps_memory_flat(rng):
    w = Tensor(rng.standard_normal((32, 32)).astype(np.float32), requires_grad=True)
    x = Tensor(rng.standard_normal((8, 32)).astype(np.float32))

    def step():
        h = (x @ w).tanh()
        loss = (h.softmax(-1) * h).sum() + (h * h).mean()
        loss.backward()
        w.data -= 0.001 * w.grad.data
        w.grad = None

    for _ in range(100):
        step()
    gc.collect()
    tracemalloc.start()
    for _ in range(500):
        step()
    first, _ = tracemalloc.get_traced_memory()
    for _ in range(1500):
        step()
    second, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert second - first < 64 * 1024, (first, second)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_detect_anomaly_names_the_node_and_line():
    """PyTorch's anomaly mode: a NaN gradient is the error, naming the node and the line of the op."""
    x = Tensor([-1.0, 1.0], requires_grad=True)
    with tga.detect_anomaly():
        y = x.sqrt().sum()  # (a NaN forward is no error)
        with pytest.raises(RuntimeError, match=r"(?s)'SqrtBackward0' returned nan values in its 0th output.*test_auto"):
            y.backward()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_detect_anomaly_lets_infinities_pass_and_check_nan_off_lets_nan_pass():
    x = Tensor([0.0, 1.0], requires_grad=True)
    with tga.detect_anomaly():
        x.sqrt().sum().backward()  # (d sqrt / dx at 0 is inf: no anomaly, as PyTorch's)
    assert x.grad.tolist() == [float("inf"), 0.5]
    x.grad = None
    with tga.autograd.set_detect_anomaly(True, check_nan=False):
        assert tga.is_anomaly_enabled() and not tga.is_anomaly_check_nan_enabled()
        (x - 1).sqrt().sum().backward()
    assert tga.is_anomaly_check_nan_enabled()


def test_gradcheck_catches_a_wrong_gradient():
    class Bad(Function):
        def forward(self, ns, a):
            return a * a

        def backward(self, g, ns, inputs, out):
            return (g * inputs[0],)  # should be 2 * a

    x = Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="worst at input 0, element"):
        tga.gradcheck(lambda t: Bad.apply(t), x)


def test_every_node_exposes_its_record():
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sum()
    for fn in (y.grad_fn, y.grad_fn.inputs[0].grad_fn):
        assert fn.ctx is None and fn.saved is not None and fn.inputs and fn.op_name in ("sum", "mul")
        assert fn.scope is None  # made outside any module or composite


def _big(rng):
    from tinygrad_attn.engine.function import FREE_MIN_SIZE

    return Tensor(rng.standard_normal(FREE_MIN_SIZE), requires_grad=True)


def test_backward_frees_large_intermediates_nothing_else_holds(rng):
    x = _big(rng)
    loss = (x.exp() * 2.0).tanh().sum()
    inner = loss.grad_fn.inputs[0].grad_fn.inputs[0]  # the exp output, held only by the graph
    values = weakref.ref(inner._data)
    del inner
    loss.backward()
    assert x.grad is not None and x._data is not None  # leaves keep everything
    if not engine.switches._CAN_COUNT_REFS:  # no exact reference counts: nothing is freed
        assert values() is not None
        return
    assert values() is None  # its array is gone
    freed = loss.grad_fn.inputs[0].grad_fn.inputs[0]
    assert freed.shape == x.shape and freed.dtype == x.dtype  # pictures still see its shape
    with pytest.raises(RuntimeError, match="freed by backward"):
        freed.detach().numpy()
    assert "freed by backward" in repr(freed)


def test_backward_keeps_intermediates_the_user_holds_or_retains(rng):
    x = _big(rng)
    h = x.exp()
    loss = (h * 2.0).tanh().sum()
    loss.backward()
    np.testing.assert_allclose(h.detach().numpy(), np.exp(x.detach().numpy()))  # held by the user: kept
    y = (x.exp() * 2.0).tanh().sum()
    inner = y.grad_fn.inputs[0].grad_fn.inputs[0]
    values = weakref.ref(inner._data)
    del inner
    y.backward(retain_graph=True)
    assert values() is not None  # retain_graph keeps the whole graph usable
    y.backward()
    assert np.isfinite(x.grad.detach().numpy()).all()


# -- the order of the backward pass: no graph walk, creation order where a tensor branches
def test_a_consumer_off_the_path_to_the_loss_does_not_hold_back_the_gradient(rng):
    x = rand(rng, 5)
    h = x.exp()
    side = h * 3.0  # consumes h, but the loss does not depend on it
    (h * 2.0).sum().backward()
    close(x.grad, 2 * np.exp(x.detach().numpy()))
    assert side.requires_grad  # still alive: its edge to h exists all through the backward


def test_uses_counted_outside_a_graph_do_not_change_gradients(rng):
    x = rand(rng, 4)
    h = x.tanh()
    with tga.no_grad():
        h * 5.0  # counted as a use of h, records nothing
    mask = h > 0.0  # a comparison takes h too, and has no gradient
    assert not mask.requires_grad
    (h * h).sum().backward()
    a = np.tanh(x.detach().numpy())
    close(x.grad, 2 * a * (1 - a * a), atol=1e-12)


def test_a_root_that_another_root_consumes(rng):
    x = rand(rng, 3)
    y = (x * x).sum()
    z = y * 3.0
    (gx,) = tga.grad([y, z], x)
    close(gx, 4 * 2 * x.detach().numpy(), atol=1e-12)
    assert x._uses == 2 and y._uses == 1  # the pass leaves the counts as it found them


@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_with_shared_and_dead_branches_match_finite_differences(seed):
    """Random DAGs: tensors used by several later ops, some results dropped or kept off
    the loss. Whatever the shape of the graph, every gradient must be complete."""
    pick = np.random.default_rng(seed)
    unary = [lambda a: a.tanh(), lambda a: a * 0.7, lambda a: a.exp() * 0.1, lambda a: -a]
    binary = [lambda a, b: a * b, lambda a, b: a + b, lambda a, b: a - b * 0.5]
    plan = [
        (
            int(pick.integers(2)),
            int(pick.integers(4)),
            [int(pick.integers(10**6)) for _ in range(2)],
            bool(pick.random() < 0.3),
        )
        for _ in range(25)
    ]
    kept_alive = []

    def f(x, w):
        nodes = [x, w, x * w]
        for kind, op, (i, j), dead in plan:
            a, b = nodes[i % len(nodes)], nodes[j % len(nodes)]
            out = unary[op % 4](a) if kind == 0 else binary[op % 3](a, b)
            if dead:
                kept_alive.append(out * 2.0)  # a consumer that the loss never sees
            nodes.append(out)
        return (nodes[-1] + nodes[-4] * nodes[len(nodes) // 2]).sum()

    x = Tensor(pick.standard_normal(3) * 0.5)
    w = Tensor(pick.standard_normal(3) * 0.5)
    assert tga.gradcheck(f, x, w)


def test_backward_frees_a_shared_intermediate_only_when_no_live_consumer_is_off_the_path(rng):
    x = _big(rng)
    h = x.exp()
    side = h * 5.0  # a live consumer outside the loss
    loss = (h * 2.0 + h * 3.0).tanh().sum()
    del h
    loss.backward()
    assert not isinstance(side.grad_fn.inputs[0]._data, engine.function.FreedArray)  # kept for `side`
    x.grad = None
    h = x.exp()
    loss = (h * 2.0 + h * 3.0).tanh().sum()
    shared = weakref.ref(h._data)
    del h
    loss.backward()
    assert (shared() is None) == engine.switches._CAN_COUNT_REFS  # only the graph held it: freed
    a = x.detach().numpy()
    close(x.grad, 5 * np.exp(a) * (1 - np.tanh(5 * np.exp(a)) ** 2), atol=1e-9)


# -- 0-d tensors reused many times: every accumulation path keeps an array ------------
def test_zero_d_leaf_used_three_times_in_sums_and_products(device):
    a = Tensor(0.3, requires_grad=True, device=device, dtype=np.float64)
    ((a + a) + a).backward()
    close(a.grad, 3.0)
    b = Tensor(0.3, requires_grad=True, device=device, dtype=np.float64)
    ((b + b) * b).backward()
    close(b.grad, 1.2)


def test_micrograd_sanity_check(device):
    x = Tensor(-4.0, requires_grad=True, device=device, dtype=np.float64)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    close(y, -20.0)
    close(x.grad, 46.0)


ZERO_D_EXPRESSIONS = {
    "sum of many": lambda a: a + a + a + a + a,
    "product of many": lambda a: a * a * a * a,
    "mixed": lambda a: (a + a) * a - a / (a + 2.0),
    "through unary ops": lambda a: a.exp() * a.tanh() + a.sigmoid() * a + (a * a).sqrt() + a.log() * a,
    "through reductions and movement": lambda a: a.reshape(1, 1).expand(2, 3).sum() * a + a.unsqueeze(0).mean() * a,
    "through stack and index": lambda a: tga.stack([a, a * a, a]).sum() * a + tga.stack([a, a])[1] * a,
    "through a fused composite": lambda a: tga.stack([a, a, a * a]).softmax(-1)[0] * a + a,
    "through pow and maximum": lambda a: (a**3) * a + a.maximum(a * 0.5) * a,
}


@pytest.mark.parametrize("name", list(ZERO_D_EXPRESSIONS))
def test_zero_d_leaf_reused_matches_finite_differences(name, device):
    f = ZERO_D_EXPRESSIONS[name]
    a = Tensor(0.7, device=device, dtype=np.float64)
    assert tga.gradcheck(f, a)
    # .backward() and tga.grad take different accumulation paths
    x = Tensor(0.7, device=device, dtype=np.float64, requires_grad=True)
    f(x).backward()
    (g,) = tga.grad(f(x), x)
    close(x.grad, g.detach().numpy(), atol=1e-12)
    assert isinstance(x.grad._data, type(g._data)) and x.grad._data.shape == ()
    # and with create_graph (a second backward through a 0-d graph)
    (g1,) = tga.grad(f(x), x, create_graph=True)
    close(g1, g.detach().numpy(), atol=1e-12)


def test_zero_d_gradient_reused_by_a_second_order_pass(device):
    x = Tensor(0.5, requires_grad=True, device=device, dtype=np.float64)
    y = x * x * x + x * x
    (g,) = tga.grad(y, x, create_graph=True)  # 3x^2 + 2x
    (g2,) = tga.grad(g + g + g, x)  # 3 (6x + 2)
    close(g, 0.75 + 1.0)
    close(g2, 3 * (3.0 + 2.0))


# -- each leaf's .grad is an array of its own --------------------------------------
def _writable(t: Tensor) -> bool:
    flags = getattr(t.grad._data, "flags", None)
    return flags is None or flags.writeable


def test_leaf_gradients_never_share_an_array(device, rng):
    a, b, c = (rand(rng, 3, device=device) for _ in range(3))
    ((a + b) * c).sum().backward()
    assert a.grad._data is not b.grad._data
    close(a.grad, c.detach().numpy())
    a.grad._data[...] = 0.0  # writing one leaf's gradient leaves the other's alone
    close(b.grad, c.detach().numpy())


def test_leaf_gradients_are_not_the_callers_grad(device, rng):
    a, b = rand(rng, 3, device=device), rand(rng, 3, device=device)
    G = Tensor(np.ones(3), device=device)
    (a + b).backward(G)
    assert a.grad._data is not G._data and b.grad._data is not G._data and a.grad._data is not b.grad._data
    a.grad._data[...] = 5.0
    close(G, np.ones(3))
    close(b.grad, np.ones(3))


def test_leaf_gradients_are_writable_arrays_not_broadcast_views(device, rng):
    a, b = rand(rng, 4, 3, device=device), rand(rng, 4, 3, device=device)
    (a + b).sum().backward()
    for t in (a, b):
        assert _writable(t)
        t.grad._data[...] = 2.0
    close(a.grad, np.full((4, 3), 2.0))
    w = rand(rng, 1, device=device)
    (w.expand(5) * 1.0).sum().backward()
    assert _writable(w) and w.grad.shape == (1,)


def test_grad_attribute_can_be_reset_and_reaccumulates(rng):
    a = rand(rng, 3)
    (a * 2).sum().backward()
    g0, held = a.grad, a.grad.detach()
    (a * 3).sum().backward()
    assert a.grad is g0 and g0._version == 1  # added in place, as PyTorch's AccumulateGrad does
    close(held, [5.0] * 3)
    a.grad = None
    (a * 1).sum().backward()
    close(a.grad, [1.0] * 3)


# -- fused ops under create_graph: the local derivative only --------------------------
def _dependent_cases():
    F = tga.functional
    return {
        "SoftmaxAlongDim": lambda W: (F.softmax(W * W, -1) * W).sum(),
        "LogSoftmaxAlongDim": lambda W: (F.log_softmax(W * 1.5, -1) * W).sum(),
        "MaskedSoftmax": lambda W: (F.masked_softmax(W * W, W > -0.3, -1) * W).sum(),
        "AdditiveScore": lambda W: (F.additive_score(W * W, W * 0.5, W[0]) * W).sum(),
        "Affine": lambda W: (F.linear(W * 1.0, W, W[0] * 2.0) * W.tanh()).sum(),
        "LayerNormalization": _layer_norm_case,
        "Gelu": lambda W: (F.gelu(W * W) * W).sum(),
        "CrossEntropy": lambda W: F.cross_entropy(W * W, Tensor(np.array([0, 2, 1]), device=W.device)) * W.sum(),
        "Attention": _attention_case,
        # the cross-entropy a trace records, its kept mask and count as inputs
        "CrossEntropyKept": lambda W: (
            F._cross_entropy_kept(
                W * W, *(Tensor(np.array(v), device=W.device) for v in ([0, 2, 1], [1.0, 1.0, 0.0], 2.0)), 0.1
            )
            * W.sum()
        ),
    }


# In each case one input of the fused op is in another input's history.
def _layer_norm_case(W: Tensor) -> Tensor:
    w = W[0] * 1.0
    return (tga.functional.layer_norm(W * w, w.shape, w, w * 0.5) * W).sum()


def _attention_case(W: Tensor) -> Tensor:
    x = W.tanh()
    return (tga.functional.scaled_dot_product_attention(x @ W, x, x, is_causal=True) * W).sum()


def _fused_classes():
    import inspect

    from tinygrad_attn.ops import fused

    return sorted(
        (c for _, c in inspect.getmembers(fused, inspect.isclass)
         if issubclass(c, engine.composite.FusedFunction) and c.__module__ == fused.__name__),
        key=lambda c: c.__name__,
    )  # fmt: skip


def _graph_ops(y: Tensor) -> set:
    seen, stack, ops_ = set(), [y], set()
    while stack:
        t = stack.pop()
        if not isinstance(t, Tensor) or t._ctx is None or id(t) in seen:
            continue
        seen.add(id(t))
        ops_.add(type(t._ctx))
        stack.extend(t._ctx.inputs)
    return ops_


def test_every_fused_op_has_a_dependent_inputs_case():
    assert {c.__name__ for c in _fused_classes()} == set(_dependent_cases())


@pytest.mark.parametrize("cls", _fused_classes(), ids=lambda c: c.__name__)
def test_fused_create_graph_takes_the_local_derivative_when_inputs_depend_on_each_other(cls, device, rng):
    f = _dependent_cases()[cls.__name__]
    W = Tensor(rng.standard_normal((3, 3)) * 0.5, device=device, requires_grad=True)
    y = f(W)
    assert cls in _graph_ops(y)  # the fused node is what runs
    (first,) = tga.grad(y, W)
    (fused_cg,) = tga.grad(f(W), W, create_graph=True)
    with tga.decompose():
        y_dec = f(W)
        assert cls not in _graph_ops(y_dec)
        (dec_cg,) = tga.grad(y_dec, W, create_graph=True)
    close(fused_cg, first.detach().numpy(), atol=1e-10)
    close(dec_cg, first.detach().numpy(), atol=1e-10)
    # the second order, fused and decomposed, against finite differences
    assert tga.gradcheck(lambda w: tga.grad(f(w), w, create_graph=True)[0], W, atol=1e-5)
    with tga.decompose():
        assert tga.gradcheck(lambda w: tga.grad(f(w), w, create_graph=True)[0], W, atol=1e-5)


def test_tied_embedding_gradient_with_create_graph(rng):
    # A weight used twice (an input projection, then tied as the output projection).
    F = tga.functional
    W = Tensor(rng.standard_normal((5, 4)), requires_grad=True)
    x = Tensor(rng.standard_normal((3, 5)))

    def f(w):
        return F.cross_entropy(F.linear(F.layer_norm(x @ w, (4,)), w), Tensor(np.array([1, 0, 4])))

    (g1,) = tga.grad(f(W), W)
    (g2,) = tga.grad(f(W), W, create_graph=True)
    close(g2, g1.detach().numpy(), atol=1e-10)


def test_leaf_gradients_with_create_graph_are_arrays_of_their_own(device, rng):
    a, b = rand(rng, 3, device=device), rand(rng, 3, device=device)
    G = Tensor(np.ones(3), device=device)
    (a + b).backward(G, create_graph=True)
    assert a.grad is not b.grad and a.grad._data is not b.grad._data
    assert a.grad._data is not G._data and b.grad._data is not G._data
    a2 = rand(rng, 3, device=device)
    (a2 * a2).sum().backward(create_graph=True)
    (ga,) = tga.grad(a2.grad.sum(), a2)  # still differentiable
    close(ga, np.full(3, 2.0))


def test_a_gradient_only_the_pass_holds_is_handed_to_grad_without_a_copy(monkeypatch, rng):
    a = Tensor(rng.standard_normal(engine.function.FREE_MIN_SIZE), requires_grad=True)
    ops_ = a._dev.ops
    copies = []
    real = ops_.copy
    monkeypatch.setattr(ops_, "copy", lambda x: copies.append(x.shape) or real(x))
    (a.tanh() * 2.0).sum().backward()  # each step makes a new array: the last is a's own
    assert copies == []
    b = Tensor(rng.standard_normal(engine.function.FREE_MIN_SIZE), requires_grad=True)
    (a + b).sum().backward()  # one array for both: the first leaf to get it takes a copy
    assert len(copies) >= 1 and a.grad._data is not b.grad._data


def test_tied_gpt_embedding_gradient_is_the_same_with_create_graph():
    from tinygrad_attn.models import GPT

    model = GPT(11, 8, 2, 1, 6, tie_weights=True)
    ids, targets = Tensor(np.array([[1, 2, 3, 4, 5]])), Tensor(np.array([2, 3, 4, 5, 6]))

    def loss() -> Tensor:
        return tga.functional.cross_entropy(model(ids).reshape(-1, 11), targets)

    w = next(iter(model.parameters()))
    (first,) = tga.grad(loss(), w)
    (recorded,) = tga.grad(loss(), w, create_graph=True)
    close(recorded, first.detach().numpy(), atol=1e-5, rtol=1e-4)
