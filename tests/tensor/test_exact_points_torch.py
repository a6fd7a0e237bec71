"""Elementary functions at the points where libm's answer is exact, bit for bit as PyTorch's.

``log2(8)`` is 3 and ``log10(1000)`` is 3 in PyTorch (one libm call), where ``log(x) / log(2)``
gives 2.9999999999999996: a user's ``int(torch.log2(n))`` or ``floor(log10(x))`` then counts
one less. Each function below is compared to the last bit at exact points and in ULPs elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

EXACT = {
    "log2": [2.0**k for k in range(-20, 21)],
    "log10": [10.0**k for k in range(-6, 8)],
    "exp2": [float(k) for k in range(-30, 31)],
    "lgamma": [1.0, 2.0],
    "sqrt": [float(k * k) for k in range(50)],
    "exp": [0.0],
    "log": [1.0],
    "expm1": [0.0],
    "log1p": [0.0],
}
AROUND = np.array([0.3, 0.7, 1.1, 1.5, 2.5, 3.0, 7.0, 12.5, 100.0, 1e-3, 1e5], dtype=np.float64)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(EXACT))
def test_exact_points_are_pytorchs(name: str, dtype: str) -> None:
    x = np.array(EXACT[name], dtype=dtype)
    theirs = getattr(torch, name)(torch.from_numpy(x)).numpy()
    ours = getattr(tga, name)(tga.tensor(x)).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["log2", "log10", "exp2"])
def test_values_elsewhere_within_a_unit(name: str, dtype: str) -> None:
    x = AROUND.astype(dtype)
    theirs = getattr(torch, name)(torch.from_numpy(x)).numpy().astype(np.float64)
    ours = getattr(tga, name)(tga.tensor(x)).numpy().astype(np.float64)
    with np.errstate(invalid="ignore"):  # (exp2(1e5) is inf in both)
        units = np.where(ours == theirs, 0.0, np.abs(ours - theirs) / np.spacing(np.abs(theirs).astype(dtype)))
    assert units.max() <= 1.0, (x[units.argmax()], ours[units.argmax()], theirs[units.argmax()])


def test_a_mean_divides_by_the_count_as_pytorchs() -> None:
    """``mean`` is ``sum / n`` (PyTorch's ``sum(...).div_(n)``), not ``sum * (1 / n)``: in float32 the two
    round apart, and a variance of values far from 0 (1e8 + i) inherits the mean's rounding (0.16% off)."""
    x = np.full(1000, 1e8, dtype=np.float32) + np.arange(1000, dtype=np.float32)
    t = tga.tensor(x)
    assert t.mean().item() == (t.sum() / 1000).item()
    for stat in ("mean", "var", "std"):
        ours, theirs = getattr(t, stat)().item(), getattr(torch.from_numpy(x), stat)().item()
        assert abs(ours - theirs) <= 1e-5 * abs(theirs), (stat, ours, theirs)
