"""PyTorch's in-place variants (``x.exp_()``, ``x.clamp_min_(0)``, ``x.index_fill_(...)``)
and random fills (``w.uniform_(-r, r)``), each declared (``@public``) beside its definition.

Every variant is the out-of-place method of the same name written into the tensor through
:func:`tinygrad_attn.tensors.mutation.inplace.apply_inplace`, the one in-place mechanism: the version
bump, the rebased history when gradients are recorded, the checks (a leaf that requires
grad, a view, a result that cannot be cast back to the tensor's dtype) are all there.
The random fills draw PyTorch's numbers from a generator (:mod:`tinygrad_attn.random`), on
the host, so a seed gives the same numbers on every device.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...engine.declare import public
from ...engine.switches import tracing
from ...functional.checks import tensor_arg
from ...random import draw, generator_for
from ...random import transforms as rt
from .._tensor import InvalidArgumentError, Tensor, where
from ..dtypes import UnsupportedDtypeError, scalar_type_name
from ..shape.dims import NOT_GIVEN, as_int, given, int_list
from .inplace import _is_view, apply_inplace, apply_restride, detach_inplace
from .out_argument import not_a_tensor, refused_out, resized

#: ``name_`` for each of these is ``name`` computed and written in place.

# scans, in place (as ``torch.Tensor.cumsum_``)
# sinc_ (a primitive added later; the table names each in-place twin PyTorch has)
# the comparisons' second names (``x.greater_``, as ``x.gt_``)
# special_functions


def variant(name: str) -> Callable[..., Tensor]:
    """``Tensor.<name>_``: ``name`` computed, then written into the tensor (for each op declared ``inplace``)."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        # Tensor arguments are operands (a gradient may flow to them); the rest are constants.
        if "out" in kwargs:  # (PyTorch's methods take no out=, the in-place ones least of all)
            raise refused_out(name + "_")
        if kwargs.get("dtype") is not None and isinstance(self, Tensor) and np.dtype(kwargs["dtype"]) != self.dtype:
            raise RuntimeError(f"{name}_: Bad in-place call: input tensor dtype {self.dtype} and output tensor dtype "
                               f"{kwargs['dtype']} should match")  # fmt: skip
        try:
            return apply_inplace(self, name + "_", lambda x, *a: getattr(x, name)(*a, **kwargs), *args)
        except (AttributeError, KeyError) as e:  # (tga.exp_(3): a number where the tensor goes)
            not_a_tensor(name + "_", self, e)
            raise

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"``{name}`` written into this tensor, in place (as ``torch.Tensor.{name}_``)."
    return method


@public(function=False, method=True)
def float_power_(self: Tensor, exponent: Tensor | float) -> Tensor:
    """``float_power`` written into this tensor, which must be float64 (its result's dtype; PyTorch
    refuses to write it into another)."""
    if self.dtype != np.float64:
        raise RuntimeError(f"float_power_: the base given to float_power_ has dtype {self.dtype} but the operation's "
                           "result requires dtype float64 (convert with .double())")  # fmt: skip
    return _FLOAT_POWER_(self, exponent)


_FLOAT_POWER_ = variant("float_power")


@public(function=False, method=True)
def fill_diagonal_(self: Tensor, fill_value: float, wrap: bool = False) -> Tensor:
    """The main diagonal (of a 2-D tensor, or of a tensor whose sides are all equal)
    becomes ``fill_value``, in place; ``wrap`` restarts it below a tall matrix's square."""
    if self.ndim < 2:
        raise RuntimeError(f"fill_diagonal_: needs at least 2 dimensions, got shape {tuple(self.shape)}")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError(f"fill_diagonal_: all dimensions must have one length, got shape {tuple(self.shape)}")
    n = self.numel()
    if self.ndim == 2:
        rows, cols = self.shape
        step = cols + 1
        end = n if wrap else min(rows, cols) * cols
    else:
        side = self.shape[0]
        step = sum(side**k for k in range(self.ndim))
        end = n
    mask = np.zeros(n, dtype=bool)
    mask[0:end:step] = True
    m = Tensor(mask.reshape(self.shape), device=self._dev)
    return self.masked_fill_(m, fill_value)


# -- random fills --------------------------------------------------------------------------
def _fill_with(t: Tensor, name: str, draws: np.ndarray) -> Tensor:
    v = Tensor(np.asarray(draws).astype(t.dtype, copy=False), device=t._dev)
    return apply_inplace(t, name, lambda x, s: where(True, s, x), v, reads_old=False)


