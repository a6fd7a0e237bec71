"""PyTorch's order statistics, counts and summaries: ``median nanmedian quantile nanquantile
mode kthvalue aminmax nansum nanmean count_nonzero cov corrcoef trapezoid cumulative_trapezoid``
and the index computations ``searchsorted bucketize bincount histc unique unique_consecutive isin``.

Order statistics sort and gather the picked entries, so their values carry gradients of every
order; among ties the pick is PyTorch's: ``median``'s index is the tie's position in stable
order, ``kthvalue``'s where PyTorch's quickselect leaves it and ``mode``'s at the end of its
sort's run (:mod:`tinygrad_attn.ops.tie_order` replays both on the host for the slices that
tie), and ``median`` of every entry shares its gradient evenly among the entries equal to it. The counting and searching functions return integers and have
no gradient; they compute on the host (``_host_*`` below), as their results' sizes depend
on the data.
"""

from __future__ import annotations

import builtins
import math
import sys
from typing import Any

import numpy as np

from ... import ops
from ...engine.arguments import ABSENT, int_or_ints
from ...engine.declare import check_dtype, low_precision, public
from ...engine.forward_grads import differentiated
from ...engine.switches import check_host_read, tracing
from ...functional.checks import tensor_arg as _tensor
from ...ops.saved import NotDifferentiable, saved_for_backward, with_gradient_of
from ...ops.tie_order import _sort_under_less, median_index, mode_index, nth_of_equal, select_index, sort_order
from ...runtime.meta_stand_ins import refuse_without_kernel, stand_in
from .._tensor import InvalidArgumentError, Tensor, cat, where
from ..dtypes import result_type, torch_dtype
from ..promotion import float_dtype_of
from ..return_types import structseq
from ..shape import dims
from ..tensor_functions import ValuesIndices, values_indices
from .tensor_reduce import differentiable_dtype

MinMax = structseq("aminmax", ("min", "max"))


def _host(x: Tensor) -> np.ndarray:
    """``x``'s values as a NumPy array on the host (for the index computations); inside a
    trace, a ``TraceError`` naming the line where ``x`` is a value of the program (a replay
    would keep this call's result)."""
    check_host_read(x, sys._getframe(1).f_code.co_name)
    return np.asarray(x._dev.to_host(x._data))


def _on(x: Tensor, a: np.ndarray) -> Tensor:
    return Tensor(np.array(a, copy=True), device=x._dev)


def _stable_sorted(x: Tensor, d: int) -> tuple[Tensor, Tensor]:
    """``x`` sorted along ``d`` (NaN last), stably, and the order."""
    from ..tensor_functions import argsort  # noqa: PLC0415

    idx = argsort(x, dim=d, stable=True)
    return ops.GatherAlong.apply(x, idx, args=(d, x.shape)), idx  # (keeps the indices only, as PyTorch's sort)


def _sorted_as_pytorch(x: Tensor, d: int) -> Tensor:
    """``x`` sorted along ``d`` (NaN last) with equal entries in the order of PyTorch's unstable sort,
    which decides the entries a gradient flows to (the values are those of any sort, so the order
    is worked out only where a gradient is wanted)."""
    if not differentiated(x):
        return _stable_sorted(x, d)[0]
    idx = np.apply_along_axis(sort_order, d, _host(x)) if x.numel() else np.zeros(x.shape, np.int64)
    return ops.GatherAlong.apply(x, _on(x, idx.astype(np.int64)), args=(d, x.shape))


def _pick(x: Tensor, dim: Any, keepdim: bool, op: str, position: Any) -> ValuesIndices:
    """The entry at ``position(n, nan_count)`` of each slice sorted along ``dim``, and its index."""
    if x.ndim == 0:
        dims.one(x.shape, dim, op)
        return values_indices(op, x.clone(), Tensor(np.zeros((), np.int64), device=x._dev))
    d = dims.one(x.shape, dim, op, scalar_ok=False)
    n = x.shape[d]
    if n == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    s, order = _stable_sorted(x, d)
    nans = x.isnan().long().sum(d, keepdim=True) if x.dtype.kind == "f" else None
    pos = position(n, nans)
    if isinstance(pos, int):
        pos = Tensor(np.full(x.shape[:d] + (1,) + x.shape[d + 1 :], pos, np.int64), device=x._dev)
    values, indices = ops.GatherAlong.apply(s, pos, args=(d, s.shape)), order.gather(d, pos)
    if not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return values_indices(op, values, indices)


@public(method=True)
@stand_in()
def median(input: Tensor, dim: Any = dims.NOT_GIVEN, keepdim: bool | None = None) -> Any:  # noqa: A002
    """The lower median (the ``(n - 1) // 2``-th smallest entry; NaN where the slice has one): of every
    entry as a 0-d tensor, or ``(values, indices)`` along ``dim``."""
    x, dim = _tensor(input, "median"), dims.given("median", dim)
    keepdim, given = bool(keepdim), keepdim is not None  # (None: not given)
    if dim is None and given:
        raise TypeError('median() missing 1 required positional arguments: "dim" (keepdim needs a dim)')
    if dim is None:
        return _median_of_all(x, "median", skip_nan=False)
    return _median(x, dim, keepdim, "median", skip_nan=False)


def _median_of_all(x: Tensor, op: str, skip_nan: bool) -> Tensor:
    """``median()``/``nanmedian()`` of every entry, a 0-d tensor whose gradient is PyTorch's: shared
    evenly by the entries equal to it (or by the NaNs, where it is NaN)."""
    if not x.numel():  # (no entries: NaN as the dtype holds it, PyTorch's cast: 0 in int8, True in bool)
        out = Tensor(np.array(np.nan), device=x._dev).to(x.dtype)
    else:
        out = _median(x.reshape(-1), 0, False, op, skip_nan=skip_nan).values.reshape(())
    if x.dtype.kind == "f" and x.numel() and not tracing() and float(out.item()) == 0:
        flat = _host(x).reshape(-1)
        if np.signbit(flat[flat == 0]).any() and (j := median_index(flat, skip_nan)) is not None:
            out = x.detach().reshape(-1)[j]  # (0.0 or -0.0: the one PyTorch's nth_element leaves there)
    if differentiated(x):
        v = out.detach()
        hit = (x == v) | (x.isnan() & v.isnan())
        out = with_gradient_of(out, where(hit, x, 0.0).sum() / hit.sum())
    return saved_for_backward(out, x, output=True)  # (PyTorch's keeps its input and result)


