"""Memory: a result shares memory with an input exactly where PyTorch's does.

Views (``view reshape transpose permute T mT expand narrow select`` slicing ``unsqueeze
squeeze unbind split chunk diagonal unfold detach``) share it; every other op returns new memory,
so changing its result in place never changes its input. Checked by hand for the ops that
once got this wrong, and for every entry of the op table against PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import examples, shares_memory, torch_shares_memory

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from opinfo import OPS, OpInfo  # noqa: E402

import tinygrad_attn as tga  # noqa: E402
import tinygrad_attn.functional as F  # noqa: E402
from tinygrad_attn import Tensor  # noqa: E402

# (our function, PyTorch's) of one (2, 3) float64 tensor
CASES = {
    "flip": lambda x: x.flip(0),
    "flip_free": lambda x: (tga if isinstance(x, Tensor) else torch).flip(x, (0, 1)),
    "repeat_1": lambda x: x.repeat(1, 1),
    "repeat_2": lambda x: x.repeat(2, 1),
    "roll_0": lambda x: x.roll(0),
    "roll_0_dim": lambda x: x.roll(0, 1),
    "pad_zero": lambda x: (F if isinstance(x, Tensor) else torch.nn.functional).pad(x, (0, 0)),
    "pad_negative": lambda x: (F if isinstance(x, Tensor) else torch.nn.functional).pad(x, (-1, 0)),
    "contiguous_of_T": lambda x: x.T.contiguous(),
    "contiguous": lambda x: x.contiguous(),
    "prod_size1": lambda x: x[:1].prod(0),
    "prod_keepdim_size1": lambda x: x[:1].prod(0, keepdim=True),
    "cumprod_size1": lambda x: x[:1].cumprod(0),
    "cumsum_size1": lambda x: x[:1].cumsum(0),
    "prod_0d": lambda x: x[0, 0].prod(),
    "cumsum_0d": lambda x: x[0, 0].cumsum(0),
    "cumprod_0d": lambda x: x[0, 0].cumprod(0),
    "clone": lambda x: x.clone(),
    "sum_size1": lambda x: x[:1].sum(0),
    # views
    "view": lambda x: x.view(3, 2),
    "reshape": lambda x: x.reshape(6),
    "transpose": lambda x: x.transpose(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "expand": lambda x: x[:1].expand(4, 3),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(0, 1),
    "slice": lambda x: x[:, 1:],
    "unsqueeze": lambda x: x.unsqueeze(0),
    "squeeze": lambda x: x[:1].squeeze(0),
    "unbind": lambda x: x.unbind(0)[1],
    "split": lambda x: x.split(1, 0)[1],
    "chunk": lambda x: x.chunk(2, 1)[0],
    "detach": lambda x: x.detach(),
    "flatten": lambda x: x.flatten(),
    # diagonal (a view of its plane in either order) and a 0-d integer tensor as an index (a view, as x[1])
    "diagonal": lambda x: x.diagonal(),
    "diagonal_of_transposed_plane": lambda x: x.diagonal(1, 1, 0),
    "diagonal_below": lambda x: x.diagonal(-1),
    # strided views: unfold's windows (overlapping, touching, apart)
    "unfold_overlapping": lambda x: x.unfold(1, 2, 1),
    "unfold_touching": lambda x: x.unfold(1, 1, 1),
    "unfold_apart": lambda x: x.unfold(1, 1, 2),
    "unfold_of_transposed": lambda x: x.T.unfold(0, 2, 1),
    "index_0d_tensor": lambda x: x[(tga if isinstance(x, Tensor) else torch).tensor(1)],
    "index_0d_tensor_and_int": lambda x: x[(tga if isinstance(x, Tensor) else torch).tensor(1), 2],
    "index_true": lambda x: x[True],
    "index_0d_bool_tensor": lambda x: x[(tga if isinstance(x, Tensor) else torch).tensor(True)],
}


@pytest.mark.parametrize("key", ["True", "False", "m.tensor(True)", "m.tensor(False)"])
@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_a_0d_bool_index_adds_an_axis_as_pytorchs(key, shape):
    a = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    got, want = [], []
    for m, out in ((tga, got), (torch, want)):
        x = m.tensor(a.copy(), requires_grad=True)
        y = x[eval(key)]  # noqa: S307 - a fixed expression of this test
        (y * 2.0).sum().backward()
        out.append((tuple(y.shape), np.asarray(x.grad).tolist()))
    assert got == want


@pytest.mark.parametrize(
    ("d1", "d2", "offset"), [(0, 1, 0), (1, 0, 1), (2, 1, -1), (1, 2, 2)]
)  # (axes next to each other)
def test_diagonal_writes_reach_the_base_with_pytorchs_gradient(d1, d2, offset):
    a = np.arange(1.0, 25.0).reshape(2, 3, 4)
    x, tx = Tensor(a.copy(), requires_grad=True), torch.from_numpy(a.copy()).requires_grad_()
    for h in (x * 1.0, tx * 1.0):
        h.diagonal(offset, d1, d2).mul_(3.0)
        (h * h).sum().backward()
    np.testing.assert_array_equal(x.grad.detach().numpy(), tx.grad.detach().numpy())
    y, ty = Tensor(a.copy()), torch.from_numpy(a.copy())
    y.diagonal(offset, d1, d2).add_(100.0)
    ty.diagonal(offset, d1, d2).add_(100.0)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    assert tga.gradcheck(lambda t: (lambda h: (h.diagonal(offset, d1, d2).mul_(2.0), h * h)[1])(t * 1.0), Tensor(a))


def test_a_0d_index_tensor_gives_a_view_with_its_gradient():
    a = np.arange(1.0, 7.0).reshape(2, 3)
    x, tx = Tensor(a.copy(), requires_grad=True), torch.from_numpy(a.copy()).requires_grad_()
    for m, h in ((tga, x * 1.0), (torch, tx * 1.0)):
        h[m.tensor(1)].mul_(2.0)
        h[m.tensor(0)] = h[m.tensor(1)] * 3.0
        (h * h).sum().backward()
    np.testing.assert_array_equal(x.grad.detach().numpy(), tx.grad.detach().numpy())


@pytest.mark.parametrize("name", sorted(CASES))
def test_result_shares_memory_as_pytorchs(name):
    f = CASES[name]
    a = np.arange(6.0).reshape(2, 3)
    x, tx = Tensor(a.copy()), torch.from_numpy(a.copy())
    assert shares_memory(f(x), x) == torch_shares_memory(f(tx), tx)


@pytest.mark.parametrize("name", ["flip", "repeat_1", "roll_0", "pad_zero", "pad_negative", "contiguous_of_T",
                                  "prod_size1", "cumprod_size1", "prod_0d", "cumsum_0d"])  # fmt: skip
def test_changing_a_new_result_in_place_leaves_the_input_and_its_gradient(name):
    """``h = a * 1; h.flip(0).mul_(2)`` once doubled ``h`` (and its gradient)."""
    f = CASES[name]
    a = np.arange(1.0, 7.0).reshape(2, 3)
    x, tx = Tensor(a.copy(), requires_grad=True), torch.from_numpy(a.copy()).requires_grad_()
    for h in (x * 1.0, tx * 1.0):
        f(h).mul_(2.0)
        h.sum().backward()
    np.testing.assert_array_equal(x.grad.detach().numpy(), tx.grad.detach().numpy())
    y = Tensor(a.copy())
    f(y).add_(1000.0)
    np.testing.assert_array_equal(y.detach().numpy(), a)


def _flat(out) -> list:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


_SETTINGS = settings(max_examples=examples(6), deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])  # fmt: skip


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in OPS])
def test_every_op_shares_memory_exactly_where_pytorch_does(op: OpInfo):
    @_SETTINGS
    @given(st.data())
    def check(data):
        sample = data.draw(op.sample)
        ours = [Tensor(a.copy()) for a in sample.args]
        theirs = [torch.from_numpy(a.copy()) for a in sample.args]
        try:
            r = _flat(op.ours(*ours, **sample.kwargs))
            tr = _flat(op.theirs(*theirs, **sample.kwargs))
        except Exception:  # (inputs one side refuses are the value tests' business)
            return
        for o, t in zip(r, tr):
            if not isinstance(o, Tensor):
                continue
            for i, (x, tx) in enumerate(zip(ours, theirs)):
                assert shares_memory(o, x) == torch_shares_memory(t, tx), (
                    f"{op.name}: result of shape {o.shape} shares memory with input {i} of shape {x.shape} "
                    f"here: {shares_memory(o, x)}, in PyTorch: {torch_shares_memory(t, tx)} (kwargs {sample.kwargs})"
                )

    check()


# -- tensors made from NumPy arrays, and moved between devices ------------------------------
# (ours, PyTorch's) ways of making a tensor of a float64 NumPy array
FROM_NUMPY = {
    "from_numpy": (tga.from_numpy, torch.from_numpy),
    "tensor": (tga.tensor, torch.tensor),
    "as_tensor": (tga.as_tensor, torch.as_tensor),
    "as_tensor_same_dtype": (lambda a: tga.as_tensor(a, dtype=tga.float64), lambda a: torch.as_tensor(a, dtype=torch.float64)),
    "as_tensor_other_dtype": (lambda a: tga.as_tensor(a, dtype=tga.float32), lambda a: torch.as_tensor(a, dtype=torch.float32)),
    "Tensor": (Tensor, torch.Tensor),
    "from_numpy_of_a_column": (lambda a: tga.from_numpy(a[:, 1]), lambda a: torch.from_numpy(a[:, 1])),
}  # fmt: skip


@pytest.mark.parametrize("name", FROM_NUMPY)
def test_a_tensor_made_from_a_numpy_array_shares_it_where_pytorchs_does(name):
    ours, theirs = FROM_NUMPY[name]
    seen = []
    for make, lib in ((ours, tga), (theirs, torch)):
        a = np.arange(6.0).reshape(2, 3)
        t = make(a)
        with lib.no_grad():
            t.add_(1)
        a[0, 1] = -5.0
        seen.append((a.copy(), np.array(t.detach().numpy(), dtype=np.float64)))
    np.testing.assert_array_equal(seen[0][0], seen[1][0])
    np.testing.assert_array_equal(seen[0][1], seen[1][1])


def test_from_numpy_refuses_what_pytorchs_refuses():
    for bad, error in (([1.0, 2.0], TypeError), (np.array(["a"]), TypeError), (np.ones(2, ">f8"), ValueError)):
        with pytest.raises(error):
            torch.from_numpy(bad)
        with pytest.raises(error, match="from_numpy"):
            tga.from_numpy(bad)


@pytest.mark.parametrize("src, dst", [("cpu", "array_api_strict"), ("array_api_strict", "cpu"),
                                      ("array_api_strict", "array_api_strict:device1")])  # fmt: skip
def test_a_move_between_devices_copies(src, dst):
    # PyTorch's .to(another device) is a copy: a change of either leaves the other alone.
    a = np.arange(3.0)
    t = tga.tensor(a, device=src)
    u = t.to(dst)
    with tga.no_grad():
        t.add_(1.0)
    np.testing.assert_array_equal(u.detach().numpy(), np.arange(3.0))
    with tga.no_grad():
        u.mul_(2.0)
    np.testing.assert_array_equal(t.detach().numpy(), np.arange(3.0) + 1)
    np.testing.assert_array_equal(a, np.arange(3.0))
