"""PyTorch's ``torch.nn.utils.rnn``: sequences of different lengths in one padded batch
(``pad_sequence``), or packed (``PackedSequence``, ``pack_padded_sequence``,
``pad_packed_sequence``, ``pack_sequence``), which ``nn.RNN``, ``nn.GRU`` and ``nn.LSTM``
take as input: each sequence then stops at its own last step, as in PyTorch.

>>> packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)  # doctest: +SKIP
>>> out, h_n = gru(packed)  # doctest: +SKIP
>>> out, lengths = pad_packed_sequence(out, batch_first=True)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ... import functional as F
from ...tensors._tensor import Tensor, cat, stack

__all__ = [
    "pad_sequence",
    "PackedSequence",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pack_sequence",
    "unpad_sequence",
    "unpack_sequence",
]


def pad_sequence(sequences: Sequence[Tensor] | Tensor, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:  # fmt: skip
    """Stack tensors of shapes ``(L_i, *)`` into ``(L, B, *)`` (``batch_first``: ``(B, L, *)``),
    ``L`` the longest, each padded with ``padding_value`` on ``padding_side`` ("right" or
    "left"). Gradients flow back to each sequence.

    >>> pad_sequence([Tensor.ones(3, 2), Tensor.ones(1, 2)], batch_first=True).shape  # doctest: +SKIP
    (2, 3, 2)
    """
    if padding_side not in ("right", "left"):
        raise RuntimeError(f"pad_sequence: expected padding_side to be one of left or right, but got {padding_side}")
    seqs = list(sequences)
    if not seqs:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    trailing = {tuple(s.shape[1:]) for s in seqs}
    if any(s.ndim == 0 for s in seqs) or len(trailing) > 1:
        raise RuntimeError(
            f"pad_sequence: every sequence needs shape (L_i, *) with the same trailing shape, got "
            f"{[tuple(s.shape) for s in seqs]}"
        )
    longest = max(s.shape[0] for s in seqs)
    padded = []
    for s in seqs:
        extra = longest - s.shape[0]
        if extra:
            lo, hi = (0, extra) if padding_side == "right" else (extra, 0)
            s = F._pad_constant(s, 0, lo, hi, padding_value)
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


# -- packed sequences ---------------------------------------------------------------------------
class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None


class PackedSequence(_PackedFields):
    """PyTorch's ``PackedSequence``: the steps of a batch of sequences of different lengths,
    time-major, longest sequence first. ``data`` ``(sum of lengths, *)`` holds step 0 of every
    sequence, then step 1 of those that have one, ...; ``batch_sizes[t]`` (int64, host) is
    how many sequences have a step ``t``. ``sorted_indices`` maps the packed order to the
    batch's (None when the batch came sorted), ``unsorted_indices`` is its inverse (computed
    when not given). As PyTorch's, ``PackedSequence((data, batch_sizes))`` is
    ``PackedSequence(data, batch_sizes)``."""

    __slots__ = ()

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:  # fmt: skip
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = sorted_indices.argsort()  # (the inverse permutation)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data`` (and the indices, to its device) moved or cast as ``Tensor.to``; ``batch_sizes`` stays."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        idx = [None if i is None else i.to(data.device) for i in (self.sorted_indices, self.unsorted_indices)]
        return PackedSequence(data, self.batch_sizes, *idx)

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self, device: Any = None) -> PackedSequence:
        return self.to("cuda" if device is None else device)

    def float(self) -> PackedSequence:
        return self.to(np.float32)

    def double(self) -> PackedSequence:
        return self.to(np.float64)

    @property
    def is_cuda(self) -> bool:
        return str(self.data.device).startswith("cuda")


def _host_ints(v: Any, what: str, op: str) -> np.ndarray:
    """A 1-D host int64 array from a Tensor, a list or another library's tensor."""
    if isinstance(v, Tensor):
        a = v.detach().numpy()
    else:
        if hasattr(v, "detach"):  # a torch tensor
            v = v.detach().cpu()
        a = np.asarray(v)
    if a.ndim != 1 or (a.size and a.dtype.kind not in "iuf"):
        raise RuntimeError(
            f"{op}: {what} must be a 1-D list or tensor of ints, got {a.dtype} of shape {tuple(a.shape)}"
        )
    return a.astype(np.int64)  # (PyTorch casts to int64 too)


def _packed_positions(batch_sizes: np.ndarray) -> np.ndarray:
    """For each packed row, its flat position ``t * B + b`` in the time-major padded batch."""
    b = int(batch_sizes[0]) if batch_sizes.size else 0
    # (a sorted batch: at step t the first batch_sizes[t] sequences have a step)
    return np.flatnonzero(np.arange(b)[None, :] < batch_sizes[:, None]).astype(np.int64)


def _pack_padded(padded: Tensor, batch_sizes: np.ndarray) -> Tensor:
    """``(T, B, *)`` time-major, sorted, -> packed ``data``: one gather (the gradient scatters back)."""
    t_len, b = padded.shape[0], padded.shape[1]
    rows = padded.reshape((t_len * b,) + tuple(padded.shape[2:]))
    return rows[Tensor(_packed_positions(batch_sizes), device=padded.device)]


