"""The fused groups run: a replay calls one compiled loop per elementwise group (numba on the
CPU, a CuPy kernel on CUDA, both from the ops' ``elementwise`` expressions), equal to the
ops called one by one to rounding. Random chains of elementwise ops are drawn, traced with
fusion on and off, and replayed on new inputs, forward and backward."""

from __future__ import annotations

import re

import numpy as np
import pytest
from nvrtc import compile_cubin, needs_nvrtc

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.ops import cpu_kernels
from tinygrad_attn.symbolic import kernels
from tinygrad_attn.symbolic.fusion import elementwise_groups
from tinygrad_attn.symbolic.trace import trace as jit_trace

needs_numba = pytest.mark.skipif(
    not kernels.enabled(), reason="numba is not installed (the jit extra), or switched off"
)

_UNARY = [
    lambda h, o: h.tanh(),
    lambda h, o: h.sigmoid(),
    lambda h, o: h.relu() - 0.5,
    lambda h, o: (h * 0.3).exp(),
    lambda h, o: h.abs() + 1e-3,
    lambda h, o: -h,
    lambda h, o: h.sin(),
    lambda h, o: (h * h + 1.0).sqrt(),
    lambda h, o: (h.abs() + 1.0).log(),
    lambda h, o: h**2.0,
    lambda h, o: tga.where(h > 0.1, h, 0.25),
    lambda h, o: tga.maximum(h, o),
    lambda h, o: tga.minimum(h, o * 0.5),
    lambda h, o: h * o + 1.0,
    lambda h, o: h / (o * o + 1.0),
    lambda h, o: h - o * 2.0,
]


def _chain(seed):
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(_UNARY), size=int(rng.integers(3, 9)))

    def fn(x, o):
        h = x
        for i in picks:
            h = _UNARY[i](h, o)
        return ((h + o) * x).sum()

    return fn


def _replay(fn, dtype, fused, monkeypatch, seed):
    monkeypatch.setattr(cpu_kernels, "ENABLED", fused)
    rng = np.random.default_rng(seed)
    shape = (3, 5)
    x = Tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
    o = Tensor(rng.standard_normal(shape[1:]).astype(dtype), requires_grad=True)  # (broadcast)
    prog = jit_trace(fn, x, o)
    x2 = Tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
    o2 = Tensor(rng.standard_normal(shape[1:]).astype(dtype), requires_grad=True)
    loss = prog(x2, o2)
    return prog, [loss.detach().numpy(), x2.grad.detach().numpy(), o2.grad.detach().numpy()]


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(8))
def test_fused_and_unfused_replays_agree(seed, dtype, monkeypatch):
    fn = _chain(seed)
    unfused, want = _replay(fn, dtype, False, monkeypatch, seed)
    fused, got = _replay(fn, dtype, True, monkeypatch, seed)
    assert not unfused.kernels and "fused_" not in unfused.code
    assert fused.kernels, fused.code  # (every chain has a group of two ops or more)
    for k, _ in fused.kernels:
        assert f"= {k.name}(" in fused.code  # the printed program shows the kernel calls
    rtol = 2e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(want, got):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=rtol)


@needs_numba
def test_a_compiled_step_runs_its_fused_kernels_and_matches_eager():
    def make():
        tga.manual_seed(0)
        lin = tga.nn.Linear(6, 6)
        opt = tga.optim.SGD(lin.parameters(), lr=0.1)

        def step(x):
            h = lin(x)
            loss = (h * 0.5 * (1.0 + (h * 0.79788 * (1.0 + 0.044715 * h * h)).tanh())).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        return step, lin

    out = []
    for compiled in (False, True):
        step, lin = make()
        run = tga.compile(step) if compiled else step
        rng = np.random.default_rng(0)
        losses = [run(Tensor(rng.standard_normal((4, 6)).astype(np.float32))).detach().numpy() for _ in range(4)]
        out.append(losses + [p.detach().numpy() for p in lin.parameters()])
        if compiled:
            assert run.program.kernels and "fused: " in run.program.code
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_without_numba_the_replay_calls_each_op(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)
    assert not kernels.enabled()
    prog, _ = _replay(_chain(0), np.float32, False, monkeypatch, 0)
    assert not prog.kernels and elementwise_groups(prog)  # (the groups exist; the replay does not fuse them)


