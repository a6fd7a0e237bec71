"""Basic layers, with PyTorch's weight layouts and default initialisations."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import functional as F
from ..engine.switches import tracing
from ..random import host_generator
from ..random import transforms as rt
from ..runtime.meta import placeholder
from ..tensors._tensor import InvalidArgumentError, Tensor, where
from ..tensors.dtypes import get_default_dtype
from ..tensors.factories.tensor_creation import on_meta
from ..tensors.index.indexing import host_integers
from .module import Module, Parameter
from .parameter import UninitializedParameter, save_lazy_state


class PaddingIndexError(ValueError, AssertionError):
    """An embedding's ``padding_idx`` out of range: PyTorch asserts; a ``ValueError`` as the library raised."""


def _float_dtype(dtype: Any) -> Any:
    """PyTorch's ``dtype=None`` of a module constructor: the default dtype (``tga.get_default_dtype()``)."""
    return get_default_dtype() if dtype is None else dtype


def init_draws(draw: Callable[..., Any], shape: tuple[int, ...], dtype: Any, device: Any = None, *params: Any) -> Any:
    """A module's initial values, ``draw(host_generator(), shape, dtype, *params)`` (PyTorch's numbers);
    for the meta device (``device``, else the default) a placeholder: nothing drawn, no memory."""
    if on_meta(device):
        return placeholder(shape, dtype)
    return draw(host_generator(), shape, dtype, *params)


def _uniform(shape: tuple[int, ...], bound: float, device: Any = None, dtype: Any = None) -> Parameter:
    """A parameter of uniform draws in ``±bound``, PyTorch's ``init.uniform_`` numbers (a complex
    dtype: its parts drawn in pairs, as PyTorch draws into the real view of a complex tensor)."""
    dt = np.dtype(_float_dtype(dtype))
    if dt.kind == "c":
        part = np.dtype(dt.char.lower())  # (complex64's parts are float32)
        pairs = rt.uniform(host_generator(), (*shape, 2), part, -bound, bound)
        return Parameter(np.ascontiguousarray(pairs).view(dt)[..., 0], device=device)
    arr = init_draws(rt.uniform, shape, dt, device, -bound, bound)
    return Parameter(arr, device=device)


def _fan_in(shape: tuple[int, ...]) -> int:
    return shape[1] * math.prod(shape[2:]) if len(shape) > 1 else 0


def _kaiming_uniform(shape: tuple[int, ...], device: Any = None, dtype: Any = None) -> Parameter:
    """PyTorch's default weight init for linear and conv layers, ``kaiming_uniform_(a=sqrt(5))``:
    uniform in ``±1/sqrt(fan_in)``, the bound computed as that function computes it."""
    fan = _fan_in(shape)
    bound = math.sqrt(3.0) * (math.sqrt(2.0 / (1 + math.sqrt(5) ** 2)) / math.sqrt(fan)) if fan else 0.0
    return _uniform(shape, bound, device, dtype)


def _bias_bound(weight_shape: tuple[int, ...]) -> float:
    """PyTorch's bias bound for linear and conv layers: ``1/sqrt(fan_in)`` of the weight."""
    fan = _fan_in(weight_shape)
    return 1 / math.sqrt(fan) if fan > 0 else 0.0


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``(out_features, in_features)``.

    Initialised as PyTorch does: both uniform in ``±1/sqrt(in_features)``.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = _kaiming_uniform((out_features, in_features), device, dtype)
        self.bias = _uniform((out_features,), _bias_bound(self.weight.shape), device, dtype) if bias else None

    def forward(self, input: Tensor) -> Tensor:  # (PyTorch's name: callers pass input=)
        x = input
        if not isinstance(x, Tensor):
            raise TypeError(f"Linear: input must be a Tensor, got {type(x).__name__}; make one with tga.tensor(...)")
        if x.shape[-1:] != (self.in_features,):
            raise InvalidArgumentError(f"Linear({self.in_features}, {self.out_features}): input of shape {tuple(x.shape)} "
                             f"must end in {self.in_features}")  # fmt: skip
        return F.linear(x, self.weight, self.bias)  # (..., out)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for the ``out_proj`` of ``MultiheadAttention``: a :class:`Linear` (the
    name shows in a model's repr and its type)."""


