"""PyTorch's lazy layers: ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``,
``LazyBatchNorm1d/2d/3d`` and ``LazyInstanceNorm1d/2d/3d`` take their input channels from
their first input. Until then their parameters are :class:`~.parameter.UninitializedParameter`
and their running statistics :class:`~.parameter.UninitializedBuffer`, as PyTorch's; the first
forward fills them in place (the same parameter objects, so an optimizer built before holds
them) with the eager layer's initialisation, and the module becomes that layer, as PyTorch's
``cls_to_become`` does. (``LazyLinear`` lives with ``Linear`` in ``layers.py``.)"""

from __future__ import annotations

import inspect
from typing import Any

from ..engine.function import InvalidArgumentError
from ..tensors._tensor import Tensor
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .parameter import UninitializedBuffer, is_lazy, save_lazy_state, uninitialize


class _Lazy:
    """The mixin: ``cls_to_become`` built with the channels of the first input, its arrays
    moved into this module's (empty) parameters and buffers."""

    cls_to_become: type = Module
    _channel_from_end = 0  # the channel axis counted from the end (conv: spatial axes + 1); 0: axis 1

    def _remember(self, *args: Any, **kw: Any) -> None:
        object.__setattr__(self, "_lazy_args", (args, kw))
        for p in self._parameters.values():
            if p is not None:
                uninitialize(p)
        for name, b in list(self._buffers.items()):
            if name != "num_batches_tracked":  # (a count, known from the start, as PyTorch's)
                persistent = name not in self._non_persistent
                self.register_buffer(name, UninitializedBuffer(device=b.device, dtype=b.dtype), persistent)

    def has_uninitialized_params(self) -> bool:
        return self._lazy_args is not None

    _save_to_state_dict = save_lazy_state

    def initialize_parameters(self, input: Tensor) -> None:
        """Build the eager layer for ``input``'s channels and take over its values."""
        axis = input.ndim - self._channel_from_end if self._channel_from_end else 1
        if not 0 <= axis < input.ndim:
            raise ValueError(f"{type(self).__name__}: input of shape {tuple(input.shape)} has no channel axis")
        channels = input.shape[axis]
        args, kw = self._lazy_args
        placeholders = [t for t in (*self._parameters.values(), *self._buffers.values()) if is_lazy(t)]
        bound = inspect.signature(self.cls_to_become.__init__).bind(self, channels, *args, **kw)
        if placeholders:  # in the placeholders' dtype and on their device: a .double() or a meta device before
            bound.arguments["dtype"] = placeholders[0].dtype  # the first input holds, as PyTorch's
            bound.arguments["device"] = placeholders[0].device
        full = self.cls_to_become(*bound.args[1:], **bound.kwargs)
        for name, t in full._parameters.items():
            mine = self._parameters.get(name)
            if mine is not None:
                mine._data, mine._dev = t._data, t._dev
                mine.__class__ = type(t)
        for name, t in full._buffers.items():
            if name in self._buffers:
                self.register_buffer(name, t, name not in self._non_persistent)
        for name in ("in_channels", "num_features"):
            if name in full.__dict__:
                object.__setattr__(self, name, full.__dict__[name])
        object.__setattr__(self, "_lazy_args", None)
        self.__class__ = self.cls_to_become

    def __call__(self, *args: Any, **kw: Any) -> Any:
        if self.has_uninitialized_params() and (args or kw):  # (the input by keyword too: layer(input=x))
            self.initialize_parameters(*args, **kw)
        return Module.__call__(self, *args, **kw)  # type: ignore[arg-type]  (the class may have just changed)


def _initialize_conv(self: Any, input: Tensor, *args: Any, **kwargs: Any) -> None:
    """PyTorch's lazy convolutions' ``initialize_parameters(input, *args, **kwargs)``: the channels
    are ``input``'s; the rest (a forward's other arguments) says nothing about them."""
    _Lazy.initialize_parameters(self, input)


def _lazy_conv(base: type, transposed: bool) -> type:
    nd = base._nd

    def init(self: Any, out_channels: int, kernel_size: Any, **kw: Any) -> None:
        # (groups is checked against the channels when they are known, at the first input, as PyTorch's)
        groups = kw["groups"]
        if not isinstance(groups, int) or groups < 1:
            raise InvalidArgumentError(f"Lazy{base.__name__}: groups must be a positive integer, got {groups!r}")
        base.__init__(self, 0, out_channels, kernel_size, **{**kw, "groups": 1})
        self.groups = groups
        self._remember(out_channels, kernel_size, **kw)

    if transposed:  # (PyTorch's parameters, in its order: output_padding third, dilation after bias)

        def __init__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                     padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:  # fmt: skip
            init(self, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding,
                 groups=groups, bias=bias, dilation=dilation, padding_mode=padding_mode, device=device, dtype=dtype)  # fmt: skip

    else:

        def __init__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                     dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                     device: Any = None, dtype: Any = None) -> None:  # fmt: skip
            init(self, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation, groups=groups,
                 bias=bias, padding_mode=padding_mode, device=device, dtype=dtype)  # fmt: skip

    doc = (f"PyTorch's ``nn.Lazy{base.__name__}(out_channels, kernel_size, ...)``: a :class:`{base.__name__}` "
           "whose ``in_channels`` is read from its first input.")  # fmt: skip
    return type(f"Lazy{base.__name__}", (_Lazy, base),
                {"__init__": __init__, "initialize_parameters": _initialize_conv, "cls_to_become": base,
                 "_channel_from_end": nd + 1, "__doc__": doc,
                 "__module__": __name__})  # fmt: skip


def _lazy_norm(base: type) -> type:
    def __init__(self: Any, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:  # fmt: skip
        # (the lazy instance norms default to affine=True and track_running_stats=True, as PyTorch's)
        args = (eps, momentum, affine, track_running_stats, device, dtype)
        base.__init__(self, 0, *args, bias=bias)
        self._remember(*args, bias=bias)

    doc = (f"PyTorch's ``nn.Lazy{base.__name__}(eps=1e-5, momentum=0.1, ...)``: a :class:`{base.__name__}` "
           "whose ``num_features`` is read from its first input.")  # fmt: skip
    return type(f"Lazy{base.__name__}", (_Lazy, base),
                {"__init__": __init__, "cls_to_become": base, "_channel_from_end": 0, "__doc__": doc,
                 "__module__": __name__})  # fmt: skip


LazyConv1d = _lazy_conv(Conv1d, False)
LazyConv2d = _lazy_conv(Conv2d, False)
LazyConv3d = _lazy_conv(Conv3d, False)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, True)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, True)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, True)
# (channels on axis 1, as PyTorch's lazy norms read them: an unbatched instance norm input is refused)
LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)
