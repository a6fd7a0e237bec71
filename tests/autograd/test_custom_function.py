"""``tga.autograd.Function`` run side by side with PyTorch's: every custom Function below is
written once against a library (``lib`` is ``torch`` or ``tinygrad_attn``), and each case
compares outputs, first-order gradients and second-order gradients (through a backward
written in tensor ops, ``create_graph=True``), the ``ctx`` PyTorch and ours report, and the
exception class of each misuse."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn.symbolic.trace import trace as jit_trace

torch = pytest.importorskip("torch")


def functions(lib):
    """The same custom Functions, for ``lib``."""
    F = lib.autograd.Function
    once = lib.autograd.function.once_differentiable

    class Cube(F):  # saves an input, takes a number
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * x * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x * ctx.k, None

    class Exp(F):  # saves its output
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class MulAdd(F):  # two tensor inputs, gradients only where asked for
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            ctx.seen = ctx.needs_input_grad
            return a * b + a

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            ga = g * (b + 1) if ctx.needs_input_grad[0] else None
            gb = g * a if ctx.needs_input_grad[1] else None
            return ga, gb

    class SinCos(F):  # two outputs
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, gs, gc):
            (x,) = ctx.saved_tensors
            return gs * x.cos() - gc * x.sin()

    class SinCosLazy(F):  # two outputs, no zeros for one without a gradient
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, gs, gc):
            (x,) = ctx.saved_tensors
            ctx.got = (gs is None, gc is None)
            g = 0 * x
            if gs is not None:
                g = g + gs * x.cos()
            if gc is not None:
                g = g - gc * x.sin()
            return g

    class MaxOf(F):  # an output without a gradient
        @staticmethod
        def forward(ctx, x):
            values, idx = x.max(dim=1)
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x, idx)
            return values, idx

        @staticmethod
        def backward(ctx, g, gi):
            x, idx = ctx.saved_tensors
            ctx.gi = gi
            onehot = (lib.arange(x.shape[1], device=x.device).reshape(1, -1) == idx.reshape(-1, 1)).to(x.dtype)
            return onehot * g.reshape(-1, 1) * x / x

    class Twice(F):  # changes its input in place
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Square(F):  # forward without ctx, and setup_context
        @staticmethod
        def forward(x, k):
            return x * x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.save_for_backward(x)
            ctx.k = k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x * ctx.k, None

    class Tanh(F):  # vjp instead of backward
        @staticmethod
        def forward(ctx, x):
            y = x.tanh()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def vjp(ctx, g):
            (y,) = ctx.saved_tensors
            return g * (1 - y * y)

    class Same(F):  # returns its input as it is
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class AddBias(F):  # a gradient of the broadcast shape, summed to the bias's
        @staticmethod
        def forward(ctx, x, b):
            ctx.save_for_backward(x)
            return x * x + b

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x, g

    class Once(F):  # a backward that is not differentiable itself
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    class Mixed(F):  # two outputs of two dtypes
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x * x).to(lib.float32), x.sin()

        @staticmethod
        def backward(ctx, ga, gb):
            (x,) = ctx.saved_tensors
            return 2 * x * ga.to(x.dtype) + gb * x.cos()

    return {c.__name__: c for c in (Cube, Exp, MulAdd, SinCos, SinCosLazy, MaxOf, Twice, Square, Tanh, Same,
                                    AddBias, Once, Mixed)}  # fmt: skip


OURS, THEIRS = functions(tga), functions(torch)


# Each case: (name, input shapes, which inputs require grad, program). A program maps the
# Functions and input tensors to a scalar loss and the ctx attributes to compare, if any.
def _cube(fs, x):
    return (fs["Cube"].apply(x, 1.5) * x).sum(), {}


def _cube_kw(fs, x):
    return fs["Cube"].apply(x, k=0.5).sum(), {}


def _exp(fs, x):
    return (fs["Exp"].apply(x.sin()) ** 2).sum(), {}


def _muladd(fs, a, b):
    y = fs["MulAdd"].apply(a, b)
    return (y * y).sum(), {}


def _sincos_both(fs, x):
    s, c = fs["SinCos"].apply(x)
    return (s * c * x).sum(), {}


def _sincos_one(fs, x):
    s, _ = fs["SinCos"].apply(x * 2)
    return (s * s).sum(), {}


def _sincos_other(fs, x):
    _, c = fs["SinCos"].apply(x)
    return (c * x).sum(), {}


def _lazy_one(fs, x):
    _, c = fs["SinCosLazy"].apply(x)
    return (c * c).sum(), {}


def _lazy_both(fs, x):
    s, c = fs["SinCosLazy"].apply(x)
    return (s * c).sum(), {}


def _max(fs, x):
    v, i = fs["MaxOf"].apply(x)
    assert not i.requires_grad and v.requires_grad
    return (v * v).sum() + 0 * i.sum(), {}


def _dirty(fs, x):
    y = x * 1.0  # (a leaf cannot change in place)
    z = fs["Twice"].apply(y)
    assert z is y
    return (z * z).sum(), {}


def _dirty_after_use(fs, x):
    y = x * 1.0
    before = y + 1.0  # read before the change: its gradient goes to y's old history
    z = fs["Twice"].apply(y)
    return (before * before + z * x).sum(), {}


def _square(fs, x):
    return (fs["Square"].apply(x, 3.0) * x).sum(), {}


def _tanh(fs, x):
    return (fs["Tanh"].apply(x) ** 3).sum(), {}


def _same(fs, x):
    y = fs["Same"].apply(x)
    assert y is not x
    return (y * y).sum(), {}


def _bias(fs, x, b):
    return (fs["AddBias"].apply(x, b) ** 2).sum(), {}


def _chain(fs, x):
    y = fs["Exp"].apply(fs["Cube"].apply(x, 0.3))
    s, c = fs["SinCos"].apply(y)
    return (s + c * fs["Tanh"].apply(x)).sum(), {}


def _mixed(fs, x):
    a, b = fs["Mixed"].apply(x)
    assert str(a.dtype).endswith("float32") and str(b.dtype).endswith("float64")
    return (a.double() * 3 + b * b).sum(), {}


CASES = [
    ("mixed_dtypes", [(3,)], [True], _mixed),
    ("cube", [(3, 4)], [True], _cube),
    ("cube_kwargs", [(5,)], [True], _cube_kw),
    ("exp_saves_output", [(2, 3)], [True], _exp),
    ("two_inputs_both", [(3,), (3,)], [True, True], _muladd),
    ("two_inputs_first", [(3,), (3,)], [True, False], _muladd),
    ("two_inputs_second", [(2, 2), (2, 2)], [False, True], _muladd),
    ("two_outputs_both", [(4,)], [True], _sincos_both),
    ("two_outputs_first_only", [(4,)], [True], _sincos_one),
    ("two_outputs_second_only", [(3, 2)], [True], _sincos_other),
    ("unmaterialized_one", [(4,)], [True], _lazy_one),
    ("unmaterialized_both", [(4,)], [True], _lazy_both),
    ("non_differentiable_output", [(3, 4)], [True], _max),
    ("mark_dirty", [(5,)], [True], _dirty),
    ("mark_dirty_after_a_use", [(5,)], [True], _dirty_after_use),
    ("setup_context", [(2, 3)], [True], _square),
    ("vjp", [(6,)], [True], _tanh),
    ("input_returned", [(3,)], [True], _same),
    ("broadcast_gradient", [(2, 3), (3,)], [True, True], _bias),
    ("chain", [(4,)], [True], _chain),
]


def _inputs(lib, arrays, needs, device=None):
    kw = {} if device is None else {"device": device}
    return [lib.tensor(a.copy(), requires_grad=n, **kw) for a, n in zip(arrays, needs)]


def _run(lib, fs, arrays, needs, prog, order2=True, device=None):
    xs = _inputs(lib, arrays, needs, device)
    loss, _ = prog(fs, *xs)
    wrt = [x for x in xs if x.requires_grad]
    g1 = lib.autograd.grad(loss, wrt, create_graph=order2)
    out = {"loss": loss.detach().numpy(), "g1": [g.detach().numpy() for g in g1]}
    if order2:
        total = sum((g * g).sum() for g in g1 if g.requires_grad)
        if isinstance(total, int):  # (no first gradient depends on the inputs)
            out["g2"] = []
        else:
            g2 = lib.autograd.grad(total, wrt, allow_unused=True)
            out["g2"] = [None if g is None else g.detach().numpy() for g in g2]
    return out


def _assert_same(ours, theirs):
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=1e-10, atol=1e-12)
    for a, b in zip(ours["g1"], theirs["g1"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for a, b in zip(ours.get("g2", []), theirs.get("g2", []), strict=True):
        if a is None or b is None:  # (PyTorch: None where the gradient did not depend on an input)
            assert np.all((a if b is None else b) == 0) or a is b
        else:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name,shapes,needs,prog", CASES, ids=[c[0] for c in CASES])
def test_custom_function_matches_torch_first_and_second_order(name, shapes, needs, prog):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    arrays = [rng.uniform(0.3, 1.5, s) * rng.choice([-1.0, 1.0], s) for s in shapes]
    _assert_same(_run(tga, OURS, arrays, needs, prog), _run(torch, THEIRS, arrays, needs, prog))


@pytest.mark.parametrize("name,shapes,needs,prog", CASES, ids=[c[0] for c in CASES])
def test_custom_function_on_each_device(device, name, shapes, needs, prog):
    rng = np.random.default_rng(2 + zlib.crc32(name.encode()))
    arrays = [rng.uniform(0.3, 1.5, s) * rng.choice([-1.0, 1.0], s) for s in shapes]
    _assert_same(_run(tga, OURS, arrays, needs, prog, device=device), _run(torch, THEIRS, arrays, needs, prog))


@pytest.mark.parametrize("name,shapes,needs,prog", CASES, ids=[c[0] for c in CASES])
def test_custom_function_backward_accumulates_as_torch(name, shapes, needs, prog):
    rng = np.random.default_rng(1 + zlib.crc32(name.encode()))
    arrays = [rng.uniform(0.3, 1.5, s) for s in shapes]
    grads = []
    for lib, fs in ((tga, OURS), (torch, THEIRS)):
        xs = _inputs(lib, arrays, needs)
        loss, _ = prog(fs, *xs)
        loss.backward()
        grads.append([None if x.grad is None else x.grad.detach().numpy() for x in xs])
    for a, b in zip(*grads, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
def test_needs_input_grad_is_torchs(needs):
    seen = []
    for lib, fs in ((tga, OURS), (torch, THEIRS)):
        a, b = (lib.tensor([1.0, 2.0], requires_grad=n) for n in needs)
        y = fs["MulAdd"].apply(a, b)
        ctx = y.grad_fn.fctx if lib is tga else y.grad_fn
        seen.append(tuple(ctx.seen))
    assert seen[0] == seen[1] == needs


@pytest.mark.parametrize("use", ["first", "second", "both"])
def test_materialize_grads_false_gives_none_as_torch(use):
    got = []
    for lib, fs in ((tga, OURS), (torch, THEIRS)):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        s, c = fs["SinCosLazy"].apply(x)
        y = {"first": s, "second": c, "both": s + c}[use]
        y.sum().backward()
        got.append(s.grad_fn.got)  # (a custom Function's node is its ctx: what forward set on it)
    assert got[0] == got[1]


def test_a_non_differentiable_output_gets_zeros_in_backward():
    for lib, fs in ((tga, OURS), (torch, THEIRS)):
        x = lib.tensor([[1.0, 3.0], [4.0, 2.0]], requires_grad=True)
        v, i = fs["MaxOf"].apply(x)
        v.sum().backward()
        node = v.grad_fn
        assert node.gi.tolist() == [0, 0] and x.grad.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_without_a_gradient_wanted_apply_records_nothing():
    for lib, fs in ((tga, OURS), (torch, THEIRS)):
        x = lib.tensor([1.0, 2.0])
        assert not fs["Exp"].apply(x).requires_grad
        with lib.no_grad():
            assert not fs["Exp"].apply(x.requires_grad_()).requires_grad


def test_once_differentiable_first_order_and_refusal_of_the_second():
    errors = []
    for lib, fs in ((tga, OURS), (torch, THEIRS)):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        (g,) = lib.autograd.grad(fs["Once"].apply(x).sum(), x, create_graph=True)
        assert g.tolist() == [2.0, -4.0]
        with pytest.raises(Exception) as e:
            g.sum().backward()
        errors.append(e.type)
    assert errors[0] is errors[1] is RuntimeError


# -- misuse: the exception class PyTorch raises ----------------------------------------------
def _bad(lib, kind):
    F = lib.autograd.Function

    class Bad(F):
        @staticmethod
        def forward(ctx, x, k=2.0):
            if kind == "save_number":
                ctx.save_for_backward(3)
                return x * k
            if kind in ("dirty_leaf", "dirty_not_returned"):
                x.mul_(k)
                ctx.mark_dirty(x)
                if kind == "dirty_not_returned":
                    return x * 1.0
            ctx.save_for_backward(x)
            return x * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return {
                "too_many": (g, g, g),
                "too_few": (),
                "wrong_shape": (g[:1], None),
                "not_a_tensor": ("g", None),
                "grad_for_a_number": (g, g),
            }.get(kind, (g * 2, None))

    return Bad


def _misuse(lib, kind):
    Bad = _bad(lib, kind)
    if kind == "dirty_leaf":
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        Bad.apply(x)
        return
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    out = Bad.apply(y)
    if kind == "changed_after_save":
        with lib.no_grad():
            y.add_(1.0)
    out.sum().backward(retain_graph=kind != "backward_twice")
    if kind == "backward_twice":
        out.sum().backward()


KINDS = ["too_many", "too_few", "wrong_shape", "not_a_tensor", "grad_for_a_number", "save_number", "dirty_leaf",
         "dirty_not_returned", "changed_after_save", "backward_twice"]  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_misuse_raises_torchs_exception_class(kind):
    with pytest.raises(Exception) as theirs:
        _misuse(torch, kind)
    with pytest.raises(Exception) as ours:
        _misuse(tga, kind)
    assert ours.type is theirs.type, (ours.value, theirs.value)


def test_changed_saved_tensor_names_the_function_and_versions():
    x = tga.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    out = OURS["Exp"].apply(y)
    with tga.no_grad():
        out.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*Exp.*version 1; expected version 0"):
        out.sum().backward()


def test_a_function_that_saved_nothing_may_run_backward_again():
    for lib, fs in ((tga, OURS), (torch, THEIRS)):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fs["Same"].apply(x)
        y.backward(lib.ones(2))
        y.backward(lib.ones(2))
        assert x.grad.tolist() == [6.0, 6.0]


@pytest.mark.parametrize("what", ["backward", "jvp", "forward"])
def test_unimplemented_methods_raise_not_implemented(what):
    for lib in (tga, torch):

        class OnlyForward(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

        class Nothing(lib.autograd.Function):
            pass

        x = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(NotImplementedError):
            if what == "backward":
                OnlyForward.apply(x).sum().backward()
            elif what == "jvp":
                OnlyForward.jvp(None, x)
            else:
                Nothing.apply(x)


def test_instantiating_a_function_warns():
    with pytest.warns(DeprecationWarning):
        OURS["Exp"]()


# -- finite differences, float64 ------------------------------------------------------------
GRADCHECKS = [
    ("Cube", lambda f, x: f.apply(x, 0.7)),
    ("Exp", lambda f, x: f.apply(x)),
    ("Square", lambda f, x: f.apply(x, 2.0)),
    ("Tanh", lambda f, x: f.apply(x)),
    ("SinCos", lambda f, x: f.apply(x)[0] * f.apply(x)[1]),
    ("SinCos", lambda f, x: f.apply(x)[1]),
    ("AddBias", lambda f, x: f.apply(x, x[0])),
]


@pytest.mark.parametrize("i", range(len(GRADCHECKS)))
def test_gradcheck_first_and_second_order(i):
    name, use = GRADCHECKS[i]
    f = OURS[name]
    x = tga.tensor(np.random.default_rng(i).uniform(-1.2, 1.2, (2, 3)), dtype=tga.float64, requires_grad=True)
    assert tga.gradcheck(lambda t: use(f, t), x)

    def first(t):
        (g,) = tga.autograd.grad((use(f, t) ** 2).sum(), t, create_graph=True)
        return g

    assert tga.gradcheck(first, x)


# -- traced, compiled and drawn -----------------------------------------------------------------
def _step_program(fs, w):
    def step(x):
        a, b = fs["SinCos"].apply(x * w)
        loss = (fs["Exp"].apply(a) * fs["Cube"].apply(b, 2.0)).sum() + fs["Tanh"].apply(w).sum()
        loss.backward()
        return loss

    return step


def test_compiled_custom_functions_replay_as_eager():
    rng = np.random.default_rng(0)
    w = tga.tensor(rng.standard_normal(5), requires_grad=True)
    step = _step_program(OURS, w)
    compiled = tga.compile(step)
    for _ in range(3):
        x = tga.tensor(rng.standard_normal(5))
        w.grad = None
        eager = float(step(x))
        eager_grad = w.grad.detach().numpy().copy()
        w.grad = None
        replayed = float(compiled(x))
        assert replayed == pytest.approx(eager, rel=1e-12)
        np.testing.assert_allclose(w.grad.detach().numpy(), eager_grad, rtol=1e-12)
    wt = torch.tensor(w.detach().numpy(), requires_grad=True)
    loss = _step_program(THEIRS, wt)(torch.tensor(x.detach().numpy()))
    assert float(loss.detach()) == pytest.approx(replayed, rel=1e-10)
    np.testing.assert_allclose(wt.grad.detach().numpy(), w.grad.detach().numpy(), rtol=1e-10)


def _ctx_features_program(fs, w):
    def step(x):
        z = fs["Twice"].apply(x * w)  # changed in place
        v, _ = fs["MaxOf"].apply(z.reshape(1, 3))  # an output without a gradient
        s = fs["Same"].apply(v)  # an input returned
        loss = (s * s).sum() + fs["SinCosLazy"].apply(w)[1].sum() + fs["Once"].apply(w).sum()
        loss.backward()
        return loss

    return step


def test_compiled_ctx_features_replay_as_eager_and_torch():
    rng = np.random.default_rng(1)
    w = tga.tensor(np.array([0.5, 1.0, 2.0]), requires_grad=True)
    step = _ctx_features_program(OURS, w)
    compiled = tga.compile(step)
    for _ in range(3):
        x = rng.standard_normal(3)
        w.grad = None
        eager = float(step(tga.tensor(x)))
        eager_grad = w.grad.detach().numpy().copy()
        w.grad = None
        assert float(compiled(tga.tensor(x))) == pytest.approx(eager, rel=1e-12)
        np.testing.assert_allclose(w.grad.detach().numpy(), eager_grad, rtol=1e-12)
        wt = torch.tensor(w.detach().numpy(), requires_grad=True)
        loss = _ctx_features_program(THEIRS, wt)(torch.tensor(x))
        assert float(loss.detach()) == pytest.approx(eager, rel=1e-10)
        np.testing.assert_allclose(wt.grad.detach().numpy(), eager_grad, rtol=1e-10)


def test_the_explorer_names_the_function(tmp_path):
    x = tga.tensor([0.5, 1.0, 2.0], requires_grad=True)

    def loss_fn(x):
        s, c = OURS["SinCos"].apply(x)
        return (OURS["Exp"].apply(s) * c).sum()

    tga.viz.explore(loss_fn, x, path=tmp_path / "page.html")
    page = (tmp_path / "page.html").read_text()
    assert "SinCos" in page and "Exp" in page


def test_a_trace_records_the_ops_of_forward_and_backward():
    w = tga.tensor(np.linspace(-1.0, 1.0, 4), requires_grad=True)
    prog = jit_trace(_step_program(OURS, w), tga.tensor(np.ones(4)))
    code = prog.code
    assert "sin(" in code and "cos(" in code and "exp(" in code and "accumulate" in code
    assert "SinCos" not in code  # (the node is no line: the ops it made are)


def test_a_custom_function_inside_compile_without_backward():
    x0 = tga.tensor(np.arange(4.0))
    f = tga.compile(lambda x: OURS["Exp"].apply(x) + OURS["SinCos"].apply(x)[1])
    for k in range(3):
        x = x0 + k
        np.testing.assert_allclose(
            f(x).detach().numpy(), np.exp(x.detach().numpy()) + np.cos(x.detach().numpy()), rtol=1e-12
        )


@pytest.mark.parametrize("backward", [False, True])
def test_drawn_graphs_name_the_function(backward):
    from tinygrad_attn.viz import draw_graph

    x = tga.tensor([0.5, 1.0], requires_grad=True)
    s, c = OURS["SinCos"].apply(x)
    loss = (OURS["Exp"].apply(s) * c).sum()
    src = draw_graph(loss, backward=backward).source
    assert "SinCos" in src and "Exp" in src


def test_a_graph_of_custom_functions_is_freed_without_the_collector():
    import gc
    import weakref

    gc.disable()
    try:
        x = tga.tensor([0.5, 1.0], requires_grad=True)
        s, c = OURS["SinCos"].apply(x)
        y = OURS["Exp"].apply(s * c)
        node = weakref.ref(y.grad_fn)
        hub = weakref.ref(s._ctx.inputs[0]._ctx)  # (the Function's node, whose outputs s and c are)
        y.sum().backward()
        del s, c, y
        assert node() is None and hub() is None
    finally:
        gc.enable()


def test_anomaly_mode_sees_a_custom_function():
    x = tga.tensor([0.0, 1.0], requires_grad=True)

    class Bad(tga.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    with tga.detect_anomaly(), pytest.raises(RuntimeError, match="'BadBackward' returned nan values"):
        Bad.apply(x).sum().backward()


def test_vjp_is_backward_and_both_at_once_are_refused_as_torch():
    kinds = []
    for lib in (tga, torch):
        assert lib.autograd.Function.vjp is lib.autograd.Function.backward

        class Both(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 2

        with pytest.raises(Exception) as e:
            Both.apply(lib.tensor([1.0], requires_grad=True)).sum().backward()
        kinds.append(e.type)
    assert kinds[0] is kinds[1] is RuntimeError
