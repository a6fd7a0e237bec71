"""Construction, attributes, conversion and error messages of Tensor."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, examples
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tinygrad_attn as tga
from tinygrad_attn import Tensor


def test_python_data_becomes_float32_and_arrays_keep_dtype():
    assert Tensor(1.5).dtype == np.float32
    assert Tensor([[1, 2], [3, 4]]).dtype == np.float32
    assert Tensor([True, False]).dtype == np.bool_
    assert Tensor(np.arange(3)).dtype == np.int64
    assert Tensor(np.ones(2, np.float64)).dtype == np.float64
    assert Tensor([1, 2], dtype="float64").dtype == np.float64


def test_constructor_copies_numpy_input():
    a = np.ones(3, np.float32)
    t = Tensor(a)
    a[0] = 5.0
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_attributes():
    t = Tensor.zeros(2, 3, requires_grad=True, name="w")
    assert t.shape == (2, 3) and t.ndim == 2 and t.device == "cpu" and t.name == "w"
    assert t.is_leaf and t.requires_grad and t.grad is None
    y = t * 2
    assert not y.is_leaf and y.grad_fn is not None


@pytest.mark.parametrize("device", ["cpu", "array_api_strict", "array_api_strict:device1"])
def test_constructors(device):
    assert Tensor.zeros(2, 3, device=device).tolist() == [[0.0] * 3] * 2
    assert Tensor.ones((2,), device=device).tolist() == [1.0, 1.0]
    assert Tensor.full((2, 2), 7.0, device=device).detach().numpy().sum() == 28.0
    assert Tensor.arange(4, device=device).tolist() == [0, 1, 2, 3]
    assert Tensor.eye(3, device=device).detach().numpy().trace() == 3.0
    assert Tensor.randn(3, 4, device=device).shape == (3, 4)
    r = Tensor.rand(1000, device=device).detach().numpy()
    assert 0.0 <= r.min() and r.max() < 1.0
    assert Tensor.randn(2, device=device).device == device


def test_manual_seed_repeats_on_every_device():
    tga.manual_seed(7)
    a = Tensor.randn(5).detach().numpy()
    tga.manual_seed(7)
    b = Tensor.randn(5, device="array_api_strict:device1").detach().numpy()
    np.testing.assert_array_equal(a, b)
    tga.manual_seed(8)
    assert not np.array_equal(a, Tensor.randn(5).detach().numpy())


def test_conversions():
    t = Tensor([[1.0, 2.0]])
    assert isinstance(t.detach().numpy(), np.ndarray)
    assert t.tolist() == [[1.0, 2.0]]
    assert Tensor([3.0]).item() == 3.0
    assert t.astype(np.float64).dtype == np.float64
    assert t.astype("int32").dtype == np.int32
    assert t.cpu() is t
    d = t.detach()
    assert d._data is t._data and not d.requires_grad
    with pytest.raises(ValueError, match="one-element"):
        t.item()


def test_dlpack_round_trip():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = Tensor.from_dlpack(a)
    close(t, a)
    back = np.from_dlpack(t)
    np.testing.assert_array_equal(back, a)
    assert Tensor(t).shape == (2, 3)


def test_to_moves_between_devices_differentiably():
    x = Tensor([1.0, 2.0], requires_grad=True, dtype=np.float64)
    y = x.to("array_api_strict:device1")
    assert y.device == "array_api_strict:device1"
    (y * y).sum().backward()
    assert x.grad.device == "cpu"
    close(x.grad, [2.0, 4.0])


def test_shape_mismatch_names_op_and_shapes():
    with pytest.raises(ValueError, match=r"add.*\(2, 3\).*\(4,\)"):
        Tensor.zeros(2, 3) + Tensor.zeros(4)
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        Tensor.zeros(2, 3) @ Tensor.zeros(4, 5)
    with pytest.raises(ValueError, match=r"shape '\[4, 2\]' is invalid for input of size 6"):  # (PyTorch's words)
        Tensor.zeros(2, 3).reshape(4, 2)
    with pytest.warns(UserWarning, match="x.T"):  # (PyTorch's deprecated reversal of every dimension)
        assert Tensor.zeros(2, 3, 4).T.shape == (4, 3, 2)


def test_mixing_devices_names_both():
    a = Tensor.zeros(2)
    b = Tensor.zeros(2, device="array_api_strict:device1")
    with pytest.raises(RuntimeError, match="cpu and array_api_strict:device1"):
        a + b


def test_mixing_strict_devices_names_both():
    a = Tensor.zeros(2, device="array_api_strict")
    b = Tensor.zeros(2, device="array_api_strict:device1")
    with pytest.raises(RuntimeError, match="array_api_strict and array_api_strict:device1"):
        a * b


def test_repr_and_len_and_iter():
    t = Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert "requires_grad=True" in repr(t)
    assert len(t) == 2
    assert [r.tolist() for r in t] == [[1.0, 2.0], [3.0, 4.0]]


def test_numpy_array_on_the_left():
    """As PyTorch: ``array + tensor`` is Python's TypeError, ``tensor + array`` NumPy's sum
    wrapped as a tensor, and a tensor that requires grad refuses to become an array."""
    t = Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError):
        np.array([1.0, 1.0], dtype=np.float32) + t
    with pytest.raises(RuntimeError, match="requires grad"):
        t + np.array([1.0, 1.0])
    out = t.detach() + np.array([1.0, 1.0])
    assert isinstance(out, Tensor) and out.dtype == np.float64


_shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3)


@settings(max_examples=examples(60), deadline=None)
@given(shapes=_shapes, op=st.sampled_from(["add", "sub", "mul", "div", "maximum"]))
def test_broadcasting_property(shapes, op):
    """Any pair of broadcastable shapes: NumPy's value, and gradients of the inputs' shapes
    equal to the broadcast gradient summed back."""
    (sa, sb), result = shapes.input_shapes, shapes.result_shape
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 1.5, sa)
    b = rng.uniform(0.5, 1.5, sb) + 2.0
    ta = Tensor(a, requires_grad=True)
    tb = Tensor(b, requires_grad=True)
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "maximum": np.maximum}[op]
    out = {"add": ta + tb, "sub": ta - tb, "mul": ta * tb, "div": ta / tb, "maximum": ta.maximum(tb)}[op]
    assert out.shape == result
    close(out, fn(a, b), atol=1e-12)
    out.sum().backward()
    assert ta.grad.shape == sa and tb.grad.shape == sb
    if op == "add":  # each input element feeds prod(result) / prod(input) outputs
        close(ta.grad, np.full(sa, np.prod(result) / np.prod(sa)))


@settings(max_examples=examples(40), deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=4), data=st.data())
def test_reshape_permute_roundtrip_property(shape, data):
    perm = data.draw(st.permutations(range(len(shape))))
    a = np.random.default_rng(1).standard_normal(shape)
    t = Tensor(a, requires_grad=True)
    p = t.permute(*perm)
    np.testing.assert_array_equal(p.detach().numpy(), np.transpose(a, perm))
    (p.reshape(-1) * Tensor(np.arange(a.size, dtype=np.float64))).sum().backward()
    np.testing.assert_array_equal(
        t.grad.detach().numpy(), np.transpose(np.arange(a.size).reshape(p.shape), np.argsort(perm))
    )


def test_zero_dim_results_are_arrays_not_numpy_scalars():
    x = Tensor([1.0, 2.0], requires_grad=True)
    for t in (x.sum(), x.sum() * 2.0, x.max(), x.mean() + x.sum()):
        assert isinstance(t._data, np.ndarray) and t.shape == ()
    assert float(np.from_dlpack(x.sum().detach())) == 3.0  # (PyTorch refuses to export one that requires grad)


# -- indexing: ellipsis after index arrays, boolean masks of the wrong shape -------
def test_index_arrays_before_an_ellipsis(device):
    a = np.arange(24.0).reshape(2, 3, 4)
    y = Tensor(a, device=device, requires_grad=True)
    idx = np.array([0, 1])
    close(y[idx, ...], a[idx, ...])
    close(y[Tensor(idx, device=device), ...], a[idx, ...])
    close(y[idx, ..., Tensor(np.array([1, 2]), device=device)], a[idx, ..., np.array([1, 2])])
    close(y[..., np.array([True, False, True, True])], a[..., np.array([True, False, True, True])])
    (g,) = tga.grad(y[np.array([1, 1]), ...].sum(), [y])
    close(g, np.stack([np.zeros((3, 4)), 2 * np.ones((3, 4))]))


_B, _C = np.array([[0, 1], [1, 0]]), np.array([2, 1])


@pytest.mark.parametrize("key", [(None, _B, _C), (_B, None, _C), (slice(None), None, _B), (None, 1, _B, None, _C),
                                 (Ellipsis, None, _B), (_B, Ellipsis, None), (1, _B, _C, 0, slice(None))])  # fmt: skip
def test_none_and_ints_mixed_with_index_arrays_read_as_in_numpy(key, device):
    a = np.arange(2 * 3 * 4 * 5 * 6.0).reshape(2, 3, 4, 5, 6)
    y = Tensor(a, device=device, requires_grad=True)
    close(y[key], a[key])
    w = np.random.default_rng(0).standard_normal(a[key].shape)
    (g,) = tga.grad((y[key] * Tensor(w, device=device)).sum(), [y])
    want = np.zeros_like(a)
    np.add.at(want, key, w)
    close(g, want)


@pytest.mark.parametrize("key", [np.array([True, False]), (slice(None), np.array([True, False, True])),
                                 (Ellipsis, np.array([True])), np.ones((3, 3), bool)])  # fmt: skip
def test_a_boolean_index_of_the_wrong_shape_raises(key, device):
    y = Tensor(np.arange(12.0).reshape(3, 4), device=device)
    with pytest.raises(IndexError, match=r"boolean index of shape .* does not match"):
        y[key]


def test_slices_past_the_ends_read_as_in_numpy(device):
    # (the array API leaves out-of-bounds starts and stops unspecified; NumPy clips them)
    for shape in ((0,), (3,), (0, 2)):
        a = np.arange(float(np.prod(shape))).reshape(shape)
        y = Tensor(a, device=device, requires_grad=True)
        for k in (slice(1, None), slice(None, 5), slice(-7, 2)):
            close(y[k], a[k])
        for k in (slice(5, None, -1), slice(None, -9, -2)):  # (PyTorch refuses a negative step)
            with pytest.raises(ValueError, match="step must be greater than zero"):
                y[k]
        (g,) = tga.grad(y[slice(-7, 2)].sum(), [y])
        close(g, np.where(np.arange(shape[0]) < 2, 1.0, 0.0).reshape((-1,) + (1,) * (len(shape) - 1)) * np.ones(shape))
