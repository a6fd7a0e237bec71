"""The dtypes of a loss's operands as PyTorch's kernels take them: a bool or integer target of a
float input (cast to the input's dtype by Huber's kernel, promoted with the input by the MSE and
soft-margin kernels, refused where PyTorch's formula subtracts a bool; and the backward PyTorch then
refuses: Huber's of a target of another dtype, the soft margin's of a bool target), int64 classes only for the
margin losses, and a float64 target that makes a ranking loss float64."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

X = [[0.3, -1.2, 0.8, 2.0], [1.1, 0.4, -0.7, 0.05], [-0.2, 0.9, 1.6, -1.4]]
T = [[0.5, -1.0, 1.0, 0.0], [1.0, 0.0, -0.5, 0.25], [0.0, 1.0, 1.0, -1.0]]

CALLS = [
    ("l1_loss", "x, t.bool()"), ("l1_loss", "x.bool(), t"), ("mse_loss", "x, t.bool()"), ("mse_loss", "x.bool(), t"),
    ("mse_loss", "x, t.long()"), ("huber_loss", "x, t.bool()"), ("huber_loss", "x, t.long()"),
    ("huber_loss", "x, t.double()"), ("huber_loss", "x.double(), t"), ("huber_loss", "x.long(), t"),
    ("soft_margin_loss", "x, t.bool()"), ("multilabel_soft_margin_loss", "x, t.bool()"),
    ("multilabel_soft_margin_loss", "x, (t > 0).float().unsqueeze(0)"), ("multi_margin_loss", "x, c.int()"),
    ("multi_margin_loss", "x, c.to(torch.uint8)"), ("multilabel_margin_loss", "x, m.int()"),
    ("margin_ranking_loss", "x[0], x[1], t[0].sign().double()"), ("margin_ranking_loss", "x[0], x[1], t[0].sign()"),
]  # fmt: skip


def _run(lib, fn: str, args: str):  # noqa: ANN001, ANN202
    scope = {"torch": lib, "x": lib.tensor(X, requires_grad=True), "t": lib.tensor(T), "c": lib.tensor([1, 0, 3]),
             "m": lib.tensor([[3, 0, -1, 1], [1, -1, 2, 0], [0, 1, 2, 3]])}  # fmt: skip
    try:
        out = eval(f"torch.nn.functional.{fn}({args}, reduction='none')", scope)  # noqa: S307 - the test's own text
    except Exception as e:  # noqa: BLE001 - the class is compared
        return type(e)
    try:  # (PyTorch's forward may take what its backward refuses)
        out.sum().backward()
        grad = scope["x"].grad.numpy()
    except RuntimeError as e:
        grad = type(e).__name__
    return str(out.dtype).split(".")[-1], out.detach().numpy(), grad


@pytest.mark.parametrize(("fn", "args"), CALLS)
def test_operand_dtypes_as_pytorchs_kernels(fn: str, args: str) -> None:
    want, got = _run(torch, fn, args), _run(tga, fn, args)
    if isinstance(want, type):
        assert isinstance(got, type), f"{fn}({args}): PyTorch raises {want.__name__}, tinygrad_attn returns {got}"
        assert issubclass(got, next(c for c in want.__mro__ if c.__module__ == "builtins")), (want, got)
        return
    assert not isinstance(got, type), f"{fn}({args}): PyTorch returns, tinygrad_attn raises {got.__name__}"
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    if isinstance(want[2], str):
        assert got[2] == want[2], f"{fn}({args}): PyTorch's backward raises {want[2]}, tinygrad_attn's {got[2]!r}"
    else:
        np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ignore_index", [-100, -1, 0, 2])
def test_probability_targets_take_a_negative_ignore_index(ignore_index: int) -> None:
    """PyTorch refuses an ``ignore_index`` of a class (>= 0) with probability targets; a negative
    one (its default -100 or any other) ignores nothing."""

    def run(lib):  # noqa: ANN001, ANN202
        x = lib.tensor(X)
        p = lib.tensor(T).softmax(-1)
        try:
            return lib.nn.functional.cross_entropy(x, p, ignore_index=ignore_index, label_smoothing=0.1).item()
        except RuntimeError:
            return "RuntimeError"

    want, got = run(torch), run(tga)
    assert got == pytest.approx(want) if isinstance(want, float) else got == want
