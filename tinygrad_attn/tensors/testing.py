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

import collections.abc
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ._tensor import Tensor
from .dtypes import finfo, torch_dtype

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


def _compare_arrays(actual: Any, expected: Any, rtol: float | None, atol: float | None, equal_nan: bool,
                    check_dtype: bool, check_device: bool, msg: Any, path: str) -> None:  # fmt: skip
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


def _compare_values(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool, msg: Any, path: str,
                    what: str) -> None:  # fmt: skip
    exact = a.dtype.kind in "biu" and e.dtype.kind in "biu"
    wide = np.complex128 if "c" in (a.dtype.kind, e.dtype.kind) else np.float64
    av, ev = a.astype(wide), e.astype(wide)
    with np.errstate(invalid="ignore", over="ignore"):
        close = (av == ev) | (np.abs(av - ev) <= atol + rtol * np.abs(ev))
        if equal_nan:
            close |= np.isnan(av) & np.isnan(ev)
    if close.all():
        return
    n_bad, n = int((~close).sum()), close.size
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.abs(av - ev)
        rel_diff = abs_diff / np.abs(ev)
    # (NaN compares as the largest difference: where one side is NaN, its place is reported)
    ia = np.unravel_index(int(np.argmax(np.where(np.isnan(abs_diff), np.inf, abs_diff))), close.shape)
    ir = np.unravel_index(int(np.argmax(np.where(np.isnan(rel_diff), np.inf, rel_diff))), close.shape)
    kind = "equal" if exact else "close"
    lines = [f"{what} are not {kind}!", "", f"Mismatched elements: {n_bad} / {n} ({100 * n_bad / n:.1f}%)"]
    if a.ndim == 0:
        lines = [f"{'Scalars' if what == 'Scalars' else what} are not {kind}!", ""]
        lines.append(f"Expected {ev.item()} but got {av.item()}.")
        lines.append(f"Absolute difference: {abs_diff.item()}" + ("" if exact else f" (up to {atol} allowed)"))
        lines.append(f"Relative difference: {rel_diff.item()}" + ("" if exact else f" (up to {rtol} allowed)"))
    else:
        ad, rd = abs_diff[ia].item(), rel_diff[ir].item()
        ad = int(ad) if exact and not math.isnan(ad) and not math.isinf(ad) else ad
        lines.append(f"Greatest absolute difference: {ad} at index {tuple(int(i) for i in ia)}"
                     + ("" if exact else f" (up to {atol} allowed)"))  # fmt: skip
        lines.append(f"Greatest relative difference: {rd} at index {tuple(int(i) for i in ir)}"
                     + ("" if exact else f" (up to {rtol} allowed)"))  # fmt: skip
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
    if isinstance(actual, _NUMBER + (np.number,)) and isinstance(expected, _NUMBER + (np.number,)):
        if check_dtype and type(actual) is not type(expected):
            _fail(msg, f"The (d)types do not match: {type(actual)} != {type(expected)}.", path)
        a, e = np.asarray(actual), np.asarray(expected)
        if rtol is None:
            rtol, atol = _TOLERANCES.get("float64", (0.0, 0.0)) if a.dtype.kind in "fc" else (0.0, 0.0)
        _compare_values(a, e, rtol, atol, equal_nan, msg, path, "Scalars")
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
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'atol' if atol is None else 'rtol'}.")  # fmt: skip
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
