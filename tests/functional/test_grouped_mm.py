"""``F.grouped_mm`` against PyTorch's CPU kernel: its four layouts, gradients, dtypes and errors."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402
import tinygrad_attn.functional as F  # noqa: E402

# (layout, shape of A, shape of B, offs, the defined part of the result and of A's and B's gradients: PyTorch
# leaves the rows or columns past offs[-1] uninitialised, and what its backward computes from them)
ALL = (slice(None),)
LAYOUTS = [  # (rows of 8 entries or more: PyTorch's kernels read 16-byte rows, float16 included)
    ("2d x 3d", (10, 8), (2, 8, 8), [3, 8], (slice(0, 8),), (slice(0, 8),), ALL),
    ("2d x 3d, an empty group", (8, 8), (3, 8, 8), [3, 3, 8], ALL, ALL, ALL),
    ("3d x 2d", (2, 4, 8), (8, 16), [8, 16], ALL, ALL, ALL),
    (
        "3d x 2d, columns past the last group",
        (2, 4, 8),
        (8, 24),
        [8, 16],
        (slice(None), slice(0, 16)),
        ALL,
        (slice(None), slice(0, 16)),
    ),
    ("2d x 2d", (4, 16), (16, 8), [8, 16], ALL, ALL, ALL),
    ("3d x 3d", (2, 5, 8), (2, 8, 8), None, ALL, ALL, ALL),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize(("layout", "sa", "sb", "offs", "defined", "da", "db"), LAYOUTS, ids=[c[0] for c in LAYOUTS])
def test_grouped_mm(layout: str, sa: tuple, sb: tuple, offs: list | None, defined: tuple, da: tuple, db: tuple,
                    dtype: torch.dtype) -> None:  # fmt: skip
    g = torch.Generator().manual_seed(len(layout))
    a = torch.randn(sa, generator=g).to(dtype).requires_grad_()
    b = torch.randn(sb, generator=g).to(dtype).requires_grad_()
    o = None if offs is None else torch.tensor(offs, dtype=torch.int32)
    want = torch.nn.functional.grouped_mm(a, b, offs=o)
    ao, bo = (tga.tensor(t.detach().numpy(), requires_grad=True) for t in (a, b))
    got = F.grouped_mm(ao, bo, offs=None if o is None else tga.tensor(o.detach().numpy()))
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype) == str(want.dtype)
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    np.testing.assert_allclose(got.detach().numpy()[defined], want.detach().numpy()[defined], rtol=tol, atol=tol)
    if dtype == torch.float32:  # (gradients: a cotangent zero where PyTorch's result is undefined)
        cot = torch.zeros(want.shape)
        cot[defined] = torch.randn(cot[defined].shape, generator=g)
        ta, tb = torch.autograd.grad(want, (a, b), cot)
        oa, ob = tga.autograd.grad(got, (ao, bo), tga.tensor(cot.detach().numpy()))
        np.testing.assert_allclose(oa.detach().numpy()[da], ta.detach().numpy()[da], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(ob.detach().numpy()[db], tb.detach().numpy()[db], rtol=1e-5, atol=1e-5)


def test_grouped_mm_rows_past_the_last_group_are_zeros() -> None:
    """(PyTorch leaves them uninitialised.)"""
    out = F.grouped_mm(tga.ones(10, 4), tga.ones(2, 4, 4), offs=tga.tensor([3, 8], dtype=tga.int32))
    assert not out[8:].detach().numpy().any()


_I32 = torch.tensor([3, 8], dtype=torch.int32)
ERRORS = [
    ("float64", lambda t: (t.randn(8, 4, dtype=t.float64), t.randn(2, 4, 4, dtype=t.float64)), {"offs": _I32}),
    ("int64 offs", lambda t: (t.randn(8, 4), t.randn(2, 4, 4)), {"offs": torch.tensor([3, 8])}),
    ("no offs with a 2-D operand", lambda t: (t.randn(8, 4), t.randn(2, 4, 4)), {}),
    ("offs with two 3-D operands", lambda t: (t.randn(2, 8, 4), t.randn(2, 4, 4)), {"offs": _I32}),
    ("contraction", lambda t: (t.randn(8, 8), t.randn(2, 4, 8)), {"offs": _I32}),
    ("1-D", lambda t: (t.randn(8), t.randn(2, 4, 8)), {"offs": _I32}),
    ("16-byte rows", lambda t: (t.randn(8, 4), t.randn(2, 4, 3)), {"offs": _I32}),
    ("groups", lambda t: (t.randn(8, 8), t.randn(3, 8, 8)), {"offs": _I32}),
    ("batch", lambda t: (t.randn(2, 8, 8), t.randn(3, 8, 8)), {}),
    ("bias", lambda t: (t.randn(8, 4), t.randn(2, 4, 4)), {"offs": _I32, "bias": "bias"}),
    ("out_dtype", lambda t: (t.randn(8, 4), t.randn(2, 4, 4)), {"offs": _I32, "out_dtype": "float16"}),
]


@pytest.mark.parametrize(("what", "make", "kw"), ERRORS, ids=[e[0] for e in ERRORS])
def test_grouped_mm_refuses_what_pytorch_refuses(what: str, make, kw: dict) -> None:
    def theirs_kw() -> dict:
        out = dict(kw)
        if "bias" in out:
            out["bias"] = torch.zeros(4)
        if "out_dtype" in out:
            out["out_dtype"] = torch.float16
        return out

    with pytest.raises(RuntimeError):
        torch.nn.functional.grouped_mm(*make(torch), **theirs_kw())
    a, b = (tga.tensor(x.detach().numpy()) for x in make(torch))
    mine = {k: (tga.tensor(v.detach().numpy()) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
    if "bias" in mine:
        mine["bias"] = tga.zeros(4)
    if "out_dtype" in mine:
        mine["out_dtype"] = tga.float16
    with pytest.raises(RuntimeError):
        F.grouped_mm(a, b, **mine)