class Embedding(Module):
    """A table of ``num`` vectors of size ``dim``, looked up by integer ids (N(0, 1) init).

    The names of PyTorch's ``nn.Embedding(num_embeddings, embedding_dim, padding_idx)``:
    the row ``padding_idx`` starts at zero and gets no gradient.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        num, dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq, self.sparse = (
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
        )
        self.num, self.dim = num, dim
        self.num_embeddings, self.embedding_dim = num, dim
        if padding_idx is not None:
            if not -num <= padding_idx < num:
                raise PaddingIndexError(f"Embedding({num}, {dim}): padding_idx {padding_idx} is out of range "
                                        f"[-{num}, {num})")  # fmt: skip
            padding_idx %= num
        self.padding_idx = padding_idx
        if _weight is not None:  # (PyTorch's: the given table, as it is, its memory shared)
            if tuple(_weight.shape) != (num, dim):
                raise ValueError(f"Embedding({num}, {dim}): _weight has shape {tuple(_weight.shape)}")
            self.weight = Parameter(_weight, device=device)
        else:
            if num < 0 or dim < 0:  # (PyTorch's empty table of that shape refuses it)
                raise RuntimeError(f"Embedding: Trying to create tensor with negative dimension: [{num}, {dim}]")
            table = init_draws(rt.normal, (num, dim), _float_dtype(dtype), device)
            if padding_idx is not None:
                table[padding_idx] = 0
            self.weight = Parameter(table, device=device)
        if _freeze:
            self.weight.requires_grad = False

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:  # fmt: skip
        """An embedding whose table is the 2-D ``embeddings`` (its memory, as PyTorch's), frozen
        unless ``freeze=False``; ``padding_idx`` gets no gradient (its row is left as given).

        >>> emb = Embedding.from_pretrained(tga.tensor(vectors))  # doctest: +SKIP
        """
        if not isinstance(embeddings, Tensor) or embeddings.ndim != 2:
            shape = tuple(embeddings.shape) if hasattr(embeddings, "shape") else type(embeddings).__name__
            raise ValueError(f"Embedding.from_pretrained: embeddings must be a 2-D tensor, got {shape}")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, _weight=embeddings, _freeze=freeze)  # fmt: skip

    def forward(self, input: Any) -> Tensor:
        if isinstance(input, Tensor) and input.dtype not in (np.int64, np.int32):  # (PyTorch's check, and class)
            raise InvalidArgumentError(f"Embedding({self.num}, {self.dim}): Expected tensor for argument #1 'indices' "
                                       f"to have one of the following scalar types: Long, Int; but got input of dtype "
                                       f"{input.dtype} and shape {tuple(input.shape)}")  # fmt: skip
        if self.max_norm is not None or self.scale_grad_by_freq or self.sparse:
            return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.sparse)  # fmt: skip
        if tracing() and isinstance(input, Tensor):  # input an input of the traced program
            return F.embedding(input, self.weight, self.padding_idx)
        host = host_integers(input, "Embedding")
        if host.size and (host.min() < 0 or host.max() >= self.num):
            bad = host.max() if host.max() >= self.num else host.min()
            raise IndexError(f"Embedding({self.num}, {self.dim}): id {bad} is out of range [0, {self.num})")
        # (..., dim); repeated indices accumulate gradient; new memory, also for one 0-d index
        out = self.weight[host] if host.ndim else self.weight[host.reshape(1)].reshape(self.weight.shape[1:])
        if self.padding_idx is not None and (host == self.padding_idx).any():
            # The padding row is read but not learned: its lookups pass no gradient back.
            pad = Tensor((host == self.padding_idx)[..., None], device=self.weight._dev)
            out = where(pad, out.detach(), out)
        return out

    def extra_repr(self) -> str:
        s = f"{self.num}, {self.dim}"  # (PyTorch's: the settings that differ from the defaults, in its order)
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s


def _shape(normalized_shape: int | tuple[int, ...]) -> tuple[int, ...]:
    """A normalisation layer's ``normalized_shape``, an int (the last axis) or a sequence, as a tuple."""
    if isinstance(normalized_shape, (int, np.integer)):
        return (int(normalized_shape),)
    return tuple(int(d) for d in normalized_shape)


class LayerNorm(Module):
    """Normalise the last axes; learnable ``weight`` (ones) and ``bias`` (zeros).

    PyTorch's ``nn.LayerNorm(normalized_shape, eps, elementwise_affine, bias)``:
    ``normalized_shape`` is an int (the last axis) or a tuple (the last ``len`` axes,
    normalised together); ``elementwise_affine=False`` has no parameters, ``bias=False``
    no bias.
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        shape = _shape(normalized_shape)
        self.dim, self.eps, self.normalized_shape = normalized_shape, eps, shape
        self.elementwise_affine = elementwise_affine
        dtype = _float_dtype(dtype)
        self.weight = Parameter(np.ones(shape, dtype), device=device) if elementwise_affine else None
        self.bias = Parameter(np.zeros(shape, dtype), device=device) if elementwise_affine and bias else None

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")  # fmt: skip


class RMSNorm(Module):
    """PyTorch's ``nn.RMSNorm(normalized_shape, eps=None, elementwise_affine=True)``: divide by
    the root mean square of the last axes (:func:`tinygrad_attn.functional.rms_norm`), then
    scale by a learnable ``weight`` (ones). The normalisation of LLaMA-style models.
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        shape = _shape(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = Parameter(np.ones(shape, _float_dtype(dtype)), device=device) if elementwise_affine else None

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class Identity(Module):
    """Returns its input; a placeholder where a layer is optional (any arguments are ignored)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Dropout(Module):
    """Zero elements with probability ``p`` while training; the identity in ``eval()``.

    ``inplace=True`` zeroes and scales the input itself, as PyTorch's does.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class _DropoutLike(Dropout):
    """PyTorch's other dropouts: ``Dropout``'s arguments and repr, another function."""

    _fn = ""
    _in_place = True  # (whether forward passes ``inplace``: PyTorch's alpha dropouts keep it for the repr only)

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, self.p, self.training, self.inplace and self._in_place)


class Dropout1d(_DropoutLike):
    """Whole channels of ``(N, C, L)`` zeroed while training: PyTorch's ``nn.Dropout1d``."""

    _fn = "dropout1d"


class Dropout2d(_DropoutLike):
    """Whole channels of ``(N, C, H, W)`` zeroed while training: PyTorch's ``nn.Dropout2d``."""

    _fn = "dropout2d"


class Dropout3d(_DropoutLike):
    """Whole channels of ``(N, C, D, H, W)`` zeroed while training: PyTorch's ``nn.Dropout3d``."""

    _fn = "dropout3d"


class AlphaDropout(_DropoutLike):
    """SELU's dropout (mean and variance kept): PyTorch's ``nn.AlphaDropout``."""

    _fn = "alpha_dropout"
    _in_place = False


class FeatureAlphaDropout(_DropoutLike):
    """SELU's dropout of whole channels: PyTorch's ``nn.FeatureAlphaDropout``."""

    _fn = "feature_alpha_dropout"
    _in_place = False


_ACTIVATIONS = ("relu", "gelu")


def named_activation(name: Any, owner: str) -> Callable[[Tensor], Tensor]:
    """``F``'s function of an activation's name, read when a block is built (the public object, which a
    pickled model finds again by name); another name is ``owner``'s ValueError."""
    if name not in _ACTIVATIONS:
        raise ValueError(f"{owner}: activation must be one of {sorted(_ACTIVATIONS)} or a callable, got {name!r}")
    return getattr(F, name)


class FeedForward(Module):
    """The position-wise feed-forward block of a transformer layer.

    ``linear2(dropout(activation(linear1(x))))`` with ``linear1: d_model -> d_ff`` and
    ``linear2: d_ff -> d_model``, the children named as in PyTorch's
    ``TransformerEncoderLayer``. ``activation`` is ``"relu"``, ``"gelu"`` or a callable.

    >>> FeedForward(8, 32, activation="gelu")(Tensor.randn(2, 5, 8)).shape  # doctest: +SKIP
    (2, 5, 8)
    """

    def __init__(self, d_model: int, d_ff: int, activation: str | Callable[[Tensor], Tensor] = "relu",
                 dropout: float = 0.0, device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        if isinstance(activation, str):
            self.activation_name, self.activation = activation, named_activation(activation, "FeedForward")
        elif callable(activation):
            self.activation_name = getattr(activation, "__name__", type(activation).__name__)
            self.activation = activation
        else:
            raise TypeError(f"FeedForward: activation must be a name or a callable, got {type(activation).__name__}")
        self.linear1 = Linear(d_model, d_ff, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(d_ff, d_model, device=device, dtype=dtype)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))  # (..., d_ff) inside

    def extra_repr(self) -> str:
        return f"activation={self.activation_name}"


def sinusoidal_table(max_len: int, d_model: int) -> np.ndarray:
    """The ``(max_len, d_model)`` table of "Attention Is All You Need", in float64 on the host.

    ``pe[pos, 2i] = sin(pos / 10000^(2i/d))`` and ``pe[pos, 2i+1] = cos(pos / 10000^(2i/d))``.
    """
    pos = np.arange(max_len, dtype=np.float64)[:, None]  # (max_len, 1)
    freq = 10000.0 ** (-np.arange(0, d_model, 2, dtype=np.float64) / d_model)  # (ceil(d/2),)
    pe = np.zeros((max_len, d_model))
    pe[:, 0::2] = np.sin(pos * freq)
    pe[:, 1::2] = np.cos(pos * freq[: d_model // 2])
    return pe


class PositionalEncoding(Module):
    """Add the sinusoidal position table to ``x`` of shape ``(B, T, d_model)``, then dropout.

    The table is a non-persistent buffer ``pe`` of shape ``(max_len, d_model)``: it moves
    with ``to(device)`` but is not saved, because it is a fixed function of
    ``(max_len, d_model)`` rebuilt on construction. So checkpoints stay small, and a model
    built with another ``max_len`` still loads them.

    >>> PositionalEncoding(16, max_len=100)(Tensor.zeros(2, 10, 16)).shape  # doctest: +SKIP
    (2, 10, 16)
    """

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.register_buffer("pe", Tensor(sinusoidal_table(max_len, d_model), dtype=_float_dtype(dtype), device=device),
                             persistent=False)  # fmt: skip
        self.dropout = Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim < 2 or x.shape[-1] != self.d_model or x.shape[-2] > self.max_len:
            raise ValueError(f"PositionalEncoding(d_model={self.d_model}, max_len={self.max_len}): input of shape "
                             f"{tuple(x.shape)} must be (..., T, {self.d_model}) with T <= {self.max_len}")  # fmt: skip
        pe = self.pe[: x.shape[-2]]  # (T, d), broadcast over the batch
        if pe.dtype != x.dtype:
            pe = pe.astype(x.dtype)
        return self.dropout(x + pe)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}"


# -- PyTorch's shape layers, LazyLinear and Bilinear -------------------------------------
class Flatten(Module):
    """Flatten axes ``start_dim`` to ``end_dim`` into one (PyTorch's ``nn.Flatten``; the batch axis stays)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split axis ``dim`` into ``unflattened_size`` (one entry may be -1): PyTorch's ``nn.Unflatten``."""

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(int(s) for s in unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)  # the one unflatten, with its axis check

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class LazyLinear(Linear):
    """A :class:`Linear` whose ``in_features`` is read from its first input: PyTorch's
    ``nn.LazyLinear(out_features, bias=True)``.

    Until then ``weight`` and ``bias`` are :class:`~.parameter.UninitializedParameter`, as
    PyTorch's; the first forward fills both in place (the same Parameter objects, so an optimizer built before holds
    them) with Linear's initialisation, and the module becomes a :class:`Linear`.
    """

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        Module.__init__(self)
        self.in_features, self.out_features = 0, out_features
        dtype = _float_dtype(dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.bias = UninitializedParameter(device=device, dtype=dtype) if bias else None

    def has_uninitialized_params(self) -> bool:
        return self.in_features == 0

    _save_to_state_dict = save_lazy_state

    def initialize_parameters(self, input: Tensor) -> None:
        """Take ``in_features`` from ``input``'s last axis and initialise as :class:`Linear`."""
        if input.ndim == 0:
            raise ValueError("LazyLinear: the input must have at least one axis")
        self.in_features = input.shape[-1]
        w = self.weight
        shape = (self.out_features, self.in_features)
        w._data = w._dev.asarray(_kaiming_uniform(shape, dtype=w.dtype).detach().numpy())
        w.__class__ = Parameter
        if self.bias is not None:
            b = self.bias
            b._data = b._dev.asarray(_uniform((self.out_features,), _bias_bound(shape), dtype=b.dtype).detach().numpy())
            b.__class__ = Parameter
        self.__class__ = Linear  # as PyTorch's cls_to_become

    def forward(self, input: Tensor) -> Tensor:
        if self.has_uninitialized_params():
            self.initialize_parameters(input)
        return Linear.forward(self, input)


class Bilinear(Module):
    """``y = x1 @ weight[o] @ x2 + bias[o]`` for each output ``o``: PyTorch's ``nn.Bilinear(in1_features,
    in2_features, out_features, bias=True)``; weight ``(out, in1, in2)``, both uniform in ``±1/sqrt(in1)``."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        bound = 1.0 / math.sqrt(in1_features) if in1_features else 0.0
        self.weight = _uniform((out_features, in1_features, in2_features), bound, device, dtype)
        self.bias = _uniform((out_features,), bound, device, dtype) if bias else None

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")  # fmt: skip
