"""Causal multi-head self-attention, forward and backward, against hand-written NumPy.

Contenders, all float32, all computing ``y = MHA(x)`` and then the gradients of
``(y * gy).sum()`` with respect to the input and every weight and bias:

- ``numpy``: the baseline, written by hand below with its manual backward.
- ``user``: the same computation written by a user from Tensor ops (projections,
  ``q @ k.mT``, scale, ``masked_fill``, ``softmax``, ``@ v``, merge heads, output projection).
- ``compiled``: the user form under ``tga.compile``: the first call traces it, the
  timed calls replay the generated program (no graph, no Tensor objects inside).
- ``module``: ``tinygrad_attn.models.BatchFirstAttention(..., is_causal=True)``.
- ``torch``: the user form in PyTorch eager, when ``import torch`` works.
- ``jax``: the user form in ``jax.numpy`` under ``jax.jit(jax.vjp)``, when ``import jax``
  works: XLA's compiled forward and backward, the mark the compiled form aims below.

Run ``python benchmarks/run.py --only attention`` (or ``memory``).
"""

from __future__ import annotations

import math

import numpy as np
from common import interleave, jax_or_none, mib, ms, peak_bytes, torch_or_none

import tinygrad_attn as tga
from tinygrad_attn import Tensor

SIZES = {  # name: (B, T, D, H)
    "tiny": (1, 8, 16, 2),
    "small": (4, 32, 64, 4),
    "medium": (8, 128, 256, 8),
    "large": (8, 512, 512, 8),
}
ROUNDS = {"tiny": 31, "small": 21, "medium": 15, "large": 7}
INNER = {"tiny": 20, "small": 5, "medium": 1, "large": 1}  # calls per timed sample
WEIGHTS = ("Wq", "bq", "Wk", "bk", "Wv", "bv", "Wo", "bo")


