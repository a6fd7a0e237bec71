"""``view``/``reshape`` to a shape that does not fit raise PyTorch's class with PyTorch's
message, word for word: lessons print it (``except Exception as e: print(e)``), so a
different wording or order of the numbers is a difference a reader sees. Generated over
sizes (including empty tensors), target shapes with and without ``-1``, the method and the
free function, and the ways of passing the shape."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

SIZES = [(9,), (2, 3, 4), (0,), (3, 0), (1,), ()]
DIMS = [-2, -1, 0, 1, 2, 3, 4, 5, 7]
TARGETS = [t for r in (1, 2, 3) for t in itertools.product(DIMS, repeat=r)]
HOW = {
    "view(*s)": lambda lib, x, s: x.view(*s),
    "view(s)": lambda lib, x, s: x.view(s),
    "reshape(*s)": lambda lib, x, s: x.reshape(*s),
    "reshape(list)": lambda lib, x, s: x.reshape(list(s)),
    "lib.reshape": lambda lib, x, s: lib.reshape(x, s),
}


def _outcome(lib, size, target, how):
    x = lib.tensor(np.arange(int(np.prod(size)), dtype=np.float32).reshape(size))
    try:
        out = HOW[how](lib, x, target)
    except Exception as e:  # the class and the words are what is compared
        return type(e), str(e)
    return None, tuple(out.shape)


@pytest.mark.parametrize("how", list(HOW))
@pytest.mark.parametrize("size", SIZES, ids=str)
def test_reshape_raises_and_says_what_torch_says(size, how):
    checked = 0
    for target in TARGETS:
        theirs, their_what = _outcome(torch, size, target, how)
        ours, our_what = _outcome(tga, size, target, how)
        if theirs is None:
            assert ours is None and our_what == their_what, (size, target, our_what, their_what)
            continue
        checked += 1
        assert ours is not None and issubclass(ours, theirs), (size, target, ours, our_what, theirs, their_what)
        assert our_what == their_what, (size, target)
    assert checked  # every size has shapes that do not fit


LAYOUTS = {  # tensors whose memory a view may not be able to read in another shape
    "transposed": lambda lib: lib.arange(12.0).reshape(3, 4).t(),
    "permuted": lambda lib: lib.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    "strided slice": lambda lib: lib.arange(24.0).reshape(4, 6)[:, ::2],
    "expanded": lambda lib: lib.arange(3.0).reshape(3, 1).expand(3, 4),
    "narrowed": lambda lib: lib.arange(24.0).reshape(4, 6)[:, 1:5],
}


def _view_outcome(lib, layout, target):
    try:
        out = LAYOUTS[layout](lib).view(*target)
    except Exception as e:
        return type(e), str(e)
    return None, tuple(out.shape)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_view_of_other_layouts_raises_and_says_what_torch_says(layout):
    n = LAYOUTS[layout](torch).numel()
    targets = [(-1,), (n,), (1, -1), (-1, 1), (2, -1), (-1, 2), (3, -1), (2, 2, -1), (n + 1,)]
    refused = 0
    for target in targets:
        theirs, their_what = _view_outcome(torch, layout, target)
        ours, our_what = _view_outcome(tga, layout, target)
        if theirs is None:
            assert ours is None and our_what == their_what, (layout, target, our_what, their_what)
            continue
        refused += 1
        assert ours is not None and issubclass(ours, theirs), (layout, target, ours, our_what)
        assert our_what == their_what, (layout, target)
    assert refused  # each layout has views PyTorch refuses
