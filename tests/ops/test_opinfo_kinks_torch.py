"""Every OpInfo of PyTorch's database that we share (``tests/ops/test_torch_opinfo.py``'s
targets), its float64 samples with their floating tensors replaced by a kink: all 0, all -0.0,
all one value (ties), and the operands of the input's shape made equal. Value and gradient must
be PyTorch's (the runner's comparison: NaN where PyTorch's is NaN). ``tests/ops/test_kinks.py``
does the same for the op table's ops with second derivatives; this one covers PyTorch's inventory.
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

# A generator over every op of PyTorch's inventories: the full suite's (CI runs it), not the fast loop's.
pytestmark = pytest.mark.slow
pytest.importorskip("expecttest")  # PyTorch's test internals import it

import test_torch_opinfo as opinfo  # noqa: E402

SAMPLES = 2
VALUES = {"zeros": 0.0, "negative zeros": -0.0, "ties": 0.75}
KINKS = [*VALUES, "equal operands"]


def kinked(sample, kink: str):
    """``sample`` with its floating tensors set to the kink (None where the kink does not apply)."""
    if kink == "equal operands":
        ref = sample.input
        if not (isinstance(ref, torch.Tensor) and ref.is_floating_point()):
            return None
        changed = []

        def same(t):
            if isinstance(t, torch.Tensor) and t is not ref and t.is_floating_point() and t.shape == ref.shape:
                changed.append(t)
                return ref.detach().clone().requires_grad_(t.requires_grad)
            return t

        out = sample.transform(same)
        return out if changed else None
    value = VALUES[kink]

    def fill(t):
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            return torch.full_like(t.detach(), value).requires_grad_(t.requires_grad)
        return t

    return sample.transform(fill)


_BASIS = (
    "a matrix of rank 1: its factors' bases of the zero singular values (or eigenvalues) are rounding noise, "
    "chosen differently by PyTorch's MKL and our OpenBLAS; the values or gradients read them"
)
_SINGULAR = "a singular matrix: PyTorch's LU gives NaN where ours gives an infinity (LAPACK's build decides)"

#: (op id, kink) -> reason: xfail; strict where the outcome does not depend on the machine's LAPACK
KNOWN: dict[tuple[str, str], str] = {
    **{("as_strided_scatter", k): opinfo._AS_STRIDED_SCATTER for k in ("zeros", "negative zeros", "ties",
                                                                        "equal operands")},
    ("logit", "negative zeros"): "PyTorch's gradient at -0.0 is not one per size: its vectorised blocks give -inf "
    "(1 / (x (1 - x))), its scalar tail +inf, and a block's width is the machine's SIMD width (16 float64 or 32 "
    "float32 elements with AVX-512: 15 elements all +inf, 17 sixteen -inf then one +inf); ours is +inf everywhere, "
    "the scalar loop's answer and the answer of a small input",
    **{("linalg.ldl_solve", k): "a zero LDL factor: ours raises LinAlgError (singular), PyTorch's solve returns "
       "infinities" for k in ("zeros", "negative zeros")},
    **{("linalg.solve_ex", k): "a singular system: PyTorch's result requires grad (its gradient is its LU's inf and "
       "NaN); ours is LAPACK's infinities without a gradient" for k in ("zeros", "negative zeros", "ties")},
}  # fmt: skip
#: known differences whose outcome is LAPACK's rounding noise: xfail, not strict
NOISE: dict[tuple[str, str], str] = {
    **{(op, "ties"): _BASIS for op in ("geqrf", "linalg.cond", "linalg.eig", "linalg.eigh", "linalg.eigvalsh",
                                      "linalg.qr", "linalg.svdvals", "norm.nuc", "qr")},
    ("linalg.slogdet", "ties"): _SINGULAR,
    ("logdet", "ties"): _SINGULAR,
}  # fmt: skip


def failures(op_id: str, kink: str) -> list[str]:
    target = opinfo.TARGETS[op_id]
    grads = target.op.supports_autograd and target.function is not None
    tally = opinfo.Tally()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sample in opinfo._samples(target.op, torch.float64, SAMPLES, reference=False, requires_grad=grads):
            s = kinked(sample, kink)
            if s is not None:
                opinfo.run_sample(target, s, torch.float64, tally, grads=grads)
    return tally.failures


def _params() -> list:
    out = []
    for op_id in sorted(opinfo.TARGETS):
        if torch.float64 not in opinfo._supported(opinfo.TARGETS[op_id].op):
            continue
        for kink in KINKS:
            marks = []
            if (op_id, kink) in KNOWN:
                marks = [pytest.mark.xfail(strict=True, reason=KNOWN[op_id, kink])]
            elif (op_id, kink) in NOISE:
                marks = [pytest.mark.xfail(strict=False, reason=NOISE[op_id, kink])]
            out.append(pytest.param(op_id, kink, marks=marks, id=f"{op_id}-{kink}"))
    return out


@pytest.mark.parametrize(("op_id", "kink"), _params())
def test_an_opinfo_sample_at_a_kink_is_pytorchs(op_id: str, kink: str) -> None:
    found = failures(op_id, kink)
    assert not found, f"{len(found)} differ; first: {found[0]}"


def test_every_known_kink_is_a_target() -> None:
    assert {op for op, _ in KNOWN} | {op for op, _ in NOISE} <= set(opinfo.TARGETS)
