"""Running sums, products and log-sum-exps carry their running value as PyTorch's CPU kernels do
(``at::acc_type``: float16 in float32, float32 in float64, complex64 in complex128), each output the
running value rounded: long scans agree with PyTorch's to the last bit, where a scan in the input's own
dtype drifts (100,000 float32 0.1s: 10000.0, not 9998.557)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

DTYPES = ("float16", "float32", "float64", "complex64", "complex128")


def _input(dtype: str, shape: tuple, op: str) -> np.ndarray:
    g = np.random.default_rng(zlib.crc32(f"{dtype}{shape}{op}".encode()))
    a = g.standard_normal(shape) + (1j * g.standard_normal(shape) if dtype.startswith("complex") else 0)
    if op == "cumprod":  # (factors near 1: a long product that neither vanishes nor overflows)
        a = 1 + a / 100
    return a.astype(dtype)


@pytest.mark.parametrize("shape, dim", [((5000,), 0), ((700, 3), 0), ((3, 700), 1), ((2, 300, 2), 1), ((0, 4), 0)])
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "logcumsumexp"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_long_scans_round_as_pytorchs(dtype: str, op: str, shape: tuple, dim: int) -> None:
    a = _input(dtype, shape, op)
    want = getattr(torch, op)(torch.from_numpy(a), dim).numpy()
    got = getattr(tga, op)(tga.tensor(a), dim).numpy()
    assert got.dtype == want.dtype
    # The same running value rounded once: equal to the last bit, but where the two running values differ by
    # their own rounding: float64/complex128 (no wider accumulator; NumPy's complex product rounds otherwise),
    # and logcumsumexp (PyTorch's runs entry by entry, ours by doubling steps), which a float16 result can
    # show as one unit in its last place.
    if dtype in ("float64", "complex128"):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    elif op == "logcumsumexp" and dtype == "float16":
        ulp = np.spacing(np.abs(want).astype(np.float16)).astype(np.float64)
        assert (np.abs(got.astype(np.float64) - want) <= ulp).all()
    else:
        np.testing.assert_array_equal(got, want)


def test_a_float32_sum_of_many_tenths_is_pytorchs() -> None:
    x = np.full(100_000, 0.1, np.float32)
    assert tga.tensor(x).cumsum(0)[-1].item() == torch.from_numpy(x).cumsum(0)[-1].item() == 10000.0
