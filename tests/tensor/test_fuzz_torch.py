"""A differential fuzzer: random programs of several ops run here and in PyTorch, in
float64, compared in value, dtype, gradient (and, for some, the gradient of the gradient)
and in whether each raises.

A program is a list of steps, each an op on the values made so far: elementwise math
with Python, NumPy and 0-d tensor operands, reductions with dim/keepdim, matmul, views and
reshapes, basic, advanced and boolean indexing, item assignment and in-place ops on
non-leaves, softmax, log_softmax, layer_norm, cross_entropy and attention with masks. A
failure prints the program as Python source (hypothesis shrinks it to a minimal one).

The seed is fixed (``derandomize``). ``TINYGRAD_ATTN_FUZZ_EXAMPLES=N`` sets the number
of programs (default 2000) for a long run::

    TINYGRAD_ATTN_FUZZ_EXAMPLES=100000 python -m pytest -m slow tests/tensor/test_fuzz_torch.py
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tinygrad_attn as tga  # noqa: E402
import tinygrad_attn.functional as F  # noqa: E402
from tinygrad_attn import Tensor  # noqa: E402

TF = torch.nn.functional
N_EXAMPLES = int(os.environ.get("TINYGRAD_ATTN_FUZZ_EXAMPLES", "2000"))


class Lib:
    """What a step needs from one side: ``tga`` and ``F``, or ``torch`` and its ``F``."""

    def __init__(self, ours: bool) -> None:
        self.ours, self.m, self.F = ours, (tga if ours else torch), (F if ours else TF)

    def tensor(self, a: np.ndarray, grad: bool = False):
        if self.ours:
            return Tensor(a.copy(), requires_grad=grad)
        return torch.tensor(a.copy(), requires_grad=grad)


def _shape(h) -> tuple:
    return tuple(h.shape)


# Each step: (source template, applies(shape) -> bool, run(lib, h, other, arg) -> new value).
# ``h`` is the value the step works on, ``other`` another value of the same shape.
def _setitem(h, key, v):
    h[key] = v
    return h


STEPS = {
    "tanh": ("{h}.tanh()", lambda s: True, lambda L, h, o, a: h.tanh()),
    "exp_of_tanh": ("{h}.tanh().exp()", lambda s: True, lambda L, h, o, a: h.tanh().exp()),
    "sigmoid": ("{h}.sigmoid()", lambda s: True, lambda L, h, o, a: h.sigmoid()),
    "relu": ("{h}.relu()", lambda s: True, lambda L, h, o, a: h.relu()),
    "abs": ("{h}.abs()", lambda s: True, lambda L, h, o, a: h.abs()),
    "sin": ("{h}.sin()", lambda s: True, lambda L, h, o, a: h.sin()),
    "square": ("{h} ** 2", lambda s: True, lambda L, h, o, a: h**2),
    "scale_py": ("{h} * 0.5 + 1.0", lambda s: True, lambda L, h, o, a: h * 0.5 + 1.0),
    "div_np": ("{h} / np.sqrt(np.float64(4.0))", lambda s: True, lambda L, h, o, a: h / np.sqrt(np.float64(4.0))),
    "mul_np32": ("{h} * np.float32(2.0)", lambda s: True, lambda L, h, o, a: h * np.float32(2.0)),
    "mul_0d_f32": ("{h} * m.tensor(0.5)", lambda s: True, lambda L, h, o, a: h * L.m.tensor(0.5)),
    "add_int_tensor": ("{h} + m.ones({s}, dtype=m.int64)", lambda s: True,
                       lambda L, h, o, a: h + L.m.ones(_shape(h), dtype=L.m.int64)),
    "add": ("{h} + {o}", lambda s: True, lambda L, h, o, a: h + o),
    "mul": ("{h} * {o}", lambda s: True, lambda L, h, o, a: h * o),
    "div": ("{h} / ({o} * {o} + 1.0)", lambda s: True, lambda L, h, o, a: h / (o * o + 1.0)),
    "maximum": ("{h}.maximum({o})", lambda s: True, lambda L, h, o, a: h.maximum(o)),
    "sum_dim": ("{h}.sum({a}, keepdim=True)", lambda s: len(s) >= 1, lambda L, h, o, a: h.sum(a % len(_shape(h)), keepdim=True)),
    "mean_dim": ("{h}.mean({a})", lambda s: len(s) >= 2, lambda L, h, o, a: h.mean(a % len(_shape(h)))),
    "max_dim": ("{h}.max({a}).values", lambda s: len(s) >= 1 and 0 not in s,
                lambda L, h, o, a: h.max(a % len(_shape(h))).values),
    "var_dim": ("{h}.var({a}, keepdim=True)", lambda s: len(s) >= 1 and min(s) >= 2,
                lambda L, h, o, a: h.var(a % len(_shape(h)), keepdim=True)),
    "logsumexp": ("{h}.logsumexp(-1)", lambda s: len(s) >= 2 and s[-1] > 0, lambda L, h, o, a: h.logsumexp(-1)),
    "matmul": ("{h} @ {h}.mT", lambda s: len(s) >= 2, lambda L, h, o, a: h @ h.mT),
    "transpose": ("{h}.transpose(0, -1)", lambda s: len(s) >= 2, lambda L, h, o, a: h.transpose(0, -1)),
    "reshape": ("{h}.reshape(-1)", lambda s: 0 not in s, lambda L, h, o, a: h.reshape(-1)),
    "unsqueeze": ("{h}.unsqueeze(0)", lambda s: len(s) <= 3, lambda L, h, o, a: h.unsqueeze(0)),
    "squeeze": ("{h}.squeeze(0)", lambda s: len(s) >= 1, lambda L, h, o, a: h.squeeze(0)),
    "flip": ("{h}.flip(0)", lambda s: len(s) >= 1, lambda L, h, o, a: h.flip(0)),
    "select": ("{h}[0]", lambda s: len(s) >= 1 and s[0] > 0, lambda L, h, o, a: h[0]),
    "stride": ("{h}[..., ::2]", lambda s: len(s) >= 1, lambda L, h, o, a: h[..., ::2]),
    "advanced": ("{h}[[0, -1, 0]]", lambda s: len(s) >= 1 and s[0] > 0, lambda L, h, o, a: h[[0, -1, 0]]),
    "boolean": ("{h}[{h} > 0]", lambda s: True, lambda L, h, o, a: h[h > 0]),
    "softmax": ("{h}.softmax(-1)", lambda s: len(s) >= 1, lambda L, h, o, a: h.softmax(-1)),
    "log_softmax": ("{h}.log_softmax(-1)", lambda s: len(s) >= 1 and s[-1] > 0, lambda L, h, o, a: h.log_softmax(-1)),
    "layer_norm": ("F.layer_norm({h}, {h}.shape[-1:])", lambda s: len(s) >= 1 and s[-1] > 1,
                   lambda L, h, o, a: L.F.layer_norm(h, _shape(h)[-1:])),
    "cross_entropy": ("F.cross_entropy({h}, m.tensor(np.arange({n}) % {c}))", lambda s: len(s) == 2 and 0 not in s,
                      lambda L, h, o, a: L.F.cross_entropy(h, L.tensor(np.arange(_shape(h)[0]) % _shape(h)[1]))),
    "sdpa_causal": ("F.scaled_dot_product_attention({h}, {h}, {h}, is_causal=True)",
                    lambda s: len(s) == 3 and 0 not in s,
                    lambda L, h, o, a: L.F.scaled_dot_product_attention(h, h, h, is_causal=True)),
    "sdpa_mask": ("F.scaled_dot_product_attention({h}, {o}, {o}, attn_mask=m.ones({n}, {n}, dtype=m.bool).tril())",
                  lambda s: len(s) == 3 and 0 not in s,
                  lambda L, h, o, a: L.F.scaled_dot_product_attention(
                      h, o, o, attn_mask=L.m.ones(_shape(h)[-2], _shape(h)[-2], dtype=L.m.bool).tril())),
    # in place, on a non-leaf copy (and through a view)
    "mul_": ("({h} * 1.0).mul_(2.0)", lambda s: True, lambda L, h, o, a: (h * 1.0).mul_(2.0)),
    "iadd_other": ("h = {h} * 1.0; h += {o}", lambda s: True, lambda L, h, o, a: (h * 1.0).__iadd__(o)),
    "masked_fill_": ("({h} / 2.0).masked_fill_({h} > 0, -1.0)", lambda s: True,
                     lambda L, h, o, a: (h / 2.0).masked_fill_(h > 0, -1.0)),
    "setitem": ("h = {h} * 1.0; h[0] = 0.5", lambda s: len(s) >= 1 and s[0] > 0,
                lambda L, h, o, a: _setitem(h * 1.0, 0, 0.5)),
    "view_add_": ("h = {h} * 1.0; h[..., :1].add_(1.0)", lambda s: len(s) >= 1,
                  lambda L, h, o, a: (lambda c: (c[..., :1].add_(1.0), c)[1])(h * 1.0)),
}  # fmt: skip


def _then_changed(h, f):
    """``f(c)`` of a non-leaf copy ``c``, which is then changed in place (raises where the op keeps it)."""
    c = h * 1.0
    out = f(c)
    c.mul_(2.0)
    return out


def _written_through(h, f):
    c = h * 1.0
    f(c).mul_(2.0)
    return c


# ops the issue names: what each keeps for backward (in-place changes of inputs and results),
# inplace= activations, a 0-d integer tensor as an index, diagonal views written through
STEPS.update({
    "clamp": ("{h}.clamp(-0.5, 0.5)", lambda s: True, lambda L, h, o, a: h.clamp(-0.5, 0.5)),
    "clamp_input_": ("c = {h} * 1.0; y = c.clamp(-0.5, 0.5); c.mul_(2.0)", lambda s: True,
                     lambda L, h, o, a: _then_changed(h, lambda c: c.clamp(-0.5, 0.5))),
    "elu_input_": ("c = {h} * 1.0; y = F.elu(c); c.mul_(2.0)", lambda s: True,
                   lambda L, h, o, a: _then_changed(h, L.F.elu)),
    # (hardtanh, not elu: at exactly 0 PyTorch's elu has a second derivative of 0, ours alpha)
    "hardtanh_inplace": ("F.hardtanh({h} * 1.0, -1.0, 1.0, True)", lambda s: True,
                         lambda L, h, o, a: L.F.hardtanh(h * 1.0, -1.0, 1.0, True)),
    "relu_inplace": ("F.relu({h} * 1.0, inplace=True)", lambda s: True,
                     lambda L, h, o, a: L.F.relu(h * 1.0, inplace=True)),
    "leaky_relu_inplace": ("F.leaky_relu({h} * 1.0, 0.2, True)", lambda s: True,
                           lambda L, h, o, a: L.F.leaky_relu(h * 1.0, 0.2, True)),
    "div_output_": ("({h} / 2.0).mul_(3.0)", lambda s: True, lambda L, h, o, a: (h / 2.0).mul_(3.0)),
    "exp_output_": ("{h}.exp().mul_(3.0)", lambda s: True, lambda L, h, o, a: h.exp().mul_(3.0)),
    "mse_input_": ("c = {h} * 1.0; y = F.mse_loss(c, {o}); c.mul_(2.0)", lambda s: True,
                   lambda L, h, o, a: _then_changed(h, lambda c: L.F.mse_loss(c, o))),
    "logaddexp": ("{h}.logaddexp({o})", lambda s: True, lambda L, h, o, a: h.logaddexp(o)),
    "prod_dim": ("{h}.prod({a})", lambda s: len(s) >= 1, lambda L, h, o, a: h.prod(a % len(_shape(h)))),
    "prod_output_": ("{h}.prod({a}).mul_(2.0)", lambda s: len(s) >= 1,
                     lambda L, h, o, a: h.prod(a % len(_shape(h))).mul_(2.0)),
    "index_0d": ("{h}[m.tensor(0)]", lambda s: len(s) >= 1 and s[0] > 0, lambda L, h, o, a: h[L.m.tensor(0)]),
    "index_0d_write": ("c = {h} * 1.0; c[m.tensor(0)].mul_(2.0)", lambda s: len(s) >= 1 and s[0] > 0,
                       lambda L, h, o, a: _written_through(h, lambda c: c[L.m.tensor(0)])),
    "diagonal": ("{h}.diagonal({a})", lambda s: len(s) >= 2, lambda L, h, o, a: h.diagonal(a)),
    "diagonal_write": ("c = {h} * 1.0; c.diagonal({a}, -1, -2).mul_(2.0)", lambda s: len(s) >= 2,
                       lambda L, h, o, a: _written_through(h, lambda c: c.diagonal(a, -1, -2))),
})  # fmt: skip


@st.composite
def programs(draw):
    # (no subnormal inputs: PyTorch's own backward formulas divide by them, prod's by the
    # input, and lose the gradient there; ours is a product tree and exact)
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=0, max_size=3)))
    a = np.asarray(
        draw(
            st.lists(
                st.floats(-2, 2, allow_subnormal=False), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))
            )
        )
    )
    b = np.asarray(
        draw(
            st.lists(
                st.floats(-2, 2, allow_subnormal=False), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))
            )
        )
    )
    steps = []
    shapes = [shape, shape]  # the shape of each value so far
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(shapes) - 1))
        s = shapes[i]
        names = [n for n, (_, ok, _) in STEPS.items() if ok(s)]
        name = draw(st.sampled_from(names))
        same = [j for j, t in enumerate(shapes) if t == s]
        steps.append((name, i, draw(st.sampled_from(same)), draw(st.integers(-3, 3))))
        shapes.append(None)  # (filled in as the program runs; a later step takes values of known shape)
        shapes[-1] = _shape_after(name, s, steps[-1])
        if shapes[-1] is None:
            steps.pop()
            shapes.pop()
    return a.reshape(shape), b.reshape(shape), steps, draw(st.booleans())


def _shape_after(name, s, step):
    """The step's result shape, worked out on a NumPy stand-in through PyTorch."""
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            h = torch.zeros(s, dtype=torch.float64) + 0.25
            return tuple(STEPS[name][2](Lib(False), h, h, step[3]).shape)
    except Exception:
        return None


