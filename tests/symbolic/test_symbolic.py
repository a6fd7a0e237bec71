"""Symbolic programs: tga.jit.trace and tga.compile against eager mode, the generated code,
TraceError, and the passes on their own."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from helpers import examples, rand

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor
from tinygrad_attn.ops import cpu_kernels
from tinygrad_attn.symbolic import TraceError, passes


def _grads(*ts):
    return [None if t.grad is None else t.grad.detach().numpy() for t in ts]


def _zero(*ts):
    for t in ts:
        t.grad = None


def _fresh(rng, like):
    """A tensor of ``like``'s shape, dtype, device and requires_grad, with new values."""
    a = rng.standard_normal(like.shape).astype(like.dtype)
    return Tensor(a, device=like.device, requires_grad=like.requires_grad)


def _check_replay(fn, args, rng, decompose=False, atol=1e-10):
    """Trace ``fn`` on ``args``, replay on new values, compare with eager on those values."""
    import contextlib

    ctx = tga.decompose if decompose else contextlib.nullcontext
    with ctx():
        prog = tga.jit.trace(fn, *args)
    assert all(t.grad is None for t in args if isinstance(t, Tensor))  # the trace leaves .grad alone
    new = [_fresh(rng, a) if isinstance(a, Tensor) else a for a in args]
    out = prog(*new)
    got = _grads(*[t for t in new if isinstance(t, Tensor)])
    _zero(*[t for t in new if isinstance(t, Tensor)])
    with ctx():
        ref = fn(*new)
        if isinstance(ref, Tensor) and ref.requires_grad and ref.shape == ():
            ref.backward()
    want = _grads(*[t for t in new if isinstance(t, Tensor)])
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=atol, rtol=1e-9)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, atol=atol, rtol=1e-9)
    return prog


# -- trace and replay against eager ------------------------------------------------
def test_replay_matches_eager_with_broadcasting_and_reuse(device, rng):
    x, w, b = rand(rng, 3, 4, device=device), rand(rng, 4, 5, device=device), rand(rng, 5, device=device)

    def fn(x, w, b):
        h = (x @ w + b).tanh()  # b broadcast over rows
        return (h * h + h.exp()).sum() / 3.0  # h read three times

    _check_replay(fn, [x, w, b], rng)


@pytest.mark.parametrize("decompose", [False, True])
def test_composites_fused_and_decomposed(device, rng, decompose):
    x, w = rand(rng, 2, 5, 6, device=device), rand(rng, 6, device=device)

    def fn(x, w):
        y = F.layer_norm(x, w.shape, w, None).softmax(-1)
        return (F.gelu(y) * x).log_softmax(-1).mean()

    prog = _check_replay(fn, [x, w], rng, decompose=decompose)
    fused_backward = [op for op in prog.ops if op.kind == "backward"]
    assert bool(fused_backward) != decompose  # fused ops record their array backward once


def test_slices_and_index_arrays(device, rng):
    x = rand(rng, 4, 6, device=device)

    def fn(x):
        a, b = x[:, :3], x[:, 3:]  # two slices of one tensor: their gradients add
        return (a * b).sum() + x[np.array([0, 2, 2])].sum() * 0.5

    _check_replay(fn, [x], rng)


def test_traced_gradients_match_finite_differences(device, rng):
    """The recorded backward is the derivative of the recorded forward (float64)."""
    x, w = rand(rng, 3, 4, device=device), rand(rng, 4, 2, device=device)

    def fn(x, w):
        return ((x @ w).softmax(-1) * (x.sum(-1, keepdims=True) ** 2)).sum()

    prog = tga.jit.trace(fn, x, w)
    xs = x.detach().numpy()
    prog(Tensor(xs, device=device, requires_grad=True), w)
    w.grad = None
    xt = Tensor(xs, device=device, requires_grad=True)
    prog(xt, w)
    num = np.zeros_like(xs)
    eps = 1e-6
    for i in np.ndindex(xs.shape):
        hi, lo = xs.copy(), xs.copy()
        hi[i] += eps
        lo[i] -= eps
        f_hi = prog(Tensor(hi, device=device), w).item()
        f_lo = prog(Tensor(lo, device=device), w).item()
        num[i] = (f_hi - f_lo) / (2 * eps)
    np.testing.assert_allclose(xt.grad.detach().numpy(), num, atol=1e-6, rtol=1e-5)