@public(method=True)
@stand_in()
def nanmedian(input: Tensor, dim: Any = dims.NOT_GIVEN, keepdim: bool | None = None) -> Any:  # noqa: A002
    """:func:`median` of the entries that are not NaN (NaN where every entry is)."""
    x, dim = _tensor(input, "nanmedian"), dims.given("nanmedian", dim)
    keepdim, given = bool(keepdim), keepdim is not None
    if dim is None and given:
        raise TypeError('nanmedian() missing 1 required positional arguments: "dim" (keepdim needs a dim)')
    if dim is None:
        return _median_of_all(x, "nanmedian", skip_nan=True)
    return _median(x, dim, keepdim, "nanmedian", skip_nan=True)


def _median(x: Tensor, dim: Any, keepdim: bool, op: str, skip_nan: bool) -> ValuesIndices:
    if not (x.ndim and x.shape[dims.one(x.shape, dim, op, scalar_ok=False)] == 0):
        check_dtype(op, x, "numeric")  # (after PyTorch's answers for no entries: NaN, or its IndexError below)

    def position(n: int, nans: Any) -> Any:
        if nans is None:
            return (n - 1) // 2
        if skip_nan:  # the lower median of the valid entries (an all-NaN slice: the NaN nth_element leaves first)
            return where(nans == n, nth_of_equal(n, 0), ((n - nans - 1) // 2).clamp(0, None))
        return where(nans > 0, n - nans, (n - 1) // 2)  # (a NaN present: the first NaN)

    return _pick(x, dim, keepdim, op, position)


@public(method=True)
@stand_in()
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:  # noqa: A002
    """The ``k``-th smallest entry (1-based) along ``dim`` and its index."""
    x, k = _tensor(input, "kthvalue"), dims.as_int(k)
    n = x.shape[dims.one(x.shape, dim, "kthvalue")] if x.ndim else 1
    if n == 0:  # (PyTorch's check of the dim comes before its checks of k and of the dtype)
        raise IndexError(f"kthvalue(): Expected reduction dim {dims.one(x.shape, dim, 'kthvalue')} to have non-zero "
                         f"size (shape {tuple(x.shape)}).")  # fmt: skip
    if x.ndim:  # (a 0-d tensor is its own k-th value, bool too, as PyTorch's shortcut returns it)
        check_dtype("kthvalue", x, "numeric")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    if x.ndim == 0:
        return _pick(x, dim, keepdim, "kthvalue", lambda n, nans: k - 1)
    d = dims.one(x.shape, dim, "kthvalue")
    index = _selected_as_pytorch(x, d, k - 1, _pick(x, d, True, "kthvalue", lambda n, nans: k - 1).indices)
    values = ops.GatherAlong.apply(x, index, args=(d, x.shape))  # (the gradient goes to the picked entry)
    if not keepdim:
        values, index = values.squeeze(d), index.squeeze(d)
    return values_indices("kthvalue", values, index)


def _selected_as_pytorch(x: Tensor, d: int, k: int, index: Tensor) -> Tensor:
    """``index`` (of the ``k``-th smallest entries along ``d``, kept dim) with each slice whose pick
    is a tie (an equal entry elsewhere, or a NaN) given the index PyTorch's quickselect picks
    (:func:`~tinygrad_attn.ops.tie_order.select_index`): the index returned, and where the gradient goes."""
    picked = x.detach().gather(d, index)
    tied = ((x.detach() == picked) | (x.detach().isnan() & picked.isnan())).sum(d, keepdim=True) > 1
    if not bool(tied.any().item()):
        return index
    rows = np.moveaxis(_host(x), d, -1)
    out = np.moveaxis(_host(index), d, -1).copy()
    tied = np.moveaxis(_host(tied), d, -1)[..., 0]
    for at in np.ndindex(tied.shape):
        if tied[at]:
            out[at] = select_index(rows[at], k)
    return _on(x, np.moveaxis(out, -1, d))


@public(method=True)
@stand_in()
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> ValuesIndices:  # noqa: A002
    """The most frequent entry along ``dim`` (the smallest of equally frequent ones) and the index of
    its last occurrence."""
    x = _tensor(input, "mode")
    if x.ndim == 0:
        return _pick(x, dim, keepdim, "mode", lambda n, nans: 0)
    d = dims.one(x.shape, dim, "mode", scalar_ok=False)
    a = np.moveaxis(_host(x), d, -1)
    if a.shape[-1] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size (shape {tuple(x.shape)}).")
    flat = a.reshape(-1, a.shape[-1])
    out = np.array([mode_index(row) for row in flat], np.int64).reshape(flat.shape[0])
    idx = np.moveaxis(out.reshape(a.shape[:-1] + (1,)), -1, d)
    index = _on(x, idx)
    values = ops.GatherAlong.apply(x, index, args=(d, x.shape))
    if not keepdim:
        values, index = values.squeeze(d), index.squeeze(d)
    return values_indices("mode", values, index)


# -- quantiles -------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


@public(method=True, dtypes="float3264")
@stand_in()
def quantile(input: Tensor, q: Tensor | float, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
             interpolation: str = "linear") -> Tensor:  # fmt: skip
    """The ``q``-th quantiles (``q`` a float or a 1-D tensor in ``[0, 1]``) of every entry or along
    ``dim``, between sorted entries as ``interpolation`` says; NaN where a slice has a NaN. A 1-D ``q``
    puts its axis first."""
    return _quantile(_tensor(input, "quantile"), q, dim, keepdim, interpolation, "quantile", skip_nan=False)


@public(method=True, dtypes="float3264")
@stand_in()
def nanquantile(input: Tensor, q: Tensor | float, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
                interpolation: str = "linear") -> Tensor:  # fmt: skip
    """:func:`quantile` of the entries that are not NaN (NaN where every entry is)."""
    return _quantile(_tensor(input, "nanquantile"), q, dim, keepdim, interpolation, "nanquantile", skip_nan=True)


def _quantile(x: Tensor, q: Any, dim: Any, keepdim: bool, interpolation: str, op: str, skip_nan: bool) -> Tensor:
    # (PyTorch's checks, in its order)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")  # fmt: skip
    if not isinstance(q, Tensor) and not 0 <= float(q) <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {float(q)}")
    if x.numel() == 0:  # (along a dim too, whatever its length)
        raise RuntimeError(f"quantile() input tensor must be non-empty ({op} of shape {tuple(x.shape)})")
    scalar_q = not isinstance(q, Tensor) or q.ndim == 0
    if isinstance(q, Tensor) and q.ndim > 1:
        raise RuntimeError(f"quantile() q must be a scalar or 1D tensor (got shape {tuple(q.shape)})")
    if x.dtype.kind != "f":
        raise RuntimeError(f"quantile() input tensor must be either float or double dtype (got {x.dtype})")
    if isinstance(q, Tensor) and q.dtype != x.dtype:
        raise RuntimeError(f"quantile() q tensor must be same dtype as the input tensor (q {q.dtype}, input {x.dtype})")
    qs = np.atleast_1d(_host(q) if isinstance(q, Tensor) else np.asarray(q, dtype=np.float64)).astype(np.float64)
    if ((qs < 0) | (qs > 1)).any():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if not qs.size:  # (no quantiles: the result's shape, with its axis of none first)
        return _quantile(x, x.new_zeros((1,)), dim, keepdim, interpolation, op, skip_nan)[:0]
    orig_nd = x.ndim
    if dim is None:
        x, d = x.reshape(-1), 0
    else:
        d = dims.one(x.shape, dim, op)
        if x.ndim == 0:
            x = x.reshape(1)
    n = x.shape[d]
    s = _sorted_as_pytorch(x, d)  # (as PyTorch's quantile: its unstable sort)
    nans = x.isnan().long().sum(d, keepdim=True)  # (..., 1, ...)
    valid = (n - nans) if skip_nan else Tensor(np.full(nans.shape, n, np.int64), device=x._dev)
    outs = []
    for qv in qs:
        rank = (valid - 1).astype(np.float64) * float(qv)  # (an all-NaN slice gives a negative rank: its NaN)
        rank = rank.clamp(0, None)
        if not skip_nan:  # (a slice with a NaN: its last sorted entry, a NaN, takes the gradient, as PyTorch's)
            rank = where(nans > 0, float(n - 1), rank)
        if interpolation == "lower":
            rank = rank.floor()
        elif interpolation == "higher":
            rank = rank.ceil()
        elif interpolation == "nearest":
            rank = rank.round()  # (half to even, as PyTorch's)
        lo = rank.floor().long()
        hi = rank.ceil().long().clamp(None, n - 1)
        vlo, vhi = s.gather(d, lo), s.gather(d, hi)
        w = (rank - lo.astype(np.float64)).astype(x.dtype)
        if interpolation == "midpoint":  # (0.5 even between equal ranks, as PyTorch's: -0.0 stays, inf gives NaN)
            w = w * 0 + 0.5
        val = where(w < 0.5, vlo + w * (vhi - vlo), vhi - (vhi - vlo) * (1.0 - w))  # (PyTorch's lerp)
        if interpolation in ("lower", "higher", "nearest"):
            val = vlo
        outs.append(val)
    out = cat([o.unsqueeze(0) for o in outs], 0)  # (Q, ..., 1, ...)
    if keepdim:
        if dim is None or orig_nd == 0:  # (a 0-d input keeps its no axes)
            out = out.reshape((len(qs),) + (1,) * orig_nd)
    else:
        out = out.squeeze(d + 1)
    return out[0] if scalar_q else out


# -- reductions ------------------------------------------------------------------------
@public(method=True)
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> MinMax:  # noqa: A002
    """``(amin, amax)`` of every entry or along ``dim``."""
    x = _tensor(input, "aminmax")
    if isinstance(dim, (list, tuple)):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim is None and x.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.")  # fmt: skip
    kw = {} if dim is None else {"dim": dim}
    if dim is not None and x.ndim and x.shape[dims.one(x.shape, dim, "aminmax")] == 0:
        raise IndexError(f"aminmax(): Expected reduction dim {dim} to have non-zero size (shape {tuple(x.shape)}).")
    if dim is None and keepdim:
        return MinMax(x.amin().reshape((1,) * x.ndim), x.amax().reshape((1,) * x.ndim))
    return MinMax(x.amin(keepdim=keepdim, **kw), x.amax(keepdim=keepdim, **kw))


@public(method=True)
def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """The sum of the entries that are not NaN."""
    x = _tensor(input, "nansum")
    if dtype is not None:
        differentiable_dtype(x, torch_dtype(dtype))
    if x.dtype.kind == "f":
        x = where(x.isnan(), 0.0, x)
    out = x.sum(dim, keepdim) if dim is not None else (x.sum().reshape((1,) * x.ndim) if keepdim else x.sum())
    out = out if dtype is None else out.astype(dtype)
    return saved_for_backward(out, input)  # (PyTorch's keeps its input)


@public(method=True)
def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """The mean of the entries that are not NaN (NaN where none is)."""
    x = _tensor(input, "nanmean")
    if x.dtype.kind != "f":
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got {x.dtype}")
    if dtype is not None and torch_dtype(dtype).kind not in "fc":
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {torch_dtype(dtype)}")  # fmt: skip
    keep = ~x.isnan()
    out = nansum(x, dim, keepdim, dtype=dtype) / nansum(keep.astype(x.dtype), dim, keepdim)
    if dtype is not None and out.dtype != torch_dtype(dtype):  # (the count promoted it back)
        out = out.astype(torch_dtype(dtype))
    return saved_for_backward(out, x)


@public(method=True)
def count_nonzero(input: Tensor, dim: Any = None, *dims: int) -> Tensor:  # noqa: A002
    """The number of non-zero entries, of all or along ``dim`` (an int or a tuple; PyTorch's method
    takes the dims one by one too: ``x.count_nonzero(1, 0)``), as int64."""
    if dims:
        dim = (dim, *dims)
    x = _tensor(input, "count_nonzero")
    nz = (x != 0).astype(np.int64)
    return nz.sum() if dim is None else nz.sum(dim)


# -- covariance ------------------------------------------------------------------------
@public(method=True, dtypes="not_bool")
def cov(
    input: Tensor, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None
) -> Tensor:  # noqa: A002
    """The covariance matrix of the variables in the rows of ``input`` (observations in the columns);
    a 1-D ``input`` is one variable. ``fweights`` (integer repeats) and ``aweights`` weigh the observations.
    Of complex variables, ``E[(x - mean) conj(y - mean)]``, as PyTorch's."""
    x = _tensor(input, "cov")
    if x.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {x.ndim} dimensions")  # fmt: skip
    refuse_without_kernel("aten::equal", input, fweights, aweights)  # (PyTorch's cov compares with equal)
    if x.ndim < 2:
        x = x.reshape(1, -1)
    if x.dtype.kind not in "fc":
        x = x.astype(float_dtype_of(x.dtype))
    n = x.shape[1]
    w = None
    for name, wt in (("fweights", fweights), ("aweights", aweights)):
        if wt is not None:
            _check_cov_weights(name, wt, n)
    # the weights in their own promoted dtype (float32 aweights sum in float32 even for a float64
    # input, as PyTorch's), meeting the input's only where they multiply it
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1, keepdim=True)
        wsum = float(n)
        norm = wsum - correction
        xc = x - avg
        c = xc @ xc.t().conj()  # (PyTorch's steps: mm of the transpose's conjugate, TBackward0)
    else:
        wsum_t = w.sum()
        avg = (x * w).sum(1, keepdim=True) / wsum_t
        if correction == 0:
            norm_t = wsum_t
        elif aweights is None:
            norm_t = wsum_t - correction
        else:
            norm_t = wsum_t - correction * (w * aweights).sum() / wsum_t
        xc = x - avg
        c = xc @ (xc * w).t().conj()
        norm_t = norm_t.clamp(0, None)
        return (c / norm_t).squeeze()  # (PyTorch's squeeze of every axis: one variable is a 0-d tensor)
    out = c / float(builtins.max(norm, 0))  # (no degrees of freedom left: inf and NaN, as PyTorch)
    return out.squeeze()  # (PyTorch's squeeze of every axis: one variable is a 0-d tensor)


def _check_cov_weights(name: str, w: Tensor, n: int) -> None:
    """PyTorch's checks of ``cov``'s observation weights: a vector of ``n`` non-negative entries,
    integers for ``fweights``, floats for ``aweights``."""
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {w.ndim} dimensions")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {n}")  # fmt: skip
    if name == "fweights" and w.dtype.kind not in "iu":
        raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with {w.dtype} dtype")
    if name == "aweights" and w.dtype.kind != "f":
        raise RuntimeError(
            f"cov(): expected aweights to have floating point dtype but got aweights with {w.dtype} dtype"
        )
    if n and not tracing() and bool((w < 0).any()):  # (a check, not a decision a traced program would keep)
        raise RuntimeError(f"cov(): {name} cannot be negative")


@public(method=True, dtypes="not_bool")
def corrcoef(input: Tensor) -> Tensor:  # noqa: A002
    """The Pearson correlation coefficients of the variables in the rows of ``input``, clipped to ``[-1, 1]``
    (of complex variables: their real and imaginary parts each, as PyTorch's)."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    sd = (d.real if d.dtype.kind == "c" else d).sqrt()
    c = c / sd.reshape(-1, 1)
    c = c / sd.reshape(1, -1)
    if c.dtype.kind == "c":
        from ..elementwise.complex_numbers import complex_  # noqa: PLC0415

        return complex_(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


# -- integration -----------------------------------------------------------------------
def _spacing(y: Tensor, x: Any, dx: Any, d: int, op: str) -> Any:
    if x is not ABSENT and dx is not ABSENT:
        raise RuntimeError(f"{op}: received both x and dx")
    if x is ABSENT:
        return 1.0 if dx is ABSENT else dx
    x = _tensor(x, op)
    if x.ndim == 1:
        shape = [1] * y.ndim
        shape[d] = -1
        return x.diff().reshape(shape) if x.shape[0] else x
    return x.diff(dim=d)


@public(aliases=("trapz",), dtypes="numeric", operands=("y", "x"))
def trapezoid(y: Tensor, x: Tensor = ABSENT, *, dx: float = ABSENT, dim: int = -1) -> Tensor:
    """The integral of ``y`` along ``dim`` by the trapezoid rule, at points ``x`` or spaced ``dx`` (1)."""
    y = _tensor(y, "trapezoid")
    d = dims.one(y.shape, dim, "trapezoid", scalar_ok=False)
    lead = (slice(None),) * d
    if y.shape[d] == 0:
        return y.sum(d)
    h = _spacing(y, x, dx, d, "trapezoid")
    mids = (y[lead + (slice(1, None),)] + y[lead + (slice(None, -1),)]) * h
    return mids.sum(d) / 2.0


trapz = trapezoid


@public(dtypes="numeric", operands=("y", "x"))
def cumulative_trapezoid(y: Tensor, x: Tensor = ABSENT, *, dx: float = ABSENT, dim: int = -1) -> Tensor:
    """The running integrals of :func:`trapezoid` (one fewer than ``y``'s points along ``dim``)."""
    y = _tensor(y, "cumulative_trapezoid")
    d = dims.one(y.shape, dim, "cumulative_trapezoid", scalar_ok=False)
    lead = (slice(None),) * d
    h = _spacing(y, x, dx, d, "cumulative_trapezoid")
    mids = (y[lead + (slice(1, None),)] + y[lead + (slice(None, -1),)]) * h / 2.0
    return mids.cumsum(d)


@public(dtypes=("int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128"))
def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple[Tensor, ...]:  # noqa: A002
    """The derivative of ``input`` estimated along each of ``dim`` (every axis by default) by
    central differences, one-sided at the ends (first or second order, ``edge_order``): NumPy's
    and PyTorch's ``gradient``. ``spacing``: a number or one per axis (equal steps), or one 1-D
    tensor of coordinates per axis. Differentiable (a composite of slices)."""
    x = _tensor(input, "gradient")
    if x.dtype.kind not in "fc":
        x = x.astype(_default_float())
    axes = list(range(x.ndim)) if dim is None else [dim] if isinstance(dim, (int, np.integer)) else list(dim)
    axes = [dims.one(x.shape, a, "gradient", scalar_ok=False) for a in axes]
    if len(set(axes)) != len(axes):
        twice = next(a for a in axes if axes.count(a) > 1)
        raise InvalidArgumentError(f"gradient: dim {twice} appears multiple times in the list of dims {dim}")
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}")
    if isinstance(spacing, Tensor) and spacing.ndim == 0:  # (one step for every axis, as a number: PyTorch's)
        spacing = spacing.item()
    if isinstance(spacing, (list, tuple)):
        steps = list(spacing)
        if len(steps) != len(axes):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                               f"dim arguments to have the same length, but got a spacing argument of length "
                               f"{len(steps)} and a dim argument of length {len(axes)}.")  # fmt: skip
    else:
        steps = [1 if spacing is None else spacing] * len(axes)
    out = []
    for d, h in zip(axes, steps):
        if x.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
        out.append(_derivative_along(x, d, h, edge_order))
    return tuple(out)


