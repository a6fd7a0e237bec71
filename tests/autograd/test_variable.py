"""``tga.autograd.Variable``, the legacy wrapper old scripts still call, against PyTorch's."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn.autograd import Variable

torch = pytest.importorskip("torch")


def _made(lib, source_grad, dtype):
    base = lib.tensor(np.arange(1.0, 4.0), dtype=getattr(lib, dtype), requires_grad=source_grad)
    return base * 2 if source_grad else base  # a non-leaf when it records


@pytest.mark.parametrize(
    ("source_grad", "requires_grad", "dtype"), itertools.product([False, True], [False, True], ["float32", "float64"])
)
def test_variable_is_a_detached_leaf_sharing_memory_as_in_pytorch(source_grad, requires_grad, dtype):
    seen = []
    for lib in (torch, tga):
        t = _made(lib, source_grad, dtype)
        v = lib.autograd.Variable(t, requires_grad=requires_grad)
        with lib.no_grad():
            v[0] = 10.0  # the same memory: t sees it
        seen.append((v is t, v.requires_grad, v.is_leaf, v.grad_fn is None, str(v.dtype).split(".")[-1],
                     t.detach().numpy().tolist()))  # fmt: skip
        if requires_grad:
            (v * v).sum().backward()
            seen.append(v.grad.detach().numpy().tolist())
    assert seen[: len(seen) // 2] == seen[len(seen) // 2 :]


def test_every_tensor_is_a_variable_and_nothing_else_is():
    for lib, value in itertools.product((torch, tga), [1.0, [1.0], np.ones(2), None]):
        assert isinstance(lib.ones(2), lib.autograd.Variable)
        assert not isinstance(value, lib.autograd.Variable)


@pytest.mark.parametrize("bad", [[1, 2], 3.0, np.ones(2)])
def test_data_that_is_not_a_tensor_is_refused_as_pytorch_refuses_it(bad):
    with pytest.raises(TypeError) as theirs:
        torch.autograd.Variable(bad)
    with pytest.raises(TypeError, match="Variable data has to be a tensor") as ours:
        Variable(bad)
    assert str(ours.value).split(", but")[0] == str(theirs.value).split(", but")[0]


def test_no_data_is_an_empty_tensor_and_volatile_only_warns():
    assert Variable().shape == tuple(torch.autograd.Variable().shape) == (0,)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        Variable(tga.ones(1), volatile=True)
        torch.autograd.Variable(torch.ones(1), volatile=True)
    assert [str(x.message) for x in w][0] == [str(x.message) for x in w][1]