def test_replay_accumulates_gradients_like_backward(rng):
    x = rand(rng, 3)
    prog = tga.jit.trace(lambda x: (x * x).sum(), x)
    prog(x)
    prog(x)
    np.testing.assert_allclose(x.grad.detach().numpy(), 4 * x.detach().numpy())


def test_no_grad_program_has_no_backward(rng):
    x = rand(rng, 2, 3, requires_grad=False)
    prog = tga.jit.trace(lambda x: (x.exp() + 1.0).sum(-1), x)
    assert "# backward" not in prog.code and all(op.section == "forward" for op in prog.ops)
    y = rand(rng, 2, 3, requires_grad=False)
    np.testing.assert_allclose(prog(y).detach().numpy(), (np.exp(y.detach().numpy()) + 1.0).sum(-1))


def test_returns_the_structure_fn_returned(rng):
    x = rand(rng, 2, 2, requires_grad=False)
    prog = tga.jit.trace(lambda x: {"a": x * 2.0, "b": (x.sum(), 3)}, x)
    out = prog(x)
    assert set(out) == {"a", "b"} and out["b"][1] == 3
    np.testing.assert_allclose(out["b"][0].detach().numpy(), x.detach().numpy().sum())


def test_grad_inside_trace(rng):
    x = rand(rng, 3)

    def fn(x):
        (g,) = tga.grad((x**3).sum(), x)
        return g * 1.0

    prog = tga.jit.trace(fn, x)
    y = rand(rng, 3)
    np.testing.assert_allclose(prog(y).detach().numpy(), 3 * y.detach().numpy() ** 2)
    assert y.grad is None


def test_wrong_shape_says_what_to_do(rng):
    prog = tga.jit.trace(lambda x: x * 2.0, rand(rng, 2))
    with pytest.raises(ValueError, match=r"argument 0 has shape \(3,\).*traced for shape \(2,\)"):
        prog(rand(rng, 3))


# -- the code ---------------------------------------------------------------------
def test_code_names_shapes_and_order():
    mha = tga.models.BatchFirstAttention(8, 2)
    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32))
    prog = tga.jit.trace(lambda x: mha(x).sum(), x)
    code = prog.code
    assert str(prog) == code
    assert code.startswith("def program(args):\n    # forward\n    x = args[0]._data  # (2, 3, 8) float32")
    assert "q_proj_weight = params.q_proj_weight._data  # (8, 8) float32" in code
    assert code.index("# forward") < code.index("# backward")
    assert "grad_q_proj_weight" in code
    assert re.search(r"accumulate(_owned)?\(params\.q_proj_weight, grad_q_proj_weight\)", code), code
    lines = [ln for ln in code.splitlines()[1:] if " = " in ln]
    assert all("  # (" in ln for ln in lines)  # every line that makes a buffer says its shape
    assert len([ln for ln in lines if not ln.lstrip().startswith("del ")]) >= len([op for op in prog.ops if op.outputs])


def test_printed_text_is_what_runs(rng):
    x = rand(rng, 3)
    prog = tga.jit.trace(lambda x: (x * 3.0).sum(), x)
    assert prog._run.__code__.co_filename == "<program <lambda>>"
    env = dict(prog._env)
    exec(prog.code.replace("mul(x, ", "mul(x * 0.0, "), env)  # the text, changed, runs changed
    assert env["program"]((x,))[0] == 0.0


# -- compile ----------------------------------------------------------------------
def test_compile_traces_then_replays_and_retraces_new_shapes(rng):
    @tga.compile
    def f(x):
        return (x * x).sum()

    a, b = rand(rng, 3, requires_grad=False), rand(rng, 3, requires_grad=False)
    np.testing.assert_allclose(f(a).detach().numpy(), (a.detach().numpy() ** 2).sum())
    np.testing.assert_allclose(f(b).detach().numpy(), (b.detach().numpy() ** 2).sum())
    assert len(f.programs) == 1
    f(rand(rng, 4, requires_grad=False))
    assert len(f.programs) == 2


