"""The order in which PyTorch's CPU ``sort`` (``stable=False``), ``topk`` and ``kthvalue`` leave
equal entries.

The indices of ``sort``/``argsort``/``topk`` show it, and a gradient depends on it: it flows back
to the entries a ``quantile`` picks, and among equal entries (NaNs, repeated values) PyTorch's pick
is the one its kernel put there. PyTorch's CPU ``sort`` of every dtype is libstdc++'s introsort
(PyTorch 2.13's CPU build has no x86-simd-sort in it), except a 1-D integer tensor of at least
32768 entries sorted ascending, which its parallel radix sort orders stably. The introsort: slices
of at most 16 entries end in an insertion sort (so equal entries keep their order, as a stable
sort), longer ones are first split around the median of three entries, the larger entries first,
and fall back on a heap sort past twice the logarithm of the length in splits.
:func:`unstable_argsort_rows` follows the same steps on the host (each split is a few vectorised
NumPy operations), for the rows that have ties. ``topk`` is libstdc++'s ``partial_sort`` or
``nth_element`` (:func:`topk_rows`), ``kthvalue`` PyTorch's own quickselect (:func:`select_index`),
``median()`` of every entry ``nth_element`` too (:func:`median_index`: which of 0.0 and -0.0 it
returns), and ``nanmedian`` of a slice of NaNs the NaN that ``nth_element`` leaves first
(:func:`nth_of_equal`).

>>> sort_order(np.zeros(17))[:3].tolist()
[8, 16, 15]
"""

from __future__ import annotations

import numpy as np

_SMALL = 16  # slices of at most this many entries are left to the final insertion sort


def sort_order(x: np.ndarray) -> np.ndarray:
    """The permutation PyTorch's CPU ``sort(stable=False)`` of the 1-D ``x`` gives (NaN last, ascending)."""
    return unstable_argsort_rows(x[None])[0]


# PyTorch's CPU sort of a 1-D integer tensor (not bool) of at least this many entries, ascending, is a
# parallel radix sort, which is stable.
RADIX_MIN = 32768


def unstable_argsort_rows(rows: np.ndarray, descending: bool = False) -> np.ndarray:
    """The order PyTorch's CPU ``sort(stable=False)`` gives each row of the 2-D host array ``rows``:
    libstdc++'s introsort under its comparison (``<``, or ``>`` when ``descending``, a NaN above
    every number and equal to another NaN). A row without ties, or of at most 16 entries, has the
    stable order; the others replay the introsort's splits on the row's integer keys.

    >>> unstable_argsort_rows(np.zeros((1, 17)))[0, :3].tolist()
    [8, 16, 15]
    """
    m, n = rows.shape
    keys, tied = rank_keys_rows(rows)
    if descending:
        keys = keys.max(axis=1, keepdims=True) - keys if n else keys
    order = np.argsort(keys, axis=1, kind="stable")
    if n <= _SMALL:
        return order
    rows_tied = np.flatnonzero(tied)
    if rows_tied.size:
        # the tied rows end to end, each one key range above the last: one array whose segments split apart
        a = (keys[rows_tied] + (np.arange(rows_tied.size) * (n + 1))[:, None]).reshape(-1)
        perm = np.arange(a.size)
        starts = np.arange(rows_tied.size) * n
        _introsort_segments(a, perm, starts, starts + n, 2 * (n.bit_length() - 1))
        settled = perm[np.argsort(a, kind="stable")]  # (the final insertion sort keeps equal entries' order)
        order[rows_tied] = settled.reshape(rows_tied.size, n) - starts[:, None]
    return order