def _default_float() -> Any:
    from ..dtypes import get_default_dtype  # noqa: PLC0415

    return get_default_dtype()


def _derivative_along(f: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    """One axis of :func:`gradient`: equal steps ``h`` (a number) or coordinates (a 1-D tensor)."""
    n = f.shape[d]
    lead = (slice(None),) * d

    def at(a: int | None, b: int | None) -> Tensor:
        return f[lead + (slice(a, b),)]

    if not isinstance(h, Tensor):
        h = h.item() if hasattr(h, "item") else h
        mid = (at(2, None) - at(None, -2)) / (2.0 * h)
        if edge_order == 1:
            first, last = (at(1, 2) - at(0, 1)) / h, (at(n - 1, n) - at(n - 2, n - 1)) / h
        else:
            first = (at(0, 1) * -1.5 + at(1, 2) * 2.0 - at(2, 3) * 0.5) / h
            last = (at(n - 3, n - 2) * 0.5 - at(n - 2, n - 1) * 2.0 + at(n - 1, n) * 1.5) / h
        return cat([first, mid, last], d)
    if h.ndim != 1 or h.shape[0] != n:
        raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, and the coordinates of "
                           f"dimension {d} to be 1-D of length {n}, got shape {tuple(h.shape)}")  # fmt: skip
    shape = [1] * f.ndim
    shape[d] = -1
    # PyTorch's coefficients (its gradient_helper), each step an op in the dtype (in float16 the rounding of
    # another arrangement of the same formula differed from PyTorch's by hundreds of units where it cancels)
    dx = h.diff().astype(f.dtype)  # (n - 1,) steps along d
    dx1, dx2 = dx[:-1], dx[1:]  # the steps left and right of each inner point
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    mid = a * at(None, -2) + b * at(1, -1) + c * at(2, None)
    if edge_order == 1:
        first = (at(1, 2) - at(0, 1)) / dx[0]
        last = (at(n - 1, n) - at(n - 2, n - 1)) / dx[n - 2]
    else:
        a1, a2 = dx[0], dx[1]
        first = (-(2.0 * a1 + a2) / (a1 * (a1 + a2)) * at(0, 1) + (a1 + a2) / (a1 * a2) * at(1, 2)
                 + -a1 / (a2 * (a1 + a2)) * at(2, 3))  # fmt: skip
        b2, b1 = dx[n - 2], dx[n - 3]  # (the last step and the one before)
        last = (b2 / (b1 * (b2 + b1)) * at(n - 3, n - 2) + -(b2 + b1) / (b2 * b1) * at(n - 2, n - 1)
                + (2.0 * b2 + b1) / (b2 * (b2 + b1)) * at(n - 1, n))  # fmt: skip
    return cat([first, mid, last], d)


