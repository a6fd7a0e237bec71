"""``tga.autograd.gradcheck`` / ``gradgradcheck`` as PyTorch's: the inputs as one tuple (or one
tensor), tuples of outputs, ``raise_exception``, and the same verdicts as PyTorch's on right and
wrong gradients."""

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")


def _functions(lib, function_base):
    class WrongBackward(function_base):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # (should be 2x)

    class DetachedBackward(function_base):  # right first derivative, no second
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() ** 2

    return {
        "product": (lambda x, y: x * y.sin(), True, True),
        "tuple of outputs": (lambda x, y: (x.exp(), (x * y).sum()), True, True),
        "wrong backward": (lambda x, y: WrongBackward.apply(x) + y, False, True),  # (its own derivative is consistent)
        "detached backward": (lambda x, y: DetachedBackward.apply(x) * y, True, False),
    }


@pytest.mark.parametrize("case", ["product", "tuple of outputs", "wrong backward", "detached backward"])
def test_the_verdicts_are_pytorchs(case):
    a = np.random.default_rng(3).uniform(0.5, 1.5, (2, 3))
    b = np.random.default_rng(4).uniform(0.5, 1.5, (2, 3))
    ours_fn, first, second = _functions(tga, tga.autograd.Function)[case]
    theirs_fn, *_ = _functions(torch, torch.autograd.Function)[case]
    xs = (tga.tensor(a, requires_grad=True), tga.tensor(b, requires_grad=True))
    ts = (torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True))
    for check, expected in (("gradcheck", first), ("gradgradcheck", second)):
        theirs = getattr(torch.autograd, check)(theirs_fn, ts, raise_exception=False)
        ours = getattr(tga.autograd, check)(ours_fn, xs, raise_exception=False)
        assert ours == theirs == expected, (check, ours, theirs)
        if not expected:
            with pytest.raises(RuntimeError, match="gradcheck"):  # (PyTorch's GradcheckError is a RuntimeError too)
                getattr(tga.autograd, check)(ours_fn, xs)


def test_one_tensor_a_tuple_and_the_contracts_positional_inputs_agree():
    x = tga.tensor([0.3, 0.7], requires_grad=True)
    assert tga.autograd.gradcheck(lambda t: t.tanh(), x)
    assert tga.autograd.gradcheck(lambda t: t.tanh(), (x,))
    assert tga.gradcheck(lambda t, u: t * u, x, x)
    assert tga.autograd.gradcheck(lambda t: t.tanh(), (x,), fast_mode=True, check_undefined_grad=False)
    with pytest.raises(TypeError, match="unexpected keyword argument 'nonsense'"):
        tga.autograd.gradcheck(lambda t: t.tanh(), (x,), nonsense=1)
