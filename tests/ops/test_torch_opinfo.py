"""PyTorch's own OpInfo samples, run through ours.

PyTorch's test suite describes each of its ops by an ``OpInfo``
(``torch.testing._internal.common_methods_invocations.op_db``) that generates sample inputs:
every shape, broadcast, keyword and corner case its authors thought of. For every OpInfo whose name
(or ``aten_name``, or an alias) we have as ``tga.<name>``, ``Tensor.<name>``, ``F.<name>`` or
``tga.linalg.<name>``, this runs its samples through ours and through PyTorch in every dtype of
:data:`DTYPES` the OpInfo supports on CPU (float64 in the fast loop, the others in the full suite)
and compares the results (values and dtypes, integers and bools exactly; in float64 also the gradients, against
``torch.autograd.grad`` with a fixed cotangent), and the method and in-place variants where the
OpInfo has them. A sample PyTorch rejects is skipped; one we reject where PyTorch runs is a failure.

Every op x dtype that fails today is listed in ``KNOWN`` with its reason, marked
``xfail(strict=True)``: a fix shows as XPASS and must remove its entry.

``python tests/ops/test_torch_opinfo.py`` prints the coverage (ops, samples, % equal) and the
first failure of each failing op.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

# A generator over every op of PyTorch's inventories: the full suite's (CI runs it), not the fast loop's.
pytestmark = pytest.mark.slow
pytest.importorskip("expecttest")  # PyTorch's test internals import it

import tinygrad_attn as tga  # noqa: E402
import tinygrad_attn.functional as F  # noqa: E402
from tinygrad_attn import Tensor  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

# Samples per op and dtype: the first ones PyTorch generates cover its basic shapes, broadcasts and
# keywords; the slow pass runs more of them and the extreme-value reference inputs too.
FAST_SAMPLES = 6
SLOW_SAMPLES = 24
MAX_NUMEL = 20_000

# Ops whose index outputs PyTorch leaves undefined among equal values (ties): only the values are
# compared, and our indices must pick values equal to those PyTorch's indices pick.
TIE_ORDER_UNDEFINED = {
    "sort",
    "argsort",
    "msort",
    "topk",
    "median",
    "nanmedian",
    "mode",
    "kthvalue",
    "unique",
    "unique_consecutive",
    "max",
    "min",
    "cummax",
    "cummin",
}

# Piecewise ops whose gradient at a NaN input PyTorch's CPU kernels leave to their vector width: the
# entries in whole vector blocks get 0 (hardtanh, relu6, hardshrink, softshrink: blocks of one vector)
# or NaN (elu, celu, selu: blocks of two vectors) and the tail gets the scalar path's value (the
# cotangent times the slope of the branch ``x <= bound`` does not take). The blocks are 8 or 16
# doubles with AVX512 and half that with AVX2: no rule of the input alone. Like tie orders, these
# entries are undefined: the gradients are compared where the input is not NaN (ours is the scalar path's).
NAN_GRADIENT_UNDEFINED = {
    "nn.functional.elu",
    "nn.functional.celu",
    "nn.functional.selu",
    "nn.functional.relu6",
    "nn.functional.hardtanh",
    "nn.functional.hardshrink",
    "nn.functional.softshrink",
}

# Matrix functions whose entries are sums of much larger terms: an entry far below the result's largest
# carries the float32 rounding of the largest (matrix_exp of a matrix of 1-norm 28 has entries of 9e4 and
# 0.148, where PyTorch's own float32 value is 0.14865 and the exact one 0.14829). Compared to the
# dtype's tolerance times the largest magnitude of PyTorch's result, entry by entry.
NORMWISE = {"matrix_exp"}

# Ops whose vector outputs PyTorch defines only up to sign: compared in absolute value.
SIGN_UNDEFINED = {"linalg.eigh", "linalg.svd", "svd", "linalg.eig", "linalg.qr"}

# Ops drawing random numbers (or leaving memory uninitialised): PyTorch's generator is not ours, so only
# the shapes and dtypes are compared.
RANDOM = {
    "bernoulli",
    "normal",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "multinomial",
    "empty",
    "empty_like",
    "empty_strided",
    "empty_permuted",
    "new_empty",
    "new_empty_strided",
    "resize_",  # (growing: PyTorch's new entries are uninitialised memory)
    "resize_as_",
    "uniform",
    "nn.functional.rrelu",
    "nn.functional.dropout",
    "nn.functional.dropout2d",
    "nn.functional.dropout3d",
    "nn.functional.alpha_dropout",
    "nn.functional.feature_alpha_dropout",
}

# OpInfos whose ``op`` wraps PyTorch's function with its arguments in another order: ours, wrapped the same way.
WRAPPED = {
    "where": lambda x, condition, other, **kw: tga.where(condition, x, other, **kw),
    "einsum": lambda tensors, equation, **kw: tga.einsum(equation, *tensors, **kw),
    "nn.functional.embedding": lambda weight, idx, **kw: F.embedding(idx, weight, **kw),
    "nn.functional.embedding_bag": lambda weight, idx, **kw: F.embedding_bag(idx, weight, **kw),
}
WRAPPED["nn.functional.scaled_dot_product_attention"] = lambda *a, **kw: F.scaled_dot_product_attention(*a, **kw)
# fractional max pooling's ``op`` draws its windows' placement after ``manual_seed(42)``: ours, the same way
for _nd in (2, 3):
    WRAPPED[f"nn.functional.fractional_max_pool{_nd}d"] = lambda *a, _nd=_nd, **kw: (
        tga.manual_seed(42), getattr(F, f"fractional_max_pool{_nd}d")(*a, **kw))[1]  # fmt: skip
WRAPPED["nn.functional.multi_head_attention_forward"] = lambda *a, **kw: (
    tga.manual_seed(42), F.multi_head_attention_forward(*a, **kw))[1]  # fmt: skip
WRAPPED["polygamma"] = lambda x, n, **kw: tga.polygamma(n, x, **kw)
# normal.in_place's ``op`` is the in-place method ``normal_(mean, std)``
WRAPPED["normal.in_place"] = lambda x, *a, **kw: x.normal_(*a, **kw)
for _conv in (
    "bool",
    "double",
    "float",
    "half",
    "int",
    "long",
    "short",
    "byte",
    "char",
    "bfloat16",
    "cfloat",
    "cdouble",
):
    WRAPPED[_conv] = lambda x, *a, _n=_conv, **kw: getattr(x, _n)(*a, **kw)

# OpInfos whose ``op`` is a lambda around a name we have (a property, an in-place method on a clone, a
# composition): ours, composed the same way. Matched by op id before the names are looked up (a
# property such as ``T`` is no function of ours, and these OpInfos have no method variant).
COMPOSED = {
    "item": lambda x, *a, **kw: x.item(*a, **kw),
    "resize_": lambda x, shape: x.clone().resize_(shape),
    "resize_as_": lambda x, other: tga.resize_as_(x.clone(), other),
    "zero_": lambda x: tga.zero_(x.clone()),
    "T": lambda x: x.T,
    "H": lambda x: x.H,
    "mT": lambda x: x.mT,
    "mH": lambda x: x.mH,
    "linalg.lstsq.grad_oriented": lambda a, b, driver: tga.linalg.lstsq(a, b, driver=driver)[:2],
    "linalg.pinv.singular": lambda a, b: tga.linalg.pinv(a @ b.mT),
    "special.polygamma.special_polygamma_n_0": lambda x, n, **kw: tga.special.polygamma(n, x, **kw),
}

# Every dtype of PyTorch's CPU we have, each where the OpInfo says PyTorch supports it (``supported_dtypes``).
DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}
# Floating results within these (relative and absolute; float16's is PyTorch's own Half tolerance in its
# OpInfo tests); integer and bool results exactly.
_TOL = {torch.float64: 1e-9, torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}
_TOL.update({d: 0.0 for d in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool)})


# ---------------------------------------------------------------------------------------------
# Which of PyTorch's OpInfos we have, and where
# ---------------------------------------------------------------------------------------------


@dataclass
class Target:
    """Our callables for one OpInfo: the function, the method name and the in-place method name."""

    op: Any
    function: Any = None
    method: str | None = None
    inplace: str | None = None
    label: str = ""


def _resolve(name: str) -> Any:
    """Our function spelt like PyTorch's ``name`` (``linalg.x``, ``nn.functional.x``, ``special.x``, ``x``)."""
    if name.startswith("nn.functional."):
        return getattr(F, name[len("nn.functional.") :], None)
    if "." in name:
        head, _, tail = name.partition(".")
        mod = getattr(tga, head, None)
        return getattr(mod, tail, None) if mod is not None else None
    return getattr(tga, name, None)


