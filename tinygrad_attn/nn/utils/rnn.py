"""PyTorch's ``torch.nn.utils.rnn``: sequences of different lengths in one padded batch.

``pack_padded_sequence`` is not here: the recurrent layers do not take lengths.
"""

from __future__ import annotations

from collections.abc import Sequence

from ... import functional as F
from ..._tensor import Tensor, stack

__all__ = ["pad_sequence"]


def pad_sequence(sequences: Sequence[Tensor] | Tensor, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:  # fmt: skip
    """Stack tensors of shapes ``(L_i, *)`` into ``(L, B, *)`` (``batch_first``: ``(B, L, *)``),
    ``L`` the longest, each padded with ``padding_value`` on ``padding_side`` ("right" or
    "left"). Gradients flow back to each sequence.

    >>> pad_sequence([Tensor.ones(3, 2), Tensor.ones(1, 2)], batch_first=True).shape  # doctest: +SKIP
    (2, 3, 2)
    """
    if padding_side not in ("right", "left"):
        raise ValueError(f"pad_sequence: padding_side must be 'left' or 'right', got {padding_side!r}")
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
