"""One name per meaning: ``nn`` holds PyTorch's classes, ``models`` the library's batch-first
blocks under names PyTorch does not use, and the contract names are aliases of them.

This is the one place that uses the contract's alias names (``models.MultiHeadAttention``,
``models.TransformerEncoderLayer``, ...); everything else uses the blocks' own names.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor, models, nn

# The contract names (API.md, "Models") and the classes they name.
CONTRACT_ALIASES = {
    "MultiHeadAttention": "BatchFirstAttention",
    "TransformerEncoderLayer": "EncoderBlock",
    "TransformerDecoderLayer": "DecoderBlock",
    "TransformerEncoder": "EncoderStack",
    "TransformerDecoder": "DecoderStack",
    "Transformer": "EncoderDecoder",
}


def _public_classes(module) -> dict[str, type]:
    return {n: getattr(module, n) for n in module.__all__ if isinstance(getattr(module, n), type)}


def test_contract_aliases_are_the_blocks():
    for alias, name in CONTRACT_ALIASES.items():
        assert getattr(models, alias) is getattr(models, name), alias
        assert getattr(models, alias).__name__ == name  # repr and pictures say the new name
        assert alias not in models.__all__ and name in models.__all__
    assert models.MultiHeadAttention is models.BatchFirstAttention
    assert repr(models.MultiHeadAttention(8, 2)).startswith("BatchFirstAttention(")
    assert type(models.TransformerEncoderLayer(8, 2, 16)).__name__ == "EncoderBlock"


def test_models_has_no_other_public_class_outside_all():
    # Only the contract's aliases may sit outside __all__: no class sneaks in under a second name.
    classes = {n for n in dir(models) if not n.startswith("_") and isinstance(getattr(models, n), type)}
    assert classes - set(models.__all__) == set(CONTRACT_ALIASES)


@pytest.mark.parametrize("cls_name", ["BatchFirstAttention", "MultiHeadAttention"])
def test_true_means_may_attend_under_both_keywords(cls_name, rng):
    tga.manual_seed(0)
    m = getattr(models, cls_name)(8, 2).double()
    x = Tensor(rng.standard_normal((2, 4, 8)))
    causal = m(x, is_causal=True).detach().numpy()
    tril = np.tril(np.ones((4, 4), bool))  # True = may attend: the past and the present
    for out in (m(x, allow=tril), m(x, mask=tril), m(x, None, None, tril)):
        np.testing.assert_allclose(out.detach().numpy(), causal, atol=1e-12)
    assert np.abs(m(x, allow=~tril).detach().numpy() - causal).max() > 1e-3  # the other reading differs


def test_a_blocked_key_changes_nothing_under_both_keywords(rng):
    m = models.BatchFirstAttention(8, 2).double()
    q, kv = Tensor(rng.standard_normal((1, 3, 8))), rng.standard_normal((1, 5, 8))
    keep = np.array([True, True, True, True, False])  # the last key may not be attended to
    changed = kv.copy()
    changed[:, -1] += 10.0
    for kw in ("allow", "mask"):
        a = m(q, Tensor(kv), **{kw: keep}).detach().numpy()
        b = m(q, Tensor(changed), **{kw: keep}).detach().numpy()
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_allow_and_mask_together_raise():
    m = models.BatchFirstAttention(4, 2)
    x = Tensor.randn(1, 3, 4)
    ones = np.ones((3, 3), bool)
    with pytest.raises(TypeError, match="BatchFirstAttention.forward: got both allow= and mask="):
        m(x, allow=ones, mask=ones)


def test_the_blocks_pass_true_as_may_attend(rng):
    tga.manual_seed(0)
    layer = models.EncoderBlock(8, 2, 16).double()
    x = Tensor(rng.standard_normal((2, 4, 8)))
    tril = np.tril(np.ones((4, 4), bool))
    np.testing.assert_allclose(
        layer(x, mask=tril).detach().numpy(), layer(x, is_causal=True).detach().numpy(), atol=1e-12
    )


def test_nn_multi_head_attention_says_which_class_to_use():
    assert not hasattr(nn, "MultiHeadAttention")
    assert "MultiHeadAttention" not in nn.__all__
    with pytest.raises(AttributeError) as info:
        nn.MultiHeadAttention  # noqa: B018 - the access is the test
    msg = str(info.value)
    assert "nn.MultiheadAttention" in msg and "True = may NOT attend" in msg
    assert "models.BatchFirstAttention" in msg and "True = may attend" in msg
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchLayer'"):
        nn.NoSuchLayer  # noqa: B018


def test_nn_transformer_names_are_pytorchs():
    # nn's layers take PyTorch's arguments (nhead, dim_feedforward, batch_first): not the blocks.
    for name in (
        "TransformerEncoderLayer",
        "TransformerDecoderLayer",
        "TransformerEncoder",
        "TransformerDecoder",
        "Transformer",
    ):  # (nn.Transformer is PyTorch's; models.Transformer the library's EncoderDecoder)
        assert getattr(nn, name) is not getattr(models, name)
        assert getattr(nn, name).__module__ == "tinygrad_attn.nn.torch_transformer"
    layer = nn.TransformerEncoderLayer(8, nhead=2, dim_feedforward=16, dropout=0.0)
    assert layer(Tensor.randn(5, 2, 8)).shape == (5, 2, 8)  # (S, N, E): sequence first


def test_no_two_public_classes_differ_only_in_case():
    seen: dict[str, tuple[str, str, type]] = {}
    for module in (nn, models):
        for name, cls in _public_classes(module).items():
            other = seen.get(name.lower())
            if other is not None:
                where, other_name, other_cls = other
                assert other_name == name, f"{where}.{other_name} and {module.__name__}.{name} differ only in case"
                assert other_cls is cls, f"{where}.{name} and {module.__name__}.{name} are different classes"
            seen[name.lower()] = (module.__name__, name, cls)
