"""Equal entries in PyTorch's order: ``sort``/``argsort``/``msort`` (``stable=False``), ``topk`` and the
order statistics (``median nanmedian mode kthvalue max min cummax cummin``)
give the indices PyTorch's CPU gives, in every dtype, length, density of ties, dim and direction,
and their gradients go to the entries PyTorch's go to (a generator against PyTorch)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

DTYPES = ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]
# lengths around the insertion sort's 16, the split sizes, and PyTorch's radix sort's 32768 (1-D integers)
LENGTHS = [1, 2, 15, 16, 17, 33, 100, 257, 1000]
LEVELS = [1, 2, 5, 40, None]  # distinct values per slice (None: all distinct where the dtype allows)


def _data(rng: np.random.Generator, shape: tuple, dtype: str, levels: int | None, nans: bool) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2 if levels != 1 else 1, shape).astype(bool)
    if levels is None:
        x = rng.permutation(n).reshape(shape) - n // 2
    else:
        x = rng.integers(-levels // 2, levels - levels // 2, shape)
    if dtype == "uint8":
        x = x % 256
    elif dtype == "int8":
        x = (x + 128) % 256 - 128
    x = x.astype(dtype)
    if nans and x.dtype.kind == "f":
        x[rng.random(shape) < 0.2] = np.nan
        x[rng.random(shape) < 0.1] = -0.0
    return x


def _cases():
    rng = np.random.default_rng(0)
    for dtype, n, levels in itertools.product(DTYPES, LENGTHS, LEVELS):
        shape, dim = [((n,), 0), ((3, n), 1), ((n, 2), 0), ((2, n, 2), -2)][(n + len(dtype)) % 4]
        nans = levels is not None and levels % 2 == 1
        marks = [pytest.mark.slow] if n > 100 else []  # (the long slices: the full suite's)
        yield pytest.param(_data(rng, shape, dtype, levels, nans), dim, id=f"{dtype}-{shape}-dim{dim}-levels{levels}",
                           marks=marks)  # fmt: skip


CASES = list(_cases())


def _check_indices(ours: tga.Tensor, theirs: torch.Tensor, what: str) -> None:
    assert ours.dtype == tga.int64, what
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=what)


@pytest.mark.parametrize(("x", "dim"), CASES)
def test_sort_and_argsort_put_ties_where_pytorch_does(x: np.ndarray, dim: int) -> None:
    t, ours = torch.from_numpy(x.copy()), tga.tensor(x)
    for descending in (False, True):
        for stable in (False, True):
            what = f"sort(dim={dim}, descending={descending}, stable={stable}) of {x.dtype}{x.shape}"
            tv, ti = torch.sort(t, dim=dim, descending=descending, stable=stable)
            ov, oi = tga.sort(ours, dim=dim, descending=descending, stable=stable)
            _check_indices(oi, ti, what)
            np.testing.assert_array_equal(ov.numpy(), tv.numpy(), err_msg=what)
            _check_indices(ours.argsort(dim=dim, descending=descending, stable=stable),
                           torch.argsort(t, dim=dim, descending=descending, stable=stable), "arg" + what)  # fmt: skip
    if dim in (0, -x.ndim):
        np.testing.assert_array_equal(tga.msort(ours).numpy(), torch.msort(t).numpy())


@pytest.mark.parametrize(("x", "dim"), [c for c in CASES if c.values[0].dtype != bool])  # (no bool topk in PyTorch)
def test_topk_picks_and_orders_ties_as_pytorch(x: np.ndarray, dim: int) -> None:
    t, ours = torch.from_numpy(x.copy()), tga.tensor(x)
    n = x.shape[dim]
    for k in sorted({1, 2, max(n // 64, 1), n // 64 + 1, n // 2, n - 1, n} & set(range(n + 1))):
        for largest, is_sorted in itertools.product((True, False), (True, False)):
            what = f"topk(k={k}, dim={dim}, largest={largest}, sorted={is_sorted}) of {x.dtype}{x.shape}"
            tv, ti = torch.topk(t, k, dim=dim, largest=largest, sorted=is_sorted)
            ov, oi = tga.topk(ours, k, dim=dim, largest=largest, sorted=is_sorted)
            _check_indices(oi, ti, what)
            np.testing.assert_array_equal(ov.numpy(), tv.numpy(), err_msg=what)


@pytest.mark.slow
def test_long_slices_and_radix_sorted_integers() -> None:
    """Long slices (PyTorch's introsort splits many times) and 1-D integer tensors of 32768 entries
    and more (PyTorch sorts those ascending with a stable radix sort, descending with the introsort)."""
    rng = np.random.default_rng(1)
    for dtype, n in [("int64", 40000), ("uint8", 32768), ("int16", 32767), ("float16", 40000), ("int32", 5000)]:
        x = rng.integers(0, 7, n).astype(dtype)
        t, ours = torch.from_numpy(x), tga.tensor(x)
        for descending in (False, True):
            _check_indices(tga.argsort(ours, descending=descending), torch.argsort(t, descending=descending),
                           f"argsort(descending={descending}) of {dtype}[{n}]")  # fmt: skip
        two = np.stack([x, x[::-1]])  # (2-D: never the radix sort)
        _check_indices(tga.argsort(tga.tensor(two)), torch.argsort(torch.from_numpy(two.copy())), f"{dtype}[2, {n}]")
        _check_indices(tga.topk(ours, 5).indices, torch.topk(t, 5).indices, f"topk of {dtype}[{n}]")


@pytest.mark.parametrize("op", ["sort", "topk"])
@pytest.mark.parametrize("levels", [1, 3, 20])
def test_gradients_of_ties_go_where_pytorchs_go(op: str, levels: int) -> None:
    rng = np.random.default_rng(levels)
    x = rng.integers(0, levels, (4, 70)).astype(np.float64)
    g = rng.standard_normal((4, 70 if op == "sort" else 9))
    t = torch.from_numpy(x).requires_grad_()
    ours = tga.tensor(x, requires_grad=True)
    if op == "sort":
        tv, ov = torch.sort(t, descending=True)[0], tga.sort(ours, descending=True)[0]
    else:
        tv, ov = torch.topk(t, 9, largest=False)[0], tga.topk(ours, 9, largest=False)[0]
    (tv * torch.from_numpy(g)).sum().backward()
    (ov * tga.tensor(g)).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), t.grad.numpy())


SIBLINGS = {
    "median": lambda lib, x, d: lib.median(x, d),
    "nanmedian": lambda lib, x, d: lib.nanmedian(x, d),
    "mode": lambda lib, x, d: lib.mode(x, d),
    "kthvalue": lambda lib, x, d: lib.kthvalue(x, max(1, x.shape[d] // 3), d),
    "max": lambda lib, x, d: lib.max(x, d),
    "min": lambda lib, x, d: lib.min(x, d),
    "cummax": lambda lib, x, d: lib.cummax(x, d),
    "cummin": lambda lib, x, d: lib.cummin(x, d),
}


@pytest.mark.parametrize(("x", "dim"), CASES)
def test_order_statistics_pick_pytorchs_index_among_ties(x: np.ndarray, dim: int) -> None:
    """The index siblings of sort (NaNs and repeated values included) pick the entry PyTorch's CPU picks."""
    t, ours = torch.from_numpy(x.copy()), tga.tensor(x)
    for name, call in SIBLINGS.items():
        try:
            tv, ti = call(torch, t, dim)
        except RuntimeError:  # (a dtype PyTorch's CPU does not take: the dtype grid's concern)
            continue
        ov, oi = call(tga, ours, dim)
        what = f"{name}(dim={dim}) of {x.dtype}{x.shape}"
        _check_indices(oi, ti, what)
        np.testing.assert_array_equal(ov.numpy(), tv.numpy(), err_msg=what)
