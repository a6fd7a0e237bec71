"""Arguments of the wrong kind, met as PyTorch meets them: each program runs under PyTorch and here;
where PyTorch raises, ours raises an instance of its builtin class; where it runs, ours returns its
values and dtype. The programs are the classes of argument PyTorch's parser reads: a ``Scalar``
(``alpha``, ``beta``, a fill value), an ``int[]`` (sizes, split sizes, an adaptive pool's
``output_size``, ``fold``'s), a device, an index vector (``index_select``, ``index_add``), the one
argument form of ``torch.repeat_interleave``, and an input with too few axes for a batched product."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from differential import builtin_class  # noqa: E402

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

_SETUP = "x = torch.arange(6.).reshape(2, 3); i = torch.tensor([[0, 1]]); b = torch.arange(24.).reshape(2, 3, 4); "

PROGRAMS = [
    # PyTorch's Scalar: a number or a one-element tensor, not a tensor of several entries
    "torch.sub(x, x, alpha=x)",
    "torch.add(x, x, alpha=x)",
    "torch.add(x, x, alpha=torch.tensor(2.))",
    "torch.rsub(x, x, x)",
    "torch.rsub(x, x, 2)",
    "torch.addmm(x, x.T, x, alpha=x)",
    "torch.addmm(x, x.T, x, beta=x)",
    "torch.addmm(x, x.T, x, beta=2, alpha=torch.tensor(0.5))",
    "x.index_add(0, torch.tensor([0]), x[:1], alpha=x)",
    "x.clone().fill_((2, 3))",
    "x.clone().fill_([])",
    "x.clone().fill_('a')",
    "x.clone().fill_(2)",
    "x.masked_fill(x > 2, [1.0])",
    "torch.full((2,), (1, 2))",
    "x.where(0, x)",
    "x.where(x > 2, 0)",
    "x.where(x > 2, (1, 2))",
    "torch.normal(x, 'a')",
    "torch.searchsorted(x[0], (2, 3))",
    # PyTorch's int[]: a list or tuple of ints
    "torch.nn.functional.adaptive_avg_pool1d(x, x)",
    "torch.nn.functional.adaptive_max_pool1d(x, x)",
    "torch.nn.functional.adaptive_avg_pool1d(x, (1, 2))",
    "torch.nn.functional.adaptive_avg_pool2d(b, x)",
    "torch.nn.functional.adaptive_avg_pool2d(b, (2, 2))",
    "torch.nn.functional.fold(torch.zeros(1, 4, 4), x, 1)",
    "torch.nn.functional.fold(torch.zeros(1, 4, 4), 'ab', 1)",
    "torch.nn.functional.fold(torch.zeros(1, 4, 4), (2, 2, 2), 1)",
    "torch.nn.functional.rms_norm(x, 3)",
    "torch.nn.functional.rms_norm(x, x)",
    "torch.nn.functional.rms_norm(x, (3,))",
    "torch.nn.functional.rms_norm(x, [3])",
    "x.unsafe_split_with_sizes(1)",
    "x.split_with_sizes(1)",
    "x.split_with_sizes([1, 1])",
    "x.movedim(0, x)",
    "x.movedim(0, 1)",
    "x.movedim((0, 1), (1, 0))",
    "torch.index_put(x, x, x)",
    "x.index_put(0, x)",
    "x.index_put((torch.tensor([1]),), torch.tensor(7.))",
    # a device: a name, an index or a device; never a sequence or a float
    "x.to((2, 3))",
    "x.to([])",
    "x.to(1.5)",
    "x.to('cpu')",
    # an index vector: its rank is read before its dtype and the source's shape
    "x.index_select(0, x)",
    "x.index_select(0, torch.tensor([[0]]))",
    "x.index_select(0, torch.tensor([1.0]))",
    "x.index_add(0, i, x)",
    "x.index_copy(0, i, x)",
    "x.index_add(0, torch.tensor([1, 0]), x)",
    "x.index_copy(1, torch.tensor([2, 0, 1]), x)",
    "x.index_add(0, torch.tensor([0, 1, 1]), x)",
    # torch.repeat_interleave(repeats): the indices, each repeated
    "torch.repeat_interleave(torch.tensor([1, 2, 0, 3]))",
    "torch.repeat_interleave(torch.tensor([1, 2], dtype=torch.int32))",
    "torch.repeat_interleave(torch.zeros(0, dtype=torch.long))",
    "torch.repeat_interleave(torch.tensor([1, 2]), output_size=3)",
    "torch.repeat_interleave(torch.tensor([1, 2]), output_size=4)",
    "torch.repeat_interleave(torch.tensor([1, -2]))",
    "torch.repeat_interleave(torch.tensor(2))",
    "torch.repeat_interleave(torch.tensor([[1, 2]]))",
    "torch.repeat_interleave(x)",
    "torch.repeat_interleave(torch.tensor([True]))",
    "torch.repeat_interleave(torch.tensor([1], dtype=torch.uint8))",
    "torch.tensor([1, 2]).repeat_interleave()",
    "torch.repeat_interleave(x, 2)",
    "torch.repeat_interleave(x, torch.tensor([1, 2]), dim=0)",
    # too few axes for a batched product, a bilinear weight or a matrix
    "torch.bmm(x, x)",
    "torch.baddbmm(x, x, x)",
    "torch.addbmm(x, x, x)",
    "torch.bilinear(x, x, x)",
    "torch.pca_lowrank(torch.tensor(2.5))",
    "torch.svd_lowrank(torch.tensor(2.5))",
    "torch.linalg.det(torch.ones(3))",
    "torch.bmm(b, b.transpose(1, 2))",
    # a few more of one kind each
    "x.norm('a')",
    "x.norm('fro')",
    "torch.nn.functional.embedding_bag(torch.tensor([[0, 5, 1]]), x)",
    "torch.nn.functional.embedding_bag(x, x)",
    "torch.nn.functional.nll_loss(x, x)",
    "torch.nn.functional.nll_loss(x, torch.tensor([0, 2]))",
    "torch.nn.functional.local_response_norm(b, 2, alpha=torch.tensor(1e-3))",
    "x.masked_fill(x > 2, torch.tensor([1.0]))",
    "torch.masked_fill(x, x > 2, x)",
    "torch.masked_fill(x, x > 2, torch.tensor(7.0))",
    "x.scatter(0, i)",
    "torch.scatter(x, 0, i)",
    "x.scatter(0, i, value=7.0)",
    "torch.nn.functional.cross_entropy(x, torch.tensor([0, 2]), 1.0)",
    "torch.nn.functional.nll_loss(x, torch.tensor([0, 2]), 0)",
    "torch.nn.functional.cross_entropy(x, torch.tensor([0, 2]), torch.tensor([1.0, 2.0, 3.0]))",
    "torch.nn.functional.gelu(x, 'tanh')",
    "torch.nn.functional.gelu(x, approximate='tanh')",
    "torch.nn.GELU('tanh')(x)",
    "torch.nuclear_norm(x, 0)",
    "torch.nuclear_norm(x, 2)",
    "torch.nuclear_norm(x, (0, 1))",
    "torch.unravel_index(torch.tensor([1]), torch.tensor([2, 3]))",
    "torch.unravel_index(torch.tensor([4]), (2, 3))",
    "torch.histogramdd(x, 'a')",
    "torch.randint_like(x, 0, i)",
    "x.clone().bernoulli_(torch.tensor([[1, 0, 1]]))",
    "x.clone().bernoulli_(torch.zeros(0, 3))",
]

KNOWN: dict[str, str] = {}


def _run(lib, code: str):
    scope = {"torch": lib}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(_SETUP + "out = " + code, scope)  # noqa: S102 - the table above
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's below
            return e, None
    return None, scope["out"]


def _arrays(out) -> list:
    items = out if isinstance(out, (tuple, list)) else [out]
    return [(np.asarray(t.detach().numpy()), str(t.dtype).removeprefix("torch.")) for t in items if hasattr(t, "dtype")]


@pytest.mark.parametrize(
    "code",
    [pytest.param(c, marks=[pytest.mark.xfail(reason=KNOWN[c], strict=True)] if c in KNOWN else []) for c in PROGRAMS],
)
def test_an_argument_is_met_as_in_torch(code):
    (want, theirs), (got, ours) = _run(torch, code), _run(tga, code)
    if want is not None:
        assert got is not None, f"PyTorch raises {type(want).__name__} ({want}) for {code}; ours returns"
        assert isinstance(got, builtin_class(type(want))), (
            f"{code}: PyTorch raises {type(want).__name__} ({want}), ours {type(got).__name__}: {got}"
        )
        assert str(got), f"{code}: ours raises {type(got).__name__} with no message"
        return
    assert got is None, f"PyTorch runs {code}; ours raises {type(got).__name__}: {got}"
    want_arrays, got_arrays = _arrays(theirs), _arrays(ours)
    assert len(want_arrays) == len(got_arrays)
    for (w, wd), (g, gd) in zip(want_arrays, got_arrays):
        assert gd == wd, f"{code}: dtype {gd}, PyTorch's {wd}"
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7, err_msg=code)
