"""The flat update of a param group (``Optimizer._step_flat``), as a compiled loop per parameter
(``ops.cpu_kernels``: SGD's and Adam's, with numba) and as NumPy passes over flat buckets,
against the update parameter by parameter (``foreach=False``): the same numbers bit for bit,
in float32 and float64, for every option of SGD, Adam and AdamW, through what a user does
between steps (``.data`` rebound, a gradient set to None, ``zero_grad(set_to_none=False)``,
a state dict reloaded, a group added), eagerly and inside ``tga.compile``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import count_kernel_calls

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.models import Parameter
from tinygrad_attn.ops import cpu_kernels
from tinygrad_attn.optim import SGD, Adam, AdamW


def _grid(**axes):
    keys = list(axes)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(axes[k] for k in keys))]


B = [False, True]
CASES = (
    [(SGD, kw) for kw in _grid(lr=[0.05], momentum=[0.0, 0.9], dampening=[0.0, 0.3], nesterov=B,
                               weight_decay=[0.0, 0.1], maximize=B)
     if not kw["nesterov"] or (kw["momentum"] and not kw["dampening"])]
    + [(Adam, kw) for kw in _grid(lr=[0.05], weight_decay=[0.0, 0.1], amsgrad=B, maximize=B,
                                  decoupled_weight_decay=B)]
    + [(AdamW, kw) for kw in _grid(lr=[0.05], betas=[(0.8, 0.95)], weight_decay=[0.0, 0.2], amsgrad=B, maximize=B)]
)  # fmt: skip
IDS = [f"{cls.__name__}-" + ",".join(f"{k}={v}" for k, v in kw.items()) for cls, kw in CASES]
SHAPES = [(3, 4), (5,), (), (2, 1, 3), (4,)]
KERNELS = {SGD: ("sgd", "sgd_plain"), Adam: ("adam",), AdamW: ("adam",)}
needs_numba = pytest.mark.skipif(not cpu_kernels.available(), reason="numba is not installed (the jit extra)")


@pytest.fixture
def calls(monkeypatch):
    """Counts the compiled loops handed out, by name (none where numba is missing or off)."""
    return count_kernel_calls(monkeypatch)


def _run(cls, kw, dtype, foreach, steps=8):
    """Steps with the events of a user's loop between them; the parameters' values and the
    state (as NumPy) after each step."""
    rng = np.random.default_rng(3)
    ps = [Parameter(rng.standard_normal(s).astype(dtype)) for s in SHAPES]
    extra = Parameter(rng.standard_normal((3,)).astype(dtype))
    opt = cls([{"params": ps[:4]}, {"params": ps[4:], "lr": kw["lr"] * 2}], **kw, foreach=foreach)
    out = []
    for step in range(steps):
        if step == 2:  # a parameter's array rebound by the user, same shape
            ps[0].data = Tensor(np.full(SHAPES[0], 0.5, dtype))
        if step == 5:
            opt.add_param_group({"params": [extra], "lr": kw["lr"] / 2})
        if step == 6:
            opt.load_state_dict(opt.state_dict())
        live = ps + ([extra] if step >= 5 else [])
        if step == 4:
            opt.zero_grad(set_to_none=False)  # zeros, kept
        for p in live:
            g = rng.standard_normal(p.shape).astype(dtype)
            if step == 4 and p.grad is not None:
                p.grad.add_(Tensor(g))  # into the zeroed gradient, in place
            else:
                p.grad = Tensor(g)
        if step in (1, 3):  # a gradient set to None: that parameter is not updated this step
            live[1 if step == 1 else 3].grad = None
        opt.step()
        state = {(id_, k): np.array(v.detach().numpy() if isinstance(v, Tensor) else v)
                 for id_, st in opt.state_dict()["state"].items() for k, v in st.items()}  # fmt: skip
        out.append(([p.detach().numpy().copy() for p in ps + [extra]], state))
    return out


def _same(a, b):
    for step, ((pa, sa), (pb, sb)) in enumerate(zip(a, b)):
        for x, y in zip(pa, pb):
            assert x.dtype == y.dtype
            assert x.tobytes() == y.tobytes(), f"step {step}: {x} != {y}"
        assert sa.keys() == sb.keys(), step
        for k in sa:
            assert sa[k].tobytes() == sb[k].tobytes(), f"step {step}, state {k}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("cls,kw", CASES, ids=IDS)
def test_fused_and_flat_updates_give_the_per_parameter_numbers(cls, kw, dtype, calls, monkeypatch):
    monkeypatch.setattr(cpu_kernels, "ENABLED", True)
    fused = _run(cls, kw, dtype, foreach=None)
    if cpu_kernels.available():
        assert sum(calls.get(k, 0) for k in KERNELS[cls]) >= 8  # (the loops ran: a step per param group)
    monkeypatch.setattr(cpu_kernels, "ENABLED", False)
    flat = _run(cls, kw, dtype, foreach=None)
    loop = _run(cls, kw, dtype, foreach=False)
    _same(fused, loop)
    _same(flat, loop)


@pytest.mark.parametrize("cls,kw", [(SGD, dict(lr=0.1, momentum=0.9)), (AdamW, dict(lr=0.1))], ids=["SGD", "AdamW"])
def test_a_parameter_rebound_to_another_dtype_gets_a_new_bucket(cls, kw):
    """``p.data = t`` of another dtype between steps: the flat layout is made again, the
    parameter's state moved to its new dtype, as the per-parameter path does."""
    outs = []
    for foreach in (None, False):
        rng = np.random.default_rng(0)
        ps = [Parameter(rng.standard_normal(s)) for s in [(3,), (2, 2)]]
        opt = cls(ps, **kw, foreach=foreach)
        for step in range(4):
            if step == 2:
                ps[1].data = Tensor(np.ones((2, 2), np.float32))  # the dtype changes: state follows
            for p in ps:
                p.grad = Tensor(rng.standard_normal(p.shape).astype(p.detach().numpy().dtype))
            opt.step()
        outs.append([p.detach().numpy().copy() for p in ps] + [opt.state[ps[1]][k].detach().numpy() for k in sorted(opt.state[ps[1]])
                                                       if isinstance(opt.state[ps[1]][k], Tensor)])  # fmt: skip
    for a, b in zip(*outs):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("cls", [SGD, Adam])
