"""``torch.nn.parameter``: :class:`Parameter` and :class:`Buffer` (the classes of
:mod:`tinygrad_attn.nn.module`, the same objects), and the placeholders of the lazy modules,
:class:`UninitializedParameter` and :class:`UninitializedBuffer`, as PyTorch's.

An uninitialized tensor holds no values and has no shape (reading ``.shape`` raises, as
PyTorch's); ``materialize(shape)`` gives it memory and makes it the class it stands for,
in place, so an optimizer built before holds the parameter the module trains.

>>> p = UninitializedParameter(); p.materialize((2, 3)); type(p).__name__, p.shape
('Parameter', (2, 3))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime.backend import get_device
from ..tensors._tensor import Tensor
from .module import Buffer, Module, Parameter

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy", "save_lazy_state"]


def _empty(device: Any, dtype: Any) -> Tensor:
    from ..tensors.dtypes import get_default_dtype  # noqa: PLC0415 - the default at the time of the call

    return Tensor(np.zeros((0,), dtype=np.dtype(dtype) if dtype is not None else get_default_dtype()), device=device)


class _Uninitialized:
    """What both placeholders share: no shape, a short repr, ``materialize``."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Memory of ``shape`` (on ``device``, in ``dtype``; else the placeholder's), uninitialised
        values (zeros here), and the class this placeholder stands for, in place."""
        dev = self._dev if device is None else get_device(device)  # type: ignore[attr-defined]
        dt = self.dtype if dtype is None else np.dtype(dtype)  # type: ignore[attr-defined]
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self._data = dev.asarray(np.zeros(shape, dtype=dt))  # type: ignore[attr-defined]
        self._dev = dev  # type: ignore[attr-defined]
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):
    """PyTorch's ``nn.UninitializedParameter(requires_grad=True, device=None, dtype=None)``: the
    weight of a lazy module before its first input; becomes a :class:`Parameter`."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        Parameter.__init__(self, _empty(device, dtype), requires_grad=requires_grad)

    def __deepcopy__(self, memo: dict) -> UninitializedParameter:
        out = type(self)(self.requires_grad, self._dev, self.dtype)
        memo[id(self)] = out
        return out


class UninitializedBuffer(_Uninitialized, Buffer):
    """PyTorch's ``nn.UninitializedBuffer(requires_grad=False, device=None, dtype=None,
    persistent=True)``: a buffer of a lazy module before its first input; becomes a
    :class:`Buffer` (so ``isinstance(b, nn.Buffer)`` holds before and after, as PyTorch's)."""

    __slots__ = ()
    cls_to_become = Buffer

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:  # fmt: skip
        Buffer.__init__(self, _empty(device, dtype).requires_grad_(requires_grad), persistent=persistent)

    def __deepcopy__(self, memo: dict) -> UninitializedBuffer:
        out = type(self)(self.requires_grad, self._dev, self.dtype, self.persistent)
        memo[id(self)] = out
        return out


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an :class:`UninitializedParameter` or :class:`UninitializedBuffer`."""
    return isinstance(param, _Uninitialized)


def uninitialize(t: Parameter) -> UninitializedParameter:
    """``t`` itself, made an :class:`UninitializedParameter` (the lazy modules build their eager
    layer's parameters, then turn them into placeholders that keep their dtype and device)."""
    t.__class__ = UninitializedParameter
    return t  # type: ignore[return-value]


def save_lazy_state(module: Module, destination: dict, prefix: str, keep_vars: bool) -> None:
    """A lazy module's ``_save_to_state_dict``, as PyTorch's ``LazyModuleMixin``'s: its placeholders
    as they are, not detached (a detached copy would be an empty tensor, whose shape reads ``(0,)``
    where PyTorch's placeholder refuses to have one)."""
    Module._save_to_state_dict(module, destination, prefix, keep_vars)
    for name, t in (*module._parameters.items(), *module._buffers.items()):
        if is_lazy(t) and prefix + name in destination:
            destination[prefix + name] = t
