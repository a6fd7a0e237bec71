"""The order in which PyTorch's CPU ``sort`` (``stable=False``) leaves equal entries.

The values of a sort do not depend on it, but a gradient does: it flows back to the entries
that a ``quantile`` picks, and among equal entries (NaNs, repeated values) PyTorch's pick is the
one its unstable sort put there. That sort is an introsort: slices of at most 16 entries end in
an insertion sort (so equal entries keep their order, as a stable sort), longer ones are first
split around the median of three entries, the larger entries first, and fall back on a heap
sort past twice the logarithm of the length in splits. :func:`sort_order` follows the same
steps on the host (each split is a few vectorised NumPy operations), so the order of equal
entries is PyTorch's too.

>>> sort_order(np.zeros(17))[:3].tolist()
[8, 16, 15]
"""

from __future__ import annotations

import numpy as np

_SMALL = 16  # slices of at most this many entries are left to the final insertion sort


def sort_order(x: np.ndarray) -> np.ndarray:
    """The permutation PyTorch's CPU ``sort(stable=False)`` of the 1-D ``x`` gives (NaN last, ascending)."""
    n = x.shape[0]
    order = np.argsort(x, kind="stable")  # (NumPy puts NaN last, as PyTorch's comparison)
    if n <= _SMALL:
        return order
    # integer keys with the same ties as PyTorch's comparison: NaNs all equal, -0.0 equal to 0.0
    s = x[order]
    same = (s[1:] == s[:-1]) | (np.isnan(s[1:]) & np.isnan(s[:-1]))
    if not same.any():
        return order  # (no ties: any sort gives the stable order)
    keys = np.empty(n, np.int64)
    keys[order] = np.concatenate(([0], np.cumsum(~same)))
    perm = np.arange(n)
    _introsort(keys, perm, 0, n, 2 * (n.bit_length() - 1))
    return perm[np.argsort(keys, kind="stable")]  # (the final insertion sort keeps equal entries' order)


def _introsort(a: np.ndarray, perm: np.ndarray, lo: int, hi: int, depth: int) -> None:
    while hi - lo > _SMALL:
        if depth == 0:
            _heap_sort(a, perm, lo, hi)
            return
        depth -= 1
        _median_to_first(a, perm, lo, lo + 1, lo + (hi - lo) // 2, hi - 1)
        cut = _partition(a, perm, lo, hi)
        _introsort(a, perm, cut, hi, depth)
        hi = cut


def _swap(a: np.ndarray, perm: np.ndarray, i: int, j: int) -> None:
    a[i], a[j] = a[j], a[i]
    perm[i], perm[j] = perm[j], perm[i]


def _median_to_first(a: np.ndarray, perm: np.ndarray, result: int, i: int, j: int, k: int) -> None:
    """The median of entries ``i``, ``j``, ``k`` swapped into ``result`` (ties decided as PyTorch's)."""
    if a[i] < a[j]:
        pick = j if a[j] < a[k] else k if a[i] < a[k] else i
    elif a[i] < a[k]:
        pick = i
    elif a[j] < a[k]:
        pick = k
    else:
        pick = j
    _swap(a, perm, result, pick)


def _partition(a: np.ndarray, perm: np.ndarray, lo: int, hi: int) -> int:
    """Entries ``lo + 1 .. hi`` split around the pivot at ``lo``: scanning from the left for an entry
    not below it and from the right for one not above it, swapping each such pair while the scans
    have not met; the split point. Each pair is found at once: the scans only pass entries no swap
    has moved, so the k-th pair is the k-th candidate from each side."""
    p = a[lo]
    left = lo + 1 + np.flatnonzero(a[lo + 1 : hi] >= p)  # (ascending)
    right = lo + np.flatnonzero(a[lo:hi] <= p)[::-1]  # (descending; the pivot itself stops the scan)
    m = min(len(left), len(right))
    k = int(np.argmin(left[:m] < right[:m])) if m and not (left[:m] < right[:m]).all() else m
    if k:
        li, ri = left[:k], right[:k]
        a[li], a[ri] = a[ri].copy(), a[li].copy()
        perm[li], perm[ri] = perm[ri].copy(), perm[li].copy()
    if k < len(left) and (k == 0 or left[k] < right[k - 1]):
        return int(left[k])
    return int(right[k - 1])


def _heap_sort(a: np.ndarray, perm: np.ndarray, lo: int, hi: int) -> None:
    """A heap sort of ``lo .. hi``: a max-heap built bottom-up, then its top moved to the end in turn."""
    n = hi - lo
    for parent in range((n - 2) // 2, -1, -1):
        _adjust(a, perm, lo, parent, n, a[lo + parent], perm[lo + parent])
    for last in range(n - 1, 0, -1):
        value, index = a[lo + last], perm[lo + last]
        a[lo + last], perm[lo + last] = a[lo], perm[lo]
        _adjust(a, perm, lo, 0, last, value, index)


def _adjust(a: np.ndarray, perm: np.ndarray, lo: int, hole: int, n: int, value: int, index: int) -> None:
    """Sift the hole at ``hole`` down to a leaf (the larger child up, the right one on ties), then
    ``value`` up from there to its place."""
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if a[lo + child] < a[lo + child - 1]:
            child -= 1
        a[lo + hole], perm[lo + hole] = a[lo + child], perm[lo + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        a[lo + hole], perm[lo + hole] = a[lo + child - 1], perm[lo + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and a[lo + parent] < value:
        a[lo + hole], perm[lo + hole] = a[lo + parent], perm[lo + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[lo + hole], perm[lo + hole] = value, index
