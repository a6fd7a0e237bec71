"""A float16 or bfloat16 tensor with a Python number computes as PyTorch's CPU kernels do: ``x * 0.1`` and
``x / 0.1`` read the number at float32 (their "opmath" scalar), ``x + 0.1`` and the other ops round it to the
tensor's dtype first (PyTorch's wrapped-number rule); the op runs in float32 and is rounded once. NumPy alone
rounds 0.1 to float16 for every op, so a third of ``x * 0.1``'s entries were one unit off."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

OPS = {
    "mul": lambda a, b: a * b, "rmul": lambda a, b: b * a, "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
    "rsub": lambda a, b: b - a, "div": lambda a, b: a / b, "rdiv": lambda a, b: b / a,
    "pow": lambda a, b: a.abs() ** b, "rpow": lambda a, b: b**a, "clamp": lambda a, b: a.clamp(min=b),
    "fmod": lambda a, b: a.fmod(b), "remainder": lambda a, b: a % b, "floordiv": lambda a, b: a // b,
    "clamp_min": lambda a, b: a.clamp_min(b), "add_alpha": lambda a, b: a.add(a, alpha=b),
    "mul_": lambda a, b: a.clone().mul_(b), "div_": lambda a, b: a.clone().div_(b), "lerp": lambda a, b: a.lerp(a * 0, b),
    "atan2": lambda a, b: a.atan2(a * 0 + b), "where": lambda a, b: a.where(a > 0, b), "lt": lambda a, b: (a < b).float(),
    "eq": lambda a, b: (a == b).float(), "div_floor": lambda a, b: a.div(b, rounding_mode="floor"),
    "rfloordiv": lambda a, b: b // a, "pow_negative": lambda a, b: (a.abs() + 0.5) ** -b,
    "square": lambda a, b: a ** 2 * b, "inverse_square": lambda a, b: (a.abs() + 0.5) ** -2 * b,
}  # fmt: skip
#: PyTorch's add with alpha: its vectorized loop computes a + alpha * b in float32 (alpha rounded to the dtype) and
#: rounds once, its scalar loop rounds alpha * b to the dtype first; the scalar loop takes the entries past the last
#: multiple of two vector widths (32 entries with AVX2, 64 with AVX-512), so which entries round twice depends on the
#: CPU. Ours rounds alpha * b first, as the scalar loop (all of a small tensor: OpInfo's samples match).
_ALPHA = (
    "PyTorch's vectorized add computes a + alpha * b once (alpha in the dtype), its scalar loop for the last "
    "entries rounds alpha * b first (which entries: the CPU's vector width); ours is the scalar loop's"
)
#: (op, dtype) still computed otherwise, with the reason
KNOWN = {
    ("add_alpha", "float16"): _ALPHA,
    ("add_alpha", "bfloat16"): _ALPHA,
}


CASES = [
    pytest.param(
        op, dtype, marks=[pytest.mark.xfail(strict=True, reason=KNOWN[(op, dtype)])] if (op, dtype) in KNOWN else []
    )
    for op in OPS
    for dtype in ("float16", "bfloat16")
]


@pytest.mark.parametrize("op, dtype", CASES)
def test_a_half_tensor_with_a_number_rounds_as_pytorchs(op: str, dtype: str) -> None:
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes")
    base = np.random.default_rng(0).standard_normal(4000).astype(np.float32) * 3
    xt, xg = torch.from_numpy(base).to(getattr(torch, dtype)), tga.tensor(base).to(getattr(tga, dtype))
    for number in (0.1, 2.3, 1e-3, 3):
        want, got = OPS[op](xt, number).float().numpy(), OPS[op](xg, number).float().numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"{op}({dtype}, {number})")