def _model_and_step(kind, opt_name, device="cpu"):
    from tinygrad_attn.models import GPT
    from tinygrad_attn.optim import SGD, AdamW

    tga.manual_seed(0)
    if kind == "gpt":
        model = GPT(vocab_size=7, d_model=8, n_heads=2, n_layers=2, max_len=6)
    else:
        model = tga.models.BatchFirstAttention(8, 2)
    model.to(device)
    if opt_name == "sgd":
        opt = SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
    else:
        opt = AdamW(model.parameters(), lr=1e-2)
    return model, opt


def _step_of(kind, model, opt, consts):
    if kind == "gpt":
        x, y = consts  # token ids: constants of the program

        def step():
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        return step

    def step(x):
        model.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    return step


@pytest.mark.parametrize("kind", ["gpt", "mha"])
@pytest.mark.parametrize("opt_name", ["sgd", "adamw"])
def test_five_training_steps_compiled_equal_eager(kind, opt_name):
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 7, (2, 6))
    xs = [rng.standard_normal((2, 4, 8)).astype(np.float32) for _ in range(5)]
    results = []
    for compiled in (False, True):
        model, opt = _model_and_step(kind, opt_name)
        step = _step_of(kind, model, opt, (Tensor(ids[:, :5]), Tensor(ids[:, 1:])))
        run = tga.compile(step) if compiled else step
        if kind == "gpt":
            losses = [run().detach().numpy() for _ in range(5)]
        else:
            losses = [run(Tensor(x)).detach().numpy() for x in xs]  # a new batch each step: replayed
        results.append((losses, [p.detach().numpy() for p in model.parameters()], _grads(*model.parameters())))
    (l0, p0, g0), (l1, p1, g1) = results
    np.testing.assert_allclose(l1, l0, rtol=1e-6)
    for a, b in zip(p0 + g0, p1 + g1):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert len(run.programs) == 1
    code = run.program.code
    # the update is one flat line for the one param group, read live at each replay
    assert f"    {opt_name}.foreach_update(0)  # param group 0" in code and ".step()" not in code
    n_params = len(list(model.parameters()))
    assert f"updates its {n_params} parameters" in code and "[...] = " not in code  # not written out per parameter


def test_vit_forward_backward_replay():
    from tinygrad_attn.models import ViT

    tga.manual_seed(0)
    model = ViT(image_size=8, patch_size=4, channels=1, n_classes=3, d_model=8, n_heads=2, n_layers=1)
    rng = np.random.default_rng(0)
    imgs = [Tensor(rng.standard_normal((2, 1, 8, 8)).astype(np.float32)) for _ in range(2)]
    prog = tga.jit.trace(lambda im: model(im).sum(), imgs[0])
    prog(imgs[1])
    got = _grads(*model.parameters())
    model.zero_grad()
    model(imgs[1]).sum().backward()
    for g, w in zip(got, _grads(*model.parameters())):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)


# -- TraceError ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("read", "what"),
    [
        (lambda t: t.item(), r"\.item\(\)"),
        (lambda t: t.tolist(), r"\.tolist\(\)"),
        (lambda t: t.detach().numpy(), r"\.numpy\(\)"),
        (lambda t: float(t), r"float\(t\)"),
        (lambda t: 1 if t > 0 else 2, r"bool\(t\)"),
    ],
)
def test_python_decision_on_a_value_raises(rng, read, what):
    x = rand(rng, 3)

    def fn(x):
        s = (x * 2.0).sum()
        read(s)
        return s

    with pytest.raises(tga.TraceError, match=what) as e:
        tga.jit.trace(fn, x)
    msg = str(e.value)
    assert (
        ("made by op 'sum_1'" in msg or "made by op 'greater_1'" in msg)
        and "test_symbolic.py" in msg
        and "lambda t:" in msg
    )  # the user's line
    assert tga.symbolic.trace is not None and x.item is not None  # the guards are gone again
    assert isinstance(rand(rng, 1).item(), float)


