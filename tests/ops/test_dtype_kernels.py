"""PyTorch's CPU kernels in float16 and the integer dtypes, value for value.

float16: where PyTorch's kernel computes in float32 and rounds once (``engine.composite.HALF_IN_FLOAT32``),
and where it rounds in between (addr's ``alpha * vec1 * vec2``, addbmm's one addmm per batch entry,
conv_transpose's col2im sums, ldexp's ``input * 2**other``, soft_margin_loss's ``log1p(exp(.))``
overflowing), ours rounds at the same places: the results are PyTorch's, entry for entry.
Integers: PyTorch's integer kernels wrap, cut and convert as C++ does (int8 ``|x| + 1``, uint8 ``-x``,
a scalar converted to the tensor's dtype); ours too.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402


def _r(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape) * 2


_RNG = np.random.default_rng(0)

# name -> (inputs' shapes, call(module, *tensors)); each runs on several draws of float16 inputs
FLOAT16 = {
    "addcmul": ([(5, 1), (5, 5, 1), (1, 5)], lambda m, a, b, c: m.addcmul(a, b, c, value=3.14)),
    "addcdiv": ([(5, 1), (5, 5, 1), (1, 5)], lambda m, a, b, c: m.addcdiv(a, b, c.abs() + 1, value=0.7)),
    "addr": ([(5, 10), (5,), (10,)], lambda m, a, b, c: m.addr(a, b, c, beta=0.6, alpha=0.2)),
    "addr alpha 1": ([(5, 10), (5,), (10,)], lambda m, a, b, c: m.addr(a, b, c, beta=2)),
    "addbmm": ([(5, 10), (4, 5, 7), (4, 7, 10)], lambda m, a, b, c: m.addbmm(a, b * 4, c * 4)),
    "addbmm beta": ([(10,), (3, 5, 7), (3, 7, 10)], lambda m, a, b, c: m.addbmm(a, b, c, beta=0.6, alpha=1.5)),
    "exp2": ([(64,)], lambda m, a: m.exp2(a * 3)),
    "ldexp": ([(10, 5), ()], lambda m, a, b: m.ldexp(a * 100, b * 3)),
    "dist": ([(5, 5, 5), (5, 5, 5)], lambda m, a, b: m.dist(a * 4, b, 4)),
    "avg_pool2d": ([(1, 3, 9, 9)], lambda m, a: m.nn.functional.avg_pool2d(a, 3, 1, 1, True, False, 2)),
    "batch_norm": (
        [(3, 2, 3, 4), (2,), (2,)],
        lambda m, a, w, b: m.nn.functional.batch_norm(a, None, None, w, b, training=True, eps=0.5),
    ),
    "instance_norm": ([(5, 5, 5), (5,), (5,)], lambda m, a, w, b: m.nn.functional.instance_norm(a, weight=w, bias=b)),
    "native_group_norm": ([(1, 6, 3), (6,), (6,)], lambda m, a, w, b: m.native_group_norm(a, w, b, 1, 6, 3, 2, 0.5)[0]),
    "embedding_bag": (
        [(10, 5), (5,)],
        lambda m, w, p: m.nn.functional.embedding_bag(
            m.tensor([1, 3, 5, 7, 9]), w, m.tensor([0, 2]), mode="sum", per_sample_weights=p
        ),
    ),
    "interpolate bilinear": (
        [(2, 3, 4, 5)],
        lambda m, a: m.nn.functional.interpolate(a, [3, 7], mode="bilinear", align_corners=True),
    ),
    "interpolate bicubic": (
        [(2, 3, 4, 4)],
        lambda m, a: m.nn.functional.interpolate(a, scale_factor=1.7, mode="bicubic", align_corners=True),
    ),
    "bilinear": ([(2, 3, 8), (2, 3, 8), (8, 8, 8), (8,)], lambda m, a, b, w, c: m.nn.functional.bilinear(a, b, w, c)),
    "multi_dot": (
        [(2, 4), (4, 3), (3, 5), (5, 3), (3, 2)],
        lambda m, *t: m.linalg.multi_dot([x * 3 for x in t]),
    ),
    "mvlgamma": ([(64,)], lambda m, a: m.mvlgamma(a.abs() + 2.5, 5)),
    "soft_margin_loss": (
        [(64,), (64,)],
        lambda m, a, t: m.nn.functional.soft_margin_loss(a * 4, t.sign(), reduction="none"),
    ),
}
for _nd in (1, 2, 3):
    for _stride, _groups in itertools.product((1, 2), (1, 3)):
        FLOAT16[f"conv_transpose{_nd}d stride {_stride} groups {_groups}"] = (
            [(2, 3) + (4,) * _nd, (3, 2) + (3,) * _nd, (2 * _groups,)],
            lambda m, x, w, b, _nd=_nd, _s=_stride, _g=_groups: getattr(m.nn.functional, f"conv_transpose{_nd}d")(
                x, w, b, stride=_s, padding=1, output_padding=_s - 1, groups=_g
            ),
        )


# Equal to PyTorch's in every entry, but for these, within PyTorch's float16 tolerance: PyTorch's batch and
# instance norm scale by ``invstd * weight`` and shift by ``bias - mean * that`` in float32 (near 0 the
# two forms cancel differently), its resizes weigh their taps in another float32 order.
CLOSE = {"batch_norm", "instance_norm", "interpolate bilinear", "interpolate bicubic"}


@pytest.mark.parametrize("name", FLOAT16)
@pytest.mark.parametrize("draw", range(3))
def test_float16_as_pytorchs_kernel_rounds(name: str, draw: int) -> None:
    shapes, call = FLOAT16[name]
    rng = np.random.default_rng(draw)
    arrays = [(rng.standard_normal(s) * 2).astype(np.float16) for s in shapes]
    want = call(torch, *(torch.tensor(a) for a in arrays)).detach().numpy()
    with np.errstate(all="ignore"):  # (overflow to inf is part of the meaning here)
        got = call(tga, *(tga.tensor(a) for a in arrays))
    assert got.dtype == np.float16
    got = np.asarray(got.detach().numpy())
    if name in CLOSE:
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-3, atol=1e-3)
        return
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want), err_msg=name)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite], err_msg=name)
    units = np.abs(got[finite] - want[finite].astype(np.float32)) / np.spacing(np.abs(want[finite]))
    assert units.max(initial=0) == 0, f"{name}: {units.max():.0f} float16 units apart"


def test_soft_margin_loss_overflows_as_pytorchs_in_float32_too() -> None:
    x = np.array([-100.0, 3.0, -12.0, 0.5], np.float32)
    t = np.ones(4, np.float32)
    for reduction in ("none", "mean", "sum"):
        want = (
            torch.nn.functional.soft_margin_loss(torch.tensor(x), torch.tensor(t), reduction=reduction).detach().numpy()
        )
        with np.errstate(over="ignore"):
            got = tga.nn.functional.soft_margin_loss(tga.tensor(x), tga.tensor(t), reduction=reduction).detach().numpy()
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
        np.testing.assert_allclose(got, want, rtol=1e-6)


# -- integers ---------------------------------------------------------------------------------
_INTS = ("uint8", "int8", "int16", "int32", "int64")


def _ints(dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.array(sorted({info.min, info.min + 1, -3, -1, 0, 1, 2, 5, 100, info.max - 1, info.max} & set(
        range(info.min, info.max + 1)) if info.bits <= 16 else {info.min, -3, -1, 0, 1, 2, 5, info.max}), dtype=dtype)  # fmt: skip


@pytest.mark.parametrize("dtype", _INTS)
@pytest.mark.parametrize(("threshold", "value"), [(-1.5, 7.9), (2.5, -3.2), (1, -1), (-1, 1), (-200, 3), (300, 1),
                                                  (1, 300), (1, float("nan")), (-255, 3), (-256, 3)])  # fmt: skip
def test_threshold_converts_its_numbers_as_pytorchs_integer_kernel(dtype: str, threshold: float, value: float) -> None:
    x = _ints(dtype)
    try:
        want = torch.nn.functional.threshold(torch.tensor(x), threshold, value).detach().numpy()
    except RuntimeError:
        with pytest.raises(RuntimeError, match="threshold"):
            tga.nn.functional.threshold(tga.tensor(x), threshold, value)
        return
    np.testing.assert_array_equal(tga.nn.functional.threshold(tga.tensor(x), threshold, value).detach().numpy(), want)


@pytest.mark.parametrize("dtype", _INTS)
def test_integer_kernels_wrap_as_pytorchs(dtype: str) -> None:
    x = _ints(dtype)
    a, b = np.repeat(x, len(x)), np.tile(x, len(x))
    t, o = torch.tensor(x), tga.tensor(x)
    with np.errstate(divide="ignore"):  # (uint8 255: |x| + 1 wraps to 0, and x / 0 is inf)
        soft = tga.nn.functional.softsign(o).detach().numpy()
    np.testing.assert_array_equal(
        tga.gcd(tga.tensor(a), tga.tensor(b)).detach().numpy(),
        torch.gcd(torch.tensor(a), torch.tensor(b)).detach().numpy(),
    )
    np.testing.assert_array_equal(soft, torch.nn.functional.softsign(t).detach().numpy())
    m = x.reshape(1, -1)
    np.testing.assert_allclose(
        tga.nn.functional.softmin(tga.tensor(m), 1, dtype=tga.float64).detach().numpy(),
        torch.nn.functional.softmin(torch.tensor(m), 1, dtype=torch.float64).detach().numpy(),
        rtol=1e-12,
    )


@pytest.mark.parametrize("dtype", ("int64",))  # (PyTorch's integer avg_pool: int64 only)
@pytest.mark.parametrize("size", (1, 2, 3, 5))
def test_local_response_norm_of_integers_takes_an_integer_mean(dtype: str, size: int) -> None:
    x = np.random.default_rng(size).integers(-9, 10, (2, 6, 3)).astype(dtype)
    want = torch.nn.functional.local_response_norm(torch.tensor(x), size, beta=0.5).detach().numpy()
    got = tga.nn.functional.local_response_norm(tga.tensor(x), size, beta=0.5)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-6)


@pytest.mark.parametrize(("equation", "shapes"), [("...ik, ...j -> ij", [(1, 2, 3), (3,)]), ("ik,j->ij", [(2, 3), (3,)]),
                                                  ("i->", [(3,)]), ("ij,j->i", [(2, 3), (3,)])])  # fmt: skip
@pytest.mark.parametrize("dtype", _INTS)
def test_einsum_of_integers_keeps_pytorchs_dtypes(equation: str, shapes: list, dtype: str) -> None:
    arrays = [np.arange(int(np.prod(s))).reshape(s).astype(dtype) for s in shapes]
    want = torch.einsum(equation, *(torch.tensor(a) for a in arrays))
    got = tga.einsum(equation, *(tga.tensor(a) for a in arrays))
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


@pytest.mark.parametrize(
    ("start", "end", "step"), [(0.0, -8.000001, -4.0), (0.5, 3.7, 1.5), (-2.7, 7.9, 2.2), (3, 10.2, 3)]
)
def test_arange_of_int64_counts_in_integers_as_pytorchs(start: float, end: float, step: float) -> None:
    want = torch.arange(start, end, step, dtype=torch.int64).detach().numpy()
    np.testing.assert_array_equal(tga.arange(start, end, step, dtype=tga.int64).detach().numpy(), want)


@pytest.mark.parametrize("dtype", (*_INTS, "bool"))
@pytest.mark.parametrize("reduce", (None, "add"))
def test_scatter_writes_a_number_in_the_tensors_dtype(dtype: str, reduce: str | None) -> None:
    x = np.arange(6).reshape(2, 3).astype(dtype)
    idx = np.array([[1, 0, 1]])
    kw = {} if reduce is None else {"reduce": reduce}
    want = torch.tensor(x).scatter(0, torch.tensor(idx), 2.5, **kw)
    got = tga.tensor(x).scatter(0, tga.tensor(idx), 2.5, **kw)
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
