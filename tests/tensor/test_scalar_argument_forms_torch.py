"""Arguments spelt as users spell them, against PyTorch: a NumPy scalar, a 0-d tensor or a list
where the signature says int, float, bool or a sequence (the fast sample of
``tests/ops/test_respelt_opinfo_torch.py``, which runs every shared OpInfo so respelt)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

T = np.arange(2 * 3 * 6 * 6, dtype=np.float64).reshape(2, 3, 6, 6) % 7 - 3.0


def _run(lib: object, program: str) -> object:
    F = lib.nn.functional  # noqa: N806, F841 (read by the program)
    x = lib.tensor(T)  # noqa: F841
    t = lib.tensor  # noqa: F841
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(program)  # noqa: S307


PROGRAMS = [
    "x[[t(0), t(1)]]",  # (a list holding tensors is a tuple of indices: x[t(0), t(1)])
    "x[0, 0][[[0, 1], [1, 2]]]",  # (a list of lists too: two index arrays)
    "x[[0, slice(None), None]]",
    "x[[0, 1]]",  # (a list of ints is one index array)
    "x.max(t(1), True)[0]",  # (a 0-d integer tensor and keepdim: the dim overload)
    "x.max(t(1.0))",  # (alone: the other operand)
    "x.sum(np.int64(1))",
    "x.sum((np.int64(1), t(2)))",
    "x.diag_embed(offset=t(1))",
    "F.max_pool2d(x, t(2), stride=[t(1), t(2)], padding=t(1))",
    "F.avg_pool2d(x, np.int64(3), padding=np.int64(1))",
    "F.conv2d(x, x[:3, :3, :3, :3], stride=t(2), padding=[np.int64(1), t(0)])",
    "F.adaptive_avg_pool2d(x, t(3))",  # (PyTorch's Python reads its length: TypeError)
    "F.adaptive_avg_pool1d(x[0], t(3))",
    "F.adaptive_max_pool2d(x, (t(3), None))",
    "F.local_response_norm(x, t(2))",
    "F.pairwise_distance(x[0, 0], x[1, 0], p=np.float32(1.5))",
    "F.normalize(x, p=np.float32(1.2), dim=np.int64(1))",
    "F.gaussian_nll_loss(x, x * 0.5, x.abs() + 1, full=np.True_)",
    "F.interpolate(x, scale_factor=np.float64(1.7), mode='nearest', recompute_scale_factor=np.False_)",
    "lib.fft.fftshift(x, dim=np.int64(1))",
    "lib.fft.rfftn(x, dim=t(-1))",
    "lib.gradient(x[0, 0, 0], spacing=t(2.0))",
    "lib.histogramdd(x[0, 0, :, :2], [t(3), np.int64(2)])[0]",
    "x.narrow(1, t(1), 2)",
    "x.roll(np.int64(2), np.int64(3))",
    "x.permute([np.int64(3), 2, t(1), 0])",
    "(x.abs() + 1).mvlgamma(t(2))",
    "x.clamp(min=np.float32(-1.5))",
    "lib.logspace(0, t(2), t(5), dtype=lib.float64)",
]


def _flat(x: object) -> list:
    if isinstance(x, (list, tuple)):
        return [v for part in x for v in _flat(part)]
    return [x]


@pytest.mark.parametrize("program", PROGRAMS)
def test_respelt_arguments_as_pytorch(program: str) -> None:
    try:
        theirs = _run(torch, program)
    except Exception as e:  # (PyTorch refuses this spelling: ours must too, with its class)
        with pytest.raises(type(e)):
            _run(tga, program)
        return
    ours = _run(tga, program)
    a, b = _flat(ours), _flat(theirs)
    assert len(a) == len(b), program
    for u, v in zip(a, b, strict=True):
        assert tuple(u.shape) == tuple(v.shape), program
        assert str(u.dtype) == str(v.dtype), program
        np.testing.assert_allclose(u.detach().numpy(), v.detach().numpy(), rtol=1e-12, atol=1e-12, err_msg=program)


def test_sequence_index_warns_as_pytorch() -> None:
    x = tga.arange(9).reshape(3, 3)
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        assert x[[[0, 1], [1, 2]]].tolist() == [1, 5]
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        x[[[0, 1], [1, 2]]] = 100
    assert x.tolist() == [[0, 100, 2], [3, 4, 100], [6, 7, 8]]