def _fill_drawn(t: Tensor, name: str, maker: str, params: tuple, generator: Any) -> Tensor:
    """``t`` filled in place with ``random.transforms.<maker>(gen, shape, dtype, *params)``;
    inside a trace the draws are an op (:class:`~tinygrad_attn.random.Draw`), so a replay
    draws again instead of writing the traced numbers. The draws go in ``t``'s memory order, as
    PyTorch's kernels walk it (:func:`~tinygrad_attn.random.memory_order`), and a normal fill of a
    tensor that is not contiguous takes PyTorch's scalar path. A meta tensor gets no draws (its
    generator is left as it is, as PyTorch's meta fills leave it)."""
    if t._dev.meta:
        return _fill_with(t, name, np.broadcast_to(np.zeros((), t.dtype), tuple(t.shape)))
    if tracing():
        order, params = rt.fill_plan(maker, tuple(t.shape), t.stride(), params)
        v = draw(("fill", maker, params), tuple(t.shape), t._data.dtype, Tensor.zeros((), device=t._dev),
                 generator=generator, order=order)  # fmt: skip
        return apply_inplace(t, name, lambda x, s: where(True, s, x), v, reads_old=False)
    draws = rt.fill_draws(_gen(generator, name), maker, tuple(t.shape), t.stride(), t.dtype, *params)
    return _fill_with(t, name, draws)


def _numbers(name: str, *params: Any) -> tuple:
    """A random fill's parameters as numbers: a 0-d tensor is one (PyTorch's parser reads it as a
    float there); a tensor of more elements is PyTorch's TypeError."""
    out = []
    for v in params:
        if isinstance(v, Tensor):
            if v.ndim:
                raise TypeError(f"{name}(): a parameter must be a number, not a Tensor of shape {tuple(v.shape)}")
            v = v.item()
        out.append(v)
    return tuple(out)


def _float_only(t: Tensor, name: str) -> None:
    if t.dtype.kind not in "fc":
        raise UnsupportedDtypeError(f"{name}: needs a floating-point tensor, got {t.dtype} (PyTorch's neither)")


def _not_complex(t: Tensor, name: str, continuous: str | None = None) -> None:
    """PyTorch's refusal of a complex tensor for a fill that has no complex kernel: the
    continuous distributions' RuntimeError, else its kernel's NotImplementedError."""
    if t.dtype.kind != "c":
        return
    kind = scalar_type_name(t.dtype)
    if continuous:
        raise RuntimeError(f"{name}: {continuous} distribution is a continuous probability distribution. dtype must "
                           f"be a floating point but you specified {kind}")  # fmt: skip
    raise UnsupportedDtypeError(f"\"{name.rstrip('_')}_cpu\" not implemented for '{kind}'")


def _complex_fill(t: Tensor, fill: Callable[[Tensor], Any]) -> Tensor:
    """A complex tensor's fill, as PyTorch's: the real tensor of its parts (``view_as_real``,
    written through) filled by the real fill, in that tensor's memory order."""
    from ..elementwise.complex_numbers import view_as_real  # noqa: PLC0415 - loaded after the tensor's methods

    fill(view_as_real(t))
    return t


def _gen(generator: Any, name: str) -> Any:
    return generator_for(generator, name)