def _introsort_segments(a: np.ndarray, perm: np.ndarray, lo: np.ndarray, hi: np.ndarray, depth: int) -> None:
    """:func:`_introsort` of every segment ``lo[s] .. hi[s]`` of ``a`` at once, level by level: each
    level splits every segment longer than 16 (the median of three to its front, then the pairs of
    the two scans swapped), with a few vectorised operations over all of them."""
    while True:
        keep = np.flatnonzero(hi - lo > _SMALL)
        keep = keep[np.argsort(lo[keep])]  # (numbered in the order they lie in)
        lo, hi = lo[keep], hi[keep]
        if not lo.size:
            return
        if depth == 0:
            for s in range(lo.size):
                _heap_sort(a, perm, int(lo[s]), int(hi[s]))
            return
        depth -= 1
        # the median of a[lo + 1], a[mid], a[hi - 1] swapped to lo (ties decided as libstdc++'s)
        i, j, k = lo + 1, lo + (hi - lo) // 2, hi - 1
        ai, aj, ak = a[i], a[j], a[k]
        pick = np.where(ai < aj, np.where(aj < ak, j, np.where(ai < ak, k, i)),
                        np.where(ai < ak, i, np.where(aj < ak, k, j)))  # fmt: skip
        a[lo], a[pick] = a[pick], a[lo].copy()
        perm[lo], perm[pick] = perm[pick], perm[lo].copy()
        # which segment each entry is in (entries outside every segment: -1)
        mark = np.zeros(a.size + 1, np.int64)
        np.add.at(mark, lo, np.arange(1, lo.size + 1))
        np.add.at(mark, hi, -np.arange(1, lo.size + 1))
        inside = np.cumsum(mark)[:-1]  # (segment number + 1 inside a segment, else 0)
        seg = inside - 1
        where = np.flatnonzero(seg >= 0)
        s_of = seg[where]
        pivot = a[lo][s_of]
        # left candidates: lo + 1 .. hi - 1 not below the pivot (ascending); right: lo .. hi - 1 not above
        left = where[(a[where] >= pivot) & (where > lo[s_of])]
        right = where[a[where] <= pivot]
        ls, rs = seg[left], seg[right]
        n_left = np.bincount(ls, minlength=lo.size)
        n_right = np.bincount(rs, minlength=lo.size)
        first_left = np.concatenate(([0], np.cumsum(n_left)[:-1]))
        first_right = np.concatenate(([0], np.cumsum(n_right)[:-1]))
        rank = np.arange(left.size) - first_left[ls]  # (k: the k-th left candidate of its segment)
        has = rank < n_right[ls]
        partner = np.full(left.size, -1, np.int64)
        partner[has] = right[first_right[ls[has]] + n_right[ls[has]] - 1 - rank[has]]  # (the k-th from the right)
        swap = has & (left < partner)
        swaps = np.bincount(ls[swap], minlength=lo.size)  # (m: the pairs met before the scans cross)
        li, ri = left[swap], partner[swap]
        a[li], a[ri] = a[ri], a[li].copy()
        perm[li], perm[ri] = perm[ri], perm[li].copy()
        # the split point: the next left candidate if it comes before the last swapped right one
        m = swaps
        next_left = np.where(m < n_left, left[np.minimum(first_left + m, max(left.size - 1, 0))], -1)
        last_right = np.where(m > 0, right[np.minimum(first_right + n_right - m, right.size - 1)], -1)
        take_left = (m < n_left) & ((m == 0) | (next_left < last_right))
        cut = np.where(take_left, next_left, last_right)
        lo, hi = np.concatenate((cut, lo)), np.concatenate((hi, cut))


