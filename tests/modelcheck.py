"""Helpers for model tests: float64 parameters, gradient checks over every parameter, and
NumPy references of the attention formulas."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.models import Module


def to_float64(module: Module) -> Module:
    """Cast every parameter and floating buffer to float64, on its device, in place."""
    return module.double()


def _owners(module: Module, keep: Callable[[str], bool]) -> tuple[list[tuple[Module, str, int]], list[Tensor]]:
    """Every (owner, attribute, index) of a checked parameter; tied parameters share an index."""
    owners, params, index = [], [], {}
    for mname, m in module.named_modules():
        for name, p in m._parameters.items():
            if p is None or not keep(f"{mname}.{name}" if mname else name):
                continue
            if id(p) not in index:
                index[id(p)] = len(params)
                params.append(p)
            owners.append((m, name, index[id(p)]))
    return owners, params


def gradcheck_module(module: Module, fn: Callable[..., Tensor], *inputs: Any,
                     only: Callable[[str], bool] | None = None, **kw: Any) -> bool:  # fmt: skip
    """``tga.gradcheck`` of ``fn(*inputs)`` (which calls ``module``) with respect to the
    inputs and every parameter of ``module`` (those whose dotted name ``only`` accepts,
    when given), all in float64.

    The parameters are passed to gradcheck as inputs; while ``fn`` runs, the module's
    attributes point at gradcheck's tensors, so the analytic gradient reaches them. (Not
    ``functional_call``: a tied parameter must be swapped under every name it has.)
    """
    to_float64(module)
    owners, params = _owners(module, only or (lambda name: True))
    n = len(inputs)

    def run(*args: Any) -> Tensor:
        xs, ps = args[:n], args[n:]
        for m, name, i in owners:
            object.__setattr__(m, name, ps[i])
        try:
            return fn(*xs)
        finally:
            for m, name, _ in owners:
                object.__setattr__(m, name, m._parameters[name])

    return tga.gradcheck(run, *inputs, *params, **kw)


# -- NumPy references -------------------------------------------------------------------
def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def mha_numpy(m, q, k, v, mask=None):
    """The formula of "Attention Is All You Need", in NumPy, with the module's weights."""
    w = {n: p.detach().numpy().astype(np.float64) for n, p in m.named_parameters()}
    b, tq, d = q.shape
    tk, h = k.shape[1], m.n_heads
    hd = d // h

    def heads(x, name, t):
        y = x @ w[f"{name}.weight"].T + w.get(f"{name}.bias", 0.0)
        return y.reshape(b, t, h, hd).transpose(0, 2, 1, 3)  # (B, H, T, hd)

    qh, kh, vh = heads(q, "q_proj", tq), heads(k, "k_proj", tk), heads(v, "v_proj", tk)
    s = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(hd)  # (B, H, Tq, Tk)
    if mask is not None and mask.dtype == bool:
        s = np.where(mask, s, -np.inf)
    elif mask is not None:
        s = s + mask
    p = softmax(s)
    o = (p @ vh).transpose(0, 2, 1, 3).reshape(b, tq, d)
    return o @ w["out_proj.weight"].T + w.get("out_proj.bias", 0.0), p


def layer_norm_numpy(x, ln):
    xc = x - x.mean(-1, keepdims=True)
    y = xc / np.sqrt((xc * xc).mean(-1, keepdims=True) + ln.eps)
    return y * ln.weight.detach().numpy() + ln.bias.detach().numpy()


def linear_numpy(x, lin):
    y = x @ lin.weight.detach().numpy().T
    return y + lin.bias.detach().numpy() if lin.bias is not None else y


def gelu_numpy(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def gru_numpy(cell, x, h):
    """PyTorch's nn.GRUCell documentation, gate blocks in the order r, z, n."""
    w = {n: p.detach().numpy() for n, p in cell.named_parameters()}
    w_ir, w_iz, w_in = np.split(w["weight_ih"], 3)
    w_hr, w_hz, w_hn = np.split(w["weight_hh"], 3)
    b_ir, b_iz, b_in = np.split(w["bias_ih"], 3)
    b_hr, b_hz, b_hn = np.split(w["bias_hh"], 3)
    r = sigmoid(x @ w_ir.T + b_ir + h @ w_hr.T + b_hr)
    z = sigmoid(x @ w_iz.T + b_iz + h @ w_hz.T + b_hz)
    n = np.tanh(x @ w_in.T + b_in + r * (h @ w_hn.T + b_hn))
    return (1 - z) * n + z * h