# -- searching and counting (no gradient) ----------------------------------------------
@public()
@stand_in()
def searchsorted(sorted_sequence: Tensor, input: Tensor | float, *, out_int32: bool = False, right: bool = False,  # noqa: A002
                 side: str | None = None, sorter: Tensor | None = None) -> Tensor:  # fmt: skip
    """The positions at which the entries of ``input`` would be inserted into ``sorted_sequence`` (1-D,
    or sorted along its last axis with ``input``'s leading axes) to keep it sorted: before equal entries,
    or after them with ``right=True`` / ``side='right'``."""
    seq = _tensor(sorted_sequence, "searchsorted")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")  # fmt: skip
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    vals = _host(input) if not scalar else np.asarray(input)
    if vals.size:  # (a bool sequence has no kernel; with no value to place PyTorch returns before looking)
        check_dtype("searchsorted", seq, "numeric")
    s = _host(seq)
    if sorter is not None:
        s = np.take_along_axis(s, _host(sorter), -1)
    # (both compared in their common dtype, as PyTorch's: -1 placed among uint8 boundaries is 255)
    common = np.dtype(result_type(seq, input))
    s, vals = s.astype(common, copy=False), vals.astype(common)
    if s.ndim == 1:
        out = _binary_search_host(np.broadcast_to(s, (*vals.shape, s.shape[-1])), vals, right)
    else:
        if vals.ndim != s.ndim or vals.shape[:-1] != s.shape[:-1]:
            raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                               "dimensions of boundaries tensor and input value tensor must match, but we got "
                               f"boundaries tensor {list(s.shape)} and input value tensor {list(vals.shape)}")  # fmt: skip
        out = _binary_search_host(np.broadcast_to(s[..., None, :], (*vals.shape, s.shape[-1])), vals, right)
    out = np.asarray(out, np.int32 if out_int32 else np.int64)
    return _on(seq, out)


