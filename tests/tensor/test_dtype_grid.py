"""The dtype grid: every elementwise op and reduction we share with PyTorch, over every dtype
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


def _values(dtype: str, shift: int = 0) -> np.ndarray:
    if dtype == "bool":
        return np.array([True, False, True, True, False, False])[np.roll(np.arange(6), shift)]
    base = np.array([0, 1, 2, 3, 5, 7]) if dtype == "uint8" else np.array([0, 1, -2, 3, -5, 7])
    return np.roll(base, shift).astype(dtype)


def _call(m, name: str, *args):
    fn = getattr(m, name, None)
    if fn is None:
        return None, AttributeError(name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args), None
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
    t = theirs.detach().double().detach().numpy() if theirs.dtype != torch.bool else theirs.detach().numpy()
    o = np.asarray(ours.tolist(), dtype=t.dtype).reshape(t.shape)
    np.testing.assert_allclose(o, t, rtol=1e-3 if want == "float16" else 1e-6, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_dtype_rules_are_pytorchs(name, dtype):
    if getattr(torch, name, None) is None:
        pytest.fail(f"{name} is not a PyTorch name: remove it from UNARY")
    a = _values(dtype)
    theirs, their_error = _call(torch, name, torch.tensor(a))
    ours, our_error = _call(tga, name, tga.tensor(a))
    if isinstance(our_error, AttributeError) and str(our_error) == name:
        pytest.fail(f"tga.{name} is missing")
    _compare(f"{name}({dtype})", ours, our_error, theirs, their_error)


def _binary_cases():
    for name in BINARY:
        for d1 in DTYPES:
            for d2 in DTYPES:
                for kind in KINDS:
                    if kind in ("python", "numpy") and d2 in ("int8", "int16", "int32", "uint8", "float16", "float32"):
                        continue  # a Python or NumPy scalar's kind matters, not its width: int64/float64/bool stand for them
                    yield name, d1, d2, kind


@pytest.mark.parametrize("name, d1, d2, kind", list(_binary_cases()))
def test_binary_dtype_rules_are_pytorchs(name, d1, d2, kind):
    a, b = _values(d1), _values(d2, shift=1)
    if kind == "numpy" and d2 == "bool":
        b = b.astype(np.bool_)
    theirs, their_error = _call(torch, name, torch.tensor(a), _second(torch, kind, b))
    ours, our_error = _call(tga, name, tga.tensor(a), _second(tga, kind, b))
    if isinstance(our_error, AttributeError) and str(our_error) == name:
        pytest.fail(f"tga.{name} is missing")
    _compare(f"{name}({d1}, {kind} {d2})", ours, our_error, theirs, their_error)