def _target(op: Any) -> Target | None:
    if _op_id(op) in COMPOSED:
        return Target(op, function=COMPOSED[_op_id(op)])
    names = [op.name] + [a.name for a in op.aliases]
    if op.aten_name and op.aten_name not in names:
        names.append(op.aten_name)
    for name in names:
        if name.startswith("__") and name.endswith("__"):
            if hasattr(Tensor, name):
                return Target(op, method=name, label=op.full_name if hasattr(op, "full_name") else op.name)
            continue
        fn = _resolve(name)
        method = name if "." not in name and op.method_variant is not None and hasattr(Tensor, name) else None
        if fn is None and method is None:
            continue
        inplace = None
        if op.inplace_variant is not None and "." not in name and hasattr(Tensor, name + "_"):
            inplace = name + "_"
        wrapped = WRAPPED.get(_op_id(op), WRAPPED.get(op.name))
        if wrapped is not None:
            fn = wrapped if fn is not None or method is not None else None
        elif getattr(op.op, "__name__", "") == "<lambda>" and op.name not in RANDOM:
            fn = None  # (``op`` composes PyTorch's function with something else: its method variant is still compared)
        if fn is None and method is None:
            continue
        return Target(op, function=fn, method=method, inplace=inplace)
    return None


def _op_id(op: Any) -> str:
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


