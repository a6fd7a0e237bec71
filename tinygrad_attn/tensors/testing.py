"""``tga.testing`` (``torch.testing``): :func:`assert_close`, which tests written for PyTorch
call to compare results, and :func:`make_tensor`, which makes their random inputs.

``assert_close(actual, expected)`` compares tensors (and NumPy arrays), Python numbers, and
sequences and mappings of them, item by item: the same type, shape and dtype, then every
element within ``atol + rtol * |expected|``, with the tolerances of the dtype unless given
(both or neither). It raises ``AssertionError`` with PyTorch's report of the mismatch.

>>> import tinygrad_attn as tga
>>> tga.testing.assert_close(tga.tensor([1.0, 2.0]), tga.tensor([1.0, 2.0 + 1e-7]))
>>> x = tga.testing.make_tensor(2, 3, dtype=tga.float32, device="cpu", low=0, high=1)
>>> bool(((x >= 0) & (x < 1)).all())
True
"""

from __future__ import annotations

import cmath
import collections.abc
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ._tensor import Tensor
from .dtypes import finfo, promote_types, torch_dtype

__all__ = ["assert_close", "make_tensor", "assert_allclose"]

#: (rtol, atol) by dtype, PyTorch's defaults: integers and bool compare exactly
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
               "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}  # fmt: skip


def _torch_dtype(dt: np.dtype) -> str:
    return f"torch.{np.dtype(dt).name}"


class _Mismatch(AssertionError):
    pass


def _fail(msg: Any, default: str, path: str) -> None:
    if callable(msg):
        text = msg(default)
    elif msg is not None:
        text = msg
    else:
        text = default + (f"\n\nThe failure occurred for item {path}" if path else "")
    raise _Mismatch(text)


def _host(x: Any) -> np.ndarray:
    return x._read("assert_close") if isinstance(x, Tensor) else np.asarray(x)  # (not numpy(): bfloat16 has none)


def _check_tolerances(rtol: float | None, atol: float | None) -> None:
    """PyTorch's check, made as each pair of tensors or numbers is compared (two bools take none)."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'atol' if atol is None else 'rtol'}.")  # fmt: skip


def _compare_arrays(actual: Any, expected: Any, rtol: float | None, atol: float | None, equal_nan: bool,
                    check_dtype: bool, check_device: bool, msg: Any, path: str) -> None:  # fmt: skip
    _check_tolerances(rtol, atol)
    a, e = _host(actual), _host(expected)
    if a.shape != e.shape:
        _fail(msg, f"The values for attribute 'shape' do not match: torch.Size({list(a.shape)}) != "
                   f"torch.Size({list(e.shape)}).", path)  # fmt: skip
    if (
        check_device
        and isinstance(actual, Tensor)
        and isinstance(expected, Tensor)
        and actual.device != expected.device
    ):
        _fail(msg, f"The values for attribute 'device' do not match: {actual.device} != {expected.device}.", path)
    if check_dtype and a.dtype != e.dtype:
        _fail(msg, f"The values for attribute 'dtype' do not match: {_torch_dtype(a.dtype)} != "
                   f"{_torch_dtype(e.dtype)}.", path)  # fmt: skip
    if rtol is None:
        r1, a1 = _TOLERANCES.get(a.dtype.name, (0.0, 0.0))
        r2, a2 = _TOLERANCES.get(e.dtype.name, (0.0, 0.0))
        rtol, atol = max(r1, r2), max(a1, a2)
    _compare_values(a, e, rtol, atol, equal_nan, msg, path, "Tensor-likes")


def _python(x: np.ndarray) -> Any:
    """A 0-d array's entry as ``Tensor.item()`` gives it: bool, int, float or complex by its kind."""
    kind = x.dtype.kind
    cast = bool if kind == "b" else int if kind in "iu" else complex if kind == "c" else float
    return cast(x.astype(np.complex128 if kind == "c" else np.float64 if kind not in "biu" else x.dtype).item())


def _diff_dtype(a: np.ndarray, e: np.ndarray) -> tuple[np.dtype, np.dtype]:
    """The dtypes PyTorch's report computes the greatest absolute and relative differences in: the
    compared dtype, integers and bool as int64 (then divided as the default float dtype)."""
    if a.dtype.kind in "biu" and e.dtype.kind in "biu":
        return np.dtype(np.int64), np.dtype(np.float32)
    dt = a.dtype if a.dtype == e.dtype else torch_dtype(promote_types(torch_dtype(a.dtype), torch_dtype(e.dtype))).dtype
    return dt, dt


def _mismatch_lines(what: str, equality: bool, extra: str, diffs: list[tuple[str, Any, Any, float]]) -> list[str]:
    """PyTorch's report: the header (``equal`` when both tolerances are 0), ``extra``, then each
    ``(kind, difference, index, tolerance)``, the tolerance shown when one is not 0."""
    lines = [f"{what} are not {'equal' if equality else 'close'}!", "", extra]
    for kind, diff, index, tol in diffs:
        line = (
            f"{kind.title()} difference: {diff}"
            if index is None
            else f"Greatest {kind} difference: {diff} at index {index}"
        )
        lines.append(line + ("" if equality else f" (up to {tol} allowed)"))
    return lines