def rank_keys_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer keys of each row of the 2-D ``rows`` with the ties of PyTorch's comparison (equal
    entries, and -0.0 and 0.0, one key; every NaN one key above all numbers), and whether each row
    has a tie."""
    m, n = rows.shape
    order = np.argsort(rows, axis=1, kind="stable")  # (NumPy puts NaN last, as PyTorch's comparison)
    s = np.take_along_axis(rows, order, axis=1)
    same = s[:, 1:] == s[:, :-1]
    if s.dtype.kind in "fc":
        same |= np.isnan(s[:, 1:]) & np.isnan(s[:, :-1])
    ranks = np.concatenate((np.zeros((m, min(n, 1)), np.int64), np.cumsum(~same, axis=1)), axis=1)
    keys = np.empty((m, n), np.int64)
    np.put_along_axis(keys, order, ranks, axis=1)
    return keys, same.any(axis=1)


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
    _make_heap(a, perm, lo, hi)
    _sort_heap(a, perm, lo, hi)


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


def topk_rows(rows: np.ndarray, k: int, largest: bool, sorted: bool) -> np.ndarray:  # noqa: A002
    """The indices PyTorch's CPU ``topk`` gives for each row of the 2-D host array ``rows`` (``k``
    of each, ``k >= 1``): with ``64 k`` at most the row's length, libstdc++'s ``partial_sort`` (a heap
    of the first ``k`` entries, each later entry that beats its top replacing it, then the heap
    sorted); otherwise its ``nth_element`` (an introselect) and, with ``sorted``, a ``sort`` of the
    ``k - 1`` entries before the ``k``-th. Rows without ties where the result is sorted anyway take
    the stable order."""
    m, n = rows.shape
    keys, tied = rank_keys_rows(rows)
    if largest:
        keys = keys.max(axis=1, keepdims=True) - keys
    heap = k * 64 <= n
    out = np.argsort(keys, axis=1, kind="stable")[:, :k]
    for r in range(m) if not (heap or sorted) else np.flatnonzero(tied):
        a = keys[r].copy()
        perm = np.arange(n)
        if heap:
            _heap_select(a, perm, 0, k, n)
            _sort_heap(a, perm, 0, k)
        else:
            _introselect(a, perm, k - 1, 0, n, 2 * (n.bit_length() - 1))
            if sorted:
                _sort_range(a, perm, 0, k - 1)
        out[r] = perm[:k]
    return out


def _sort_range(a: np.ndarray, perm: np.ndarray, lo: int, hi: int) -> None:
    """libstdc++'s ``sort`` of ``lo .. hi``: the introsort's splits, then an insertion sort (which
    keeps equal entries in the order the splits left them)."""
    _introsort(a, perm, lo, hi, 2 * ((hi - lo).bit_length() - 1))
    settle = lo + np.argsort(a[lo:hi], kind="stable")
    a[lo:hi], perm[lo:hi] = a[settle], perm[settle]


def _introselect(a: np.ndarray, perm: np.ndarray, nth: int, lo: int, hi: int, depth: int) -> None:
    """libstdc++'s ``nth_element``: the introsort's split, keeping only the side holding ``nth``,
    down to 3 entries, then an insertion sort; past the depth limit a heap select instead."""
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
    settle = lo + np.argsort(a[lo:hi], kind="stable")
    a[lo:hi], perm[lo:hi] = a[settle], perm[settle]


def nth_of_equal(n: int, nth: int) -> int:
    """The index libstdc++'s ``nth_element`` leaves at ``nth`` among ``n`` equal entries (PyTorch's
    CPU ``nanmedian`` of a slice of NaNs picks it for ``nth`` 0).

    >>> [nth_of_equal(n, 0) for n in range(1, 8)]
    [0, 0, 0, 2, 2, 3, 5]
    """
    a, perm = np.zeros(n, np.int64), np.arange(n)
    _introselect(a, perm, nth, 0, n, 2 * (n.bit_length() - 1))
    return int(perm[nth])


def median_index(flat: np.ndarray, skip_nan: bool) -> int | None:
    """The index of the entry PyTorch's CPU ``median()`` (``nanmedian()``: ``skip_nan``) of every entry
    returns from the 1-D ``flat`` (its row-major copy): libstdc++'s ``nth_element`` of the lower median
    under a comparison that puts NaN last, so which of equal entries (0.0 and -0.0) it is. None where
    the result is NaN.

    >>> median_index(np.array([0.0, -0.0, 0.0, -0.0, -0.0]), False)
    3
    """
    m = flat.size
    nans = int(np.isnan(flat).sum()) if flat.dtype.kind in "fc" else 0
    if nans == m or (nans and not skip_nan):
        return None
    a, perm = rank_keys(flat), np.arange(m)
    nth = (m - nans - 1) // 2
    _introselect(a, perm, nth, 0, m, 2 * (m.bit_length() - 1))
    return int(perm[nth])


def _make_heap(a: np.ndarray, perm: np.ndarray, lo: int, hi: int) -> None:
    n = hi - lo
    for parent in range((n - 2) // 2, -1, -1):
        _adjust(a, perm, lo, parent, n, a[lo + parent], perm[lo + parent])


def _heap_select(a: np.ndarray, perm: np.ndarray, lo: int, mid: int, hi: int) -> None:
    """A max-heap of ``lo .. mid``; each later entry below its top, in turn, takes the top's place
    (the top going to the entry's). The entries below the top are found a block at a time (the top
    only falls), each one checked again against the top of its turn."""
    _make_heap(a, perm, lo, mid)
    block = 1024
    for start in range(mid, hi, block):
        for j in start + np.flatnonzero(a[start : min(start + block, hi)] < a[lo]):
            if a[j] < a[lo]:
                value, index = a[j], perm[j]
                a[j], perm[j] = a[lo], perm[lo]
                _adjust(a, perm, lo, 0, mid - lo, value, index)


def _sort_heap(a: np.ndarray, perm: np.ndarray, lo: int, hi: int) -> None:
    """The max-heap ``lo .. hi`` sorted: its top moved to the end in turn."""
    for last in range(hi - lo - 1, 0, -1):
        value, index = a[lo + last], perm[lo + last]
        a[lo + last], perm[lo + last] = a[lo], perm[lo]
        _adjust(a, perm, lo, 0, last, value, index)


def rank_keys(x: np.ndarray) -> np.ndarray:
    """:func:`rank_keys_rows` of the 1-D ``x``."""
    return rank_keys_rows(x[None])[0][0]


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
    that sort's order of equal entries is :func:`sort_order`'s. With a NaN (which equals nothing and
    is neither below nor above anything) the sort is replayed entry by entry under ``<``
    (:func:`_sort_under_less`); where that replay would read outside the slice (PyTorch's unguarded
    scans rely on an order NaN breaks) the pick is undefined, and this takes the last occurrence of
    the smallest most frequent value."""
    n = x.shape[0]
    nan = np.isnan(x)
    if not nan.any():
        perm = sort_order(x)
    else:
        perm = _sort_under_less(x.tolist())
        if perm is None:
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


