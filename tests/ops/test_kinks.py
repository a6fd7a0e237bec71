"""Every op of the table (``tests/opinfo.py``) alone at its kinks, against PyTorch: inputs all
0, all -0.0, all one value (ties), two operands equal, and ±inf and NaN. At finite inputs the
value, the gradient and the gradient of the gradient must be PyTorch's, NaN where PyTorch's is
NaN and finite where it is finite; at infinite or NaN inputs the value must be PyTorch's, and
each gradient entry where PyTorch's is finite.

The samples are the table's own draws (their shapes and arguments), with their float64
values replaced by the kink.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

# A generator over every op of PyTorch's inventories: the full suite's (CI runs it), not the fast loop's.
pytestmark = pytest.mark.slow

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from opinfo import OPS, OpInfo, Sample  # noqa: E402
from test_oracle import _cotangent, _host, _mode, _ours, _quiet, _theirs  # noqa: E402

import tinygrad_attn as tga  # noqa: E402
from tinygrad_attn import Tensor  # noqa: E402

FINITE_KINKS = ["zeros", "negative zeros", "ties", "equal operands"]
INFINITE_KINKS = ["inf", "-inf", "nan"]


def _kinked(sample: Sample, kink: str) -> Sample | None:
    floats = [i for i, a in enumerate(sample.args) if a.dtype == np.float64 and a.size]
    if not floats:
        return None
    args = list(sample.args)
    if kink == "equal operands":
        same = [i for i in floats if args[i].shape == args[floats[0]].shape]
        if len(same) < 2:
            return None
        for i in same[1:]:
            args[i] = args[same[0]].copy()
        return Sample(tuple(args), sample.kwargs)
    value = {"zeros": 0.0, "negative zeros": -0.0, "ties": 0.75, "inf": np.inf, "-inf": -np.inf, "nan": np.nan}[kink]
    for i in floats[:1] if kink in INFINITE_KINKS else floats:  # (one operand infinite: the other stays finite)
        args[i] = np.full(args[i].shape, value)
    return Sample(tuple(args), sample.kwargs)


def _compare(op: OpInfo, got, want, what: str, sample: Sample, finite_inputs: bool) -> None:
    g, w = _host(got).astype(np.float64), _host(want).astype(np.float64)
    assert g.shape == w.shape, f"{op.name}: {what} shape {g.shape}, PyTorch {w.shape}"
    if not finite_inputs:  # only where PyTorch's is a number
        keep = np.isfinite(w)
        g, w = g[keep], w[keep]
    np.testing.assert_allclose(g, w, rtol=max(op.rtol, 1e-7), atol=max(op.atol, 1e-9), equal_nan=True,
                               err_msg=f"{op.name}: {what} ({sample})")  # fmt: skip


_R_NOISE = (
    "a matrix of rank 1: R's trailing diagonal entries are rounding noise, of other sizes and signs in "
    "PyTorch's MKL than in our OpenBLAS; the gradient divides by them"
)
_CHOLESKY_STOP = (
    "a 2x2 matrix of rank 1: the gradient divides by the factor's remainder where it stops, rounding noise (MKL's "
    "2x2 kernel divides where LAPACK's potf2 multiplies by the reciprocal)"
)
_EIGEN_BASIS = (
    "a matrix of rank 1: its eigenvectors of the repeated eigenvalue 0 are any basis of that space, and PyTorch's MKL "
    "and our OpenBLAS choose different ones; the values and gradients read them"
)
_NULL_BASIS = (
    "a matrix of rank 1: the singular vectors of its zero singular values are rounding noise, whose "
    "signs and basis PyTorch's MKL and our OpenBLAS choose differently; the gradient reads them"
)
# Known differences, one line each with its reason: xfail(strict), so a fix shows as a failure here;
# except those whose outcome is rounding noise (a basis or the signs that LAPACK's build picks), which
# differ from PyTorch's on one CPU and agree on another: xfail, not strict, as neither outcome is a fix.
KNOWN: dict[tuple[str, str], str] = {
    (
        "hardshrink",
        "nan",
    ): "gradient at NaN: PyTorch's own kernel gives 0 in its 8-wide vector blocks and passes it in the tail; ours passes it",
    (
        "softshrink",
        "nan",
    ): "gradient at NaN: PyTorch's own kernel gives 0 in its 8-wide vector blocks and passes it in the tail; ours passes it",
    ("cholesky_upper", "ties"): _CHOLESKY_STOP,
    ("eigvalsh", "ties"): _EIGEN_BASIS,
    ("eigh", "ties"): _EIGEN_BASIS,
    ("svdvals", "ties"): _NULL_BASIS,
    ("nuclear_norm", "ties"): _NULL_BASIS,  # (the sum of the singular values: svdvals' gradient)
    ("svd", "ties"): _NULL_BASIS,
    ("svd_vh", "ties"): _NULL_BASIS,
    ("qr", "ties"): _R_NOISE,
    ("cond", "ties"): _NULL_BASIS,
    (
        "lu_factor_rect",
        "zeros",
    ): "second derivative at a wide zero matrix: an entry where PyTorch's is +-inf is NaN here (the order in which the recorded formula meets an infinity with a zero)",
    (
        "lu_factor_rect",
        "negative zeros",
    ): "second derivative at a wide zero matrix: an entry where PyTorch's is +-inf is NaN here (the order in which the recorded formula meets an infinity with a zero)",
    ("torch_qr", "ties"): _R_NOISE,
    ("torch_svd", "ties"): _NULL_BASIS,
    ("torch_svd_v", "ties"): _NULL_BASIS,
    ("orgqr", "ties"): "a matrix of rank 1: the trailing reflectors are built from rounding noise, LAPACK's and ours",
}


_NOISE = {_EIGEN_BASIS, _NULL_BASIS, _R_NOISE, KNOWN["orgqr", "ties"]}


def _cases():
    return [
        pytest.param(
            op,
            kink,
            id=f"{op.name}-{kink}",
            marks=[pytest.mark.xfail(strict=KNOWN[op.name, kink] not in _NOISE, reason=KNOWN[op.name, kink])]
            if (op.name, kink) in KNOWN
            else [],
        )  # fmt: skip
        for op in OPS
        if op.grad
        for kink in FINITE_KINKS + (INFINITE_KINKS if op.extremes else [])
    ]


# (derandomized draws, not shrunk: a kink fails at its first draw, and a shrink of each of
# many failing cases would cost minutes)
_SETTINGS = settings(max_examples=3, deadline=None, derandomize=True, database=None,
                     suppress_health_check=list(HealthCheck), phases=(Phase.explicit, Phase.generate))  # fmt: skip


@pytest.mark.parametrize("op, kink", _cases())
def test_kink(op: OpInfo, kink: str) -> None:
    # (a difference is recorded, not raised inside the draws: a run of many failing
    # property tests in one process makes hypothesis's settings recurse without end)
    problems: list[str] = []

    @_SETTINGS
    @given(data=st.data())
    def draws(data) -> None:
        try:
            _check(op, kink, data)
        except Exception as e:  # noqa: BLE001 - reported below, with its class
            problems.append(f"{type(e).__name__}: {e}")

    draws()
    assert not problems, problems[0]


def _raises_as(err: Exception, op: OpInfo, xs: list, diff: list, v: np.ndarray, sample: Sample) -> None:
    """Our backward raises where PyTorch's does, with its class (``tga.linalg.LinAlgError`` for its)."""
    want = tga.linalg.LinAlgError if isinstance(err, torch.linalg.LinAlgError) else type(err)
    with _mode("plain"), pytest.raises(want):
        out = op.ours(*xs, **sample.kwargs)
        tga.grad(out, [xs[i] for i in diff], Tensor(v), create_graph=True, allow_unused=True)


