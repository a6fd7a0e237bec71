"""The memory layout of results, as PyTorch's: every call below runs on inputs of several layouts
(contiguous, transposed, permuted 3-d and 4-d, sliced with steps, expanded, channels-last 4-d)
under PyTorch and here, and the result's ``stride()``, ``is_contiguous()``,
``is_contiguous(memory_format=channels_last)`` and values must be PyTorch's. Layouts are seen by
users: ``.view`` succeeds or raises by them, ``.numpy()`` has them, random fills follow them.

The elementwise ops are every one-operand and two-operand function declared here that PyTorch
shares and that keeps its input's shape (found by calling both libraries on a small matrix)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn.engine.declare import DECLARED

torch = pytest.importorskip("torch")

#: name -> a maker of the input in a library ``L`` (its ``arange`` and views alone, so no layout
#: under test builds an input)
LAYOUTS = {
    "contiguous": "L.arange(120.).reshape(2,3,4,5)",
    "transposed": "L.arange(12.).reshape(3,4).t()",
    "permuted3": "L.arange(24.).reshape(2,3,4).permute(2,0,1)",
    "permuted4": "L.arange(120.).reshape(2,3,4,5).permute(3,1,0,2)",
    "stepped": "L.arange(48.).reshape(6,8)[::2, 1::3]",
    "expanded": "L.arange(3.).reshape(3,1).expand(3,4)",
    "channels_last": "L.arange(120.).reshape(2,4,5,3).permute(0,3,1,2)",
    "channels_last_n1": "L.arange(60.).reshape(1,4,5,3).permute(0,3,1,2)",
}
FOUR_D = ("contiguous", "permuted4", "channels_last", "channels_last_n1")

#: name -> a call of ``x`` (the input), ``L`` (the library), ``F`` (its functional), ``cl`` (its
#: channels_last), ``cf`` (contiguous_format), ``pf`` (preserve_format); ``*`` marks calls
#: whose values are not compared (uninitialised memory, random draws)
CALLS = {
    "clone": "x.clone()",
    "clone_pf": "x.clone(memory_format=pf)",
    "clone_cf": "x.clone(memory_format=cf)",
    "contiguous": "x.contiguous()",
    "*empty_like": "L.empty_like(x)",
    "zeros_like": "L.zeros_like(x)",
    "ones_like": "L.ones_like(x)",
    "full_like": "L.full_like(x, 2.5)",
    "zeros_like_cf": "L.zeros_like(x, memory_format=cf)",
    "zeros_like_f64": "L.zeros_like(x, dtype=L.float64)",
    "*rand_like": "L.rand_like(x)",
    "*randn_like": "L.randn_like(x)",
    "*randint_like": "L.randint_like(x, 5)",
    "double": "x.double()",
    "half": "x.half()",
    "to_f64": "x.to(L.float64)",
    "to_int": "x.to(dtype=L.int64)",
    "to_copy": "x.to(L.float32, copy=True)",
    "type_f64": "x.type(L.float64)",
    "to_cf": "x.to(memory_format=cf)",
    "cat": "L.cat([x, x])",
    "cat_last": "L.cat([x, x], -1)",
    "cat_contig": "L.cat([x, x.contiguous()])",
    "stack": "L.stack([x, x])",
    "stack_last": "L.stack([x, x], -1)",
    "sum_keep0": "x.sum(0, keepdim=True)",
    "sum_keep_last": "x.sum(-1, keepdim=True)",
    "sum0": "x.sum(0)",
    "mean_keep": "x.mean(1, keepdim=True)",
    "amax_keep": "x.amax(0, keepdim=True)",
    "max_keep": "x.max(1, keepdim=True)[0]",
    "cumsum": "x.cumsum(0)",
    "softmax": "x.softmax(-1)",
    "log_softmax": "x.log_softmax(0)",
    "where": "L.where(x > 3, x, 0.5)",
    "where_contig": "L.where(x > 3, x.contiguous(), x)",
    "masked_fill": "x.masked_fill(x > 3, 0.5)",
    "add_contig": "x + x.contiguous()",
    "contig_add": "x.contiguous() + x",
    "add_row": "x + x[..., :1]",
    "mul_scalar": "x * 2",
    "add_0d": "x + L.tensor(1.5)",
    "matmul": "x @ x.transpose(-1, -2)",
    "relu": "L.nn.functional.relu(x)",
    "gelu": "L.nn.functional.gelu(x)",
    "silu": "L.nn.functional.silu(x)",
    "leaky_relu": "L.nn.functional.leaky_relu(x, 0.1)",
    "hardtanh": "L.nn.functional.hardtanh(x, 0., 50.)",
    "dropout0": "L.nn.functional.dropout(x, 0.0)",
    "layer_norm": "L.nn.functional.layer_norm(x, x.shape[-1:])",
    "flip": "x.flip(0)",
    "roll": "x.roll(1, 0)",
    "reshape": "x.reshape(-1)",
    "flatten": "x.flatten()",
    "view_t": "x.transpose(0, 1)",
    "unsqueeze": "x.unsqueeze(1)",
    "select": "x[1]",
    "narrow": "x.narrow(-1, 1, 2)",
    "squeeze": "x.unsqueeze(0).squeeze(0)",
    "expand_as": "x[:1].expand_as(x)",
}
#: calls of 4-d inputs alone
CALLS_4D = {
    "clone_cl": "x.clone(memory_format=cl)",
    "contiguous_cl": "x.contiguous(memory_format=cl)",
    "to_cl": "x.to(memory_format=cl)",
    "to_f64_cl": "x.to(L.float64, memory_format=cl)",
    "zeros_like_cl": "L.zeros_like(x, memory_format=cl)",
    "*empty_like_cl": "L.empty_like(x, memory_format=cl)",
    "*empty_cl": "L.empty(x.shape, memory_format=cl)",
    "*empty_cf": "L.empty(x.shape, memory_format=cf)",
    "conv2d": "L.nn.functional.conv2d(x, L.arange(54.).reshape(2,3,3,3) / 50, padding=1)",
    "conv2d_bias": "L.nn.functional.conv2d(x, L.arange(6.).reshape(2,3,1,1), L.ones(2))",
    "max_pool2d": "L.nn.functional.max_pool2d(x, 2)",
    "avg_pool2d": "L.nn.functional.avg_pool2d(x, 2)",
    "adaptive_avg_pool2d": "L.nn.functional.adaptive_avg_pool2d(x, 1)",
    "batch_norm": "L.nn.functional.batch_norm(x, L.zeros(3), L.ones(3), training=False)",
    "batch_norm_train": "L.nn.functional.batch_norm(x, None, None, training=True)",
    "group_norm": "L.nn.functional.group_norm(x, 3)",
    "interpolate": "L.nn.functional.interpolate(x, scale_factor=2)",
    "pad": "L.nn.functional.pad(x, (1, 1))",
}

#: (call, layout) -> why ours cannot be PyTorch's
KNOWN: dict[tuple[str, str], str] = {
    ("isin(c,x)", "transposed"): "PyTorch's isin raises for a transposed test_elements (its kernel views it "
    "flat: 'view size is not compatible'); a transposed tensor is a valid argument here",
}

_SKIP_NAMES = ("rand", "dropout", "bernoulli", "normal", "poisson", "multinomial", "empty", "manual_seed", "seed")


def _library(lib: object) -> dict:
    return {"L": lib, "F": lib.nn.functional, "cl": lib.channels_last, "cf": lib.contiguous_format,
            "pf": lib.preserve_format}  # fmt: skip


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def _shape_keeping(arity: int) -> list[str]:
    """The names declared here and in PyTorch whose call on ``arity`` float matrices gives a
    tensor of their shape in both libraries."""
    found = []
    for name in sorted(DECLARED):
        if name.startswith("_") or name.endswith("_") or any(s in name for s in _SKIP_NAMES):
            continue
        ours, theirs = getattr(tga, name, None), getattr(torch, name, None)
        if not callable(ours) or not callable(theirs):
            continue
        results = []
        for lib, fn in ((torch, theirs), (tga, ours)):
            a = lib.arange(1.0, 7.0).reshape(2, 3) / 7
            try:
                r = _quiet(fn, *[a] * arity)
            except Exception:  # noqa: BLE001 - a name that takes other operands is no elementwise op
                break
            results.append(r)
        if len(results) == 2 and all(getattr(r, "shape", None) == (2, 3) for r in results):
            found.append(name)
    return found


UNARY = _shape_keeping(1)
BINARY = [n for n in _shape_keeping(2) if n not in UNARY]
for _name in UNARY:
    CALLS.setdefault(_name, f"L.{_name}(x / 200)")
for _name in BINARY:
    CALLS.setdefault(f"{_name}(x,c)", f"L.{_name}(x / 200, x.contiguous() / 150 + 0.01)")
    CALLS.setdefault(f"{_name}(c,x)", f"L.{_name}(x.contiguous() / 150 + 0.01, x / 200)")


def _run(call: str, layout: str, lib: object) -> object:
    env = _library(lib)
    env["x"] = eval(LAYOUTS[layout], env)  # noqa: S307 - the programs above
    return _quiet(eval, call, env)  # noqa: S307


def _layout_of(r: object, lib: object) -> tuple:
    return (tuple(r.shape), r.stride(), r.is_contiguous(), r.is_contiguous(memory_format=lib.channels_last))


PROGRAMS = [(c, lay) for c in CALLS for lay in LAYOUTS] + [(c, lay) for c in CALLS_4D for lay in FOUR_D]


@pytest.mark.parametrize(
    "call,layout",
    [
        pytest.param(c, lay, marks=[pytest.mark.xfail(reason=KNOWN[c, lay], strict=True)] if (c, lay) in KNOWN else [])
        for c, lay in PROGRAMS
    ],  # fmt: skip
)
def test_result_layout(call: str, layout: str) -> None:
    source = CALLS.get(call) or CALLS_4D[call]
    try:
        expected = _run(source, layout, torch)
    except Exception as e:  # noqa: BLE001 - PyTorch refuses: ours must refuse with its class
        with pytest.raises(type(e) if type(e).__module__ == "builtins" else Exception):
            _run(source, layout, tga)
        return
    got = _run(source, layout, tga)
    assert _layout_of(got, tga) == _layout_of(expected, torch), f"{source} of {LAYOUTS[layout]}"
    if not call.startswith("*"):
        want = expected.detach().double().numpy() if expected.dtype != torch.bool else expected.numpy()
        have = np.asarray(got.detach().double().numpy() if got.dtype != tga.bool else got.numpy())
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=source)


def test_the_programs_cover_the_declared_elementwise_ops() -> None:
    """The search for elementwise ops finds the common ones (it found nothing if a library changed)."""
    assert {"exp", "sigmoid", "abs", "neg"} <= set(UNARY)
    assert {"add", "mul", "maximum", "atan2"} <= set(BINARY)