def _compare_values(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool, msg: Any, path: str,
                    what: str) -> None:  # fmt: skip
    wide = np.complex128 if "c" in (a.dtype.kind, e.dtype.kind) else np.float64
    av, ev = a.astype(wide), e.astype(wide)
    with np.errstate(invalid="ignore", over="ignore"):
        close = (av == ev) | (np.abs(av - ev) <= atol + rtol * np.abs(ev))
        if equal_nan:
            close |= np.isnan(av) & np.isnan(ev)
    if close.all():
        return
    equality = rtol == 0 and atol == 0
    if a.ndim == 0:  # (PyTorch reports a 0-d tensor as two scalars: its ``item()``s)
        _scalar_mismatch(_python(a), _python(e), rtol, atol, msg, path)
    n_bad, n = int((~close).sum()), close.size
    abs_dt, rel_dt = _diff_dtype(a, e)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.where(close, 0, np.abs(av - ev)).astype(abs_dt)
        rel_diff = np.where(close, 0, (abs_diff.astype(wide) / np.abs(ev))).astype(rel_dt)
    # (NaN compares as the largest difference: where one side is NaN, its place is reported)
    diffs = []
    for kind, d, tol in (("absolute", abs_diff, atol), ("relative", rel_diff, rtol)):
        dw = d.astype(np.float64) if d.dtype.kind != "c" else np.abs(d.astype(np.complex128))
        i = np.unravel_index(int(np.argmax(np.where(np.isnan(dw), np.inf, dw))), close.shape)
        diffs.append((kind, _python(d[i]), tuple(int(k) for k in i), tol))
    extra = f"Mismatched elements: {n_bad} / {n} ({100 * n_bad / n:.1f}%)"
    _fail(msg, "\n".join(_mismatch_lines(what, equality, extra, diffs)), path)


def _scalar_mismatch(actual: Any, expected: Any, rtol: float, atol: float, msg: Any, path: str) -> None:
    """PyTorch's report of two numbers that differ (Python's arithmetic on them: ints stay ints)."""
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    diffs = [("absolute", abs_diff, None, atol), ("relative", rel_diff, None, rtol)]
    lines = _mismatch_lines("Scalars", rtol == 0 and atol == 0, f"Expected {expected} but got {actual}.", diffs)
    _fail(msg, "\n".join(lines), path)


_NUMBER = (bool, int, float, complex)


