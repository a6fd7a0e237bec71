"""Tensor's constructors, ``Tensor.zeros ones full randn rand arange eye from_dlpack``
(classmethods, installed on :class:`Tensor` by the package's ``install_methods``; the
``tga.zeros``-style factories are in :mod:`tinygrad_attn.creation`). Random draws come from
a generator (PyTorch's numbers), on the host, so a seed gives the same numbers on every device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import random_transforms
from ._tensor import Tensor, _shape_args
from .backend import default_device, get_device
from .dtypes import UnsupportedDtypeError, get_default_dtype
from .engine.switches import _State
from .promotion import _scalar_dtype
from .random import draw, generator_for

__all__: list[str] = []  # (the free factories of these names are in creation.py)


@classmethod
def _host(cls, arr: np.ndarray, dtype: Any, device: Any, requires_grad: bool, name: str | None) -> Tensor:
    dev = get_device(device) if device is not None else default_device()
    dt = np.dtype(dtype) if dtype is not None else arr.dtype
    t = cls._wrap(dev.asarray(arr, dtype=dt), dev)
    t.name = name
    if requires_grad:
        t.requires_grad_(True)
    if _State.hook is not None:  # made inside a traced function (see Tracer.write)
        _State.hook.made(t)
    return t


@classmethod
def zeros(cls, *shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          name: str | None = None) -> Tensor:  # fmt: skip
    return cls.full(_shape_args(shape), 0.0, dtype=dtype, device=device, requires_grad=requires_grad, name=name)


@classmethod
def ones(cls, *shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         name: str | None = None) -> Tensor:  # fmt: skip
    return cls.full(_shape_args(shape), 1.0, dtype=dtype, device=device, requires_grad=requires_grad, name=name)


@classmethod
def full(cls, shape: Any, value: float, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         name: str | None = None) -> Tensor:  # fmt: skip
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    # (no dtype: as PyTorch infers it from the value: bool, int64 or float32)
    dt = (
        np.dtype(dtype)
        if dtype is not None
        else _scalar_dtype(value.item() if isinstance(value, np.generic) else value)
    )
    return cls._host(np.full(shape, value, dtype=dt), None, device, requires_grad, name)


def _drawn(cls: Any, kind: str, shape: Any, dtype: Any, device: Any, requires_grad: bool, name: str | None,
           generator: Any = None) -> Tensor:  # fmt: skip
    """A tensor of ``kind`` draws (``"random"`` or ``"standard_normal"``) from ``generator`` (the
    default one without), PyTorch's numbers; inside a trace (without grad) an op, so that a
    replay draws again."""
    dt = np.dtype(dtype) if dtype is not None else get_default_dtype()
    if dt.kind != "f":
        raise UnsupportedDtypeError(
            f"{'rand' if kind == 'random' else 'randn'}: a floating-point dtype is needed, got {dt}"
        )
    if _State.tracer is not None and not requires_grad:
        return draw(kind, _shape_args(shape), dt, cls.zeros((), device=device), generator=generator)
    gen = generator_for(generator, "rand" if kind == "random" else "randn")
    make = random_transforms.uniform if kind == "random" else random_transforms.normal
    return cls._host(make(gen, _shape_args(shape), dt), dt, device, requires_grad, name)


@classmethod
def randn(cls, *shape: Any, generator: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, name: str | None = None) -> Tensor:  # fmt: skip
    """Standard normal draws, made on the host from the seeded generator (PyTorch's numbers) and moved."""
    return _drawn(cls, "standard_normal", shape, dtype, device, requires_grad, name, generator)


@classmethod
def rand(cls, *shape: Any, generator: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, name: str | None = None) -> Tensor:  # fmt: skip
    """Uniform draws in [0, 1), made on the host from the seeded generator (PyTorch's numbers) and moved."""
    return _drawn(cls, "random", shape, dtype, device, requires_grad, name, generator)


@classmethod
def arange(cls, start: float, stop: float | None = None, step: float = 1, *, dtype: Any = None,
           device: Any = None, requires_grad: bool = False, name: str | None = None) -> Tensor:  # fmt: skip
    """``arange(n)`` or ``arange(start, stop, step)``: int64 when every argument is an
    integer, else float32, unless ``dtype`` says otherwise (as PyTorch's)."""
    whole = all(isinstance(v, (int, np.integer)) for v in (start, stop if stop is not None else 0, step))
    dt = dtype or (np.int64 if whole else get_default_dtype())
    arr = np.arange(start, stop, step) if stop is not None else np.arange(start)  # (exact for ints)
    return cls._host(arr, dt, device, requires_grad, name)


@classmethod
def eye(cls, n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False, name: str | None = None) -> Tensor:  # fmt: skip
    return cls._host(np.eye(n, m), dtype or get_default_dtype(), device, requires_grad, name)


@classmethod
def from_dlpack(cls, x: Any) -> Tensor:
    """A tensor sharing memory with any ``__dlpack__`` producer (CPU or CUDA)."""
    kind = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
    if kind == 2:  # kDLCUDA
        dev = get_device(f"cuda:{x.__dlpack_device__()[1]}")
        return cls._wrap(dev.xp.from_dlpack(x), dev)
    return cls._wrap(np.from_dlpack(x), get_device("cpu"))


#: the Tensor classmethods of this module (``install_methods`` puts them on Tensor)
METHODS = {n: globals()[n] for n in ("_host", "zeros", "ones", "full", "randn", "rand", "arange", "eye", "from_dlpack")}
