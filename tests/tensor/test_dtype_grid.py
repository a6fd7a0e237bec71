"""The dtype grid: every elementwise op and reduction we share with PyTorch (the hand-named ones
and PyTorch's own inventories, ``unary_ufuncs``, ``binary_ufuncs``, ``reduction_ops``), over every dtype
PyTorch's CPU takes (bool, uint8, int8/16/32/64, float16/32/64) and, for two operands, every
pair of dtypes and every kind of second operand (tensor, 0-d tensor, Python scalar, NumPy
scalar): the result's dtype and values are PyTorch's, and we raise where PyTorch raises
(with its exception class), nowhere else.

Values are drawn small (so integer results do not overflow differently by accident) and
include 0, so division by zero and its integer errors are on the grid too.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

# A generator over every op of PyTorch's inventories: the full suite's (CI runs it), not the fast loop's.
pytestmark = pytest.mark.slow

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]

UNARY = (
    "abs neg sign sqrt exp log sin cos tanh sigmoid relu square floor ceil round trunc reciprocal rsqrt "
    "erf logical_not bitwise_not isnan isinf isfinite sum prod mean cumsum cumprod amax amin argmax argmin "
    "any all std var exp2 log2 log10 log1p expm1 sinh cosh asin acos atan frac signbit positive"
).split()

BINARY = (
    "add sub mul div floor_divide remainder pow maximum minimum fmod atan2 eq ne lt le gt ge "
    "logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor copysign hypot "
    "xlogy fmax fmin true_divide"
).split()

KINDS = ["tensor", "0-d", "python", "numpy"]

pytest.importorskip("expecttest")  # PyTorch's test internals import it
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal.common_methods_invocations import (  # noqa: E402
        binary_ufuncs,
        reduction_ops,
        unary_ufuncs,
    )


def _resolve(module, dotted: str):
    for part in dotted.split("."):
        module = getattr(module, part, None)
    return module


def _inventory(db: list, operands: int) -> dict[str, tuple[str, tuple, dict]]:
    """PyTorch's own lists of its elementwise ops and reductions (``unary_ufuncs``,
    ``binary_ufuncs``, ``reduction_ops``), the names we share: ``name`` or ``name.variant`` ->
    (the dotted name, extra positional and keyword arguments). A variant's extra arguments are
    its first sample's (``mvlgamma``'s ``p``, ``round``'s ``decimals``, ``div``'s
    ``rounding_mode``)."""
    out = {}
    for info in db:
        if info.name.startswith(("_refs", "masked", "_")):
            continue  # (PyTorch's Python references and masked variants: not names of the API)
        if _resolve(tga, info.name) is None or _resolve(torch, info.name) is None:
            continue
        args, kwargs = (), {}
        if info.variant_test_name:
            sample = next(iter(info.sample_inputs("cpu", torch.float64)))
            args, kwargs = tuple(sample.args[operands - 1 :]), dict(sample.kwargs)
        key = info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")
        out[key] = (info.name, args, kwargs)
    return out


#: Every op of the grid: the hand-named ones above and PyTorch's inventories.
UNARY_OPS = {n: (n, (), {}) for n in UNARY} | _inventory(unary_ufuncs, 1) | _inventory(reduction_ops, 1)
BINARY_OPS = {n: (n, (), {}) for n in BINARY} | _inventory(binary_ufuncs, 2)

#: Differences known and not yet fixed: each must still differ (a fixed one is taken off).
KNOWN = {
    ("complex", "float16", "float16"): "PyTorch's complex32 (two float16 parts) is not a dtype here: ours refuses",
}


def _values(dtype: str, shift: int = 0) -> np.ndarray:
    if dtype == "bool":
        return np.array([True, False, True, True, False, False])[np.roll(np.arange(6), shift)]
    base = np.array([0, 1, 2, 3, 5, 7]) if dtype == "uint8" else np.array([0, 1, -2, 3, -5, 7])
    return np.roll(base, shift).astype(dtype)


def _call(m, op: tuple[str, tuple, dict], *args):
    name, extra, kwargs = op
    fn = _resolve(m, name)
    if fn is None:
        return None, AttributeError(name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, *extra, **kwargs), None
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return None, e


def _second(m, kind: str, a: np.ndarray):
    if kind == "tensor":
        return m.tensor(a)
    if kind == "0-d":
        return m.tensor(a[1])
    if kind == "python":
        return a[1].item()
    return a[1]  # a NumPy scalar


def _compare(what: str, ours, our_error, theirs, their_error) -> None:
    if their_error is None and isinstance(theirs, tuple):  # (frexp: one comparison per output)
        assert our_error is None and isinstance(ours, tuple) and len(ours) == len(theirs), f"{what}: {ours!r}"
        for o, t in zip(ours, theirs):
            _compare(what, o, None, t, None)
        return
    if their_error is not None:
        assert our_error is not None, f"{what}: PyTorch raises {their_error!r}, we return {ours!r}"
        assert isinstance(our_error, type(their_error)), (
            f"{what}: PyTorch raises {type(their_error).__name__}, we raise {type(our_error).__name__}: {our_error}"
        )
        return
    assert our_error is None, f"{what}: PyTorch runs, we raise {our_error!r}"
    want = str(theirs.dtype).removeprefix("torch.")
    got = str(ours.dtype).removeprefix("torch.")
    assert got == want, f"{what}: dtype {got}, PyTorch's {want}"
    if theirs.dtype == torch.bool or theirs.is_complex():
        t = theirs.detach().resolve_conj().numpy()
    else:
        t = theirs.detach().double().numpy()
    o = np.asarray(ours.tolist(), dtype=t.dtype).reshape(t.shape)
    # (a few units in the last place of the result's dtype: a special function's float32 or float16
    # kernel rounds differently from ours, which computes them in a wider dtype)
    rtol, atol = _TOLERANCE.get(want, (0, 0))
    np.testing.assert_allclose(o, t, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


_TOLERANCE = {"float16": (4e-3, 1e-3), "float32": (1e-5, 1e-6), "float64": (1e-6, 1e-12),
              "complex64": (1e-5, 1e-6), "complex128": (1e-6, 1e-12)}  # fmt: skip


def _known(name: str, *dtypes: str) -> list:
    reason = KNOWN.get((name, *dtypes))
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


def _unary_cases():
    for name in UNARY_OPS:
        for dtype in DTYPES:
            yield pytest.param(name, dtype, marks=_known(name, dtype))


@pytest.mark.parametrize("name, dtype", list(_unary_cases()))
def test_unary_dtype_rules_are_pytorchs(name, dtype):
    op = UNARY_OPS[name]
    if _resolve(torch, op[0]) is None:
        pytest.fail(f"{name} is not a PyTorch name: remove it from UNARY")
    a = _values(dtype)
    theirs, their_error = _call(torch, op, torch.tensor(a))
    ours, our_error = _call(tga, op, tga.tensor(a))
    if isinstance(our_error, AttributeError) and str(our_error) == op[0]:
        pytest.fail(f"tga.{name} is missing")
    _compare(f"{name}({dtype})", ours, our_error, theirs, their_error)


def _binary_cases():
    for name in BINARY_OPS:
        for d1 in DTYPES:
            for d2 in DTYPES:
                for kind in KINDS:
                    if kind in ("python", "numpy") and d2 in ("int8", "int16", "int32", "uint8", "float16", "float32"):
                        continue  # a Python or NumPy scalar's kind matters, not its width: int64/float64/bool stand for them
                    marks = _known(name, d1, d2) if kind in ("tensor", "0-d") else []
                    yield pytest.param(name, d1, d2, kind, marks=marks)


@pytest.mark.parametrize("name, d1, d2, kind", list(_binary_cases()))
def test_binary_dtype_rules_are_pytorchs(name, d1, d2, kind):
    op = BINARY_OPS[name]
    a, b = _values(d1), _values(d2, shift=1)
    if kind == "numpy" and d2 == "bool":
        b = b.astype(np.bool_)
    theirs, their_error = _call(torch, op, torch.tensor(a), _second(torch, kind, b))
    ours, our_error = _call(tga, op, tga.tensor(a), _second(tga, kind, b))
    if isinstance(our_error, AttributeError) and str(our_error) == op[0]:
        pytest.fail(f"tga.{name} is missing")
    _compare(f"{name}({d1}, {kind} {d2})", ours, our_error, theirs, their_error)