TARGETS: dict[str, Target] = {}
for _op in op_db:
    _t = _target(_op)
    if _t is not None:
        TARGETS[_op_id(_op)] = _t


# ---------------------------------------------------------------------------------------------
# Conversion between PyTorch's values and ours
# ---------------------------------------------------------------------------------------------


class Unsupported(Exception):
    """The sample holds something with no counterpart of ours (complex, sparse, a memory format)."""


def _dtype(d: Any) -> Any:
    name = str(d).removeprefix("torch.")
    ours = getattr(tga, name, None)
    if ours is None or name.startswith("complex"):
        raise Unsupported(f"dtype {d}")
    return ours


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of a contiguous tensor of ``shape`` (a size-1 or empty dim counts as 1), as PyTorch's."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def tensor_of(x: Any, dtype: Any) -> Tensor:
    """Ours of PyTorch's strided tensor ``x``, in ``dtype`` and laid out as ``x`` is.

    A view into a larger storage (at an offset, with other strides, or in a storage longer than it)
    is ours of that whole storage's values, viewed by ``as_strided(size, stride, storage_offset)``:
    an op that reads the memory (``as_strided``) or the layout (``stride()``, a result's memory
    format) finds PyTorch's. The view requires grad itself where ``x`` does, as PyTorch's leaf."""
    x = x.detach().cpu().resolve_conj().resolve_neg()
    size, stride, offset = tuple(x.shape), x.stride(), x.storage_offset()
    n = x.untyped_storage().nbytes() // x.element_size()
    plain = offset == 0 and n == x.numel() and stride == _row_major(size)
    memory = x if plain else x.as_strided((n,), (1,), 0)
    try:  # (bfloat16 through float32, which holds each of its values)
        data = (memory.float() if memory.dtype == torch.bfloat16 else memory).numpy().copy()
    except TypeError as e:  # (dtypes NumPy lacks)
        raise Unsupported(str(e)) from None
    t = tga.tensor(data, dtype=dtype)
    return t if plain else t.as_strided(size, stride, offset)


def to_ours(x: Any, leaves: list | None = None) -> Any:
    """A sample argument with every PyTorch tensor, dtype, device and size replaced by ours
    (each tensor by :func:`tensor_of`: its values and its layout)."""
    if isinstance(x, torch.Tensor):
        if x.is_complex() or x.layout != torch.strided:
            raise Unsupported(f"tensor {x.dtype} {x.layout}")
        t = tensor_of(x, _dtype(x.dtype)).requires_grad_(x.requires_grad)
        if leaves is not None and x.requires_grad:
            leaves.append((x, t))
        return t
    if isinstance(x, torch.dtype):
        return _dtype(x)
    if isinstance(x, torch.device):
        return str(x)
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, torch.memory_format | torch.layout | torch.Generator | torch.nn.Module):
        raise Unsupported(f"argument {x!r}")
    if isinstance(x, list):
        return [to_ours(v, leaves) for v in x]
    if isinstance(x, tuple):
        return tuple(to_ours(v, leaves) for v in x)
    if isinstance(x, dict):
        return {k: to_ours(v, leaves) for k, v in x.items()}
    if isinstance(x, complex):
        raise Unsupported("complex scalar")
    return x