@pytest.mark.parametrize(
    ("c_expr", "python"),
    [
        ("({0} > 0 ? {0} : 0)", "(({0}) if ({0} > _T(0)) else (_T(0)))"),
        ("1 / (1 + exp(-{0}))", "_T(1) / (_T(1) + math.exp(-{0}))"),
        ("pow({0}, {a})", "_pow({0}, {a})"),
        ("max({0}, {1})", "_max({0}, {1})"),
    ],
)
def test_c_expressions_become_python(c_expr, python):
    class Op:
        elementwise = c_expr

    assert kernels.python_template(Op(), 2, "float32") == python


def test_an_expression_the_loop_cannot_call_is_not_fused():
    class Op:
        elementwise = "erfinv({0})"

    assert kernels.python_template(Op(), 1, "float32") is None


@needs_nvrtc
@pytest.mark.parametrize("seed", range(4))
def test_the_cuda_kernels_of_random_chains_compile(seed):
    x = Tensor(np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32), requires_grad=True)
    o = Tensor(np.random.default_rng(1).standard_normal(5).astype(np.float32), requires_grad=True)
    prog = jit_trace(_chain(seed), x, o)
    for k in elementwise_groups(prog):
        status, log, size = compile_cubin(k.cuda_source(), k.name, "sm_80")
        assert status == 0 and size > 0, log