def source(a, b, steps) -> str:
    lines = [f"x0 = m.tensor(np.{a!r}, requires_grad=True)", f"x1 = m.tensor(np.{b!r}, requires_grad=True)"]
    for k, (name, i, j, arg) in enumerate(steps):
        lines.append(f"x{k + 2} = " + STEPS[name][0].format(h=f"x{i}", o=f"x{j}", a=arg, s="x.shape", n="n", c="c"))
    lines.append(f"(x{len(steps) + 1} * weights).sum().backward()")
    return "\n".join(lines).replace("np.array", "np.array")


def run(ours: bool, a, b, steps, second: bool):
    L = Lib(ours)
    x0, x1 = L.tensor(a, True), L.tensor(b, True)
    vals = [x0, x1]
    for name, i, j, arg in steps:
        vals.append(STEPS[name][2](L, vals[i], vals[j], arg))
    out = vals[-1]
    value = out.detach().numpy()
    dtype = str(out.dtype).replace("torch.", "")
    w = L.tensor(np.linspace(-1.0, 1.0, max(out.numel(), 1))[: out.numel()].reshape(_shape(out)))
    loss = (out * w).sum() if out.dtype in (torch.float64, np.float64) else None
    grads = [None, None]
    if loss is not None and loss.requires_grad:
        grad_fn = tga.grad if ours else torch.autograd.grad
        gs = grad_fn(loss, [x0, x1], create_graph=second, allow_unused=True)
        grads = [None if g is None else (g.detach().numpy() if ours else g.detach().numpy(force=True)) for g in gs]
        if second and all(g is not None and g.requires_grad for g in gs):
            g2 = grad_fn(sum((g * g).sum() for g in gs), [x0, x1], allow_unused=True)
            # (force=True: PyTorch's zero second derivatives can be a ZeroTensor, which .numpy() refuses)
            grads += [None if g is None else (g.detach().numpy() if ours else g.detach().numpy(force=True)) for g in g2]
    return value, dtype, grads