def _flat(x: Any) -> list:
    """The leaves of a (nested) result, in order."""
    if isinstance(x, list | tuple):
        return [leaf for v in x for leaf in _flat(v)]
    return [x]


def _as_numpy(x: Any) -> np.ndarray | Any:
    if getattr(x, "is_sparse", False):
        x = x.to_dense()  # (a sparse result is compared by the values it stands for)
    if isinstance(x, torch.Tensor):
        if x._is_zerotensor():  # (autograd's symbolic zero gradient)
            return np.zeros(tuple(x.shape), dtype=str(x.dtype).removeprefix("torch."))
        x = x.float() if x.dtype == torch.bfloat16 else x  # (exact: numpy() has no bfloat16)
        return x.detach().cpu().resolve_conj().resolve_neg().detach().numpy()
    if isinstance(x, Tensor):
        return np.asarray((x.float() if x.dtype == tga.bfloat16 else x).detach().numpy())
    return x


def _dtype_name(x: Any) -> str:
    if isinstance(x, torch.Tensor):
        return str(x.dtype).removeprefix("torch.")
    if isinstance(x, Tensor):
        return str(x.dtype).removeprefix("torch.")
    return type(x).__name__


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------


def _close(ours: np.ndarray, theirs: np.ndarray, tol: float, normwise: bool = False) -> str | None:
    if ours.shape != theirs.shape:
        return f"shape {ours.shape} != PyTorch's {theirs.shape}"
    if theirs.dtype.kind in "biu" or theirs.dtype == np.bool_:
        if not np.array_equal(ours, theirs):
            return f"values differ: {ours.ravel()[:6]} vs PyTorch's {theirs.ravel()[:6]}"
        return None
    a, b = ours.astype(np.float64), theirs.astype(np.float64)
    with np.errstate(all="ignore"):
        finite = np.abs(b[np.isfinite(b)])
        atol = tol * max(1.0, float(finite.max())) if normwise and finite.size else tol
        ok = np.isclose(a, b, rtol=tol, atol=atol, equal_nan=True) | ((a == b) & np.isinf(b))
    if not ok.all():
        bad = np.argwhere(~ok)[0]
        i = tuple(bad)
        return f"values differ ({int((~ok).sum())} of {ok.size}): at {i} {a[i]!r} vs PyTorch's {b[i]!r}"
    return None


def compare(ours: Any, theirs: Any, tol: float, *, values_only: bool = False, normwise: bool = False) -> str | None:
    """Why ``ours`` differs from PyTorch's ``theirs`` (None when equal)."""
    o, t = _flat(ours), _flat(theirs)
    if len(o) != len(t):
        return f"{len(o)} outputs, PyTorch has {len(t)}"
    for k, (a, b) in enumerate(zip(o, t, strict=True)):
        if isinstance(b, torch.Tensor):
            if not isinstance(a, Tensor):
                return f"output {k}: {type(a).__name__}, PyTorch returns a tensor"
            if values_only and b.dtype == torch.int64 and k > 0:
                continue  # an index output where ties leave it undefined: checked by _indices_pick_equal
            if _dtype_name(a) != _dtype_name(b):
                return f"output {k}: dtype {_dtype_name(a)}, PyTorch's {_dtype_name(b)}"
            why = _close(_as_numpy(a), _as_numpy(b), _TOL.get(b.dtype, tol), normwise)
            if why:
                return f"output {k}: {why}"
        elif isinstance(b, bool | int | float):
            a = a.item() if isinstance(a, Tensor) else a
            if not isinstance(a, bool | int | float):
                return f"output {k}: {type(a).__name__}, PyTorch returns {type(b).__name__}"
            if not (a == b or (math.isnan(b) and a != a) or math.isclose(a, b, rel_tol=tol, abs_tol=tol)):
                return f"output {k}: {a!r} vs PyTorch's {b!r}"
        elif isinstance(b, torch.Size | torch.dtype):
            if (
                tuple(a)
                if isinstance(b, torch.Size)
                else str(a).removeprefix("torch.") != str(b).removeprefix("torch.")
            ):
                return f"output {k}: {a!r} vs PyTorch's {b!r}"
    return None


def _shapes(x: Any) -> Any:
    """A result with each tensor replaced by a zero tensor of its shape and dtype (random values)."""
    if isinstance(x, list | tuple):
        return [_shapes(v) for v in x]
    if isinstance(x, torch.Tensor):
        return torch.zeros(x.shape, dtype=x.dtype)
    if isinstance(x, Tensor):
        return tga.zeros(tuple(x.shape), dtype=x.dtype)
    return x