def _pad_packed(
    data: Tensor, batch_sizes: np.ndarray, padding_value: float = 0.0, total_length: int | None = None
) -> Tensor:
    """Packed ``data`` -> ``(T, B, *)`` time-major, sorted: one gather from ``data`` and a row of
    ``padding_value`` (where a sequence has no step)."""
    t_len = len(batch_sizes) if total_length is None else total_length
    b = int(batch_sizes[0])
    src = np.full(t_len * b, data.shape[0], dtype=np.int64)  # the padding row, unless a step is there
    src[_packed_positions(batch_sizes)] = np.arange(data.shape[0])
    pad = Tensor.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    rows = cat([data, pad], 0)[Tensor(src, device=data.device)]
    return rows.reshape((t_len, b) + tuple(data.shape[1:]))


def _lengths_of(batch_sizes: np.ndarray) -> np.ndarray:
    """Each sorted sequence's length, from how many sequences each step has."""
    b = int(batch_sizes[0])
    return (batch_sizes[None, :] > np.arange(b)[:, None]).sum(axis=1).astype(np.int64)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:  # fmt: skip
    """Pack ``input`` ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) whose sequence ``b``
    has ``lengths[b]`` steps (a list or a 1-D tensor of positive ints). With ``enforce_sorted``
    the lengths must decrease; otherwise the batch is sorted here and the order kept in
    ``sorted_indices``. Gradients flow back to ``input``'s real steps."""
    op = "pack_padded_sequence"
    lens = _host_ints(lengths, "lengths", op)
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions (T, B, *), got shape {tuple(input.shape)}")
    b_axis, t_axis = (0, 1) if batch_first else (1, 0)
    if lens.shape[0] != input.shape[b_axis]:
        raise RuntimeError(
            f"{op}: expected {input.shape[b_axis]} lengths (the batch of input {tuple(input.shape)}), got {lens.shape[0]}"
        )
    if lens.size and lens.min() <= 0:
        raise RuntimeError(f"{op}: every length must be positive (PyTorch's rule), got {lens.tolist()}")
    if lens.size and lens.max() > input.shape[t_axis]:
        raise RuntimeError(
            f"{op}: a length of {lens.max()} is longer than the sequences of input {tuple(input.shape)} "
            f"({input.shape[t_axis]} steps)"
        )
    if enforce_sorted:
        if np.any(np.diff(lens) > 0):
            raise RuntimeError(
                f"{op}: `lengths` array must be sorted in decreasing order when `enforce_sorted` is True, got "
                f"{lens.tolist()}. Pass enforce_sorted=False to have the batch sorted here"
            )
        order = None
    else:
        order = np.argsort(-lens, kind="stable")  # (torch.sort keeps ties in order, too)
        lens = lens[order]
    x = input.transpose(0, 1) if batch_first else input  # (T, B, *)
    if order is not None:
        x = x.index_select(1, Tensor(order, device=input.device))
    batch_sizes = (lens[None, :] > np.arange(int(lens[0]))[:, None]).sum(axis=1).astype(np.int64)
    data = _pack_padded(x[: int(lens[0])], batch_sizes)
    sorted_idx = unsorted_idx = None
    if order is not None:
        sorted_idx = Tensor(order, device=input.device)
        unsorted_idx = Tensor(np.argsort(order, kind="stable").astype(np.int64), device=input.device)
    return PackedSequence(data, Tensor(batch_sizes), sorted_idx, unsorted_idx)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:  # fmt: skip
    """The inverse of :func:`pack_padded_sequence`: ``(padded, lengths)``, ``padded`` ``(T, B, *)``
    (``(B, T, *)`` with ``batch_first``) in the batch's original order, ``padding_value`` where a
    sequence has no step, ``T`` the longest length (or ``total_length``); ``lengths`` int64."""
    op = "pad_packed_sequence"
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"{op}: expects a PackedSequence, got {type(sequence).__name__}")
    bs = _host_ints(sequence.batch_sizes, "batch_sizes", op)
    if total_length is not None and total_length < len(bs):
        raise ValueError(
            f"{op}: expected total_length to be at least the length of the longest sequence ({len(bs)}), "
            f"got total_length={total_length}"
        )
    padded = _pad_packed(sequence.data, bs, padding_value, total_length)  # (T, B, *), sorted
    lens = _lengths_of(bs)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lens = lens[_host_ints(sequence.unsorted_indices, "unsorted_indices", op)]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, Tensor(lens)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack tensors of shapes ``(L_i, *)``: ``pack_padded_sequence(pad_sequence(sequences), lengths)``."""
    seqs = list(sequences)
    lengths = [s.shape[0] for s in seqs]
    return pack_padded_sequence(pad_sequence(seqs), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> list[Tensor]:
    """The list of ``(L_i, *)`` tensors that :func:`pad_sequence` padded."""
    lens = _host_ints(lengths, "lengths", "unpad_sequence")
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)  # (B, T, *)
    return [x[i, : int(n)] for i, n in enumerate(lens)]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of ``(L_i, *)`` tensors that :func:`pack_sequence` packed, in their order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
