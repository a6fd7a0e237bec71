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


def rank_keys(x: np.ndarray) -> np.ndarray:
    """Integer keys of the 1-D ``x`` with the ties of PyTorch's comparison: equal entries (and -0.0
    and 0.0) one key, every NaN one key above all numbers."""
    order = np.argsort(x, kind="stable")
    s = x[order]
    same = (s[1:] == s[:-1]) | (np.isnan(s[1:]) & np.isnan(s[:-1]))
    keys = np.empty(x.shape[0], np.int64)
    keys[order] = np.concatenate(([0], np.cumsum(~same)))
    return keys


def select_index(x: np.ndarray, k: int) -> int:
    """The index of the entry PyTorch's CPU ``kthvalue`` picks as the ``k``-th smallest (0-based) of
    the 1-D ``x`` (NaN above every number): its quickselect, which splits around the median of the
    first, middle and last entries and moves equal entries about, so a tie's pick is where that
    left it. Entry for entry: a Python loop (called only for a slice whose pick is a tie)."""
    a = rank_keys(x).tolist()
    perm = list(range(len(a)))

    def swap(i: int, j: int) -> None:
        a[i], a[j] = a[j], a[i]
        perm[i], perm[j] = perm[j], perm[i]

    lo, hi = 0, len(a) - 1
    while hi > lo:
        if hi == lo + 1:  # (two entries)
            if a[lo] > a[hi]:
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)  # the median of three to lo, the smaller of the others to lo + 1
        if a[lo + 1] > a[hi]:
            swap(lo + 1, hi)
        if a[lo] > a[hi]:
            swap(lo, hi)
        if a[lo + 1] > a[lo]:
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, a[lo]
        while True:
            i += 1
            while pivot > a[i]:
                i += 1
            j -= 1
            while a[j] > pivot:
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return perm[k]


def mode_index(x: np.ndarray) -> int:
    """The index PyTorch's CPU ``mode`` gives for the 1-D ``x``: it sorts (value, index) pairs by value
    and takes the first longest run of equal values, at the run's last sorted position. Without NaN
    that sort's order of equal entries is :func:`sort_order`'s. A NaN equals nothing, and up to 16
    entries the sort is an insertion sort under ``<`` (which no NaN passes), replayed here; a longer
    slice with a NaN has no defined order there (its comparison is not a strict order) and takes the
    last occurrence of the smallest most frequent value."""
    n = x.shape[0]
    nan = np.isnan(x)
    if not nan.any():
        perm = sort_order(x)
    elif n <= _SMALL:
        perm = []
        for i in range(n):  # (libstdc++'s insertion sort: to the front if below the first, else leftwards)
            v = x[i]
            if perm and v < x[perm[0]]:
                perm.insert(0, i)
                continue
            j = len(perm)
            while j > 0 and v < x[perm[j - 1]]:
                j -= 1
            perm.insert(j, i)
    else:
        vals, counts = np.unique(x, return_counts=True)
        best = vals[np.argmax(counts)]
        return int(np.nonzero((x == best) | (nan & np.isnan(best)))[0][-1])
    s = x[perm]
    best, best_at, run = 0, 0, 0
    for i in range(n):
        run += 1
        if i == n - 1 or not s[i] == s[i + 1]:
            if run > best:
                best, best_at = run, i
            run = 0
    return int(perm[best_at])


def topk_order(x: np.ndarray, k: int, largest: bool, in_order: bool = True) -> np.ndarray:
    """The indices PyTorch's CPU ``topk`` returns for the 1-D ``x`` (``in_order``: its ``sorted``), equal
    entries in its order: pairs (value, index) compared by value (NaN above every number), and either a
    partial sort (a heap of the best ``k``, where ``k * 64 <= n``) or an ``nth_element`` (an
    introselect: median-of-three splits, then an insertion sort of at most 3 entries) followed by a
    sort of the first ``k - 1``, as the C++ standard library of PyTorch's builds does them.

    >>> topk_order(np.array([1.0, 1.0, 1.0, 1.0]), 2, True).tolist()
    [1, 2]
    """
    n = x.shape[0]
    keys = rank_keys(x)
    a = -keys if largest else keys  # (a "better" entry has a smaller key)
    if k == 0:
        return np.zeros(0, np.int64)
    same = np.bincount(keys).max() > 1 if n else False
    if not same and in_order:  # (no ties: the order is that of any sort)
        return np.argsort(a, kind="stable")[:k]
    perm = np.arange(n)
    if k * 64 <= n:
        _heap_select(a, perm, 0, k, n)
        _sort_heap(a, perm, 0, k)
        return perm[:k]
    _introselect(a, perm, k - 1, n)
    if not in_order:
        return perm[:k]
    m = k - 1  # (the first k - 1 sorted; the k-th stays where nth_element put it)
    if m > _SMALL:
        _introsort(a, perm, 0, m, 2 * (m.bit_length() - 1))
    head = np.argsort(a[:m], kind="stable")  # (the final insertion sort keeps equal entries' order)
    perm[:m] = perm[:m][head]
    return perm[:k]


def _introselect(a: np.ndarray, perm: np.ndarray, nth: int, n: int) -> None:
    """``std::nth_element``: split around the median of three until at most 3 entries are left
    around ``nth`` (a heap select past twice the logarithm of ``n`` splits), then sort those."""
    lo, hi, depth = 0, n, 2 * (n.bit_length() - 1)
    while hi - lo > 3:
        if depth == 0:
            _heap_select(a, perm, lo, nth + 1, hi)
            _swap(a, perm, lo, nth)
            return
        depth -= 1
        _median_to_first(a, perm, lo, lo + 1, lo + (hi - lo) // 2, hi - 1)
        cut = _partition(a, perm, lo, hi)
        if cut <= nth:
            lo = cut
        else:
            hi = cut
    order = np.argsort(a[lo:hi], kind="stable")  # (an insertion sort: equal entries keep their order)
    a[lo:hi], perm[lo:hi] = a[lo:hi][order], perm[lo:hi][order]


def _heap_select(a: np.ndarray, perm: np.ndarray, lo: int, mid: int, hi: int) -> None:
    """The best ``mid - lo`` entries of ``lo .. hi`` into a max-heap at ``lo .. mid``: each later entry
    better than the heap's top replaces it."""
    n = mid - lo
    for parent in range((n - 2) // 2, -1, -1):
        _adjust(a, perm, lo, parent, n, a[lo + parent], perm[lo + parent])
    for i in range(mid, hi):
        if a[i] < a[lo]:
            value, index = a[i], perm[i]
            a[i], perm[i] = a[lo], perm[lo]
            _adjust(a, perm, lo, 0, n, value, index)


def _sort_heap(a: np.ndarray, perm: np.ndarray, lo: int, hi: int) -> None:
    """The max-heap at ``lo .. hi`` sorted ascending: its top moved to the end in turn."""
    for last in range(hi - lo - 1, 0, -1):
        value, index = a[lo + last], perm[lo + last]
        a[lo + last], perm[lo + last] = a[lo], perm[lo]
        _adjust(a, perm, lo, 0, last, value, index)