def _abs(x: Any) -> Any:
    """A result with each floating or complex tensor replaced by its absolute value (vectors defined up to
    sign: ``eig``'s real eigenvectors of a real matrix, whose sign each LAPACK build picks)."""
    if isinstance(x, list | tuple):
        return [_abs(v) for v in x]
    if isinstance(x, torch.Tensor | Tensor) and x.dtype in (torch.float32, torch.float64, tga.float32, tga.float64):
        return x.detach().abs()
    if isinstance(x, torch.Tensor | Tensor) and x.dtype in (torch.complex64, torch.complex128, tga.complex64,
                                                             tga.complex128):  # fmt: skip
        return x.detach().abs()
    return x


def _dim_of(sample: Any, default: int = -1) -> int:
    if "dim" in sample.kwargs:
        return sample.kwargs["dim"]
    if sample.args and isinstance(sample.args[0], int) and not isinstance(sample.args[0], bool):
        return sample.args[0]
    return default


def _indices_pick_equal(op_name: str, sample: Any, ours: Any, theirs: Any, tol: float) -> str | None:
    """Our index outputs select values equal to those PyTorch's indices select (ties in any order)."""
    x = _as_numpy(sample.input)
    if not isinstance(sample.input, torch.Tensor) or x.ndim == 0:
        return None
    o, t = _flat(ours), _flat(theirs)
    idx = [(k, a, b) for k, (a, b) in enumerate(zip(o, t, strict=True)) if isinstance(b, torch.Tensor)]
    idx = [(k, a, b) for k, a, b in idx if b.dtype == torch.int64 and (k > 0 or op_name in ("argsort",))]
    if op_name in ("topk", "kthvalue"):  # (k first, then dim)
        dim = sample.kwargs.get("dim", sample.args[1] if len(sample.args) > 1 else -1)
    else:
        dim = _dim_of(sample)
    if op_name in ("unique", "unique_consecutive"):
        return None
    for k, a, b in idx:
        ai, bi = _as_numpy(a), _as_numpy(b)
        if ai.shape != bi.shape:
            return f"output {k}: index shape {ai.shape} != PyTorch's {bi.shape}"
        if ai.ndim < x.ndim:
            if not -x.ndim <= dim < x.ndim:
                return f"output {k}: indices of shape {ai.shape} for an input of shape {x.shape} along dim {dim}"
            ai, bi = np.expand_dims(ai, dim), np.expand_dims(bi, dim)
        try:
            va = np.take_along_axis(x, ai, axis=dim)
        except (IndexError, ValueError) as e:
            return f"output {k}: our indices do not index the input: {e}"
        why = _close(va, np.take_along_axis(x, bi, axis=dim), tol)
        if why:
            return f"output {k}: our indices pick other values: {why}"
    return None


# ---------------------------------------------------------------------------------------------
# Running one sample
# ---------------------------------------------------------------------------------------------


@dataclass
class Tally:
    """What one op x dtype run found."""

    compared: int = 0
    equal: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)

    def fail(self, what: str) -> None:
        self.failures.append(what)


def _call_ours(target: Target, variant: str, inp: Any, args: tuple, kwargs: dict) -> Any:
    if variant == "function":
        return target.function(inp, *args, **kwargs)
    if variant == "method":
        return getattr(inp, target.method)(*args, **kwargs)
    return getattr(inp, target.inplace)(*args, **kwargs)


def _call_theirs(target: Target, variant: str, inp: Any, args: tuple, kwargs: dict) -> Any:
    op = target.op
    if variant == "function":
        return op.op(inp, *args, **kwargs)
    if variant == "method":
        if target.function is None and target.method and target.method.startswith("__"):
            return op.op(inp, *args, **kwargs)
        return op.method_variant(inp, *args, **kwargs)
    return op.inplace_variant(inp, *args, **kwargs)