@pytest.mark.gpu
def test_fused_replay_agrees_with_eager_on_cuda():
    cupy = pytest.importorskip("cupy")
    if cupy.cuda.runtime.getDeviceCount() == 0:
        pytest.skip("no GPU")
    for seed in range(4):
        fn = _chain(seed)
        rng = np.random.default_rng(seed)
        xs, os_ = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal(32).astype(np.float32)
        x = Tensor(xs, device="cuda", requires_grad=True)
        o = Tensor(os_, device="cuda", requires_grad=True)
        prog = jit_trace(fn, x, o)
        assert prog.kernels and "fused: " in prog.code
        x2 = Tensor(xs * 0.5, device="cuda", requires_grad=True)
        o2 = Tensor(os_, device="cuda", requires_grad=True)
        got = prog(x2, o2)
        x3 = Tensor(xs * 0.5, device="cuda", requires_grad=True)
        o3 = Tensor(os_, device="cuda", requires_grad=True)
        want = fn(x3, o3)
        want.backward()
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(x2.grad.detach().numpy(), x3.grad.detach().numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(o2.grad.detach().numpy(), o3.grad.detach().numpy(), rtol=1e-4, atol=1e-4)


@needs_numba
def test_a_group_reading_more_arrays_than_a_ufunc_takes_is_left_unfused():
    def fn(x):
        h = x
        for _ in range(40):
            h = (h * 0.9 + 0.1).tanh()
        return h.sum()

    x = Tensor(np.random.default_rng(0).standard_normal((2, 3)), requires_grad=True)
    prog = jit_trace(fn, x)
    groups = elementwise_groups(prog)
    assert any(len(k.inputs) > kernels.MAX_INPUTS for k in groups)
    assert all(len(k.inputs) <= kernels.MAX_INPUTS for k, _ in prog.kernels)
    x2 = Tensor(x.detach().numpy(), requires_grad=True)
    loss = prog(x2)
    want = fn(Tensor(x.detach().numpy()))
    np.testing.assert_allclose(loss.detach().numpy(), want.detach().numpy(), rtol=1e-12)


def test_the_cuda_strings_rename_every_value():
    def fn(i, n):  # (names CuPy's kernels use themselves)
        return ((i * 2.0 + n) * i).tanh()

    a = Tensor(np.ones((2, 3), dtype=np.float32))
    (k,) = elementwise_groups(jit_trace(fn, a, Tensor(np.ones(3, dtype=np.float32))))
    in_params, out_params, operation = kernels.cuda_strings(k)
    assert in_params == "float32 v0, float32 v1" and out_params == "float32 out"
    assert re.search(r"\b[in]\b", operation) is None and "v0" in operation and "v1" in operation


def _softmax_step(mask_shape, dim, extra):
    """Scores through a softmax, whose gradient an elementwise group (a mask, a scale, a
    bias-like row) then reads: attention's backward, in the shapes drawn."""

    def fn(s, m, r):
        w = tga.where(m, s * 0.5, -1e9).softmax(dim)
        return (w * extra(s, r)).sum()

    return fn


_SHAPES = [((2, 3, 6, 6), (6, 6)), ((2, 3, 6, 6), (1, 3, 6, 6)), ((4, 7), (7,)), ((2, 5, 5), (2, 5, 5))]


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "mask_shape"), _SHAPES)
@pytest.mark.parametrize("dim", [-1, 0])
def test_a_softmax_backward_joins_the_group_after_it_and_matches_the_ops(shape, mask_shape, dim, dtype, monkeypatch):
    rng = np.random.default_rng(len(shape) + len(mask_shape))

    def extra(s, r):
        return s * r + 1.0

    fn = _softmax_step(mask_shape, dim, extra)
    s = rng.standard_normal(shape).astype(dtype)
    m = rng.random(mask_shape) > 0.3
    r = rng.standard_normal(shape[-1:]).astype(dtype)
    out = {}
    for fused in (False, True):
        monkeypatch.setattr(cpu_kernels, "ENABLED", fused)
        st = Tensor(s, requires_grad=True)
        prog = jit_trace(fn, st, Tensor(m), Tensor(r, requires_grad=True))
        s2, r2 = Tensor(s * 1.5, requires_grad=True), Tensor(r - 0.5, requires_grad=True)  # (replayed on new values)
        loss = prog(s2, Tensor(m), r2)
        out[fused] = [loss.detach().numpy(), s2.grad.detach().numpy(), r2.grad.detach().numpy()]
        joined = [k for k, _ in prog.kernels if k.name.startswith("softmax_grad_rows")]
        if fused and dim == -1:
            assert joined and f"= {joined[0].name}(" in prog.code, prog.code
        else:
            assert not joined  # (not over the last axis: the backward and its group stay apart)
    rtol = 2e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(out[False], out[True]):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=rtol)


