"""The earlier keyword spellings (``engine/spellings.py``): each still works, means what its
replacement means, and clashes with it by name; signatures show only the current names."""

import inspect
import io

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn.engine.spellings import OLD_SPELLINGS
from tinygrad_attn.models.blocks import BatchFirstAttention


def _backward(**kw):
    x = tga.tensor([1.0, -2.0], requires_grad=True)
    (x * 3).backward(**kw)
    return x.grad.detach().numpy()


def _attention(**kw):
    q = tga.tensor(np.random.default_rng(0).standard_normal((1, 2, 3, 4)))
    return F.scaled_dot_product_attention(q, q, q, **kw).detach().numpy()


def _block(**kw):
    tga.manual_seed(0)
    block = BatchFirstAttention(4, 2)
    x = tga.tensor(np.random.default_rng(1).standard_normal((1, 3, 4)), dtype=tga.float32)
    return block(x, **kw).detach().numpy()


def _load(**kw):
    buffer = io.BytesIO()
    tga.save({"w": tga.ones(2)}, buffer)
    buffer.seek(0)
    return tga.load(buffer, **kw)["w"].detach().numpy()


# per function: how to call it, and a value for the keyword (the old and the new take the same one)
CALLS = {
    "Tensor.backward": (_backward, lambda: tga.tensor([1.0, 0.5])),
    "scaled_dot_product_attention": (_attention, lambda: tga.tensor(np.tril(np.ones((3, 3), bool)))),
    "BatchFirstAttention.forward": (_block, lambda: tga.tensor(np.tril(np.ones((3, 3), bool)))),
    "load": (_load, lambda: "cpu"),
}
FUNCTIONS = {
    "Tensor.backward": tga.Tensor.backward,
    "scaled_dot_product_attention": F.scaled_dot_product_attention,
    "BatchFirstAttention.forward": BatchFirstAttention.forward,
    "load": tga.load,
}


def test_every_old_spelling_has_a_call_here():
    assert set(CALLS) == set(OLD_SPELLINGS) == set(FUNCTIONS)


@pytest.mark.parametrize("op", sorted(OLD_SPELLINGS))
def test_an_old_keyword_means_its_replacement(op):
    call, value = CALLS[op]
    for old, new in OLD_SPELLINGS[op].items():
        np.testing.assert_array_equal(call(**{old: value()}), call(**{new: value()}))
        with pytest.raises(TypeError, match=rf"{op}: got both {new}= and {old}="):
            call(**{old: value(), new: value()})
        params = inspect.signature(FUNCTIONS[op]).parameters
        assert new in params and old not in params