def _binary_search_host(rows: np.ndarray, vals: np.ndarray, right: bool) -> np.ndarray:
    """For each value, the position PyTorch's binary search finds in its row (``rows[..., i, :]``
    for ``vals[..., i]``): the first entry not below it (``right``: above it), where a comparison
    with NaN is false, so a NaN in the sequence or among the values lands where PyTorch's does
    (NumPy's searchsorted orders NaN last instead)."""
    n = rows.shape[-1]
    lo = np.zeros(vals.shape, np.int64)
    hi = np.full(vals.shape, n, np.int64)
    with np.errstate(invalid="ignore"):
        while (live := lo < hi).any():
            mid = (lo + hi) // 2
            m = np.take_along_axis(rows, np.minimum(mid, n - 1)[..., None], -1)[..., 0]
            later = ~(m > vals) if right else ~(m >= vals)
            lo = np.where(live & later, mid + 1, lo)
            hi = np.where(live & ~later, mid, hi)
    return lo


@public(dtypes="numeric", operands=("input", "boundaries"))
def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:  # noqa: A002
    """The bucket of each entry of ``input`` among the sorted 1-D ``boundaries``: ``i`` with
    ``boundaries[i-1] < x <= boundaries[i]`` (``right=True``: ``boundaries[i-1] <= x < boundaries[i]``)."""
    b = _tensor(boundaries, "bucketize")
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    return searchsorted(b, input, out_int32=out_int32, right=right)


