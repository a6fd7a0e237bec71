"""PyTorch's deprecated ``size_average``/``reduce`` arguments of every loss, read as PyTorch reads
them: by truth (``0`` is ``False``; a tensor of several elements raises), ``reduce`` falsy gives
no reduction, else a falsy ``size_average`` the sum, else the mean, with PyTorch's warning, in
the function and in the layer."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

_R = np.random.default_rng(0)
_X = _R.standard_normal((4, 3))
_P = 1 / (1 + np.exp(-_X))
_SIGNS = np.where(_R.standard_normal((4,)) > 0, 1.0, -1.0)
_CLASSES = np.array([0, 2, 1, 2])
_MULTI = np.array([[0, 2, -1], [1, -1, 0], [2, 0, -1], [1, 2, 0]])

#: loss -> its operands, from arrays (each a function of the library, so both get the same numbers)
INPUTS = {
    "l1_loss": lambda t: (t.tensor(_X), t.tensor(_X[::-1].copy())),
    "mse_loss": lambda t: (t.tensor(_X), t.tensor(_X[::-1].copy())),
    "smooth_l1_loss": lambda t: (t.tensor(_X), t.tensor(_X[::-1].copy())),
    "kl_div": lambda t: (t.tensor(_X).log_softmax(1), t.tensor(_P)),
    "nll_loss": lambda t: (t.tensor(_X).log_softmax(1), t.tensor(_CLASSES)),
    "cross_entropy": lambda t: (t.tensor(_X), t.tensor(_CLASSES)),
    "binary_cross_entropy": lambda t: (t.tensor(_P), t.tensor(_P[::-1].copy())),
    "binary_cross_entropy_with_logits": lambda t: (t.tensor(_X), t.tensor(_P)),
    "poisson_nll_loss": lambda t: (t.tensor(_X), t.tensor(np.abs(_X))),
    "hinge_embedding_loss": lambda t: (t.tensor(_X[:, 0]), t.tensor(_SIGNS)),
    "soft_margin_loss": lambda t: (t.tensor(_X[:, 0]), t.tensor(_SIGNS)),
    "multilabel_margin_loss": lambda t: (t.tensor(_X), t.tensor(_MULTI)),
    "multilabel_soft_margin_loss": lambda t: (t.tensor(_X), t.tensor((_P > 0.5).astype(np.float64))),
    "multi_margin_loss": lambda t: (t.tensor(_X), t.tensor(_CLASSES)),
    "cosine_embedding_loss": lambda t: (t.tensor(_X), t.tensor(_X[::-1].copy()), t.tensor(_SIGNS)),
    "margin_ranking_loss": lambda t: (t.tensor(_X[:, 0]), t.tensor(_X[:, 1]), t.tensor(_SIGNS)),
    "triplet_margin_loss": lambda t: (t.tensor(_X), t.tensor(_X[::-1].copy()), t.tensor(_X * 0.5)),
}
LAYERS = {"l1_loss": "L1Loss", "mse_loss": "MSELoss", "nll_loss": "NLLLoss", "cross_entropy": "CrossEntropyLoss",
          "binary_cross_entropy": "BCELoss", "kl_div": "KLDivLoss", "soft_margin_loss": "SoftMarginLoss",
          "multi_margin_loss": "MultiMarginLoss", "margin_ranking_loss": "MarginRankingLoss"}  # fmt: skip
#: (a float size_average of cross_entropy is its earlier positional label_smoothing: not among these)
SETTINGS = [(0, None), (None, 0), (1, 0), (0, 1), (False, None), (None, False), (True, True), (None, True), (2, None)]


def _run(lib, name: str, size_average, reduce, layer: bool):
    operands = INPUTS[name](lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if layer:
                out = getattr(lib.nn, LAYERS[name])(size_average=size_average, reduce=reduce)(*operands)
            else:
                out = getattr(lib.nn.functional, name)(*operands, size_average=size_average, reduce=reduce)
            got = np.asarray(out.detach().numpy())
        except Exception as e:  # noqa: BLE001 - the class is compared
            got = type(e).__name__
    legacy = [str(w.message) for w in caught if "size_average" in str(w.message)]
    return got, legacy


def _legacy_losses() -> set[str]:
    found = set()
    for n in dir(torch.nn.functional):
        try:
            if "size_average" in inspect.signature(getattr(torch.nn.functional, n)).parameters:
                found.add(n)
        except (TypeError, ValueError):
            continue
    return found


def test_every_legacy_loss_is_listed() -> None:
    assert _legacy_losses() - set(INPUTS) == set()


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
@pytest.mark.parametrize(("name", "layer"), [(n, False) for n in sorted(INPUTS)] + [(n, True) for n in sorted(LAYERS)])
def test_legacy_reduction_arguments_as_in_torch(name: str, layer: bool, setting: tuple) -> None:
    want, want_warn = _run(torch, name, *setting, layer)
    got, got_warn = _run(tga, name, *setting, layer)
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
    else:
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert got_warn == want_warn