def _compare(actual: Any, expected: Any, rtol: float | None, atol: float | None, equal_nan: bool, check_dtype: bool,
             check_device: bool, allow_subclasses: bool, msg: Any, path: str) -> None:  # fmt: skip
    array_like = (Tensor, np.ndarray)
    if isinstance(actual, array_like) and isinstance(expected, array_like):
        if type(actual) is not type(expected) and not (allow_subclasses and isinstance(actual, type(expected))):
            if not (allow_subclasses and isinstance(expected, type(actual))):
                _fail(msg, f"The (d)types do not match: {type(actual)} != {type(expected)}.", path)
        _compare_arrays(actual, expected, rtol, atol, equal_nan, check_dtype, check_device, msg, path)
        return
    if isinstance(actual, (bool, np.bool_)) and isinstance(expected, (bool, np.bool_)):
        if bool(actual) is not bool(expected):
            _fail(msg, f"Booleans mismatch: {bool(actual)} is not {bool(expected)}", path)
        return
    if isinstance(actual, _NUMBER + (np.number,)) and isinstance(expected, _NUMBER + (np.number,)):
        if isinstance(actual, bool) or isinstance(expected, bool):  # (PyTorch's number pair has no dtype for bool)
            raise RuntimeError(
                f"Originating a NumberPair() at item {path} with\n\n{type(actual).__name__}(): {actual}\n\nand\n\n"
                f"{type(expected).__name__}(): {expected}\n\nresulted in an unexpected exception: a bool has no "
                "number dtype."
            )
        _check_tolerances(rtol, atol)
        actual, expected = (v.item() if isinstance(v, np.number) else v for v in (actual, expected))
        if check_dtype and type(actual) is not type(expected):
            _fail(msg, f"The (d)types do not match: {type(actual)} != {type(expected)}.", path)
        if rtol is None:  # (int64, float64 and complex128's tolerances: the larger of the two)
            rtol, atol = (1e-7, 1e-7) if not (isinstance(actual, int) and isinstance(expected, int)) else (0.0, 0.0)
        if actual == expected or (equal_nan and cmath.isnan(actual) and cmath.isnan(expected)):
            return
        diff = abs(actual - expected)
        if not (cmath.isfinite(diff) and diff <= atol + rtol * abs(expected)):
            _scalar_mismatch(actual, expected, rtol, atol, msg, path)
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            _fail(msg, f"The keys of the mappings do not match:\n{sorted(map(repr, actual))} != "
                       f"{sorted(map(repr, expected))}", path)  # fmt: skip
        for k in actual:
            _compare(actual[k], expected[k], rtol, atol, equal_nan, check_dtype, check_device, allow_subclasses, msg,
                     f"{path}[{k!r}]")  # fmt: skip
        return
    sequence = (collections.abc.Sequence,)
    if isinstance(actual, sequence) and isinstance(expected, sequence) and not isinstance(actual, str):
        if len(actual) != len(expected):
            _fail(msg, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, rtol, atol, equal_nan, check_dtype, check_device, allow_subclasses, msg, f"{path}[{i}]")
        return
    if actual is None and expected is None:
        return
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:  # fmt: skip
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close (see the module);
    ``msg`` (a string, or a function of the default message) replaces the report."""
    try:
        _compare(actual, expected, rtol, atol, equal_nan, check_dtype, check_device, allow_subclasses, msg, "")
    except _Mismatch as e:
        raise AssertionError(str(e)) from None


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:  # fmt: skip
    """The deprecated ``torch.testing.assert_allclose``: :func:`assert_close` without the dtype check."""
    if not isinstance(actual, Tensor):
        actual = Tensor(np.asarray(actual))
    if not isinstance(expected, Tensor):
        expected = Tensor(np.asarray(expected, dtype=actual.dtype))
    if rtol is None and atol is None:
        r1, a1 = _TOLERANCES.get(actual.dtype.name, (0.0, 0.0))
        r2, a2 = _TOLERANCES.get(expected.dtype.name, (0.0, 0.0))
        rtol, atol = max(r1, r2), max(a1, a2)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 msg=msg or None)  # fmt: skip


# -- make_tensor -------------------------------------------------------------------------------
def _bounds(dt: np.dtype, low: Any, high: Any) -> tuple[Any, Any]:
    """``[low, high)`` for ``dt``: the defaults by kind, checked, and clamped to what ``dt`` holds."""
    if dt.kind == "b":
        lowest, highest, d_low, d_high = 0, 2, 0, 2
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        lowest, highest, d_low, d_high = int(info.min), int(info.max) + (dt != np.int64), -9, 10
    else:
        info = finfo(dt)  # (PyTorch's limits: NumPy's finfo has no bfloat16)
        lowest, highest, d_low, d_high = float(info.min), float(info.max), -9, 9
    low = d_low if low is None else low
    high = d_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low >= high and not (low == high and dt.kind in "fc"):
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    if high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but "
                         f"{_torch_dtype(dt)} only supports [{lowest}, {highest})")  # fmt: skip
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    return (math.ceil(low), math.ceil(high)) if dt.kind in "biu" else (low, high)


def make_tensor(*shape: int | Sequence[int], dtype: Any, device: Any, low: float | None = None,
                high: float | None = None, requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format: Any = None) -> Tensor:  # fmt: skip
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)`` (by default
    ``[-9, 9)`` for floats, ``[-9, 10)`` for signed and ``[0, 10)`` for unsigned integers, both
    truth values for bool), as ``torch.testing.make_tensor``: from the global generator, so
    ``tga.manual_seed`` repeats it. ``exclude_zero`` replaces zeros by 1 (integers, bool) or the
    dtype's smallest normal number; ``noncontiguous`` makes it a strided view."""
    from ..tensors.factories.creation import empty, randint  # noqa: PLC0415 - (the factories load after Tensor)

    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = tuple(shape[0])
    dims = tuple(int(s) for s in shape)  # type: ignore[arg-type]
    dt = torch_dtype(dtype)  # (its kind: bfloat16's NumPy one is not 'f')
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")  # fmt: skip
    if requires_grad and dt.kind in "biu":
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={_torch_dtype(dt)}")  # fmt: skip
    if dt.kind not in "biufc":
        raise TypeError(f"The requested dtype '{dtype}' is not supported by make_tensor()")
    noncontiguous = noncontiguous and math.prod(dims) > 1
    drawn_shape = (*dims[:-1], 2 * dims[-1]) if noncontiguous else dims
    low, high = _bounds(dt, low, high)
    if dt.kind in "biu":
        out = randint(low, high, drawn_shape, dtype=dt, device=device)
    elif dt.kind == "c":
        part = np.dtype(np.float32 if dt == np.complex64 else np.float64)
        re, im = (empty(tuple(drawn_shape), dtype=part, device=device) for _ in range(2))
        out = _uniform(re, low, high) + 1j * _uniform(im, low, high)
    else:
        out = _uniform(empty(tuple(drawn_shape), dtype=dt, device=device), low, high)
    if noncontiguous:
        out = out[..., 1::2]
    if exclude_zero:
        tiny = 1 if dt.kind in "biu" else float(finfo(dt).tiny)
        out = out.masked_fill(out == 0, tiny)
    if dt.kind in "fc":
        out = out.detach().requires_grad_(requires_grad)
    return out


def _uniform(t: Tensor, low: float, high: float) -> Tensor:
    """``t`` filled uniformly from ``[low, high)``; a range wider than the dtype's largest
    number is drawn at half the size and doubled, so it never overflows."""
    if high - low >= float(finfo(t.dtype).max):
        return t.uniform_(low / 2, high / 2) * 2
    return t.uniform_(low, high)
