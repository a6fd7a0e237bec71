"""tinygrad's names, as test_ops.py imports them, mapped to tinygrad_attn.

Import mapping only: a name the test file imports (``Tensor``, ``dtypes``, ``Device``,
``tinygrad.helpers``' flags) is given its tinygrad_attn counterpart. A method or class
function the tests call on ``Tensor`` is never renamed here: it is the library's own name,
or the test fails (see README.md and classification.csv). Two methods belong to the test
harness itself (``helper_test_op`` calls them on every tensor): ``realize()``, a no-op in
an eager library, and ``gradient()``, which is ``tga.grad``.
"""

import types

import numpy as np

import tinygrad_attn as tga
from tinygrad_attn import Tensor as _Base


class Tensor(_Base):
    """tinygrad's constructor, ``Tensor(data, device=None, dtype=None, requires_grad=None)``.

    The dtype follows the data as in ``torch.tensor`` (tinygrad_attn's ``Tensor(data)`` is
    ``torch.Tensor(data)``, always float). tinygrad differentiates any tensor, so a float
    tensor made here records its graph unless told otherwise.
    """

    def __init__(self, data, device=None, dtype=None, requires_grad=None):
        t = tga.tensor(data, dtype=dtype, device=device)
        if requires_grad is None:
            requires_grad = t.dtype.kind == "f"
        super().__init__(t, requires_grad=requires_grad)


def _realize(self, *others):  # tinygrad is lazy; tinygrad_attn is eager
    return self


def _gradient(self, *targets):
    gs = tga.grad(self, list(targets), allow_unused=True)  # (tinygrad gives zeros for an unused input)
    return [tga.zeros_like(t) if g is None else g for t, g in zip(targets, gs)]


_Base.realize = _realize
_Base.gradient = _gradient


class _Renderer:
    def supported_dtypes(self):
        return [dtypes.float32, dtypes.float64, dtypes.half, dtypes.int32, dtypes.bool]


class _Dev:
    renderer = _Renderer()


class _Device:
    DEFAULT = "CPU"

    def __getitem__(self, k):
        return _Dev()


Device = _Device()

# tinygrad's dtype names; the defaults are tinygrad's own (a test that relies on int32 being
# the default int asserts tinygrad's semantics and is classified so)
dtypes = types.SimpleNamespace(
    float32=tga.float32,
    float=tga.float32,
    float64=tga.float64,
    double=tga.float64,
    half=tga.float16,
    float16=tga.float16,
    int32=tga.int32,
    int=tga.int32,
    int8=tga.int8,
    int64=tga.int64,
    long=tga.int64,
    uint8=tga.uint8,
    uint32=np.dtype("uint32"),
    uint64=np.dtype("uint64"),
    bool=tga.bool,
    default_float=tga.float32,
    default_int=tga.int32,
)
