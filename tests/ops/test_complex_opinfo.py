"""PyTorch's OpInfo samples in complex64 and complex128, run through ours.

For every OpInfo we have (the name map of ``test_torch_opinfo.py``):

* where the OpInfo says PyTorch's CPU supports a complex dtype, its first samples in that dtype:
  values and dtypes as PyTorch's, and in complex128 the gradients (``autograd.grad`` with a fixed
  complex cotangent: PyTorch's conjugate convention) as PyTorch's;
* where it supports no complex dtype, its first sample made complex64: we raise where PyTorch raises
  (its exception class, or the built-in class it derives from), and return its values where it returns.

Reviewed differences are strict xfails with one reason each (``KNOWN``).
``python tests/ops/test_complex_opinfo.py`` prints the survey: each op x dtype and its first difference.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow  # (a generator over PyTorch's whole inventory: the full suite's)
pytest.importorskip("expecttest")

import test_torch_opinfo as runner  # noqa: E402
from differential import builtin_class  # noqa: E402

import tinygrad_attn as tga  # noqa: E402
from tinygrad_attn import Tensor  # noqa: E402

SAMPLES = 4
COMPLEX = {"complex64": torch.complex64, "complex128": torch.complex128}
_TOL = {torch.complex64: 2e-5, torch.complex128: 1e-9}

# op id x dtype -> why it differs today
KNOWN: dict[tuple[str, str], str] = {
    ('chalf', 'complex64'): 'complex32 has no NumPy dtype: Tensor.chalf() raises',
    ('chalf', 'complex128'): 'complex32 has no NumPy dtype: Tensor.chalf() raises',
    ('as_strided_scatter', 'complex128'): runner._AS_STRIDED_SCATTER,
    ('linalg.eigh', 'complex64'): "eigenvector signs: NumPy's LAPACK and PyTorch's (MKL) pick different signs for some columns (values, and gradients of sign-free losses, agree)",
    ('linalg.eigh', 'complex128'): "eigenvector signs: NumPy's LAPACK and PyTorch's (MKL) pick different signs for some columns (values, and gradients of sign-free losses, agree)",
}  # fmt: skip


def _to_ours(x: Any, leaves: list | None = None) -> Any:
    if isinstance(x, torch.Tensor) and x.is_complex():
        if x.layout != torch.strided:
            raise runner.Unsupported("layout")
        t = runner.tensor_of(x, getattr(tga, str(x.dtype).removeprefix("torch."))).requires_grad_(x.requires_grad)
        if leaves is not None and x.requires_grad:
            leaves.append((x, t))
        return t
    if isinstance(x, torch.dtype) and x.is_complex:
        return getattr(tga, str(x).removeprefix("torch."))
    if isinstance(x, list):
        return [_to_ours(v, leaves) for v in x]
    if isinstance(x, tuple):
        return tuple(_to_ours(v, leaves) for v in x)
    if isinstance(x, dict):
        return {k: _to_ours(v, leaves) for k, v in x.items()}
    if isinstance(x, complex):
        return x
    return runner.to_ours(x, leaves)


def _compare(ours: Any, theirs: Any, tol: float) -> str | None:
    o, t = runner._flat(ours), runner._flat(theirs)
    if len(o) != len(t):
        return f"{len(o)} outputs, PyTorch has {len(t)}"
    for k, (a, b) in enumerate(zip(o, t, strict=True)):
        if isinstance(b, torch.Tensor):
            if not isinstance(a, Tensor):
                return f"output {k}: {type(a).__name__}, PyTorch returns a tensor"
            if runner._dtype_name(a) != runner._dtype_name(b):
                return f"output {k}: dtype {runner._dtype_name(a)}, PyTorch's {runner._dtype_name(b)}"
            x, y = runner._as_numpy(a), runner._as_numpy(b)
            if x.shape != y.shape:
                return f"output {k}: shape {x.shape}, PyTorch's {y.shape}"
            if y.dtype.kind == "c":
                with np.errstate(all="ignore"):
                    ok = np.isclose(x, y, rtol=tol, atol=tol, equal_nan=True) | (x == y)
                if not ok.all():
                    i = tuple(np.argwhere(~ok)[0])
                    return f"output {k}: values differ ({int((~ok).sum())} of {ok.size}): at {i} {x[i]!r} vs {y[i]!r}"
                continue
        why = runner.compare([a], [b], tol)
        if why:
            return f"output {k}: {why}"
    return None


def _grads(target: Any, sample: Any) -> str | None:
    op = target.op
    if not op.supports_autograd or target.function is None:
        return None
    leaves: list = []
    try:
        inp, args, kw = _to_ours(sample.input, leaves), _to_ours(sample.args, leaves), _to_ours(sample.kwargs, leaves)
    except runner.Unsupported:
        return None
    if not leaves:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = runner._flat(sample.output_process_fn_grad(op.op(sample.input, *sample.args, **sample.kwargs)))
            pick = [k for k, t in enumerate(theirs) if isinstance(t, torch.Tensor) and t.requires_grad]
            if not pick:
                return None
            cots = []
            for k in pick:
                g = torch.Generator().manual_seed(99 + k)
                cots.append(torch.randn(theirs[k].shape, dtype=theirs[k].dtype, generator=g))
            tg = torch.autograd.grad([theirs[k] for k in pick], [t for t, _ in leaves], cots, allow_unused=True)
    except Exception:
        return None
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ours = runner._flat(sample.output_process_fn_grad(target.function(inp, *args, **kw)))
            outs = [ours[k] for k in pick]
            if not all(isinstance(o, Tensor) and o.requires_grad for o in outs):
                return "an output PyTorch differentiates does not require grad"
            og = tga.autograd.grad(outs, [o for _, o in leaves], [tga.tensor((c.float() if c.dtype == torch.bfloat16 else c).numpy()) for c in cots],
                                   allow_unused=True)  # fmt: skip
    except Exception as e:
        return f"gradient raises {type(e).__name__}: {str(e)[:160]}"
    for k, (a, b) in enumerate(zip(og, tg, strict=True)):
        if b is None:
            continue
        if a is None:
            if torch.count_nonzero(b):
                return f"input {k}: no gradient, PyTorch's is nonzero"
            continue
        why = _compare([a], [b], 1e-7)
        if why:
            return f"gradient of input {k}: {why}"
    return None


def _supported(op: Any) -> list[str]:
    try:
        have = op.supported_dtypes("cpu")
    except Exception:
        return []
    return [n for n, d in COMPLEX.items() if d in have]


def run(op_id: str, dtype_name: str) -> tuple[int, list[str]]:
    """(samples compared, the differences) of one op in one complex dtype."""
    target = runner.TARGETS[op_id]
    if isinstance(target.function, tga.dtype):  # (``cfloat``, ``cdouble``: dtypes in tga., conversions as methods)
        target = runner.Target(target.op, method=op_id)
    op, dtype = target.op, COMPLEX[dtype_name]
    supported = dtype_name in _supported(op)
    compared, diffs = 0, []
    try:
        samples = list(op.sample_inputs("cpu", dtype, requires_grad=supported and op.supports_autograd))
    except Exception:
        return 0, []
    for sample in samples[: SAMPLES if supported else 1]:
        if any(isinstance(v, torch.Tensor) and v.numel() > runner.MAX_NUMEL for v in runner._flat(sample.input)):
            continue
        try:
            inp, args, kw = _to_ours(sample.input), _to_ours(sample.args), _to_ours(sample.kwargs)
        except runner.Unsupported:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = runner._call_theirs(target, "function" if target.function else "method", sample.input,
                                             sample.args, sample.kwargs)  # fmt: skip
            raised = None
        except Exception as e:
            raised = e
        compared += 1
        where = runner._describe(sample)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                ours = runner._call_ours(target, "function" if target.function else "method", inp, args, kw)
        except Exception as e:
            if raised is None:
                diffs.append(f"{where}: raises {type(e).__name__}: {str(e)[:160]} where PyTorch returns")
            elif not isinstance(e, builtin_class(type(raised))):
                diffs.append(f"{where}: raises {type(e).__name__}, PyTorch {type(raised).__name__}: {raised}"[:300])
            continue
        if raised is not None:
            diffs.append(f"{where}: returns where PyTorch raises {type(raised).__name__}: {str(raised)[:120]}")
            continue
        if op.name in runner.RANDOM:
            continue
        why = _compare(ours, theirs, _TOL[dtype])
        if why is None and supported and dtype_name == "complex128":
            why = _grads(target, sample)
        if why:
            diffs.append(f"{where}: {why}")
    return compared, diffs


CASES = [
    pytest.param(
        op_id, d, marks=pytest.mark.xfail(strict=True, reason=KNOWN[(op_id, d)]) if (op_id, d) in KNOWN else ()
    )
    for op_id in sorted(runner.TARGETS)
    for d in COMPLEX
]


@pytest.mark.parametrize(("op_id", "dtype"), CASES)
def test_complex_samples_as_torch(op_id: str, dtype: str) -> None:
    _, diffs = run(op_id, dtype)
    assert not diffs, diffs[0]


if __name__ == "__main__":
    total = bad = 0
    only = sys.argv[1:]
    for op_id in sorted(runner.TARGETS):
        if only and op_id not in only:
            continue
        for d in COMPLEX:
            n, diffs = run(op_id, d)
            total += 1
            if diffs:
                bad += 1
                print(f"{op_id} {d} [{_supported(runner.TARGETS[op_id].op)}]: {diffs[0][:260]}")
    print(f"{bad} of {total} op x dtype differ")