def _check(op: OpInfo, kink: str, data) -> None:
    sample = _kinked(data.draw(op.sample, label="sample"), kink)
    if sample is None:
        return  # (no float operand, or no two of one shape: nothing to put at this kink)
    finite = kink in FINITE_KINKS
    xs, ts = _ours(op, sample, "cpu", True), _theirs(op, sample, True)
    diff = [i for i, t in enumerate(ts) if t.requires_grad]
    with _quiet():
        try:
            out_t = op.theirs(*ts, **sample.kwargs)
        except Exception:  # noqa: BLE001 - (a singular matrix at 0, ...): then ours raises too, any class
            with _mode("plain"), pytest.raises(Exception):  # noqa: B017, PT011
                op.ours(*xs, **sample.kwargs)
            return
        v = _cotangent(tuple(out_t.shape))
        try:
            g1_t = torch.autograd.grad(out_t, [ts[i] for i in diff], torch.from_numpy(v), create_graph=True,
                                       allow_unused=True, materialize_grads=True)  # fmt: skip
        except Exception as err:  # noqa: BLE001 - PyTorch's backward refuses (slogdet at a singular matrix): so must ours
            _raises_as(err, op, xs, diff, v, sample)
            return
        us = [_cotangent(tuple(ts[i].shape), seed=1 + i) for i in diff]
        s_t = sum((g * torch.from_numpy(u)).sum() for g, u in zip(g1_t, us))
        g2_t = (torch.autograd.grad(s_t, [ts[i] for i in diff], allow_unused=True, materialize_grads=True)
                if op.gradgrad and s_t.requires_grad else None)  # fmt: skip
        with _mode("plain"):
            out = op.ours(*xs, **sample.kwargs)
            g1 = tga.grad(out, [xs[i] for i in diff], Tensor(v), create_graph=True, allow_unused=True)
            g1 = [g if g is not None else Tensor(np.zeros(xs[i].shape)) for i, g in zip(diff, g1)]
            terms = [(g * Tensor(u)).sum() for g, u in zip(g1, us)]
            s = sum(terms[1:], terms[0]) if terms else None
            g2 = None
            if g2_t is not None:
                g2 = tga.grad(s, [xs[i] for i in diff], allow_unused=True) if s.requires_grad else [None] * len(diff)
    _compare(op, out, out_t, f"value at {kink}", sample, True)
    for i, g, w in zip(diff, g1, g1_t):
        _compare(op, g, w, f"gradient of input {i} at {kink}", sample, finite)
    if g2_t is not None:
        for i, g, w in zip(diff, g2, g2_t):
            g = g if g is not None else Tensor(np.zeros(xs[i].shape))
            _compare(op, g, w, f"second-order gradient of input {i} at {kink}", sample, finite)