def _sort_under_less(v: list) -> list | None:
    """The permutation libstdc++'s ``std::sort`` gives the list ``v`` under ``a < b`` taken as is (NaN
    neither below nor above anything), step by step; None where a scan would leave the list."""
    a, perm = list(v), list(range(len(v)))

    def swap(i: int, j: int) -> None:
        a[i], a[j] = a[j], a[i]
        perm[i], perm[j] = perm[j], perm[i]

    def heap_sort(lo: int, hi: int) -> None:
        keys, order = np.array(a[lo:hi], dtype=np.float64), np.array(perm[lo:hi])
        _heap_sort(keys, order, 0, hi - lo)  # (its comparisons are ``<`` alone: NaN as here)
        a[lo:hi], perm[lo:hi] = keys.tolist(), order.tolist()

    def loop(lo: int, hi: int, depth: int) -> bool:
        while hi - lo > _SMALL:
            if depth == 0:
                heap_sort(lo, hi)
                return True
            depth -= 1
            mid = lo + (hi - lo) // 2
            i, j, k = lo + 1, mid, hi - 1
            if a[i] < a[j]:
                swap(lo, j if a[j] < a[k] else k if a[i] < a[k] else i)
            else:
                swap(lo, i if a[i] < a[k] else k if a[j] < a[k] else j)
            first, last = lo + 1, hi
            while True:
                while a[first] < a[lo]:
                    first += 1
                    if first >= hi:
                        return False
                last -= 1
                while a[lo] < a[last]:
                    last -= 1
                    if last < lo:
                        return False
                if not first < last:
                    break
                swap(first, last)
                first += 1
            if not loop(first, hi, depth):
                return False
            hi = first
        return True

    def linear_insert(i: int) -> None:
        val, idx = a[i], perm[i]
        while i > 0 and val < a[i - 1]:
            a[i], perm[i] = a[i - 1], perm[i - 1]
            i -= 1
        a[i], perm[i] = val, idx

    n = len(a)
    if not loop(0, n, 2 * (n.bit_length() - 1)):
        return None
    for i in range(1, min(n, _SMALL)):  # (the guarded insertion sort of the first 16)
        if a[i] < a[0]:
            val, idx = a[i], perm[i]
            a[1 : i + 1], perm[1 : i + 1] = a[:i], perm[:i]
            a[0], perm[0] = val, idx
        else:
            linear_insert(i)
    for i in range(_SMALL, n):  # (the unguarded one of the rest: it must stop inside the list)
        j = i
        while j > 0 and a[i] < a[j - 1]:
            j -= 1
        if j == 0 and i:
            return None
        linear_insert(i)
    return perm
