"""The backward graph's node names and edges as PyTorch's, one program per kind of call whose node
depends on how the op was called: a mode (``F.pad``, ``F.interpolate``), a rank (``grid_sample``),
an overload (``squeeze(dim)``, ``div(rounding_mode=)``, ``fill_`` of a tensor), inputs that are no
edges (``where``'s condition, ``native_batch_norm``'s running statistics) and a number wrapped in a
tensor (``where(c, x, 0.0)``). The slow OpInfo sweep (``test_grad_fn_names_opinfo.py``) covers every op;
these are its classes, fast."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402


def graph_shape(fn: Any, depth: int = 3) -> Any:
    """``fn``'s name and those of its ``next_functions``, recursively (what a graph walker sees)."""
    if fn is None:
        return None
    if depth == 0:
        return type(fn).__name__
    return (type(fn).__name__, fn.name(), tuple((graph_shape(n, depth - 1), k) for n, k in fn.next_functions))


def _x(t: Any, *shape: int, grad: bool = True) -> Any:
    n = int(np.prod(shape))
    a = np.sin(np.arange(1, n + 1, dtype=np.float64)).reshape(shape)
    return t.tensor(a, requires_grad=grad)


PROGRAMS = {
    "pad constant": lambda t: t.nn.functional.pad(_x(t, 1, 2, 3), (1, 2)),
    "pad constant of zeros": lambda t: t.nn.functional.pad(_x(t, 2, 3), (0, 0)),
    "pad reflect 1d": lambda t: t.nn.functional.pad(_x(t, 1, 2, 4), (1, 2), mode="reflect"),
    "pad reflect 2d": lambda t: t.nn.functional.pad(_x(t, 1, 2, 4, 4), (1, 1, 2, 0), mode="reflect"),
    "pad replicate 2d": lambda t: t.nn.functional.pad(_x(t, 1, 2, 3, 3), (1, 1, 1, 1), mode="replicate"),
    "constant_pad_nd": lambda t: t.constant_pad_nd(_x(t, 2, 3), (1, 1), 0.5),
    "interpolate nearest": lambda t: t.nn.functional.interpolate(_x(t, 1, 2, 4), size=3),
    "interpolate nearest-exact 2d": lambda t: t.nn.functional.interpolate(_x(t, 1, 1, 4, 4), 3, mode="nearest-exact"),
    "interpolate bilinear": lambda t: t.nn.functional.interpolate(
        _x(t, 1, 1, 4, 4), size=(3, 5), mode="bilinear", align_corners=False
    ),
    "interpolate bilinear antialias": lambda t: t.nn.functional.interpolate(
        _x(t, 1, 1, 4, 4), size=(3, 3), mode="bilinear", antialias=True
    ),
    "interpolate trilinear": lambda t: t.nn.functional.interpolate(
        _x(t, 1, 1, 2, 3, 2), scale_factor=2, mode="trilinear", align_corners=True
    ),
    "grid_sample 2d": lambda t: t.nn.functional.grid_sample(
        _x(t, 1, 1, 3, 3), _x(t, 1, 2, 2, 2) * 0.5, align_corners=False
    ),
    "grid_sample 3d": lambda t: t.nn.functional.grid_sample(
        _x(t, 1, 1, 2, 2, 2), _x(t, 1, 1, 1, 2, 3) * 0.5, align_corners=True
    ),
    "squeeze": lambda t: _x(t, 2, 1).squeeze(),
    "squeeze(dim)": lambda t: _x(t, 2, 1).squeeze(1),
    "squeeze(dim) of no 1": lambda t: _x(t, 2, 3).squeeze(0),
    "squeeze(dims)": lambda t: _x(t, 1, 2, 1).squeeze((0, 2)),
    "unsqueeze": lambda t: _x(t, 3).unsqueeze(1),
    "x[None]": lambda t: _x(t, 3)[None],
    "reshape adding an axis": lambda t: _x(t, 3).reshape(1, 3),
    "ravel of 0-d": lambda t: _x(t, 1).sum().ravel(),
    "atleast_3d of a vector": lambda t: t.atleast_3d(_x(t, 3)),
    "atleast_2d of 0-d": lambda t: t.atleast_2d(_x(t, 1).sum()),
    ".T of a matrix": lambda t: _x(t, 2, 3).T,
    ".t() of a matrix": lambda t: _x(t, 2, 3).t(),
    "permute in the same order": lambda t: _x(t, 2, 3).permute(0, 1),
    "where": lambda t: t.where(_x(t, 2, 2, grad=False) > 0, _x(t, 2, 2), _x(t, 2, 2) * 2),
    "where of a number": lambda t: t.where(_x(t, 3, grad=False) > 0, _x(t, 3), 0.0),
    "where of a number first": lambda t: t.where(_x(t, 3, grad=False) > 0, 1.5, _x(t, 3)),
    "max over a dim": lambda t: _x(t, 3, 4).max(1)[0],
    "min over a dim keepdim": lambda t: _x(t, 3, 4).min(0, keepdim=True)[0],
    "div floor": lambda t: t.div(_x(t, 3), _x(t, 3) + 2, rounding_mode="floor"),
    "div trunc by a number": lambda t: t.div(_x(t, 3), 2.0, rounding_mode="trunc"),
    "fill_ number": lambda t: _x(t, 3).clone().fill_(2.0),
    "fill_ tensor": lambda t: _x(t, 3).clone().fill_(_x(t, 1).sum()),
    "zero_": lambda t: _x(t, 3).clone().zero_(),
    "zero_ 0-d": lambda t: _x(t, 1).sum().clone().zero_(),
    "rsub number": lambda t: t.rsub(_x(t, 3), 2.0),
    "rsub tensor": lambda t: t.rsub(_x(t, 3), _x(t, 3)),
    "batch_norm edges": lambda t: t.nn.functional.batch_norm(
        _x(t, 2, 3, 2), t.zeros(3, dtype=t.float64), t.ones(3, dtype=t.float64), _x(t, 3), None, training=True
    ),
    "native_layer_norm without weight": lambda t: t.native_layer_norm(_x(t, 2, 3), (3,), None, _x(t, 3), 1e-5)[0],
    "soft_margin_loss": lambda t: t.nn.functional.soft_margin_loss(_x(t, 3), _x(t, 3, grad=False).sign()),
    "lu_solve edges": lambda t: t.lu_solve(_x(t, 3, 2), *t.linalg.lu_factor(_x(t, 3, 3, grad=False) + 3 * t.eye(3))),
    "vecdot of vectors": lambda t: t.linalg.vecdot(_x(t, 3), _x(t, 3)),
    "vecdot of batches": lambda t: t.linalg.vecdot(_x(t, 2, 3), _x(t, 3)),
    "pixel_shuffle": lambda t: t.nn.functional.pixel_shuffle(_x(t, 1, 4, 2, 2), 2),
    "glu": lambda t: t.nn.functional.glu(_x(t, 2, 4)),
    "digamma": lambda t: t.digamma(_x(t, 3) + 2),
    "aminmax": lambda t: t.aminmax(_x(t, 3, 2), dim=0).max,
}


@pytest.mark.filterwarnings("ignore:.*lu_solve.*deprecated")
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_graph_is_pytorchs(name: str) -> None:
    ours, theirs = PROGRAMS[name](tga), PROGRAMS[name](torch)
    assert graph_shape(ours.grad_fn) == graph_shape(theirs.grad_fn)
    assert f"grad_fn=<{theirs.grad_fn.name()}>" in repr(ours)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