@public(method=True, dtypes=("uint8", "int8", "int16", "int32", "int64"))
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:  # noqa: A002
    """How often each value ``0 ... max`` occurs in the non-negative 1-D integer ``input`` (at least
    ``minlength`` counts), or the sum of ``weights`` at each value."""
    x = _tensor(input, "bincount")
    if x.dtype.kind not in "iub":  # (PyTorch's NotImplementedError: no kernel for the dtype)
        raise NotImplementedError(f"bincount: not implemented for {x.dtype}; it counts non-negative integers")
    if x.ndim != 1:
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs, got shape {tuple(x.shape)}")
    a = _host(x).astype(np.int64)
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if not a.size:  # (PyTorch's empty bincount is int64 zeros, weights or not, before it reads them)
        return _on(x, np.zeros(minlength, dtype=np.int64))
    if weights is None:
        return _on(x, np.bincount(a, minlength=minlength).astype(np.int64))
    w = _tensor(weights, "bincount")
    if w.shape != x.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    # (PyTorch's weighted counts are float32 for float32 weights, float64 for all others, float16 too)
    dtype = w.dtype if w.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    counts = _on(x, np.bincount(a, weights=_host(w).astype(np.float64), minlength=minlength).astype(dtype))
    return not_differentiable("bincount", counts, w)


def not_differentiable(op: str, out: Tensor, *of: Any) -> Tensor:
    """``out`` of ``op``, which PyTorch gives no derivative: in the graph of those of the tensors
    ``of`` that require grad (so it requires grad too, as PyTorch's), with a backward that raises
    PyTorch's error."""
    kept = [t for t in of if isinstance(t, Tensor) and t.requires_grad]
    return NotDifferentiable.apply(out, *kept, args=op) if kept and out.dtype.kind in "fc" else out


@public(method=True, dtypes="floating")
@stand_in()
def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """A histogram of ``input`` in ``bins`` equal bins over ``[min, max]`` (the data's range where both
    are 0); entries outside are not counted."""
    x = _tensor(input, "histc")
    if x.dtype.kind != "f":
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, got {x.dtype}")
    if bins <= 0:
        raise RuntimeError("bins must be > 0")
    a = _host(x).reshape(-1)
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("max must be larger than min")
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"range of [{lo}, {hi}] is not finite")
    keep = a[(a >= lo) & (a <= hi)].astype(np.float64)
    pos = ((keep - lo) * bins / (hi - lo)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)  # (the right edge falls in the last bin)
    return _on(x, np.bincount(pos, minlength=bins).astype(x.dtype))


@public(method=True)
def hash_tensor(input: Tensor, dim: Any = (), *, keepdim: bool = False, mode: int = 0) -> Tensor:  # noqa: A002
    """A uint64 fingerprint of the elements (over ``dim``, every axis by default): each widened to
    float64 or int64, its 64 bits read as an integer, all combined by xor (``mode=0``, PyTorch's only
    one). Computed on the host; no gradient."""
    x = _tensor(input, "hash_tensor")
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    every = dim is None or (not isinstance(dim, int) and len(dim) == 0)
    axes = tuple(range(x.ndim)) if every else dims.axes(x.shape, dim, "hash_tensor")
    if every and x.numel() == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")  # fmt: skip
    for a in axes:
        if x.shape[a] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {a} to have non-zero size.")
    a = _host(x)
    wide = a.astype(np.float64) if x.dtype.kind == "f" else a.astype(np.int64)  # (the library's kind: bfloat16 is 'f')
    out = np.bitwise_xor.reduce(wide.view(np.uint64), axis=axes, keepdims=keepdim) if axes else wide.view(np.uint64)
    return _on(x, np.asarray(out, dtype=np.uint64))


Histogram = structseq("histogram", ("hist", "bin_edges"))
HistogramDD = structseq("histogramdd", ("hist", "bin_edges"))


@public(method=True, dtypes="floating")
def histogram(input: Tensor, bins: Tensor | int = 100, *, range: Any = None, weight: Tensor | None = None,  # noqa: A002
              density: bool = False) -> Histogram:  # fmt: skip
    """A histogram of ``input``'s values: ``bins`` equal bins over ``range`` (the data's by default),
    or the bins between the edges of a 1-D tensor ``bins``; each bin holds its left edge, the last
    one its right edge too; values outside (and NaN) are not counted. ``weight`` counts each entry
    that much; ``density`` divides by the total and the bin widths. Returns ``(hist, bin_edges)``.

    >>> tga.histogram(tga.tensor([1.0, 2.0, 1.0]), 2).hist  # doctest: +SKIP
    Tensor([2., 1.], dtype=float32)
    """
    x = _tensor(input, "histogram")
    if isinstance(bins, (float, np.floating)):  # (PyTorch's bins: a count, the edges, never a float)
        raise TypeError(f"histogram(): bins must be an int or a 1-D tensor of edges, not {type(bins).__name__} {bins}")
    if low_precision(x) and x.numel() and range is None and not isinstance(bins, Tensor):
        # (PyTorch's float16 and bfloat16 histogram needs its bins' edges: given, from a range, or (empty) 0 to 1)
        check_dtype("histogramdd", x, "float3264")
    r = None if range is None else [float(v) for v in range]
    edges = bins if isinstance(bins, Tensor) else int(bins)
    hist, out_edges = _histogramdd(x.reshape(-1, 1), [edges], r, weight, density, "histogram")
    return Histogram(*(not_differentiable("histogram", t, x, weight) for t in (hist, out_edges[0])))