def test_constants_may_be_read(rng):
    x = rand(rng, 2)
    prog = tga.jit.trace(lambda x: x * float(Tensor(np.array([1.0, 2.0])).sum()), x)  # made inside: fixed
    np.testing.assert_allclose(prog(x).detach().numpy(), 3 * x.detach().numpy())
    c = Tensor(np.array([1.0, 2.0]))
    with pytest.raises(TraceError, match="float"):  # a closure's tensor is read live: its value may change
        tga.jit.trace(lambda x: x * float(c.sum()), x)


# -- passes -------------------------------------------------------------------------
def test_dead_code_is_removed(rng):
    x = rand(rng, 3, requires_grad=False)

    def fn(x):
        _ = x.exp()  # nothing reads it
        return x * 2.0

    prog = tga.jit.trace(fn, x)
    assert [op.op for op in prog.ops if op.kind == "call"] == ["mul"]


def test_common_subexpressions_are_computed_once(rng):
    x = rand(rng, 3, 4, requires_grad=False)
    prog = tga.jit.trace(lambda x: x.mT @ x + x.mT @ x, x)
    calls = [op.op for op in prog.ops if op.kind == "call"]
    assert len(calls) == 3 and calls[1:] == ["matmul", "add"]  # one transpose (its name: permute or mT)
    np.testing.assert_allclose(prog(x).detach().numpy(), 2 * x.detach().numpy().T @ x.detach().numpy())


def test_constant_arithmetic_is_folded(rng):
    x = rand(rng, 3, requires_grad=False)
    prog = tga.jit.trace(lambda x: x * (Tensor(np.array(2.0)) * 3.0 + 1.0), x)
    assert [op.op for op in prog.ops if op.kind == "call"] == ["mul"]
    np.testing.assert_allclose(prog(x).detach().numpy(), 7 * x.detach().numpy())


def test_liveness_deletes_after_last_use_and_peak_bytes(rng):
    x = rand(rng, 100, requires_grad=False)
    prog = tga.jit.trace(lambda x: ((x * 2.0) * 3.0) * 4.0, x)
    calls = [op for op in prog.ops if op.kind == "call"]
    dead = {b.name for d in prog.dead_after for b in d}
    assert calls[0].outputs[0].name in dead and calls[-1].outputs[0].name not in dead
    assert prog.peak_bytes == 2 * 100 * 8  # never more than two of the three products at once
    assert passes.peak_bytes(prog.ops, [[] for _ in prog.ops]) == 3 * 100 * 8


def test_a_forward_after_the_update_reads_the_new_parameters(rng):
    from tinygrad_attn.optim import SGD

    w = rand(rng, 3)
    opt = SGD([w], lr=0.5)

    def step(x):
        opt.zero_grad()
        (w * x).sum().backward()
        opt.step()
        return (w * x).sum()  # after the step, which wrote w's memory: not the product above

    run = tga.compile(step)
    xs = [rand(rng, 3, requires_grad=False) for _ in range(3)]
    want, wv = [], w.detach().numpy()
    for x in xs:
        wv = wv - 0.5 * x.detach().numpy()
        want.append((wv * x.detach().numpy()).sum())
    got = [run(x).item() for x in xs]
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(w.detach().numpy(), wv)


@pytest.mark.parametrize("opt_name", ["SGD", "Adam", "AdamW"])
@pytest.mark.parametrize("foreach", [None, False])
def test_reads_of_a_parameters_memory_after_the_update_see_it(rng, opt_name, foreach):
    # The update writes each parameter in place (one recorded call where ``foreach``, ops
    # otherwise): a product taken before it and the same product after it are two values,
    # also through a tensor sharing the parameter's memory (``detach()``), in every replay.
    w0 = rand(rng, 3).detach().numpy().copy()

    def make():
        w = Tensor(w0.copy(), requires_grad=True)
        opt = getattr(tga.optim, opt_name)([w], lr=0.5, foreach=foreach)

        def step(x):
            held = w.detach()
            opt.zero_grad()
            before = (w * x).sum()
            before.backward()
            opt.step()
            return before, (w * x).sum(), (held * x).sum(), held * 1.0

        return step

    eager, run = make(), tga.compile(make())
    for _ in range(4):
        x = rand(rng, 3, requires_grad=False)
        for a, b in zip(eager(x), run(x)):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