def _outcome(ours, a, b, steps, second):
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run(ours, a, b, steps, second), None
    except Exception as e:  # noqa: BLE001 - whether each side raises is compared
        return None, e


def _close(x, y) -> bool:
    if x is None or y is None:  # (no gradient on one side: the other's must be zero)
        z = x if y is None else y
        return z is None or not np.any(z)
    x, y = np.asarray(x, float), np.asarray(y, float)
    return x.shape == y.shape and np.allclose(x, y, rtol=1e-7, atol=1e-9, equal_nan=True)


@pytest.mark.slow
@settings(max_examples=N_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(programs())
def test_programs_behave_as_in_pytorch(program):
    a, b, steps, second = program
    mine, err = _outcome(True, a, b, steps, second)
    theirs, terr = _outcome(False, a, b, steps, second)
    src = source(a, b, steps)
    assert (err is None) == (terr is None), f"raises here: {err!r}; in PyTorch: {terr!r}\n{src}"
    if err is not None:
        return
    (v, dt, gs), (tv, tdt, tgs) = mine, theirs
    assert dt == tdt, f"dtype {dt}, PyTorch's {tdt}\n{src}"
    assert _close(v, tv), f"value {v}, PyTorch's {tv}\n{src}"
    for k, (g, tg) in enumerate(zip(gs, tgs)):
        assert _close(g, tg), f"gradient {k} (2 and 3: second order) {g}, PyTorch's {tg}\n{src}"


def run_forward(ours: bool, a, b, steps):
    """The program's value and tangent with its two inputs dual tensors (forward-mode AD, no grad)."""
    L = Lib(ours)
    fw = L.m.autograd.forward_ad
    with fw.dual_level():
        x0 = fw.make_dual(L.tensor(a), L.tensor(np.asarray(np.cos(a * 3.0))))  # (an array: of 0-d, not a scalar)
        x1 = fw.make_dual(L.tensor(b), L.tensor(np.asarray(np.sin(b * 2.0 + 1.0))))
        vals = [x0, x1]
        for name, i, j, arg in steps:
            vals.append(STEPS[name][2](L, vals[i], vals[j], arg))
        out = vals[-1]
        tangent = fw.unpack_dual(out).tangent if out.dtype in (torch.float64, np.float64) else None
        return out.detach().numpy(), None if tangent is None else tangent.detach().numpy()


@pytest.mark.slow
@settings(max_examples=max(N_EXAMPLES // 4, 50), deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(programs())
def test_programs_forward_mode_as_in_pytorch(program):
    """The same programs in forward mode: each input a dual tensor, the tangent of the result PyTorch's."""
    a, b, steps, _ = program
    outcomes = []
    for ours in (True, False):
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outcomes.append((run_forward(ours, a, b, steps), None))
        except Exception as e:  # noqa: BLE001 - whether each side raises is compared
            outcomes.append((None, e))
    (mine, err), (theirs, terr) = outcomes
    src = source(a, b, steps)
    assert (err is None) == (terr is None), f"raises here: {err!r}; in PyTorch: {terr!r}\n{src}"
    if err is None:
        assert _close(mine[0], theirs[0]), f"value {mine[0]}, PyTorch's {theirs[0]}\n{src}"
        assert _close(mine[1], theirs[1]), f"tangent {mine[1]}, PyTorch's {theirs[1]}\n{src}"
