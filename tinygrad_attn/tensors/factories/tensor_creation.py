"""Tensor's own constructors: ``Tensor._host`` (an array made on the host, moved to a device)
and ``Tensor.from_dlpack``, and the random draws behind ``rand``/``randn`` (``Tensor.zeros`` and the
other factories are the ``tga.`` functions of :mod:`tinygrad_attn.tensors.factories.creation` themselves). Random draws come from
a generator (PyTorch's numbers), on the host, so a seed gives the same numbers on every device.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...engine.bfloat16 import kind_of
from ...engine.declare import public
from ...engine.switches import _State, tracing
from ...random import draw, generator_for
from ...random import transforms as random_transforms
from ...runtime.backend import default_device, get_device
from .._tensor import Tensor, _shape_args
from ..dtypes import UnsupportedDtypeError, get_default_dtype, torch_dtype


@public(function=False, method=True)
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


def on_meta(device: Any) -> bool:
    """Whether a factory's tensor goes to the meta device (``device``, else the default): its host
    values are then a broadcast of one element (no memory, nothing drawn)."""
    return (get_device(device) if device is not None else default_device()).meta


def drawn(cls: Any, kind: str, shape: Any, dtype: Any, device: Any, requires_grad: bool, name: str | None,
           generator: Any = None) -> Tensor:  # fmt: skip
    """A tensor of ``kind`` draws (``"random"`` or ``"standard_normal"``) from ``generator`` (the
    default one without), PyTorch's numbers; inside a trace (without grad) an op, so that a
    replay draws again."""
    dt = np.dtype(dtype) if dtype is not None else get_default_dtype()
    if dt.kind == "c":  # (PyTorch's: the draws of a real tensor of twice the entries, as (real, imag) pairs;
        # normal ones scaled by sqrt(1/2) so that E|z|^2 = 1)
        part = drawn(cls, kind, (*_shape_args(shape, new=True), 2), torch_dtype(dt).to_real(), device, False, None,
                     generator)  # fmt: skip
        if kind != "random":
            part = part * math.sqrt(0.5)
        from ...ops.complex import ViewAsComplex  # noqa: PLC0415 - ops are loaded after this module

        z = ViewAsComplex.apply(part).clone()
        z.name = name
        return z.requires_grad_(True) if requires_grad else z
    if kind_of(dt) != "f":
        raise UnsupportedDtypeError(
            f"{'rand' if kind == 'random' else 'randn'}: a floating-point dtype is needed, got {dt}"
        )
    if tracing() and not requires_grad:
        return draw(kind, _shape_args(shape, new=True), dt, cls.zeros((), device=device), generator=generator)
    if on_meta(device):  # (nothing to draw into: PyTorch's meta factories leave the generator as it is)
        return cls._host(
            np.broadcast_to(np.zeros((), dt), _shape_args(shape, new=True)), dt, device, requires_grad, name
        )
    gen = generator_for(generator, "rand" if kind == "random" else "randn")
    make = random_transforms.uniform if kind == "random" else random_transforms.normal
    return cls._host(make(gen, _shape_args(shape, new=True), dt), dt, device, requires_grad, name)


def _shared_with(x: Any) -> Tensor:
    """A tensor sharing memory with any ``__dlpack__`` producer (CPU or CUDA)."""
    kind = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
    if kind == 2:  # kDLCUDA
        dev = get_device(f"cuda:{x.__dlpack_device__()[1]}")
        return Tensor._wrap(dev.xp.from_dlpack(x), dev)
    return Tensor._wrap(np.from_dlpack(x), get_device("cpu"))


class _Capsule:
    """A DLPack capsule (of ``to_dlpack``, or another library's) as the producer NumPy and CuPy read:
    the capsule's device is read from its memory by the consumer, so the producer says CPU."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, *args: Any, **kw: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


@public(method=True, static=True)
def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """PyTorch's ``torch.from_dlpack``: a tensor sharing memory with ``ext_tensor``, an object with
    ``__dlpack__`` (a NumPy or CuPy array, a tensor of this library or of PyTorch) or a DLPack capsule
    of ``to_dlpack`` (usable once). ``device`` moves it and ``copy=True`` copies it, as PyTorch's."""
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    elif not hasattr(ext_tensor, "__dlpack__"):  # (PyTorch reads it as a capsule, and refuses it so)
        raise RuntimeError(
            f"from_dlpack received an invalid capsule: expected an object with __dlpack__ (an array or tensor) "
            f"or a DLPack capsule, got {type(ext_tensor).__name__}"
        )
    if isinstance(ext_tensor, Tensor):  # (this library's: its memory through detach, an op a trace records)
        ext_tensor.__dlpack__()  # (PyTorch's refusal of a tensor that requires grad)
        out = ext_tensor.detach()
    else:
        out = _shared_with(ext_tensor)
    if device is not None:
        out = out.to(device)
    return out.clone() if copy and out._data is not None else out


@public
def to_dlpack(tensor: Tensor) -> Any:
    """PyTorch's legacy ``torch.to_dlpack``: a DLPack capsule sharing ``tensor``'s memory, to be read
    once by ``from_dlpack`` (``np.from_dlpack(tensor)`` reads the tensor itself). The capsule is
    DLPack's versioned one where the array library writes it (NumPy imports the older kind read-only)."""
    data = tensor.detach()._data
    try:
        return data.__dlpack__(max_version=(1, 0))
    except TypeError:  # (a library of the older protocol)
        return data.__dlpack__()