# -- random programs (hypothesis) ------------------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_UNARY = [lambda a: a.tanh(), lambda a: a.exp() * 0.1, lambda a: a.relu(), lambda a: -a, lambda a: a.sigmoid()]
_BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, lambda a, b: a / (b * b + 1.0)]


def _shrink(a, how):
    """A view or reduction of ``a`` that still broadcasts against (3, 4)."""
    if how == 0:
        return a[:, :1] if a.ndim == 2 else a[:1]
    if how == 1:
        return a.sum(-1, keepdims=True) if a.ndim == 2 else a
    if how == 2:
        return a.mT.mT if a.ndim == 2 else a[:]
    return a.reshape(a.shape)


@settings(max_examples=examples(25), deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 10), st.integers(0, 10), st.integers(0, 3)), min_size=1, max_size=8
    ),
    seed=st.integers(0, 2**16),
)
def test_random_programs_replay_as_eager(steps, seed):
    """Random op sequences with broadcasting ((3, 4), (4,), (3, 1)), reuse of any earlier
    value, slices, reductions and views: replay on new inputs equals eager."""
    rng = np.random.default_rng(seed)
    args = [rand(rng, 3, 4), rand(rng, 4), rand(rng, 3, 1, requires_grad=False)]

    def fn(a, b, c):
        vals = [a, b, c]
        for kind, i, j, how in steps:
            x, y = vals[i % len(vals)], vals[j % len(vals)]
            if kind == 0:
                vals.append(_UNARY[(i + j) % len(_UNARY)](x))
            elif kind == 1:
                vals.append(_BINARY[(i * 3 + j) % len(_BINARY)](x, y))
            else:
                vals.append(_shrink(x, how))
        out = vals[3]
        for v in vals[4:]:
            out = out + v * 0.5
        return (out * out).sum()

    _check_replay(fn, args, rng, atol=1e-9)


# -- pictures -------------------------------------------------------------------------
@pytest.mark.slow  # (over half a second: the full suite runs it, the fast loop does not)
def test_program_graph_and_memory_plot(tmp_path):
    mha = tga.models.BatchFirstAttention(8, 2)
    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32))
    prog = tga.jit.trace(lambda x: mha(x).sum(), x)
    g = prog.graph(rankdir="LR")
    src = g.source
    assert src.count("->") >= len([op for op in prog.ops if op.kind == "call"])  # every op reads something
    assert "q_proj_weight.grad" in src and "accumulate .grad" in src and "#fde2e0" in src  # backward steps: pink
    assert "cluster" in src  # grouped by module, as draw_graph does
    with pytest.raises(ValueError, match="rankdir"):
        prog.graph(rankdir="up")
    from tinygrad_attn.viz.program import memory_profile, plot_memory

    prof = memory_profile(prog)
    assert max(prof) == prog.peak_bytes and len(prof) == len(prog.ops)
    plot_memory(prog, str(tmp_path / "memory.png"))
    assert (tmp_path / "memory.png").stat().st_size > 1000


def test_a_random_draw_is_an_op_drawing_at_each_replay(rng):
    x = rand(rng, 4, 4)
    prog = tga.jit.trace(lambda x: F.dropout(x, 0.5).sum() + Tensor.randn(4, 4).sum(), x)
    tga.manual_seed(3)
    eager = [(F.dropout(x, 0.5).sum() + Tensor.randn(4, 4).sum()).detach().numpy() for _ in range(3)]
    tga.manual_seed(3)
    replayed = [prog(x).detach().numpy() for _ in range(3)]
    np.testing.assert_array_equal(replayed, eager)  # fresh masks every call, the same stream as eager
    assert len(set(np.asarray(replayed).tolist())) == 3
    prog = tga.jit.trace(lambda x: F.dropout(x, 0.5, training=False).sum(), x)  # eval mode: no draw
    assert [op.op for op in prog.ops if op.kind == "call"][0] == "sum"