@public(dtypes="floating")
def histogramdd(input: Tensor, bins: Any, *, range: Any = None, weight: Tensor | None = None,  # noqa: A002
                density: bool = False) -> Histogram:  # fmt: skip
    """The histogram of the points ``input (..., D)`` in ``D`` dimensions: ``bins`` an int (per
    dimension), a list of ints, or a list of 1-D tensors of edges; ``range`` ``[min0, max0, min1,
    ...]``. Returns ``(hist, bin_edges)`` with ``D`` edge tensors, each bin as :func:`histogram`'s."""
    x = _tensor(input, "histogramdd")
    if low_precision(x) and x.numel() and range is None and not (isinstance(bins, (list, tuple)) and bins
                                                        and all(isinstance(b, Tensor) for b in bins)):  # fmt: skip
        check_dtype("histogramdd", x, "float3264")  # (as histogram: float16 takes given edges or a range)
    if x.ndim < 1:
        raise RuntimeError(
            f"torch.histogramdd: input tensor should have at least 1 dimension, got shape {tuple(x.shape)}"
        )
    n_dims = x.shape[-1]
    bins = int_or_ints(bins)  # (counts given as NumPy integers or one-element tensors are counts)
    if not isinstance(bins, (int, list, tuple)):  # (PyTorch's overloads: an int, int[] or Tensor[])
        raise TypeError(
            f"histogramdd(): bins must be an int, a list of ints or a list of tensors, not {type(bins).__name__}"
        )
    per_dim = [bins] * n_dims if isinstance(bins, int) else list(bins)
    if len(per_dim) != n_dims:
        raise RuntimeError(f"torch.histogramdd: expected {n_dims} sequences of bin edges for each dimension, "
                           f"but got {len(per_dim)}")  # fmt: skip
    r = None if range is None else [float(v) for v in range]
    return HistogramDD(*_histogramdd(x.reshape(-1, n_dims), per_dim, r, weight, density, "histogramdd"))