def _cotangent(t: torch.Tensor, k: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(1234 + k)
    return torch.randn(t.shape, dtype=t.dtype, generator=g)


def run_sample(target: Target, sample: Any, dtype: Any, tally: Tally, *, grads: bool) -> None:
    """Compares one sample in each variant we have; records the outcome in ``tally``."""
    name = target.op.name
    tol = _TOL[dtype]
    tie = name in TIE_ORDER_UNDEFINED
    random = name in RANDOM or sample.kwargs.get("dropout_p", 0) > 0
    variants = [v for v, have in (("function", target.function), ("method", target.method)) if have]
    if target.inplace and not sample.broadcasts_input:
        variants.append("inplace")
    for variant in variants:
        s = sample
        if variant == "inplace":  # the in-place variant writes into its input: each side gets a copy
            s = sample.transform(lambda t: t.detach().clone() if isinstance(t, torch.Tensor) else t)
        try:  # converted first: an in-place variant writes into PyTorch's input
            if s.kwargs.get("sparse") is True and "embedding_bag" in name:  # (its sparse_coo gradient: not built here)
                raise Unsupported("sparse=True")
            inp, args, kwargs = to_ours(s.input), to_ours(s.args), to_ours(s.kwargs)
        except Unsupported:
            tally.skipped += 1
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = _call_theirs(target, variant, s.input, s.args, s.kwargs)
        except Exception:
            tally.skipped += 1  # PyTorch rejects this sample: not ours to match
            continue
        if isinstance(theirs, torch.Tensor) and theirs.is_complex():
            tally.skipped += 1
            continue
        if variant == "inplace":
            inp = inp.detach() if isinstance(inp, Tensor) else inp
        tally.compared += 1
        where = f"{variant} on {_describe(s)}"
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                ours = _call_ours(target, variant, inp, args, kwargs)
        except Exception as e:
            tally.fail(f"{where}: raises {type(e).__name__}: {str(e)[:200]}")
            continue
        if random:
            why = compare(_shapes(ours), _shapes(theirs), tol)
        elif name in SIGN_UNDEFINED:
            why = compare(_abs(ours), _abs(theirs), tol)
        else:
            why = compare(ours, theirs, tol, values_only=tie, normwise=name in NORMWISE)
        if why is None and tie:
            why = _indices_pick_equal(name, s, ours, theirs, tol)
        if why is None and variant == "inplace" and isinstance(ours, Tensor) and ours is not inp:
            why = "the in-place variant returns a new tensor, not its input"
        if why:
            tally.fail(f"{where}: {why}")
            continue
        if grads and variant == "function" and not random:
            why = _compare_grads(target, sample)
            if why:
                tally.fail(f"gradient on {_describe(s)}: {why}")
                continue
        tally.equal += 1


def _compare_grads(target: Target, sample: Any) -> str | None:
    """Our gradients of the sample's differentiable outputs against ``torch.autograd.grad``'s."""
    op = target.op
    if not op.supports_autograd:
        return None
    leaves: list = []
    try:
        inp, args, kwargs = to_ours(sample.input, leaves), to_ours(sample.args, leaves), to_ours(sample.kwargs, leaves)
    except Unsupported:
        return None
    if not leaves:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = _flat(sample.output_process_fn_grad(op.op(sample.input, *sample.args, **sample.kwargs)))
            pick = [k for k, t in enumerate(theirs) if isinstance(t, torch.Tensor) and t.requires_grad]
            if not pick:
                return None
            cots = [_cotangent(theirs[k], k) for k in pick]
            tg = torch.autograd.grad([theirs[k] for k in pick], [t for t, _ in leaves], cots, allow_unused=True)
    except Exception:
        return None  # PyTorch has no gradient here
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ours = _flat(sample.output_process_fn_grad(target.function(inp, *args, **kwargs)))
            outs = [ours[k] for k in pick]
            if not all(isinstance(o, Tensor) and o.requires_grad for o in outs):
                return "an output PyTorch differentiates does not require grad"
            og = tga.autograd.grad(
                outs,
                [o for _, o in leaves],
                # (a complex output's cotangent stays complex: eig's results of a real matrix)
                [tga.tensor(_as_numpy(c), dtype=tga.complex128 if c.is_complex() else tga.float64) for c in cots],
                allow_unused=True,
            )
    except Exception as e:
        return f"raises {type(e).__name__}: {str(e)[:200]}"
    return compare_gradients(op.name, og, tg, leaves, "gradient")


def compare_gradients(name: str, ours: Any, theirs: Any, leaves: list, what: str) -> str | None:
    """Why our gradients in the sample's ``leaves`` differ from PyTorch's (None: equal), each to
    float64's 1e-7 or its leaf's dtype tolerance."""
    for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if b is None:
            continue
        if a is None:
            if torch.count_nonzero(b):
                return f"input {k}: no {what}, PyTorch's is nonzero"
            continue
        a, b = _as_numpy(a), _as_numpy(b)
        if name in NAN_GRADIENT_UNDEFINED and leaves[k][0].shape == b.shape:
            undefined = np.isnan(_as_numpy(leaves[k][0]))
            a, b = np.where(undefined, 0.0, a), np.where(undefined, 0.0, b)
        why = _close(a, b, max(1e-7, _TOL[leaves[k][0].dtype]))
        if why:
            return f"input {k}: {why}"
    return None


def _describe(sample: Any) -> str:
    def d(x: Any) -> str:
        if isinstance(x, torch.Tensor):
            return f"T{list(x.shape)}:{str(x.dtype).removeprefix('torch.')}"
        if isinstance(x, list | tuple):
            return "[" + ", ".join(d(v) for v in x) + "]"
        return repr(x)[:40]

    parts = [d(sample.input)] + [d(a) for a in sample.args] + [f"{k}={d(v)}" for k, v in sample.kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def _samples(op: Any, dtype: Any, n: int, *, reference: bool, requires_grad: bool) -> Iterator[Any]:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gen = op.reference_inputs if reference else op.sample_inputs
        try:
            it = iter(gen("cpu", dtype, requires_grad=requires_grad))
        except Exception:
            return
        given = 0
        while given < n:
            try:
                sample = next(it)
            except StopIteration:
                return
            except Exception:
                return
            if isinstance(sample.input, torch.Tensor) and sample.input.numel() > MAX_NUMEL:
                continue  # (a few reference inputs are images of a million entries: too slow for CI)
            given += 1
            yield sample


def run_op(op_id: str, dtype: Any, *, n: int = FAST_SAMPLES, reference: bool = False, grads: bool = True) -> Tally:
    """Runs ``n`` samples of one OpInfo in one dtype (gradients in float64)."""
    target = TARGETS[op_id]
    tally = Tally()
    want_grads = grads and dtype == torch.float64 and target.op.supports_autograd and target.function is not None
    tga.manual_seed(0)
    for sample in _samples(target.op, dtype, n, reference=reference, requires_grad=want_grads):
        run_sample(target, sample, dtype, tally, grads=want_grads)
    return tally


# ---------------------------------------------------------------------------------------------
# Today's failures, reviewed: op id -> reason (a fix shows as XPASS: delete its entry)
# ---------------------------------------------------------------------------------------------

#: (used by the other OpInfo runners too)
_AS_STRIDED_SCATTER = (
    "PyTorch's gradient of as_strided_scatter in its input is wrong: it passes the gradient where src was "
    "written and zero elsewhere (torch.autograd.gradcheck of torch.as_strided_scatter fails in PyTorch 2.13); "
    "ours is the true one, checked against finite differences (tests/tensor/test_pytorch_names_torch.py)"
)
KNOWN: dict[str, str] = {
    "as_strided_scatter@float64": _AS_STRIDED_SCATTER,
    "matrix_exp@float16": "PyTorch's CPU float16 matrix_exp is not the exponential: its float16 path takes the "
    "double-precision branch (norm thresholds and coefficient tables of doubles) on float16 tensors, giving NaN for "
    "every nonzero 3x3 of 1-norm 0.003 and -2.1e4 on the diagonal of one of 1-norm 1 (exp: 0.9 to 1.5); ours is "
    "the exponential, computed in float32 and rounded once",
}

# Failing only in the slow pass (more samples, PyTorch's extreme-value reference inputs).
KNOWN_SLOW: dict[str, str] = {}


def _known(table: dict[str, str], op_id: str, dname: str) -> str | None:
    """The reason ``table`` gives for ``op_id`` in dtype ``dname`` (keys ``op`` or ``op@dtype``)."""
    return table.get(f"{op_id}@{dname}", table.get(op_id))


def _supported(op: Any) -> set:
    """The dtypes PyTorch's CPU computes ``op`` in, as its OpInfo says (float64 and float32 where it cannot say)."""
    try:
        return set(op.supported_dtypes("cpu"))
    except Exception:
        return {torch.float64, torch.float32}


def _params(slow: bool) -> list:
    out = []
    for op_id in sorted(TARGETS):
        supported = _supported(TARGETS[op_id].op)
        for dname, dt in DTYPES.items():
            if dt not in supported:
                continue
            # (the fast loop compares float64; the other dtypes' rounding and kernels, the full suite's)
            marks = [pytest.mark.slow] if slow or dname != "float64" else []
            reason = _known(KNOWN, op_id, dname) or (_known(KNOWN_SLOW, op_id, dname) if slow else None)
            if reason:
                marks.append(pytest.mark.xfail(reason=reason, strict=True))
            out.append(pytest.param(op_id, dname, marks=marks, id=f"{op_id}-{dname}"))
    return out


def op_params(ids: Any, known: dict[str, str], slow: bool) -> list:
    """One parameter per op id of ``ids`` (sorted), marked slow for the slow pass and a strict xfail where
    ``known`` gives a reason: the parameters of the runners that take PyTorch's OpInfos op by op."""
    out = []
    for op_id in sorted(ids):
        marks = [pytest.mark.slow] if slow else []
        if reason := known.get(op_id):
            marks.append(pytest.mark.xfail(reason=reason, strict=True))
        out.append(pytest.param(op_id, marks=marks, id=op_id))
    return out


def _check(tally: Tally) -> None:
    assert not tally.failures, f"{len(tally.failures)} of {tally.compared} differ; first: " + tally.failures[0]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("op_id", "dtype"), _params(slow=False))
def test_opinfo_samples(op_id: str, dtype: str) -> None:
    _check(run_op(op_id, DTYPES[dtype]))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("op_id", "dtype"), _params(slow=True))
