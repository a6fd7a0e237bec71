"""``tga.autograd.functional`` against ``torch.autograd.functional``, and ``tga.autograd.grad``
and ``backward`` against PyTorch's: several functions, every argument form (a tensor or a
tuple in, a tensor or a tuple out), every option, results nested and valued as PyTorch's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

SHAPES = {"x": (2, 3), "y": (3,), "s": (1,)}


# Functions of tensors written with methods both libraries share. Each: (name, input names, fn).
def _elementwise(x):
    return x.exp() * x.sin()


def _two_in(x, y):
    return (x * y).tanh().sum(0)


def _two_out(x):
    return x.sum(), x * x


def _two_in_two_out(x, y):
    return (x * y).cos(), (y * y).sum() + x.sum()


def _ignores_y(x, y):
    return x * 2.0


def _linear(x):
    return x * 3.0 + 1.0


def _scalar_out(x):
    return x.sin().sum()


FUNCTIONS = [
    ("elementwise", ("x",), _elementwise),
    ("two_in", ("x", "y"), _two_in),
    ("two_out", ("x",), _two_out),
    ("two_in_two_out", ("x", "y"), _two_in_two_out),
    ("ignores_y", ("x", "y"), _ignores_y),
    ("linear", ("x",), _linear),
    ("scalar_out", ("y",), _scalar_out),
]

# Scalar functions for the second-order products.
SCALARS = [
    ("exp_x", ("x",), lambda x: (x.exp() * x).sum()),
    ("sin_xy", ("x", "y"), lambda x, y: (x * y).sin().sum()),
    ("cubic", ("y",), lambda y: (y * y * y).sum()),
    ("quadratic_ignores_y", ("x", "y"), lambda x, y: (x * x).sum()),
    ("one_element", ("s",), lambda s: (s.exp() * s).sum()),
]


def _arrays(names, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.5, 1.5, SHAPES[n]) for n in names]


def _tensors(lib, arrays, as_tuple, requires_grad=False):
    ts = tuple(lib.tensor(a, requires_grad=requires_grad) for a in arrays)
    return ts if as_tuple or len(ts) > 1 else ts[0]


def _numpy(r):
    """Results as nested tuples of arrays, and the nesting itself. (PyTorch's vectorized
    forward-mode Hessian nests lists where its other paths nest tuples: read as tuples.)"""
    if isinstance(r, (tuple, list)):
        return tuple(_numpy(x) for x in r)
    return r.detach().numpy()


def _assert_same(ours, theirs, rtol=1e-10):
    assert isinstance(ours, tuple) == isinstance(theirs, tuple), (type(ours), type(theirs))
    if isinstance(ours, tuple):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b, rtol)
    else:
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=1e-12)


def _leaves(r):
    return [x for y in r for x in _leaves(y)] if isinstance(r, tuple) else [r]


def _both(call, arrays, as_tuple, create_graph, batched=False):
    """``call(lib, inputs)`` run by both libraries; with ``create_graph`` the inputs require grad
    and the sum of the results is differentiated again with respect to them. (``batched``:
    PyTorch vectorized the rows, and its batched pass marks even a constant result as requiring
    grad under ``create_graph``: only the values are compared.)"""
    try:
        call(torch, _tensors(torch, arrays, as_tuple, requires_grad=create_graph))
    except Exception as e:  # (a combination PyTorch refuses: so must we, with its exception class)
        with pytest.raises(type(e)):
            call(tga, _tensors(tga, arrays, as_tuple, requires_grad=create_graph))
        return
    got = []
    for lib in (tga, torch):
        ins = _tensors(lib, arrays, as_tuple, requires_grad=create_graph)
        res = call(lib, ins)
        again = None
        if create_graph:
            total = sum((r * r).sum() for r in _leaves(res) if r.requires_grad)
            flat = ins if isinstance(ins, tuple) else (ins,)
            if not isinstance(total, int):
                again = lib.autograd.grad(total, flat, allow_unused=True, materialize_grads=True)
        got.append((res, again))
    (ours, ours_again), (theirs, theirs_again) = got
    _assert_same(_numpy(ours), _numpy(theirs))
    if not batched:
        assert [r.requires_grad for r in _leaves(ours)] == [r.requires_grad for r in _leaves(theirs)]
    assert (ours_again is None) == (theirs_again is None)
    if ours_again is not None:
        _assert_same(_numpy(ours_again), _numpy(theirs_again), rtol=1e-9)


def _forms(names):
    """Argument forms: one tensor passed bare or as a 1-tuple; several as a tuple."""
    return [False, True] if len(names) == 1 else [True]


def _jacobian_cases():
    for (name, names, fn), cg, vec in itertools.product(FUNCTIONS, [False, True], [False, True]):
        for as_tuple in _forms(names):
            yield pytest.param(
                fn, names, as_tuple, cg, vec, id=f"{name}-tuple{int(as_tuple)}-cg{int(cg)}-vec{int(vec)}"
            )


@pytest.mark.parametrize("fn,names,as_tuple,create_graph,vectorize", list(_jacobian_cases()))
def test_jacobian(fn, names, as_tuple, create_graph, vectorize):
    arrays = _arrays(names, 0)
    _both(lambda lib, ins: lib.autograd.functional.jacobian(fn, ins, create_graph=create_graph, vectorize=vectorize),
          arrays, as_tuple, create_graph, vectorize)  # fmt: skip


def test_jacobian_forward_mode_strategy_with_vectorize():
    arrays = _arrays(("x",), 1)
    _both(lambda lib, ins: lib.autograd.functional.jacobian(_elementwise, ins, vectorize=True, strategy="forward-mode"),
          arrays, False, False)  # fmt: skip


def _hessian_cases():
    for (name, names, fn), cg, strategy in itertools.product(SCALARS, [False, True], ["reverse-mode", "forward-mode"]):
        for as_tuple in _forms(names):
            vec = strategy == "forward-mode"
            yield pytest.param(fn, names, as_tuple, cg, vec, strategy, id=f"{name}-tuple{int(as_tuple)}-cg{int(cg)}-"
                               f"{strategy}")  # fmt: skip


@pytest.mark.parametrize("fn,names,as_tuple,create_graph,vectorize,strategy", list(_hessian_cases()))
def test_hessian(fn, names, as_tuple, create_graph, vectorize, strategy):
    arrays = _arrays(names, 2)
    _both(lambda lib, ins: lib.autograd.functional.hessian(fn, ins, create_graph=create_graph, vectorize=vectorize,
                                                           outer_jacobian_strategy=strategy),
          arrays, as_tuple, create_graph, vectorize)  # fmt: skip


def _v_for(lib, like, seed, as_tuple):
    rng = np.random.default_rng(seed)
    vs = tuple(lib.tensor(rng.uniform(-1, 1, tuple(t.shape))) for t in like)
    return vs if as_tuple else vs[0]


def _outputs_of(fn, arrays):
    out = fn(*[tga.tensor(a) for a in arrays])
    return out if isinstance(out, tuple) else (out,), isinstance(out, tuple)


def _product_cases(functions):
    for (name, names, fn), cg, v_none in itertools.product(functions, [False, True], [False, True]):
        for as_tuple in _forms(names):
            yield pytest.param(fn, names, as_tuple, cg, v_none, id=f"{name}-tuple{int(as_tuple)}-cg{int(cg)}-"
                               f"v{'None' if v_none else 'given'}")  # fmt: skip


@pytest.mark.parametrize("fn,names,as_tuple,create_graph,v_none", list(_product_cases(FUNCTIONS)))
def test_vjp(fn, names, as_tuple, create_graph, v_none):
    arrays = _arrays(names, 3)
    outs, outs_tuple = _outputs_of(fn, arrays)
    if v_none and not (len(outs) == 1 and outs[0].numel() == 1):
        _both_raise(lambda lib, ins: lib.autograd.functional.vjp(fn, ins), arrays, as_tuple)
        return
    _both(lambda lib, ins: lib.autograd.functional.vjp(fn, ins, None if v_none else _v_for(lib, outs, 4, outs_tuple),
                                                       create_graph=create_graph),
          arrays, as_tuple, create_graph)  # fmt: skip


@pytest.mark.parametrize("fn,names,as_tuple,create_graph,v_none", list(_product_cases(FUNCTIONS)))
def test_jvp(fn, names, as_tuple, create_graph, v_none):
    arrays = _arrays(names, 5)
    if v_none and not (len(names) == 1 and np.prod(SHAPES[names[0]]) == 1):
        _both_raise(lambda lib, ins: lib.autograd.functional.jvp(fn, ins), arrays, as_tuple)
        return
    ins_like = [tga.tensor(a) for a in arrays]
    _both(lambda lib, ins: lib.autograd.functional.jvp(fn, ins, None if v_none else _v_for(lib, ins_like, 6, as_tuple),
                                                       create_graph=create_graph),
          arrays, as_tuple, create_graph)  # fmt: skip


@pytest.mark.parametrize("which", ["hvp", "vhp"])
@pytest.mark.parametrize("fn,names,as_tuple,create_graph,v_none", list(_product_cases(SCALARS)))
def test_hvp_and_vhp(which, fn, names, as_tuple, create_graph, v_none):
    arrays = _arrays(names, 7)
    if v_none and not (len(names) == 1 and np.prod(SHAPES[names[0]]) == 1):
        _both_raise(lambda lib, ins: getattr(lib.autograd.functional, which)(fn, ins), arrays, as_tuple)
        return
    ins_like = [tga.tensor(a) for a in arrays]
    _both(lambda lib, ins: getattr(lib.autograd.functional, which)(
        fn, ins, None if v_none else _v_for(lib, ins_like, 8, as_tuple), create_graph=create_graph),
          arrays, as_tuple, create_graph)  # fmt: skip


def _both_raise(call, arrays, as_tuple):
    kinds = []
    for lib in (torch, tga):
        with pytest.raises(Exception) as e:
            call(lib, _tensors(lib, arrays, as_tuple))
        kinds.append(e.type)
    assert kinds[0] is kinds[1], kinds


# -- strict mode and misuse: PyTorch's exception classes --------------------------------------
MISUSES = [
    ("jacobian strict, output independent of y", lambda F, x, y: F.jacobian(_ignores_y, (x, y), strict=True)),
    ("jacobian strict, constant output", lambda F, x, y: F.jacobian(lambda x: x.detach() * 1.0, x, strict=True)),
    ("vjp strict, independent input", lambda F, x, y: F.vjp(_ignores_y, (x, y), x * 0 + 1, strict=True)),
    ("jvp strict, constant output", lambda F, x, y: F.jvp(lambda x: x.detach() * 1.0, x, x * 0 + 1, strict=True)),
    ("hessian strict, linear function", lambda F, x, y: F.hessian(lambda x: (x * 2.0).sum(), x, strict=True)),
    ("hvp strict, linear function", lambda F, x, y: F.hvp(lambda x: (x * 2.0).sum(), x, x * 0 + 1, strict=True)),
    (
        "vhp strict, independent input",
        lambda F, x, y: F.vhp(lambda x, y: (x * x).sum(), (x, y), (x, y), strict=True),
    ),  # fmt: skip
    (
        "jacobian strict with a graph, linear",
        lambda F, x, y: F.jacobian(_linear, x.requires_grad_(), create_graph=True, strict=True),
    ),  # fmt: skip
    ("jacobian of an empty output", lambda F, x, y: F.jacobian(lambda x: x[:0] * 2.0, x)),
    ("hessian of a non-scalar", lambda F, x, y: F.hessian(_elementwise, x)),
    ("hessian of a tuple", lambda F, x, y: F.hessian(lambda x: (x.sum(), x.sum()), x)),
    ("vhp of a non-scalar", lambda F, x, y: F.vhp(_elementwise, x, x)),
    ("a list of inputs", lambda F, x, y: F.jacobian(_two_in, [x, y])),
    ("a number as input", lambda F, x, y: F.jacobian(_elementwise, 3.0)),
    ("a number as output", lambda F, x, y: F.jacobian(lambda x: 3, x)),
    ("v of a wrong shape", lambda F, x, y: F.vjp(_elementwise, x, y)),
    ("v of a wrong length", lambda F, x, y: F.jvp(_two_in, (x, y), (x,))),
    ("an unknown strategy", lambda F, x, y: F.jacobian(_elementwise, x, strategy="sideways")),
    ("forward mode without vectorize", lambda F, x, y: F.jacobian(_elementwise, x, strategy="forward-mode")),
    ("an unknown outer strategy", lambda F, x, y: F.hessian(_scalar_out, y, outer_jacobian_strategy="up")),
]


@pytest.mark.parametrize("i", range(len(MISUSES)), ids=[m[0] for m in MISUSES])
def test_misuse_raises_torchs_exception_class(i):
    _, call = MISUSES[i]
    kinds = []
    for lib in (torch, tga):
        x, y = (lib.tensor(a) for a in _arrays(("x", "y"), 9))
        with pytest.raises(Exception) as e:
            call(lib.autograd.functional, x, y)
        kinds.append(e.type)
    assert issubclass(kinds[1], kinds[0]), kinds


@pytest.mark.parametrize("fn,names", [(f, n) for _, n, f in FUNCTIONS], ids=[f[0] for f in FUNCTIONS])
def test_not_strict_fills_zeros_where_torch_does(fn, names):
    arrays = _arrays(names, 10)
    _both(lambda lib, ins: lib.autograd.functional.jacobian(fn, ins, strict=False), arrays, True, False)


# -- tga.autograd.grad and tga.autograd.backward ----------------------------------------------------
def _grad_call(lib, kw, batched=False):
    x = lib.tensor(np.linspace(-1.0, 1.0, 6).reshape(2, 3), requires_grad=True)
    y = lib.tensor(np.array([0.5, -0.25, 2.0]), requires_grad=True)
    unused = lib.tensor(np.ones(2), requires_grad=True)
    a, b = (x * y).sin(), (y * y).sum()
    if batched:
        go = [lib.tensor(np.arange(12.0).reshape(2, 2, 3)), lib.tensor(np.array([1.0, -2.0]))]
    else:
        go = [lib.ones(2, 3, dtype=lib.float64), None]
    ins = {"x": x, "unused": unused, "y": y} if kw.pop("as_dict", False) else [x, unused, y]
    return lib.autograd.grad([a, b], ins, go, is_grads_batched=batched, **kw)


GRAD_OPTIONS = [
    {"allow_unused": True},
    {"materialize_grads": True},
    {"allow_unused": True, "materialize_grads": True},
    {"materialize_grads": True, "as_dict": True},
    {"allow_unused": True, "create_graph": True},
    {"allow_unused": True, "retain_graph": True},
]


@pytest.mark.parametrize("kw", GRAD_OPTIONS, ids=[",".join(k) for k in GRAD_OPTIONS])
@pytest.mark.parametrize("batched", [False, True])
def test_grad_takes_torchs_arguments(kw, batched):
    ours, theirs = _grad_call(tga, dict(kw), batched), _grad_call(torch, dict(kw), batched)
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        ours, theirs = tuple(ours.values()), tuple(theirs.values())
    assert [g is None for g in ours] == [g is None for g in theirs]
    assert [g is not None and g.requires_grad for g in ours] == [g is not None and g.requires_grad for g in theirs]
    _assert_same(_numpy(tuple(g for g in ours if g is not None)), _numpy(tuple(g for g in theirs if g is not None)))


@pytest.mark.parametrize("kw", [{}, {"allow_unused": False}, {"allow_unused": False, "materialize_grads": True}])
def test_grad_refusals_are_torchs(kw):
    kinds = []
    for lib in (torch, tga):
        with pytest.raises(Exception) as e:
            _grad_call(lib, dict(kw))
        kinds.append(e.type)
    assert kinds[0] is kinds[1]


@pytest.mark.parametrize("use_inputs", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
def test_backward_takes_torchs_arguments(use_inputs, create_graph):
    grads = []
    for lib in (tga, torch):
        x = lib.tensor(np.array([0.5, 1.0, 1.5]), requires_grad=True)
        w = lib.tensor(np.array([2.0, -1.0, 0.5]), requires_grad=True)
        a, b = x * w, (x * x).sum()
        kw = {"inputs": [x]} if use_inputs else {}
        lib.autograd.backward([a, b], grad_tensors=[lib.ones(3, dtype=lib.float64), None], create_graph=create_graph,
                              **kw)  # fmt: skip
        wg = None if w.grad is None else w.grad.detach().numpy()
        grads.append((x.grad.detach().numpy(), wg, x.grad.requires_grad))
    (xo, wo, ro), (xt, wt, rt) = grads
    np.testing.assert_allclose(xo, xt)
    assert (wo is None) == (wt is None) and ro == rt
    if wo is not None:
        np.testing.assert_allclose(wo, wt)


def test_backward_refuses_empty_inputs_as_torch():
    for lib in (tga, torch):
        x = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(RuntimeError):
            lib.autograd.backward((x * 2).sum(), inputs=[])


@pytest.mark.parametrize("which", ["x", "y", "both", "a_non_leaf"])
def test_tensor_backward_with_inputs_as_torch(which):
    got = []
    for lib in (tga, torch):
        x = lib.tensor(np.array([0.5, 1.0, 1.5]), requires_grad=True)
        y = lib.tensor(np.array([2.0, -1.0, 0.5]), requires_grad=True)
        h = x * y
        h.retain_grad()
        inputs = {"x": x, "y": [y], "both": (x, y), "a_non_leaf": [h]}[which]
        (h * h + x).sum().backward(inputs=inputs)
        got.append([None if t.grad is None else t.grad.detach().numpy() for t in (x, y, h)])
    for a, b in zip(*got, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b)


def test_backward_with_inputs_inside_compile_replays_as_eager():
    rng = np.random.default_rng(3)
    w1 = tga.tensor(rng.standard_normal(3), requires_grad=True)
    w2 = tga.tensor(rng.standard_normal(3), requires_grad=True)

    def step(x):
        loss = ((x * w1).sin() * w2).sum()
        loss.backward(inputs=[w1])  # w2 is left alone
        tga.autograd.backward([(w2 * w2).sum()], inputs=w2)
        return loss

    compiled = tga.compile(step)
    for _ in range(3):
        x = tga.tensor(rng.standard_normal(3))
        w1.grad = w2.grad = None
        eager = float(step(x))
        grads = (w1.grad.detach().numpy().copy(), w2.grad.detach().numpy().copy())
        w1.grad = w2.grad = None
        assert float(compiled(x)) == pytest.approx(eager, rel=1e-12)
        np.testing.assert_allclose(w1.grad.detach().numpy(), grads[0], rtol=1e-12)
        np.testing.assert_allclose(w2.grad.detach().numpy(), grads[1], rtol=1e-12)