def test_the_step_counts_each_parameters_version_once(cls):
    ps = [Parameter(np.ones(s, np.float32)) for s in [(2, 3), (4,)]]
    opt = cls(ps, lr=0.1, **({"momentum": 0.9} if cls is SGD else {}))
    for _ in range(3):
        for p in ps:
            p.grad = Tensor(np.full(p.shape, 0.5, np.float32))
        before = [p._version for p in ps]
        opt.step()
        assert [p._version for p in ps] == [b + 1 for b in before]
    y = (ps[0] * ps[0]).sum()  # a graph that saved ps[0]: the step's write makes its backward raise
    ps[0].grad = Tensor(np.ones((2, 3), np.float32))
    ps[1].grad = Tensor(np.ones(4, np.float32))
    opt.step()
    with pytest.raises(RuntimeError, match="in-place"):
        y.backward()


@needs_numba
def test_a_read_only_or_non_contiguous_gradient_takes_the_numpy_passes(calls, monkeypatch):
    monkeypatch.setattr(cpu_kernels, "ENABLED", True)
    outs = []
    for ro in (True, False):
        ps = [Parameter(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))]
        opt = SGD(ps, lr=0.1, momentum=0.9)
        for _ in range(3):
            g = np.arange(12, dtype=np.float32).reshape(4, 3).T  # not C-contiguous
            if ro:
                g = np.ascontiguousarray(g)
                g.flags.writeable = False
            ps[0].grad = Tensor._wrap(g, ps[0]._dev)
            opt.step()
        outs.append(ps[0].detach().numpy().copy())
    assert outs[0].tobytes() == outs[1].tobytes()


# -- the same inside tga.compile: the replay calls the flat update, read live -----------------
STEP_CASES = [
    (SGD, dict(lr=0.05)),
    (SGD, dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (Adam, dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    (AdamW, dict(lr=0.01, weight_decay=0.1)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("cls,kw", STEP_CASES, ids=[c.__name__ + str(i) for i, (c, _) in enumerate(STEP_CASES)])
def test_a_compiled_step_follows_what_the_user_changes_between_calls(cls, kw, dtype):
    """Ten steps, compiled and eager, with ``.data`` rebound, a state dict reloaded, a
    parameter frozen and a group added between calls: the same numbers."""
    runs = []
    for compiled in (False, True):
        tga.manual_seed(0)
        model = tga.nn.Sequential(tga.nn.Linear(4, 6), tga.nn.Tanh(), tga.nn.Linear(6, 2)).to(
            tga.float64 if dtype == np.float64 else tga.float32
        )
        ps = list(model.parameters())
        opt = cls(ps[:3], **kw)
        late = ps[3]

        def step(x, y, opt=opt, model=model):
            opt.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            opt.step()

        run = tga.compile(step) if compiled else step
        rng = np.random.default_rng(7)
        for i in range(10):
            if i == 2:
                ps[0].data = Tensor(np.full(tuple(ps[0].shape), 0.1, dtype))
            if i == 4:
                opt.load_state_dict(opt.state_dict())
            if i == 5:
                opt.add_param_group({"params": [late], "lr": kw["lr"] * 3})
            if i == 7:
                ps[1].requires_grad_(False)
            if i == 8:
                ps[1].requires_grad_(True)
            x = Tensor(rng.standard_normal((5, 4)).astype(dtype))
            y = Tensor(rng.standard_normal((5, 2)).astype(dtype))
            run(x, y)
        runs.append([p.detach().numpy().copy() for p in model.parameters()])
    for a, b in zip(*runs):
        assert a.tobytes() == b.tobytes()
