"""Basic layers, with PyTorch's weight layouts and default initialisations."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import functional as F
from .._tensor import Tensor, where
from ..indexing import host_integers
from ..random import host_generator
from .module import Module, Parameter


def _uniform(shape: tuple[int, ...], bound: float, device: Any = None, dtype: Any = np.float32) -> Parameter:
    arr = host_generator().uniform(-bound, bound, shape)
    return Parameter(arr.astype(dtype), device=device)


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``(out_features, in_features)``.

    Initialised as PyTorch does: both uniform in ``±1/sqrt(in_features)``.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = np.float32) -> None:  # fmt: skip
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        self.weight = _uniform((out_features, in_features), bound, device, dtype)
        self.bias = _uniform((out_features,), bound, device, dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"Linear: input must be a Tensor, got {type(x).__name__}; make one with tga.tensor(...)")
        if x.shape[-1:] != (self.in_features,):
            raise ValueError(f"Linear({self.in_features}, {self.out_features}): input of shape {x.shape} "
                             f"must end in {self.in_features}")  # fmt: skip
        return F.linear(x, self.weight, self.bias)  # (..., out)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A table of ``num`` vectors of size ``dim``, looked up by integer ids (N(0, 1) init).

    The names of PyTorch's ``nn.Embedding(num_embeddings, embedding_dim, padding_idx)``:
    the row ``padding_idx`` starts at zero and gets no gradient.
    """

    def __init__(self, num: int, dim: int, padding_idx: int | None = None, device: Any = None,
                 dtype: Any = np.float32) -> None:  # fmt: skip
        super().__init__()
        self.num, self.dim = num, dim
        self.num_embeddings, self.embedding_dim = num, dim
        if padding_idx is not None:
            if not -num <= padding_idx < num:
                raise ValueError(f"Embedding({num}, {dim}): padding_idx {padding_idx} is out of range [-{num}, {num})")
            padding_idx %= num
        self.padding_idx = padding_idx
        table = host_generator().standard_normal((num, dim)).astype(dtype)
        if padding_idx is not None:
            table[padding_idx] = 0
        self.weight = Parameter(table, device=device)

    def forward(self, ids: Any) -> Tensor:
        host = host_integers(ids, "Embedding")
        if host.size and (host.min() < 0 or host.max() >= self.num):
            bad = host.max() if host.max() >= self.num else host.min()
            raise IndexError(f"Embedding({self.num}, {self.dim}): id {bad} is out of range [0, {self.num})")
        out = self.weight[host]  # (..., dim); repeated ids accumulate gradient
        if self.padding_idx is not None and (host == self.padding_idx).any():
            # The padding row is read but not learned: its lookups pass no gradient back.
            pad = Tensor((host == self.padding_idx)[..., None], device=self.weight._dev)
            out = where(pad, out.detach(), out)
        return out

    def extra_repr(self) -> str:
        return f"{self.num}, {self.dim}" + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


class LayerNorm(Module):
    """Normalise the last axes; learnable ``weight`` (ones) and ``bias`` (zeros).

    PyTorch's ``nn.LayerNorm(normalized_shape, eps, elementwise_affine, bias)``:
    ``normalized_shape`` is an int (the last axis) or a tuple (the last ``len`` axes,
    normalised together); ``elementwise_affine=False`` has no parameters, ``bias=False``
    no bias.
    """

    def __init__(self, dim: int | tuple[int, ...], eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = np.float32) -> None:  # fmt: skip
        super().__init__()
        shape = (dim,) if isinstance(dim, (int, np.integer)) else tuple(int(d) for d in dim)
        self.dim, self.eps, self.normalized_shape = dim, eps, shape
        self.elementwise_affine = elementwise_affine
        self.weight = Parameter(np.ones(shape, dtype), device=device) if elementwise_affine else None
        self.bias = Parameter(np.zeros(shape, dtype), device=device) if elementwise_affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.dim}, eps={self.eps}"


class Identity(Module):
    """Returns its input; a placeholder where a layer is optional (any arguments are ignored)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__()

    def forward(self, x: Any) -> Any:
        return x


class Dropout(Module):
    """Zero elements with probability ``p`` while training; the identity in ``eval()``.

    ``inplace`` is accepted for PyTorch code and ignored (the result is a new tensor).
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {"relu": F.relu, "gelu": F.gelu}


class FeedForward(Module):
    """The position-wise feed-forward block of a transformer layer.

    ``linear2(dropout(activation(linear1(x))))`` with ``linear1: d_model -> d_ff`` and
    ``linear2: d_ff -> d_model``, the children named as in PyTorch's
    ``TransformerEncoderLayer``. ``activation`` is ``"relu"``, ``"gelu"`` or a callable.

    >>> FeedForward(8, 32, activation="gelu")(Tensor.randn(2, 5, 8)).shape  # doctest: +SKIP
    (2, 5, 8)
    """

    def __init__(self, d_model: int, d_ff: int, activation: str | Callable[[Tensor], Tensor] = "relu",
                 dropout: float = 0.0, device: Any = None, dtype: Any = np.float32) -> None:  # fmt: skip
        super().__init__()
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise ValueError(f"FeedForward: activation must be one of {sorted(_ACTIVATIONS)} or a callable, "
                                 f"got {activation!r}")  # fmt: skip
            self.activation_name, self.activation = activation, _ACTIVATIONS[activation]
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
                 dtype: Any = np.float32) -> None:  # fmt: skip
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.register_buffer("pe", Tensor(sinusoidal_table(max_len, d_model), dtype=dtype, device=device),
                             persistent=False)  # fmt: skip
        self.dropout = Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim < 2 or x.shape[-1] != self.d_model or x.shape[-2] > self.max_len:
            raise ValueError(f"PositionalEncoding(d_model={self.d_model}, max_len={self.max_len}): input of shape "
                             f"{x.shape} must be (..., T, {self.d_model}) with T <= {self.max_len}")  # fmt: skip
        pe = self.pe[: x.shape[-2]]  # (T, d), broadcast over the batch
        if pe.dtype != x.dtype:
            pe = pe.astype(x.dtype)
        return self.dropout(x + pe)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}"