def test_compile_bakes_keyword_numbers_and_reads_keyword_tensors(rng):
    @tga.compile
    def f(x, scale=1.0):
        return x * scale

    x = rand(rng, 3, requires_grad=False)
    np.testing.assert_allclose(f(x, scale=2.0).detach().numpy(), 2 * x.detach().numpy())
    np.testing.assert_allclose(f(x, scale=2.0).detach().numpy(), 2 * x.detach().numpy())  # replayed
    np.testing.assert_allclose(f(x, scale=3.0).detach().numpy(), 3 * x.detach().numpy())  # a new value: traced again
    assert len(f.programs) == 2
    y = rand(rng, 3, requires_grad=False)
    np.testing.assert_allclose(
        f(x, scale=x).detach().numpy(), x.detach().numpy() ** 2
    )  # the same tensor twice: one input
    np.testing.assert_allclose(
        f(x, scale=y).detach().numpy(), x.detach().numpy() * y.detach().numpy()
    )  # a tensor keyword is an input
    np.testing.assert_allclose(f(y, scale=x).detach().numpy(), x.detach().numpy() * y.detach().numpy())  # (replayed)
    assert len(f.programs) == 4


@pytest.mark.parametrize("kind", ["additive", "general"])
def test_seq2seq_rnn_replay_reads_new_parameters(kind):
    from tinygrad_attn.models import Seq2Seq

    model = Seq2Seq(src_vocab=4, tgt_vocab=3, emb_dim=2, hidden_size=2, attention=kind, attn_dim=2, pad_id=0)
    src, tgt_in = Tensor(np.array([[1, 2, 3], [3, 1, 0]])), Tensor(np.array([[0, 1], [0, 2]]))

    def loss():
        return (model(src, tgt_in) ** 2).sum()

    prog = tga.jit.trace(loss)
    for p in model.parameters():  # new values, as an optimizer's step gives
        p.data = p.data * 1.1
    prog()
    got = _grads(*model.parameters())
    model.zero_grad()
    loss().backward()
    for g, w in zip(got, _grads(*model.parameters())):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)


