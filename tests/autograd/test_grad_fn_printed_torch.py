"""What a tutorial prints of a result's history, ``print(y.grad_fn)`` and ``tensor(..., grad_fn=<...>)``, is
PyTorch's: the node of every common call of a first model, and of a matrix product by its operands' ranks,
batches and which side needs a gradient (PyTorch folds, views or copies back: ``MmBackward0``,
``UnsafeViewBackward0``, ``CloneBackward0``, ``SqueezeBackward4``, ...)."""

from __future__ import annotations

import itertools
import re

import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

SETUP = (
    "x = torch.randn(2, 3, requires_grad=True); w = torch.randn(3, 2, requires_grad=True); "
    "x3 = torch.randn(4, 2, 3, requires_grad=True); x4 = torch.randn(1, 2, 5, 5, requires_grad=True); "
    "lin = torch.nn.Linear(3, 2); conv = torch.nn.Conv2d(2, 2, 3); ln = torch.nn.LayerNorm(3); "
    "bn = torch.nn.BatchNorm1d(3); emb = torch.nn.Embedding(3, 2)"
)
CALLS = (
    "x.mean()", "x.sum()", "x * 2", "x + 1", "x @ w", "x.mm(w)", "torch.matmul(x3, w)", "x3 @ w", "x.relu()", "F.relu(x)",
    "torch.sigmoid(x)", "x.tanh()", "x.softmax(-1)", "F.log_softmax(x, 1)", "F.mse_loss(x, x.detach() * 0)",
    "F.cross_entropy(x, torch.tensor([0, 1]))", "F.nll_loss(F.log_softmax(x, 1), torch.tensor([0, 1]))",
    "F.l1_loss(x, x.detach() * 0)", "F.binary_cross_entropy(x.sigmoid(), x.detach() * 0)",
    "F.binary_cross_entropy_with_logits(x, x.detach() * 0)", "lin(x)", "lin(x3)", "conv(x4)", "x.view(6)",
    "x.reshape(3, 2)", "x[0]", "x[:, 1]", "x.t()", "x.T", "x3.transpose(0, 1)", "x.unsqueeze(0)", "x.squeeze()",
    "x.exp()", "x.log()", "x.pow(2)", "x ** 2", "x.sqrt()", "x / 2", "2 / x", "x - 1", "1 - x", "-x", "x.abs()",
    "x.max()", "x.max(1)[0]", "x.norm()", "torch.cat([x, x])", "torch.stack([x, x])", "x.clone()", "x.double()",
    "x.flatten()", "x.permute(1, 0)", "x.expand(2, 2, 3)", "x.repeat(2, 1)", "x.repeat(1, 1)", "x.tile(2)",
    "x.mean(0)", "x.var()", "x.std()", "F.gelu(x)", "F.layer_norm(x, (3,))", "ln(x)", "bn(x)",
    "x.masked_fill(x.detach() > 0, 0.)", "torch.where(x.detach() > 0, x, 0.)", "x.clamp(0, 1)", "x.sum(1)",
    "x.cumsum(1)", "F.normalize(x)", "x @ x.t()", "x.chunk(3, 1)[0]", "x.split(1)[0]", "x.unbind()[0]",
    "x.narrow(1, 0, 2)", "x.index_select(0, torch.tensor([1]))", "x.gather(1, torch.tensor([[0], [1]]))",
    "x.logsumexp(1)", "x.amax(1)", "x.prod()", "torch.outer(x[0], x[1])", "F.silu(x)", "F.leaky_relu(x)",
    "torch.bmm(x3, x3.transpose(1, 2))", "F.linear(x, w.t())", "F.linear(x, w.t(), torch.ones(2))",
    "F.smooth_l1_loss(x, x.detach() * 0)", "F.cosine_similarity(x, x + 1)", "F.pad(x, (1, 1))", "x.to(torch.float64)",
    "x.t().contiguous()", "torch.addmm(torch.ones(2), x, w)", "(x * 1).unsqueeze_(0)", "(x[:1] * 1).squeeze_()",
    "(x[:1] * 1).squeeze_(0)", "(x[:1] * 1).squeeze_((0, 1))", "(x * 1).transpose_(0, 1)", "torch.fft.rfft(x)",
    "torch.fft.irfft(x)", "torch.fft.fft(x, 5)", "torch.fft.ifft(x)", "torch.fft.ihfft2(x)", "torch.fft.hfft(x)",
    "torch.conj_physical(x.to(torch.complex64))", "x.to(torch.complex64).conj()", "F.avg_pool1d(x3, 2)",
    "F.max_pool1d(x3, 2)", "F.adaptive_avg_pool1d(x3, 2)", "F.avg_pool2d(x3, 2)",
)  # fmt: skip


def _printed(lib, call: str) -> str:
    lib.manual_seed(0)
    env = {"torch": lib, "F": lib.nn.functional}
    exec(SETUP, env)
    return re.sub(r" at 0x[0-9a-f]+", "", repr(eval(call, env).grad_fn))


@pytest.mark.parametrize("call", CALLS)
def test_a_common_calls_grad_fn_prints_as_pytorchs(call: str) -> None:
    assert _printed(tga, call) == _printed(torch, call)


_SHAPES = ((3,), (2, 3), (3, 2), (3, 3), (4, 3, 3), (1, 3, 3), (5, 4, 3, 3), (1, 1, 3, 3), (0, 3, 3), (1, 2, 3),
           (2, 3, 3), (0, 1, 3, 3), (4, 1, 3, 3), (1, 0, 3, 3))  # fmt: skip


@pytest.mark.parametrize("first", _SHAPES, ids=str)
def test_a_products_node_is_pytorchs_by_ranks_batches_and_gradients(first: tuple) -> None:
    for second, (ga, gb) in itertools.product(_SHAPES, ((True, True), (True, False), (False, True))):
        try:
            want = (torch.randn(*first, requires_grad=ga) @ torch.randn(*second, requires_grad=gb)).grad_fn.name()
        except RuntimeError:
            continue
        got = (tga.randn(*first, requires_grad=ga) @ tga.randn(*second, requires_grad=gb)).grad_fn.name()
        assert got == want, f"{first} @ {second} (requires_grad {ga}, {gb})"