def _evenly_spaced(lo: float, hi: float, n: int, dtype: np.dtype) -> np.ndarray:
    """``n`` points from ``lo`` to ``hi`` computed in ``dtype`` as PyTorch's ``linspace`` kernel does:
    the first half counted up from ``lo``, the second down from ``hi`` (so both ends are exact)."""
    t = np.dtype(dtype).type
    step = (t(hi) - t(lo)) / t(n - 1)
    i = np.arange(n)
    return np.where(i < n // 2, t(lo) + step * i.astype(dtype), t(hi) - step * (n - 1 - i).astype(dtype)).astype(dtype)


def _histogramdd(x: Tensor, bins: list, r: list | None, weight: Tensor | None, density: bool,
                 op: str) -> tuple[Tensor, tuple[Tensor, ...]]:  # fmt: skip
    """The histogram of the rows of ``x (n, D)``, computed on the host (its edges as PyTorch's: a
    ``linspace`` in the input's dtype; a value on an inner edge falls in the bin to its right)."""
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{x.dtype}' ({op} of a {x.dtype} tensor)")
    n, n_dims = x.shape
    if r is not None and len(r) != 2 * n_dims:
        raise RuntimeError(f"torch.{op}: expected {2 * n_dims} values for range, got {len(r)}")
    pts = _host(x).astype(np.float64)
    edges: list[Tensor] = []
    for k, b in enumerate(bins):
        if isinstance(b, Tensor):
            if b.ndim != 1 or b.dtype != x.dtype:
                raise RuntimeError(f"torch.{op}: bins tensor should be 1-D and of the input's dtype {x.dtype}, got "
                                   f"shape {tuple(b.shape)}, {b.dtype}")  # fmt: skip
            if b.shape[0] == 0:
                raise RuntimeError(f"torch.{op}: bins tensor should have at least 1 element, but got 0 elements")
            edges.append(b.detach())
            continue
        if int(b) <= 0:
            raise RuntimeError(f"torch.{op}: number of bins should be positive, but got {b}")
        if r is not None:
            lo, hi = r[2 * k], r[2 * k + 1]
        elif n:
            with np.errstate(invalid="ignore"):
                lo, hi = float(pts[:, k].min()), float(pts[:, k].max())
        else:
            lo, hi = 0.0, 1.0
        if lo > hi:
            raise RuntimeError(
                f"torch.{op}: min should not exceed max, but got min {lo:g} max {hi:g} for dimension {k}"
            )
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.{op}: dimension {k}'s range [{lo:g}, {hi:g}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges.append(_on(x, _evenly_spaced(lo, hi, int(b) + 1, x.dtype)))
    counts = [e.shape[0] - 1 for e in edges]
    keep = np.ones(n, dtype=bool)
    flat = np.zeros(n, dtype=np.int64)
    for k, e in enumerate(edges):
        ek = _host(e).astype(np.float64)
        v = pts[:, k]
        with np.errstate(invalid="ignore"):
            keep &= (v >= ek[0]) & (v <= ek[-1])
        pos = np.clip(np.searchsorted(ek, v, side="right") - 1, 0, builtins.max(counts[k] - 1, 0))
        flat = flat * builtins.max(counts[k], 1) + pos
    w = None
    if weight is not None:
        w = _host(weight).reshape(-1).astype(np.float64)
        if w.shape[0] != n:
            raise RuntimeError(f"torch.{op}: if weight tensor is provided it should have the same shape as the input "
                               f"tensor excluding its innermost dimension, got {tuple(weight.shape)}")  # fmt: skip
        w = w[keep]
    total = math.prod(counts)
    hist = np.bincount(flat[keep], weights=w, minlength=total)[:total].astype(np.float64).reshape(counts)
    if density:
        widths = [np.diff(_host(e).astype(np.float64)) for e in edges]
        volume = widths[0]
        for wk in widths[1:]:
            volume = np.multiply.outer(volume, wk)
        with np.errstate(divide="ignore", invalid="ignore"):
            hist = hist / hist.sum() / volume
    return _on(x, hist.astype(x.dtype)), tuple(edges)


@public
def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim: int | None = None) -> Any:  # fmt: skip
    """The distinct entries of ``input``, sorted (along ``dim``: the distinct slices); with
    ``return_inverse`` each entry's position among them, with ``return_counts`` how often each occurs."""
    x = _tensor(input, "unique")
    a = _host(x)
    if dim is None:
        if a.dtype.kind == "f":  # (NaNs, and 0.0 against -0.0: where PyTorch's sort leaves them decides)
            vals, inv, counts = _unique_flat(a.reshape(-1))
        else:
            vals, inv, counts = np.unique(a.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(a.shape)
    else:
        d = dims.one(x.shape, dim, "unique", scalar_ok=False)
        _check_empty_slices(x.shape, d, "unique")
        found = _unique_slices_with_nan(a, d) if a.dtype.kind in "fc" and np.isnan(a).any() else None
        if found is None:
            vals, inv, counts = np.unique(a, return_inverse=True, return_counts=True, axis=d)
        else:
            vals, inv, counts = found
        inv = inv.reshape(-1)
    return _unique_result(x, vals, inv, counts, return_inverse, return_counts)


def _check_empty_slices(shape: tuple, d: int, op: str) -> None:
    """PyTorch's errors for the unique slices along ``d`` of an empty tensor: one empty dim, and
    it ``d`` (an empty dim elsewhere leaves slices it cannot compare)."""
    if 0 not in shape:
        return
    if shape.count(0) > 1:
        raise RuntimeError(f"Number of zero sized dimensions is more than one, so unique cannot be applied "
                           f"({op} along dim {d} of shape {tuple(shape)})")  # fmt: skip
    if shape[d] != 0:
        raise RuntimeError(f"There are 0 sized dimensions, and they aren't selected, so unique cannot be applied "
                           f"({op} along dim {d} of shape {tuple(shape)})")  # fmt: skip


def _unique_flat(flat: np.ndarray) -> tuple:
    """PyTorch's sorted ``unique``: its CPU sort (:func:`sort_order`, which decides the order of
    NaNs and which of 0.0 and -0.0 stands for both), then runs of neighbours that are not ``!=``
    (each NaN its own entry: a NaN equals nothing)."""
    order = sort_order(flat) if flat.size else np.zeros(0, np.int64)
    s = flat[order]
    change = np.ones(len(s), bool)
    change[1:] = s[1:] != s[:-1]
    inv = np.empty(len(s), np.int64)
    inv[order] = np.cumsum(change) - 1
    starts = np.nonzero(change)[0]
    return s[starts], inv, np.diff(np.append(starts, len(s)))


class _Slice:
    """A slice's entries ordered as PyTorch's ``unique(dim=)`` compares them: the first entry that
    is below or above decides, and a NaN is neither (so the next entry decides)."""

    __slots__ = ("v",)

    def __init__(self, v: list) -> None:
        self.v = v

    def __lt__(self, other: _Slice) -> bool:
        for a, b in zip(self.v, other.v):
            if a < b:
                return True
            if a > b:
                return False
        return False


def _unique_slices_with_nan(a: np.ndarray, d: int) -> tuple | None:
    """``unique(dim=d)`` of slices holding NaN as PyTorch's: its ``std::sort`` of the slices under
    :class:`_Slice`'s order (which leaves a NaN slice where the sort's steps put it), then runs of
    equal neighbours (NaN equals nothing, so a slice with NaN stands alone). None where the replay
    of the sort cannot follow it (its heap-sort fallback)."""
    m = np.moveaxis(a, d, 0)
    flat = m.reshape(m.shape[0], -1)
    try:
        perm = _sort_under_less([_Slice(r.tolist()) for r in flat])
    except (TypeError, ValueError):  # (the heap sort reads numbers, not slices)
        return None
    if perm is None:
        return None
    order = np.array(perm, dtype=np.int64)
    s = flat[order]
    change = np.ones(len(s), bool)
    change[1:] = ~(s[1:] == s[:-1]).all(axis=1)
    inv = np.empty(len(s), np.int64)
    inv[order] = np.cumsum(change) - 1
    starts = np.nonzero(change)[0]
    return np.moveaxis(m[order[starts]], 0, d), inv, np.diff(np.append(starts, len(s)))


def _unique_result(x: Tensor, vals: np.ndarray, inv: np.ndarray, counts: np.ndarray, ri: bool, rc: bool) -> Any:
    out = [_on(x, vals.astype(x.dtype))]
    if ri:
        out.append(_on(x, inv.astype(np.int64)))
    if rc:
        out.append(_on(x, counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


@public
def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
                       dim: int | None = None) -> Any:  # fmt: skip
    """``input`` with each run of equal consecutive entries (slices along ``dim``) kept once; with
    ``return_inverse`` each entry's run, with ``return_counts`` each run's length."""
    x = _tensor(input, "unique_consecutive")
    a = _host(x)
    if dim is None:
        flat = a.reshape(-1)
        change = np.ones(flat.shape[0], bool)
        change[1:] = flat[1:] != flat[:-1]
        vals = flat[change]
        inv = (np.cumsum(change) - 1).reshape(a.shape)
    else:
        d = dims.one(x.shape, dim, "unique_consecutive", scalar_ok=False)
        _check_empty_slices(x.shape, d, "unique_consecutive")
        m = np.moveaxis(a, d, 0).reshape(a.shape[d], math.prod(a.shape) // max(a.shape[d], 1))
        change = np.ones(m.shape[0], bool)
        change[1:] = (m[1:] != m[:-1]).any(axis=1)
        vals = np.take(a, np.nonzero(change)[0], axis=d)
        inv = np.cumsum(change) - 1
    starts = np.nonzero(change)[0]
    counts = np.diff(np.append(starts, change.shape[0]))
    return _unique_result(x, vals, inv, counts, return_inverse, return_counts)


@public(dtypes="numeric", operands=("elements", "test_elements"))
@stand_in()
def isin(elements: Any, test_elements: Tensor | float, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each entry of ``elements`` occurs in ``test_elements`` (either may be a number), as bools."""
    for v in (elements, test_elements):  # (PyTorch's isin has no kernel for bool, a number True too)
        if isinstance(v, (bool, np.bool_)) or (isinstance(v, Tensor) and v.dtype == np.bool_):
            raise RuntimeError(f"Unsupported input type encountered for isin(): Bool (isin of {_described(elements)} "
                               f"in {_described(test_elements)})")  # fmt: skip
    like = elements if isinstance(elements, Tensor) else _tensor(test_elements, "isin")
    a = _host(elements) if isinstance(elements, Tensor) else np.asarray(elements)
    b = _host(test_elements) if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _on(like, np.isin(a, b, invert=invert))


def _described(v: Any) -> str:
    return f"a {v.dtype} tensor of shape {tuple(v.shape)}" if isinstance(v, Tensor) else repr(v)


# The methods name their tensor ``self``, as PyTorch's do (the functions' is ``input``)
@public(name="unique", function=False, method=True)
def _unique_method(self: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
                   dim: int | None = None) -> Any:  # fmt: skip
    """:func:`unique` of this tensor."""
    return unique(self, sorted, return_inverse, return_counts, dim)


@public(name="unique_consecutive", function=False, method=True)
def _unique_consecutive_method(self: Tensor, return_inverse: bool = False, return_counts: bool = False,
                               dim: int | None = None) -> Any:  # fmt: skip
    """:func:`unique_consecutive` of this tensor."""
    return unique_consecutive(self, return_inverse, return_counts, dim)