def test_opinfo_more_and_reference_samples(op_id: str, dtype: str) -> None:
    tally = run_op(op_id, DTYPES[dtype], n=SLOW_SAMPLES)
    more = run_op(op_id, DTYPES[dtype], n=SLOW_SAMPLES, reference=True)
    tally.failures += more.failures
    tally.compared += more.compared
    _check(tally)


# OpInfos of names we have that are not compared, each with its reason (every other one is in TARGETS:
# test_every_shared_opinfo_is_run).
NOT_COMPARED = {
    "svd_lowrank": "a randomised algorithm: its random projection is drawn from PyTorch's generator, not ours",
    "pca_lowrank": "a randomised algorithm: its random projection is drawn from PyTorch's generator, not ours",
}


def _names_we_have(op: Any) -> list[str]:
    names = [op.name] + [a.name for a in op.aliases] + ([op.aten_name] if op.aten_name else [])
    return [n for n in names if _resolve(n) is not None or ("." not in n and hasattr(Tensor, n))]


def test_every_shared_opinfo_is_run() -> None:
    """No OpInfo whose name (or alias, or ATen name) we have as a function, method or property is
    silently left out: each is compared (TARGETS) or listed with its reason (NOT_COMPARED)."""
    left_out = {_op_id(op): _names_we_have(op) for op in op_db if _op_id(op) not in TARGETS}
    missing = {k: v for k, v in left_out.items() if v and k not in NOT_COMPARED}
    assert not missing, f"OpInfos of names we have, neither run nor listed: {missing}"
    assert all(left_out.get(k) for k in NOT_COMPARED), "a NOT_COMPARED entry is run now, or gone: remove it"