def test_compile_decorates_a_method(rng):
    class Scaler(tga.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = tga.nn.Parameter(np.array([2.0]))

        @tga.compile
        def loss(self, x):
            return (x * self.w).sum()

    m, x = Scaler(), rand(rng, 3, requires_grad=False)
    for _ in range(2):
        np.testing.assert_allclose(m.loss(x).detach().numpy(), 2 * x.detach().numpy().sum())
    assert len(Scaler.loss.programs) == 1


# -- threads --------------------------------------------------------------------------
def test_a_trace_in_one_thread_leaves_another_thread_eager():
    """While one thread traces (and stops inside fn), another reads values, draws random
    numbers and steps an optimizer eagerly: nothing of the trace reaches it."""
    import threading

    from tinygrad_attn.optim import SGD

    inside, done = threading.Event(), threading.Event()
    seen: dict = {}

    def fn(x):
        y = (x * 2.0).sum()
        inside.set()
        assert done.wait(10)  # the other thread works while this trace is open
        with pytest.raises(tga.TraceError, match=r"\.item\(\)"):
            y.item()  # here it is still an error
        return y

    def other():
        assert inside.wait(10)
        try:
            w = Tensor(np.array([1.0, 2.0]), requires_grad=True)
            loss = (w * w).sum()
            seen["item"] = loss.item()
            seen["bool"] = bool(loss > 0)
            seen["randn"] = Tensor.randn(2).shape
            opt = SGD([w], lr=0.5)
            loss.backward()
            opt.step()
            opt.zero_grad()
            seen["w"] = w.detach().numpy()
        except BaseException as e:  # noqa: BLE001 - reported below, in the main thread
            seen["error"] = e
        finally:
            done.set()

    t = threading.Thread(target=other)
    t.start()
    prog = tga.jit.trace(fn, Tensor(np.ones(3), requires_grad=True))
    t.join()
    assert "error" not in seen, seen.get("error")
    assert seen["item"] == 5.0 and seen["bool"] is True and seen["randn"] == (2,)
    np.testing.assert_allclose(seen["w"], [0.0, 0.0])
    assert not [op for op in prog.ops if op.kind == "effect"]  # the other thread's step is not in the program


def test_a_permute_of_a_permute_is_composed_and_transpose_of_transpose_removed(rng):
    x = rand(rng, 2, 3, 4, requires_grad=False)
    prog = tga.jit.trace(lambda x: (x.mT.mT * 2.0, x.permute(1, 0, 2).permute(2, 1, 0) * 1.0), x)
    perms = [op for op in prog.ops if op.kind == "call" and op.op in ("permute", "transpose", "mT")]
    assert len(perms) == 1 and perms[0].fn.args == (2, 0, 1)
    xs = x.detach().numpy()
    a, b = prog(x)
    np.testing.assert_array_equal(a.detach().numpy(), xs * 2.0)
    np.testing.assert_array_equal(b.detach().numpy(), xs.transpose(1, 0, 2).transpose(2, 1, 0))


# -- a readable program: the user's names, one constant per value, no permute of a permute ----
def _mha_step():
    """A hand-written attention block's training step, as a user writes it."""
    tga.manual_seed(0)
    qkv, proj = tga.nn.Linear(16, 48), tga.nn.Linear(16, 16)
    opt = tga.optim.SGD([*qkv.parameters(), *proj.parameters()], lr=0.1)

    def step(x):
        opt.zero_grad()
        b, t, d = x.shape
        q, k, v = qkv(x).reshape(b, t, 3, 2, d // 2).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // 2)
        attn = F.softmax(scores, -1)
        out = proj((attn @ v).permute(0, 2, 1, 3).reshape(b, t, d))
        loss = (out**2).mean()
        loss.backward()
        opt.step()
        return loss

    return step, (qkv, proj)


def test_the_program_names_values_after_the_users_variables(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)  # (one line per op: no softmax row kernel)
    step, _ = _mha_step()
    rng = np.random.default_rng(0)
    run = tga.compile(step)
    eager_step, _ = _mha_step()
    for _ in range(3):  # the names change nothing that runs
        x = rng.standard_normal((2, 5, 16)).astype(np.float32)
        np.testing.assert_array_equal(run(Tensor(x)).detach().numpy(), eager_step(Tensor(x)).detach().numpy())
    code = run.program.code
    for line in ("    q = ", "    k = ", "    v = ", "    scores = div(", "    attn = softmax", "    loss = ",
                 "    grad_scores, = softmax_backward(", "    grad_attn = "):  # fmt: skip
        assert line in code, line
    assert "return (loss,)" in code


def test_a_variable_assigned_in_a_loop_names_its_last_value(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)  # (one line per op: no fused kernel call)

    def fn(x):
        h = x
        for _ in range(3):
            h = (h * 2.0).tanh()
        return h.sum()

    code = tga.jit.trace(fn, Tensor(np.ones(3), requires_grad=True)).code
    assert code.count("    h = ") == 1 and "    h = tanh(" in code and "grad_h = " in code


def test_a_name_already_taken_is_left_as_the_ops():
    def helper(x):  # (its x is the matmul, not the argument x)
        return x.tanh()

    x, w = Tensor(np.ones((2, 3)), requires_grad=True), Tensor(np.ones((3, 3)), requires_grad=True)
    code = tga.jit.trace(lambda x, w: helper(x @ w).sum(), x, w).code
    assert "    matmul_1 = matmul(x, w)" in code and "x_1" not in code


@pytest.mark.parametrize("dtype, scale", [(np.float32, math.sqrt(8.0)), (np.float64, np.sqrt(8.0))],
                         ids=["float", "numpy_float64"])  # fmt: skip
def test_a_number_used_in_the_forward_and_the_backward_is_one_constant(dtype, scale, monkeypatch):
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)  # (one line per op: no fused kernel call)
    # (a NumPy float64 is a float whose repr, np.float64(...), is not a name the program has)
    x = Tensor(np.arange(1.0, 4.0, dtype=dtype), requires_grad=True)
    prog = tga.jit.trace(lambda x: (x / scale).exp().sum(), x)
    names = [k for k in prog._env if k.startswith("c_2_828")]
    assert len(names) == 1 and prog.code.count(names[0]) == 2, prog.code  # one constant, forward and backward
    prog(x)
    np.testing.assert_allclose(x.grad.detach().numpy(), np.exp(x.detach().numpy() / scale) / scale, rtol=1e-6)


def test_a_training_step_has_no_permute_of_a_permute():
    step, _ = _mha_step()
    run = tga.compile(step)
    run(Tensor(np.ones((2, 5, 16), dtype=np.float32)))
    perms = ("permute", "transpose", "mT", "T")
    made = {id(op.outputs[0]): op for op in run.program.ops if op.outputs and op.outputs[0] is not None}
    for op in run.program.ops:
        if op.kind == "call" and op.op in perms and id(op.inputs[0]) in made:
            assert made[id(op.inputs[0])].op not in perms, f"{op} permutes a permute"
    assert "mT_" in run.program.code  # (the backward does transpose: the check above saw some)


def test_gradients_the_program_made_are_handed_to_grad_and_stay_the_users():
    """``accumulate_owned``: a gradient whose memory the program made and reads no more becomes
    ``.grad`` without a copy; what the user then does to it in place changes no later replay,
    and a second step adds into it as eager does."""
    rng = np.random.default_rng(0)
    lin = tga.nn.Linear(4, 3)
    x0 = Tensor(rng.standard_normal((5, 4)).astype(np.float32), requires_grad=True)

    def step(x):
        loss = (lin(x).tanh() ** 2).sum()
        loss.backward()
        return loss

    run = tga.compile(step)
    ps = [x0, *lin.parameters()]
    grads = []
    for i in range(3):
        for p in ps:
            p.grad = None
        run(x0)
        if i:
            assert "accumulate_owned(" in run.program.code
        grads.append([p.grad.detach().numpy().copy() for p in ps])
        for p in ps:
            p.grad.mul_(100.0)  # (the user's own array: the next replay must not read it)
    for a, b in zip(grads[1], grads[2]):
        np.testing.assert_array_equal(a, b)
    for p in ps:
        p.grad = None
    step(x0)
    eager = [p.grad.detach().numpy().copy() for p in ps]
    for a, b in zip(grads[2], eager):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    run(x0)  # adds into the eager .grad, as a second eager step would
    for p, e in zip(ps, eager):
        np.testing.assert_allclose(p.grad.detach().numpy(), 2 * e, rtol=1e-6, atol=1e-7)


def test_a_weight_gradient_is_made_in_the_weights_layout():
    """``transpose_products``: ``(x.T @ g).T`` becomes ``g.T @ x``, so the weight of a
    hand-written ``x @ w.mT + b`` gets a gradient of its own product (C-contiguous, as the
    weight), not a transposed view that ``.grad`` copies; the numbers are eager's to rounding."""
    from tinygrad_attn.symbolic import passes

    rng = np.random.default_rng(1)
    w = Tensor(rng.standard_normal((4, 6)).astype(np.float32), requires_grad=True)
    b = Tensor(rng.standard_normal(4).astype(np.float32), requires_grad=True)
    x = Tensor(rng.standard_normal((2, 5, 6)).astype(np.float32), requires_grad=True)
    ps = (x, w, b)

    def step(x):
        loss = (x @ w.mT + b).square().sum()
        loss.backward()
        return loss

    prog = tga.jit.trace(step, x)
    weight_grad = next(op for op in prog.ops if op.kind == "accumulate" and op.target is w).inputs[0]
    maker = next(op for op in prog.ops if weight_grad in op.outputs)
    assert maker.op == "matmul", prog.code
    for p in ps:
        p.grad = None
    prog(x)
    assert w.grad.detach().numpy().flags.c_contiguous
    got = [p.grad.detach().numpy().copy() for p in ps]
    for p in ps:
        p.grad = None
    step(x)
    for a, p in zip(got, ps):
        np.testing.assert_allclose(a, p.grad.detach().numpy(), rtol=1e-5, atol=1e-6)
    # on its own: nothing left to turn (a product read by something else is left as it is)
    ops = list(prog.ops)
    assert passes.transpose_products(ops, list(prog.outputs)) == ops
