"""float16 and bfloat16 where PyTorch's CPU has no kernel (LAPACK, the Fourier transforms, histogram,
pdist, rrelu's noise) against PyTorch: each call of ``CALLS`` in both dtypes, on a non-empty and an
empty input, raises where PyTorch's raises (its class, a message naming the dtype as PyTorch's:
'Half', 'BFloat16') and otherwise returns results of PyTorch's dtypes and shapes.

The order is PyTorch's too: most LAPACK-backed ops (``det svd cholesky eigh lu solve ldl_factor``)
return an empty input's empty result before their kernel's dtype check (``lu_solve`` an empty solution's,
its factors given), the others (``inv slogdet qr eig`` ...) check first. The slow generators cover every shared OpInfo in these dtypes
(``tests/ops/test_torch_opinfo_errors.py``'s dtype grid, ``tests/tensor/test_bfloat16_torch.py``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("ml_dtypes")

import tinygrad_attn as tga  # noqa: E402


def _sq(lib: Any, n: int, dt: Any, batch: tuple = ()) -> Any:
    """A well-conditioned symmetric positive definite ``n`` by ``n`` matrix (a batch of them) in ``dt``."""
    a = lib.arange(n * n, dtype=lib.float32).reshape(n, n) / 10.0
    return (a @ a.T + n * lib.eye(n)).expand(*batch, n, n).to(dt)


def _piv(lib: Any, n: int) -> Any:
    return lib.arange(1, n + 1, dtype=lib.int32)


#: name -> call(lib, n, dtype): n the matrices' size (0: empty)
CALLS: dict[str, Callable[[Any, int, Any], Any]] = {
    "det": lambda m, n, d: m.linalg.det(_sq(m, n, d)),
    "det batched": lambda m, n, d: m.linalg.det(_sq(m, n, d, (2,))),
    "slogdet": lambda m, n, d: m.linalg.slogdet(_sq(m, n, d)),
    "logdet": lambda m, n, d: m.logdet(_sq(m, n, d)),
    "inv": lambda m, n, d: m.linalg.inv(_sq(m, n, d)),
    "inv_ex": lambda m, n, d: m.linalg.inv_ex(_sq(m, n, d)),
    "inverse": lambda m, n, d: m.inverse(_sq(m, n, d)),
    "svd": lambda m, n, d: m.linalg.svd(_sq(m, n, d)),
    "svd tall": lambda m, n, d: m.linalg.svd(m.ones(3, n, dtype=d)),
    "torch.svd": lambda m, n, d: m.svd(_sq(m, n, d)),
    "svdvals": lambda m, n, d: m.linalg.svdvals(_sq(m, n, d)),
    "cholesky": lambda m, n, d: m.linalg.cholesky(_sq(m, n, d)),
    "cholesky_ex": lambda m, n, d: m.linalg.cholesky_ex(_sq(m, n, d)),
    "torch.cholesky": lambda m, n, d: m.cholesky(_sq(m, n, d)),
    "cholesky_inverse": lambda m, n, d: m.cholesky_inverse(_sq(m, n, d)),
    "cholesky_solve": lambda m, n, d: m.cholesky_solve(_sq(m, n, d), _sq(m, n, d)),
    "qr": lambda m, n, d: m.linalg.qr(_sq(m, n, d)),
    "geqrf": lambda m, n, d: m.geqrf(_sq(m, n, d)),
    "eig": lambda m, n, d: m.linalg.eig(_sq(m, n, d)),
    "eigvals": lambda m, n, d: m.linalg.eigvals(_sq(m, n, d)),
    "eigh": lambda m, n, d: m.linalg.eigh(_sq(m, n, d)),
    "eigvalsh": lambda m, n, d: m.linalg.eigvalsh(_sq(m, n, d)),
    "lu": lambda m, n, d: m.linalg.lu(_sq(m, n, d)),
    "lu_factor": lambda m, n, d: m.linalg.lu_factor(_sq(m, n, d)),
    "lu_factor_ex": lambda m, n, d: m.linalg.lu_factor_ex(_sq(m, n, d)),
    "lu_solve": lambda m, n, d: m.linalg.lu_solve(_sq(m, n, d), _piv(m, n), _sq(m, n, d)),
    "lu_solve columns": lambda m, n, d: m.linalg.lu_solve(_sq(m, 3, d), _piv(m, 3), m.ones(3, n, dtype=d)),
    "solve columns": lambda m, n, d: m.linalg.solve(_sq(m, 3, d), m.ones(3, n, dtype=d)),
    "ldl_factor": lambda m, n, d: m.linalg.ldl_factor(_sq(m, n, d)),
    "ldl_solve": lambda m, n, d: m.linalg.ldl_solve(_sq(m, n, d), _piv(m, n), _sq(m, n, d)),
    "solve": lambda m, n, d: m.linalg.solve(_sq(m, n, d), m.ones(n, dtype=d)),
    "solve_ex": lambda m, n, d: m.linalg.solve_ex(_sq(m, n, d), m.ones(n, dtype=d)),
    "solve_triangular": lambda m, n, d: m.linalg.solve_triangular(_sq(m, n, d), _sq(m, n, d), upper=True),
    "triangular_solve": lambda m, n, d: m.triangular_solve(_sq(m, n, d), _sq(m, n, d)),
    "lstsq": lambda m, n, d: m.linalg.lstsq(_sq(m, n, d), _sq(m, n, d)),
    "pinv": lambda m, n, d: m.linalg.pinv(_sq(m, n, d)),
    "matrix_rank": lambda m, n, d: m.linalg.matrix_rank(_sq(m, n, d)),
    "cond": lambda m, n, d: m.linalg.cond(_sq(m, n, d)),
    "cond 1": lambda m, n, d: m.linalg.cond(_sq(m, n, d), 1),
    "matrix_norm nuc": lambda m, n, d: m.linalg.matrix_norm(_sq(m, n, d), "nuc"),
    "matrix_norm 2": lambda m, n, d: m.linalg.matrix_norm(_sq(m, n, d), 2),
    "matrix_norm fro": lambda m, n, d: m.linalg.matrix_norm(_sq(m, n, d)),
    "householder_product": lambda m, n, d: m.linalg.householder_product(_sq(m, n, d), m.ones(n, dtype=d)),
    "ormqr": lambda m, n, d: m.ormqr(_sq(m, n, d), m.ones(n, dtype=d), _sq(m, n, d)),
    "tensorinv": lambda m, n, d: m.linalg.tensorinv(_sq(m, n, d), 1),
    "tensorsolve": lambda m, n, d: m.linalg.tensorsolve(_sq(m, n, d), m.ones(n, dtype=d)),
    "matrix_power -1": lambda m, n, d: m.linalg.matrix_power(_sq(m, n, d), -1),
    "matrix_power 3": lambda m, n, d: m.linalg.matrix_power(_sq(m, n, d), 3),
    "matrix_exp": lambda m, n, d: m.linalg.matrix_exp(_sq(m, n, d) / 10),
    "fft.fft": lambda m, n, d: m.fft.fft(m.ones(n, dtype=d)),
    "fft.rfft2": lambda m, n, d: m.fft.rfft2(m.ones(2, n, dtype=d)),
    "fft.irfft": lambda m, n, d: m.fft.irfft(m.ones(n + 1, dtype=d)),
    "stft": lambda m, n, d: m.stft(m.ones(4 * n + 4, dtype=d), 4, window=m.ones(4, dtype=d), return_complex=True),
    "histogram": lambda m, n, d: m.histogram(m.ones(n, dtype=d), 3),
    "histogram range": lambda m, n, d: m.histogram(m.ones(n, dtype=d), 3, range=(0.0, 2.0)),
    "histogramdd": lambda m, n, d: m.histogramdd(m.ones(n, 2, dtype=d), [2, 2]),
    "pdist": lambda m, n, d: m.nn.functional.pdist(m.ones(n, 3, dtype=d)),
    "rrelu training": lambda m, n, d: m.nn.functional.rrelu(-m.ones(n, dtype=d), training=True),
}
LOW = ["float16", "bfloat16"]


def _outcome(lib: Any, name: str, n: int, dtype: str) -> tuple[Any, BaseException | None]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return CALLS[name](lib, n, getattr(lib, dtype)), None
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return None, e


def _results(out: Any) -> list[tuple[str, tuple]]:
    items = out if isinstance(out, (tuple, list)) else (out,)
    return [(str(t.dtype), tuple(t.shape)) for t in items if hasattr(t, "dtype")]


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("n", [3, 0], ids=["nonempty", "empty"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_low_precision_as_pytorchs(name: str, n: int, dtype: str) -> None:
    theirs, their_error = _outcome(torch, name, n, dtype)
    ours, our_error = _outcome(tga, name, n, dtype)
    if their_error is not None:
        assert our_error is not None, f"{name}: PyTorch raises {their_error!r}, ours returns {_results(ours)}"
        assert isinstance(our_error, type(their_error)), f"{name}: {our_error!r}, PyTorch's {their_error!r}"
        name = {"float16": "Half", "bfloat16": "BFloat16"}[dtype]  # (PyTorch's name of the dtype)
        if name in str(their_error):
            assert name in str(our_error), f"{name}: {our_error}, PyTorch's {their_error}"
        return
    assert our_error is None, f"{name}: PyTorch returns {_results(theirs)}, ours raises {our_error!r}"
    assert _results(ours) == _results(theirs)


def test_the_calls_meet_both_orders() -> None:
    """The list holds ops that return an empty input first and ops that refuse it, in each dtype."""
    kinds = {
        (n, dtype): {_outcome(torch, name, n, dtype)[1] is None for name in CALLS} for n in (0, 3) for dtype in LOW
    }
    assert all(k == {True, False} for k in kinds.values()), kinds