def test_opinfo_names_we_have() -> None:
    """The OpInfo database still lists the names we match (a PyTorch upgrade renaming them shows here)."""
    assert len({t.op.name for t in TARGETS.values()}) >= 200


if __name__ == "__main__":
    slow = "--slow" in sys.argv
    only = [a for a in sys.argv[1:] if not a.startswith("--")]
    totals = {d: Tally() for d in DTYPES}
    failing: dict[str, str] = {}
    for op_id in sorted(TARGETS):
        if only and op_id not in only:
            continue
        for dname, dt in DTYPES.items():
            if dt not in _supported(TARGETS[op_id].op):
                continue
            t = run_op(op_id, dt, n=SLOW_SAMPLES if slow else FAST_SAMPLES)
            if slow:
                r = run_op(op_id, dt, n=SLOW_SAMPLES, reference=True)
                t.compared, t.equal, t.failures = t.compared + r.compared, t.equal + r.equal, t.failures + r.failures
            tot = totals[dname]
            tot.compared, tot.equal, tot.skipped = (
                tot.compared + t.compared,
                tot.equal + t.equal,
                tot.skipped + t.skipped,
            )
            if t.failures:
                failing[f"{op_id}-{dname}"] = t.failures[0]
                print(f"FAIL {op_id}-{dname} ({len(t.failures)}/{t.compared}): {t.failures[0]}", flush=True)
    print(f"ops covered: {len({TARGETS[o].op.name for o in TARGETS})} names, {len(TARGETS)} OpInfos")
    for dname, tot in totals.items():
        pct = 100.0 * tot.equal / max(tot.compared, 1)
        print(f"{dname}: {tot.compared} samples compared, {tot.equal} equal ({pct:.1f}%), {tot.skipped} skipped")