@needs_numba
def test_the_softmax_row_kernel_of_attention_matches_eager_and_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    b, t, d, h = 2, 6, 8, 2
    xs = rng.standard_normal((b, t, d)).astype(np.float32)
    blocked = ~np.tri(t, t, 0, dtype=bool)

    def fn(x, w):
        q = (x @ w).reshape(b, t, h, d // h).permute(0, 2, 1, 3)
        s = (q @ q.mT) * (1.0 / np.sqrt(d // h))
        a = s.masked_fill(Tensor(blocked), -np.inf).softmax(-1)
        return (a @ q).square().sum()

    w0 = rng.standard_normal((d, d)).astype(np.float32)
    x, w = Tensor(xs, requires_grad=True), Tensor(w0, requires_grad=True)
    prog = jit_trace(fn, x, w)
    assert any(k.name.startswith("softmax_grad_rows") for k, _ in prog.kernels), prog.code
    x2, w2 = Tensor(xs * 0.5, requires_grad=True), Tensor(w0, requires_grad=True)
    loss = prog(x2, w2)
    x3, w3 = Tensor(xs * 0.5, requires_grad=True), Tensor(w0, requires_grad=True)
    eager = fn(x3, w3)
    eager.backward()
    np.testing.assert_allclose(loss.detach().numpy(), eager.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(x2.grad.detach().numpy(), x3.grad.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w2.grad.detach().numpy(), w3.grad.detach().numpy(), rtol=1e-5, atol=1e-6)
    tx, tw = torch.tensor(xs * 0.5, requires_grad=True), torch.tensor(w0, requires_grad=True)
    tq = (tx @ tw).reshape(b, t, h, d // h).permute(0, 2, 1, 3)
    ta = ((tq @ tq.mT) * (1.0 / np.sqrt(d // h))).masked_fill(torch.tensor(blocked), -np.inf).softmax(-1)
    (ta @ tq).square().sum().backward()
    np.testing.assert_allclose(x2.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=2e-4, atol=1e-5)
    np.testing.assert_allclose(w2.grad.detach().numpy(), tw.grad.detach().numpy(), rtol=2e-4, atol=1e-5)


#: The values where an expression and the NumPy function it stands for part most easily.
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -3.0, 1e-30, 700.0]


def _cpu_ops() -> list[type]:
    """The ops a CPU loop can fuse: an expression it can call, a float result (comparisons give
    bools, which the loops read but do not make)."""
    from test_symbolic_fusion import _elementwise_ops  # noqa: PLC0415

    from tinygrad_attn.runtime.backend import get_device  # noqa: PLC0415

    found = []
    for c in _elementwise_ops():
        if kernels.python_template(object.__new__(c), 3, "float64") is None:
            continue
        fn = object.__new__(c)
        fn.args, fn.ctx = 2.0, None
        n = 1 + max(int(k) for k in "012" if "{" + k + "}" in c.elementwise)
        with np.errstate(all="ignore"):
            kind = np.asarray(fn.forward(get_device("cpu").ops, *[np.full(2, 0.5)] * n)).dtype.kind
        if kind == "f":
            found.append(c)
    return found


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cls", _cpu_ops(), ids=lambda c: c.op_name_of())
def test_each_compiled_expression_is_its_op_at_special_values(cls, dtype):
    """A one-op compiled loop of every op that declares ``elementwise`` (the CPU can run) gives
    the op's own values at NaN, the infinities, both zeros and ordinary numbers, every pair of
    them for a binary op: NaN where the op's is NaN (a relu written ``x > 0 ? x : 0`` gave 0
    for NaN, NumPy's maximum NaN)."""
    from tinygrad_attn.runtime.backend import get_device  # noqa: PLC0415
    from tinygrad_attn.symbolic.fusion import _kernel  # noqa: PLC0415
    from tinygrad_attn.symbolic.program import Buffer, OpRecord  # noqa: PLC0415

    dev = get_device("cpu")
    n = 1 + max(int(c) for c in "012" if "{" + c + "}" in cls.elementwise)
    grids = np.meshgrid(*[np.array(SPECIAL, dtype)] * n, indexing="ij")
    arrays = [np.ascontiguousarray(g.reshape(-1)) for g in grids]
    fn = object.__new__(cls)
    fn.args, fn.ctx = 2.0, None  # (pow_scalar's exponent; no other op reads args)
    with np.errstate(all="ignore"):
        want = np.asarray(fn.forward(dev.ops, *arrays))
    shape = arrays[0].shape
    ins = [Buffer(f"x{i}", shape, np.dtype(dtype), dev, "arg", 0) for i in range(n)]
    rec = OpRecord("call", cls.op_name_of(), ins, [Buffer("y", shape, want.dtype, dev, "value", 0)], fn=fn)
    k = _kernel([rec], 0)
    with np.errstate(all="ignore"):
        got = kernels.cpu_callable(k)(*arrays)
    where = [f"{cls.op_name_of()}{tuple(float(a[i]) for a in arrays)}: {got[i]}, the op {want[i]}"
             for i in np.flatnonzero(np.isnan(got) != np.isnan(want))]  # fmt: skip
    assert not where, where[:5]
    rtol = 4e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True, err_msg=cls.op_name_of())