@public(function=False, method=True)
def uniform_(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    """Uniform draws from ``[a, b)``, in place (PyTorch's numbers for a seed)."""
    a, b = _numbers("uniform_", a, b)
    _float_only(self, "uniform_")
    if a > b:
        raise RuntimeError(f"uniform_: expects from <= to, got from={a} > to={b}")
    if self.dtype.kind == "c":  # (each part from [a, b))
        return _complex_fill(self, lambda r: r.uniform_(a, b, generator=generator))
    return _fill_drawn(self, "uniform_", "uniform", (a, b), generator)


@public(function=False, method=True)
def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """Normal draws of ``mean`` and ``std``, in place (PyTorch's numbers for a seed)."""
    mean, std = _numbers("normal_", mean, std)
    _float_only(self, "normal_")
    if std < 0:
        raise RuntimeError(f"normal_: expects std >= 0.0, got std={std}")
    if self.dtype.kind == "c":  # (each part of mean ``mean`` and std ``std / sqrt(2)``: E|z - mean|^2 = std^2)
        return _complex_fill(self, lambda r: r.normal_(mean, std / math.sqrt(2), generator=generator))
    return _fill_drawn(self, "normal_", "normal", (mean, std), generator)


@public(function=False, method=True)
def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """1 with probability ``p`` (a number or a tensor broadcast to this one), else 0, in place.
    A tensor ``p`` gives PyTorch's numbers for a seed; a number ``p`` draws from our generator
    (PyTorch uses another engine there, whose numbers are not reproduced)."""
    _not_complex(self, "bernoulli_scalar" if not isinstance(p, Tensor) else "bernoulli_tensor")
    if not isinstance(p, Tensor):
        if not 0 <= p <= 1:
            raise RuntimeError("bernoulli_: expects 0 <= p <= 1")
        return _fill_drawn(self, "bernoulli_", "bernoulli_number", (p,), generator)
    if p.dtype.kind != "f":  # (PyTorch's kernel draws for floating probabilities only)
        raise UnsupportedDtypeError(
            f"\"bernoulli_tensor_cpu_p_\" not implemented for '{scalar_type_name(p.dtype)}' (bernoulli_: p must be floating)"
        )
    prob = p._read("bernoulli")  # (not numpy(): bfloat16 has none)
    if np.any((prob < 0) | (prob > 1)):
        raise RuntimeError("bernoulli_: expects 0 <= p <= 1")
    try:
        prob = np.broadcast_to(prob, self.shape)
    except ValueError as e:
        raise InvalidArgumentError(
            f"bernoulli_: p of shape {tuple(p.shape)} does not expand to {tuple(self.shape)}"
        ) from e
    draws = rt.bernoulli(_gen(generator, "bernoulli_"), np.ascontiguousarray(prob))
    return _fill_with(self, "bernoulli_", draws)


#: ``random_()``'s ``from`` left out (``random_(0)`` is the range ``[0, 0)``, an error; ``random_(None)`` a type error)
_NO_BOUND: Any = type("NoBound", (), {"__repr__": lambda self: "<no bound>"})()


@public(function=False, method=True)
def random_(self: Tensor, from_: int = _NO_BOUND, to: int | None = None, *, generator: Any = None) -> Tensor:
    """Integers from ``[from_, to)`` in place; ``random_(to)`` is ``[0, to)`` (so ``random_(0)`` is an empty
    range, refused as PyTorch's); without bounds, PyTorch's: ``[0, 2**mantissa]`` for floats, ``[0, max]``
    for integers (the numbers PyTorch draws for a seed)."""
    if to is None and from_ is _NO_BOUND:
        _not_complex(self, "random_kernel")
        return _fill_drawn(self, "random_", "random_bits", (), generator)
    if self.dtype.kind == "c":
        raise RuntimeError("random_: check_random_bounds handles only integral, floating-point and boolean types, "
                           f"not {scalar_type_name(self.dtype)}")  # fmt: skip
    if to is None:  # random_(to)
        from_, to = 0, from_
    elif from_ is _NO_BOUND:
        from_ = 0
    if from_ >= to:
        raise RuntimeError(f"random_: expects from < to, got from={from_} >= to={to}")
    return _fill_drawn(self, "random_", "integers", (from_, to), generator)


@public(function=False, method=True)
def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Exponential draws of rate ``lambd``, in place (PyTorch's numbers for a seed)."""
    (lambd,) = _numbers("exponential_", lambd)
    _float_only(self, "exponential_")
    _not_complex(self, "exponential_", "Exponential")
    if lambd <= 0:
        raise RuntimeError(f"exponential_: expects lambd > 0.0, got {lambd}")
    return _fill_drawn(self, "exponential_", "exponential", (lambd,), generator)


@public(function=False, method=True)
def geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Geometric draws (trials to the first success, from 1) of success probability ``p``, in place."""
    (p,) = _numbers("geometric_", p)
    _not_complex(self, "geometric_")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_: expects p in (0, 1), got p={p}")
    return _fill_drawn(self, "geometric_", "geometric", (p,), generator)


@public(function=False, method=True)
def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Tensor:
    """``exp`` of normal draws of ``mean`` and ``std``, in place."""
    mean, std = _numbers("log_normal_", mean, std)
    _float_only(self, "log_normal_")
    _not_complex(self, "log_normal_")
    if std <= 0:
        raise RuntimeError(f"log_normal_: expects std > 0.0, got {std}")
    return _fill_drawn(self, "log_normal_", "log_normal", (mean, std), generator)


@public(function=False, method=True)
def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Tensor:
    """Cauchy draws of ``median`` and scale ``sigma``, in place."""
    median, sigma = _numbers("cauchy_", median, sigma)
    _float_only(self, "cauchy_")
    _not_complex(self, "cauchy_", "Cauchy")
    if sigma <= 0:
        raise RuntimeError(f"cauchy_: expects sigma > 0.0, got sigma={sigma}")
    return _fill_drawn(self, "cauchy_", "cauchy", (median, sigma), generator)


# -- metadata changes: the same memory under another shape -----------------------------------
@public(method=True)
def swapaxes(self: Tensor, axis0: int, axis1: int) -> Tensor:
    """``transpose(axis0, axis1)`` under NumPy's and PyTorch's other name."""
    return tensor_arg(self, "swapaxes").transpose(axis0, axis1)


@public(method=True)
def swapdims(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """``transpose(dim0, dim1)`` under PyTorch's other name."""
    return tensor_arg(self, "swapdims").transpose(dim0, dim1)


def _restride(t: Tensor, name: str, view: Callable[[Tensor], Tensor], undo: Callable[[Tensor], Tensor]) -> Tensor:
    return apply_restride(t, name, view, undo)


@public(function=False, method=True)
def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions of this tensor, in place (its identity and memory stay)."""
    return _restride(self, "transpose_", lambda x: x.transpose(dim0, dim1), lambda x: x.transpose(dim0, dim1))


@public(function=False, method=True)
def swapaxes_(self: Tensor, axis0: int, axis1: int) -> Tensor:
    """``transpose_(axis0, axis1)``."""
    return _restride(self, "swapaxes_", lambda x: x.transpose(axis0, axis1), lambda x: x.transpose(axis0, axis1))


@public(function=False, method=True)
def swapdims_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """``transpose_(dim0, dim1)``."""
    return _restride(self, "swapdims_", lambda x: x.transpose(dim0, dim1), lambda x: x.transpose(dim0, dim1))


@public(function=False, method=True)
def t_(self: Tensor) -> Tensor:
    """The transpose of a matrix, in place; a 0-D or 1-D tensor stays as it is."""
    if self.ndim > 2:
        raise RuntimeError(f"t_: expects a tensor with <= 2 dimensions, but this one has shape {tuple(self.shape)}")
    return _restride(self, "t_", lambda x: x.t(), lambda x: x.t())


@public(method=True)
def as_strided_(input: Tensor, size: Sequence[int], stride: Sequence[int],  # noqa: A002
                storage_offset: int | None = None) -> Tensor:  # fmt: skip
    """This tensor as ``as_strided(size, stride, storage_offset)`` shows its memory, in place (its
    identity and memory stay; the gradient is as_strided's)."""
    x = tensor_arg(input, "as_strided_")
    shape, steps, at = tuple(x.shape), tuple(x.stride()), x.storage_offset()
    return _restride(x, "as_strided_", lambda t: t.as_strided(size, stride, storage_offset),
                     lambda t: t.as_strided(shape, steps, at))  # fmt: skip


@public(function=False, method=True)
def squeeze_(self: Tensor, dim: Any = NOT_GIVEN, *more: int) -> Tensor:
    """Drop dimensions of length 1 (all, or those of ``dim`` that have length 1; varargs too), in place."""
    dim = int_list(given("squeeze_", dim), more, "squeeze_") if dim is not NOT_GIVEN else NOT_GIVEN
    shape = tuple(self.shape)
    return _restride(self, "squeeze_", lambda x: x.squeeze(dim), lambda x: x.reshape(shape))


@public(function=False, method=True)
def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """Insert a dimension of length 1 at ``dim``, in place."""
    shape = tuple(self.shape)
    return _restride(self, "unsqueeze_", lambda x: x.unsqueeze(dim), lambda x: x.reshape(shape))


@public(function=False, method=True)
def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """This tensor with shape ``sizes``, in place, as PyTorch's: its first elements (in
    memory order) keep their values, new ones are zeros (PyTorch leaves them undefined);
    growing moves it to new memory. A tensor that requires grad cannot be resized."""
    shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else tuple(sizes)
    shape = tuple(as_int(n) for n in shape)  # (a 0-d int tensor is a size, as in PyTorch)
    if any(not isinstance(n, (int, np.integer)) or n < 0 for n in shape):
        raise RuntimeError(f"resize_: sizes must be non-negative ints, got {shape}")
    if self.requires_grad:
        raise RuntimeError(
            f"resize_: cannot resize variables that require grad (shape {tuple(self.shape)}); resize a detached "
            "copy (x.detach().clone()) or build a new tensor"
        )
    return resized(self, shape)


@public(method=True)
def detach_(self: Tensor) -> Tensor:
    """Cut this tensor from the graph, in place: it becomes a leaf that does not require
    grad; ops that read it before still take their gradient to its history. Refused for a
    view, as PyTorch refuses."""
    if self._ctx is not None and _is_view(self):
        raise RuntimeError(
            f"detach_: this tensor (shape {tuple(self.shape)}) is a view; a view cannot be detached in place "
            "(as in PyTorch); use detach() instead"
        )
    return detach_inplace(self)