def make_inputs(b: int, t: int, d: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    bound = 1.0 / math.sqrt(d)
    arrs = {"x": rng.standard_normal((b, t, d)).astype(np.float32)}
    for n in "qkvo":
        arrs[f"W{n}"] = rng.uniform(-bound, bound, (d, d)).astype(np.float32)  # (out, in), as PyTorch
        arrs[f"b{n}"] = rng.uniform(-bound, bound, (d,)).astype(np.float32)
    arrs["gy"] = rng.standard_normal((b, t, d)).astype(np.float32)
    return arrs


# -- the baseline: NumPy by hand --------------------------------------------------------
def mha_numpy(a: dict[str, np.ndarray], h: int, input_grad: bool = True) -> dict[str, np.ndarray]:
    """Forward (the output ``y`` too) and manual backward; returns ``y`` and the
    gradients, keyed as the inputs (``input_grad=False``: the weights' only, as a training
    step needs)."""
    x, gy = a["x"], a["gy"]
    b, t, d = x.shape
    dh = d // h
    scale = 1.0 / math.sqrt(dh)
    allowed = np.tri(t, t, 0, dtype=bool)  # (T, T)
    x2 = x.reshape(b * t, d)

    def heads(m):  # (B*T, D) -> (B, H, T, dh)
        return m.reshape(b, t, h, dh).transpose(0, 2, 1, 3)

    def merge(m):  # (B, H, T, dh) -> (B*T, D)
        return m.transpose(0, 2, 1, 3).reshape(b * t, d)

    q = heads(x2 @ a["Wq"].T + a["bq"])
    k = heads(x2 @ a["Wk"].T + a["bk"])
    v = heads(x2 @ a["Wv"].T + a["bv"])
    s = q @ k.transpose(0, 1, 3, 2)  # (B, H, T, T)
    s *= scale
    s = np.where(allowed, s, -np.inf)
    s -= s.max(-1, keepdims=True)
    w = np.exp(s)
    del s
    w /= w.sum(-1, keepdims=True)
    o = merge(w @ v)  # (B*T, D)
    y = o @ a["Wo"].T + a["bo"]  # the output, whose gradient is gy
    gy2 = gy.reshape(b * t, d)
    g = {"y": y.reshape(b, t, d), "Wo": gy2.T @ o, "bo": gy2.sum(0)}
    go = heads(gy2 @ a["Wo"])  # (B, H, T, dh)
    gv = w.transpose(0, 1, 3, 2) @ go
    gw = go @ v.transpose(0, 1, 3, 2)  # (B, H, T, T)
    gw -= (gw * w).sum(-1, keepdims=True)
    gw *= w  # the softmax's backward; masked entries have w == 0
    gw *= scale
    gq = gw @ k
    gk = gw.transpose(0, 1, 3, 2) @ q
    del gw
    gx = np.zeros_like(x2) if input_grad else None
    for n, gh in (("q", gq), ("k", gk), ("v", gv)):
        gm = merge(gh)
        g[f"W{n}"] = gm.T @ x2
        g[f"b{n}"] = gm.sum(0)
        if input_grad:
            gx += gm @ a[f"W{n}"]
    if input_grad:
        g["x"] = gx.reshape(b, t, d)
    return g


# -- ours: the user-written form --------------------------------------------------------
def user_setup(a: dict[str, np.ndarray], h: int):
    p, body = _user_body(a, h)

    def step():
        for ten in p.values():
            ten.grad = None
        body()
        return p

    return step


def compiled_setup(a: dict[str, np.ndarray], h: int):
    """The user form under ``tga.compile``: traced on the first call, replayed after."""
    p, body = _user_body(a, h)
    run = tga.compile(body)

    def step():
        for ten in p.values():
            ten.grad = None
        run()
        return p

    return step


def _user_body(a: dict[str, np.ndarray], h: int):
    """The user form's parameters, and its forward + backward (gradients accumulate)."""
    p = {n: Tensor(a[n], requires_grad=True) for n in ("x", *WEIGHTS)}
    gy = Tensor(a["gy"])
    t = a["x"].shape[1]
    blocked = Tensor(~np.tri(t, t, 0, dtype=bool))  # (T, T): True where a query may not look

    def body():
        user_forward(p, p["x"], blocked, h).backward(gy)

    return p, body


def user_forward(p: dict, x: Tensor, blocked: Tensor, h: int) -> Tensor:
    """The user form's forward: ``y`` from ``x`` and the weights ``p``."""
    b, t, d = x.shape
    dh = d // h

    def heads(m):  # (B, T, D) -> (B, H, T, dh)
        return m.reshape(b, t, h, dh).permute(0, 2, 1, 3)

    q = heads(x @ p["Wq"].mT + p["bq"])
    k = heads(x @ p["Wk"].mT + p["bk"])
    v = heads(x @ p["Wv"].mT + p["bv"])
    s = (q @ k.mT) * (1.0 / math.sqrt(dh))  # (B, H, T, T)
    w = s.masked_fill(blocked, -math.inf).softmax(-1)
    o = (w @ v).permute(0, 2, 1, 3).reshape(b, t, d)  # merge heads
    return o @ p["Wo"].mT + p["bo"]


def module_class():
    """``tinygrad_attn.models.BatchFirstAttention`` (``MultiHeadAttention`` in older releases), else None."""
    from tinygrad_attn import models  # noqa: PLC0415

    cls = getattr(models, "BatchFirstAttention", None) or getattr(models, "MultiHeadAttention", None)
    if cls is None:
        try:
            from tinygrad_attn.nn.attention import MultiHeadAttention as cls  # noqa: PLC0415
        except ImportError:
            return None
    return cls


def module_setup(a: dict[str, np.ndarray], h: int):
    cls = module_class()
    b, t, d = a["x"].shape
    mha = cls(d, h)
    for n, lin in zip("qkvo", (mha.q_proj, mha.k_proj, mha.v_proj, mha.out_proj)):
        lin.weight.data[...] = Tensor(a[f"W{n}"])
        lin.bias.data[...] = Tensor(a[f"b{n}"])
    x = Tensor(a["x"], requires_grad=True)
    gy = Tensor(a["gy"])
    params = {f"{kind}{n}": getattr(lin, attr) for n, lin in zip("qkvo", (mha.q_proj, mha.k_proj, mha.v_proj,
              mha.out_proj)) for kind, attr in (("W", "weight"), ("b", "bias"))}  # fmt: skip
    params["x"] = x

    def step():
        for ten in params.values():
            ten.grad = None
        mha(x, is_causal=True).backward(gy)
        return params

    return step


def torch_setup(a: dict[str, np.ndarray], h: int):
    torch = torch_or_none()
    p = {n: torch.tensor(a[n], requires_grad=True) for n in ("x", *WEIGHTS)}
    gy = torch.tensor(a["gy"])
    b, t, d = a["x"].shape
    dh = d // h
    blocked = torch.tensor(~np.tri(t, t, 0, dtype=bool))

    def step():
        for ten in p.values():
            ten.grad = None
        x = p["x"]

        def heads(m):
            return m.reshape(b, t, h, dh).permute(0, 2, 1, 3)

        q = heads(x @ p["Wq"].mT + p["bq"])
        k = heads(x @ p["Wk"].mT + p["bk"])
        v = heads(x @ p["Wv"].mT + p["bv"])
        s = (q @ k.mT) * (1.0 / math.sqrt(dh))
        w = s.masked_fill(blocked, -math.inf).softmax(-1)
        o = (w @ v).permute(0, 2, 1, 3).reshape(b, t, d)
        y = o @ p["Wo"].mT + p["bo"]
        y.backward(gy)
        return p

    return step


def jax_forward(p: dict, x, h: int):
    """The user form in ``jax.numpy``: ``y`` from ``x`` and the weights ``p``."""
    jax = jax_or_none()
    jnp = jax.numpy
    b, t, d = x.shape
    dh = d // h
    allowed = jnp.asarray(np.tri(t, t, 0, dtype=bool))

    def heads(m):
        return m.reshape(b, t, h, dh).transpose(0, 2, 1, 3)

    q = heads(x @ p["Wq"].T + p["bq"])
    k = heads(x @ p["Wk"].T + p["bk"])
    v = heads(x @ p["Wv"].T + p["bv"])
    s = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(dh))
    w = jax.nn.softmax(jnp.where(allowed, s, -jnp.inf), axis=-1)
    o = (w @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
    return o @ p["Wo"].T + p["bo"]


def jax_setup(a: dict[str, np.ndarray], h: int):
    jax = jax_or_none()
    jnp = jax.numpy

    def forward(p):
        return jax_forward(p, p["x"], h)

    @jax.jit
    def grads(p, gy):
        _, pull = jax.vjp(forward, p)
        return pull(gy)[0]

    p = {n: jnp.asarray(a[n]) for n in ("x", *WEIGHTS)}
    gy = jnp.asarray(a["gy"])

    def step():
        g = grads(p, gy)
        jax.block_until_ready(g)
        return {n: _Grad(np.asarray(v)) for n, v in g.items()}

    return step


class _Grad:
    def __init__(self, arr):
        self.grad = arr


def _check(name: str, got: dict, ref: dict) -> None:
    """The contenders must agree with the baseline before their times mean anything."""
    for n, r in ref.items():
        if n == "y":  # (the contenders return their inputs, whose gradients are checked)
            continue
        gt = got[n].grad
        arr = gt.detach().numpy() if hasattr(gt, "numpy") else np.asarray(gt)
        if arr.dtype == object or not np.allclose(arr, r, rtol=2e-3, atol=2e-4):
            raise AssertionError(f"{name}: gradient of {n} differs from the NumPy baseline")


def contenders(size: str) -> dict:
    b, t, d, h = SIZES[size]
    a = make_inputs(b, t, d)
    ref = mha_numpy(a, h)
    out = {"numpy": lambda: mha_numpy(a, h), "user": user_setup(a, h), "compiled": compiled_setup(a, h)}
    if module_class() is not None:
        out["module"] = module_setup(a, h)
    if torch_or_none() is not None:
        out["torch"] = torch_setup(a, h)
    if jax_or_none() is not None:
        out["jax"] = jax_setup(a, h)
    for name, fn in out.items():
        if name != "numpy":
            got = fn()
            if name == "compiled":  # the first call traced: check a replay
                got = fn()
            _check(name, {n: (v if name != "torch" else _TorchGrad(v)) for n, v in got.items()}, ref)
    return out


class _TorchGrad:
    def __init__(self, t):
        self.grad = t.grad.detach().numpy()


def timing(sizes=tuple(SIZES), quick: bool = False) -> dict:
    if module_class() is None:
        print("  (BatchFirstAttention does not exist yet in tinygrad_attn.models: the module form is skipped)")
    results = {}
    print(f"  {'size':7s} {'contender':8s} {'median':>12s} {'ratio to numpy':>15s}")
    for size in sizes:
        cs = contenders(size)
        rounds = max(3, ROUNDS[size] // 3) if quick else ROUNDS[size]
        med = interleave(cs, rounds, warm=1 if size == "large" else 2, inner=INNER[size])
        results[size] = med
        for name, tm in med.items():
            print(f"  {size:7s} {name:8s} {ms(tm)} {tm / med['numpy']:14.3f}x")
    return results


def memory(sizes=("medium", "large")) -> dict:
    """Peak traced memory of one forward + backward (PyTorch's allocator is not traced)."""
    results = {}
    print(f"  {'size':7s} {'contender':8s} {'peak':>12s} {'ratio to numpy':>15s}")
    for size in sizes:
        # (PyTorch's and JAX's allocators are not traced)
        cs = {k: v for k, v in contenders(size).items() if k not in ("torch", "jax")}
        peaks = {name: peak_bytes(fn) for name, fn in cs.items()}
        results[size] = peaks
        for name, pk in peaks.items():
            print(f"  {size:7s} {name:8s} {mib(pk)} {pk / peaks['numpy']:14.3f}x")
    return results


if __name__ == "__main__":
    tga.manual_seed(0)
    timing()
    memory()
