"""Calling an *instance* of an ``autograd.Function`` subclass (the 2017 style, ``MyReLU()(x)``)
raises where PyTorch raises and with PyTorch's class, whatever the subclass defines and however
it is called; ``apply`` on the class keeps working."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")


def subclasses(lib):
    """Function subclasses of every form a program may hold, for ``lib``."""
    F = lib.autograd.Function

    class LegacyReLU(F):  # forward and backward as instance methods
        def forward(self, x):
            self.save_for_backward(x)
            return x.clamp(min=0)

        def backward(self, g):
            (x,) = self.saved_tensors
            g = g.clone()
            g[x < 0] = 0
            return g

    class StaticSquare(F):  # the current style
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class Empty(F):  # nothing overridden
        pass

    return {"legacy": LegacyReLU, "static": StaticSquare, "empty": Empty}


CALLS = {
    "one tensor": lambda lib, x: (x,),
    "two tensors": lambda lib, x: (x, x),
    "no argument": lambda lib, x: (),
    "a number": lambda lib, x: (3.0,),
}


def _outcome(lib, kind, call, ctor_args):
    x = lib.tensor(np.array([-1.5, 0.0, 2.0]), requires_grad=True)
    cls = subclasses(lib)[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inst = cls(*ctor_args)
    try:
        inst(*CALLS[call](lib, x))
    except Exception as e:  # the class is what is compared
        return type(e), str(e)
    return None, ""


@pytest.mark.parametrize("ctor_args", [(), (1,)], ids=["no-args", "an-arg"])
@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("kind", ["legacy", "static", "empty"])
def test_instance_call_raises_as_in_torch(kind, call, ctor_args):
    theirs, their_msg = _outcome(torch, kind, call, ctor_args)
    ours, our_msg = _outcome(tga, kind, call, ctor_args)
    assert theirs is not None, "PyTorch accepted the call: the premise of this test changed"
    assert ours is not None and issubclass(ours, theirs), (ours, our_msg, theirs, their_msg)
    assert our_msg == their_msg


@pytest.mark.parametrize("lib", [tga, torch], ids=["ours", "torch"])
def test_instantiating_warns_as_in_torch(lib):
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        subclasses(lib)["static"]()


def test_apply_on_the_class_still_differentiates():
    xs = np.array([-1.5, 0.25, 2.0])
    grads = []
    for lib in (tga, torch):
        x = lib.tensor(xs, requires_grad=True)
        subclasses(lib)["static"].apply(x).sum().backward()
        grads.append(np.asarray(x.grad.detach().numpy()))
    np.testing.assert_allclose(grads[0], grads[1])
