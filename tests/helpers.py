"""Small helpers shared by the tests."""

from __future__ import annotations

import numpy as np

from tinygrad_attn import Tensor


def rand(rng, *shape, device="cpu", requires_grad=True, dtype=np.float64, low=None):
    """A random float64 tensor (values kept away from 0 when ``low`` is given)."""
    a = rng.standard_normal(shape)
    if low is not None:
        a = np.sign(a) * (np.abs(a) + low)
    return Tensor(a.astype(dtype), device=device, requires_grad=requires_grad)


def close(t, ref, atol=1e-6, rtol=1e-6):
    """Assert a tensor (or array) equals a NumPy reference."""
    got = t.detach().numpy() if isinstance(t, Tensor) else np.asarray(t)
    np.testing.assert_allclose(got, ref, atol=atol, rtol=rtol)


def assert_rounding_close(actual, expected, dtype, scale=0.0, ulps: float = 8) -> None:
    """Assert ``actual`` equals ``expected`` to the rounding of ``dtype``: each element within
    ``ulps`` units of the dtype's epsilon of ``|expected| + scale``. ``scale`` is the size of the
    operands the result is conditioned by (``|x|`` for ``x * cdf(x)``): an absolute tolerance
    fixed on one CPU fails on another whose vectorised ``exp`` rounds differently.
    """
    expected = np.asarray(expected, dtype=np.float64)
    err = np.abs(np.asarray(actual, dtype=np.float64) - expected)
    bound = ulps * np.finfo(dtype).eps * (np.abs(expected) + np.abs(np.asarray(scale, dtype=np.float64)))
    worst = np.argmax(err - bound) if err.size else 0
    assert np.all(err <= bound), (
        f"not equal to {dtype.__name__ if isinstance(dtype, type) else dtype} rounding ({ulps} ulps): "
        f"{int(np.sum(err > bound))} of {err.size} elements, worst {err.flat[worst]:.3g} > {bound.flat[worst]:.3g}"
    )


def examples(n: int) -> int:
    """``n`` random examples in the full suite; an eighth (at least one) in the fast loop
    (``-m "not slow"``, which conftest.py marks with TINYGRAD_ATTN_FAST_LOOP): the full suite,
    which CI runs, is where the random search goes deep."""
    import os  # noqa: PLC0415

    return max(1, n // 8) if os.environ.get("TINYGRAD_ATTN_FAST_LOOP") else n


def shares_memory(ours: Tensor, base: Tensor) -> bool:
    """Whether two of our tensors show some of the same memory (neither empty)."""
    a, b = (np.asarray(getattr(t._data, "_array", t._data)) for t in (ours, base))
    return bool(a.size and b.size and np.shares_memory(a, b))


def torch_shares_memory(theirs, base) -> bool:
    """Whether two PyTorch tensors (neither empty) are views of one storage."""
    if not theirs.numel() or not base.numel():
        return False
    return theirs.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()


def count_kernel_calls(monkeypatch) -> dict[str, int]:
    """Counts the compiled loops ``ops.cpu_kernels.kernel`` hands out from now on, by name
    (none where numba is missing or switched off): the dict fills as the test runs."""
    from tinygrad_attn.ops import cpu_kernels  # noqa: PLC0415

    seen: dict[str, int] = {}
    real = cpu_kernels.kernel

    def counting(name):
        fn = real(name)
        if fn is not None:
            seen[name] = seen.get(name, 0) + 1
        return fn

    monkeypatch.setattr(cpu_kernels, "kernel", counting)
    return seen
