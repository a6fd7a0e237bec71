"""Tensor's members about memory and kind (``is_sparse`` and the other device and layout flags,
``is_pinned pin_memory is_shared share_memory_ dim_order const_data_ptr new_empty_strided
adjoint``) against PyTorch 2.13 on a CPU without CUDA: answers over tensors of every layout
(transposed, permuted, sliced, expanded, 0-d, empty), errors, and adjoint's gradient."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

FLAGS = ["is_sparse", "is_nested", "is_quantized", "is_meta", "is_mkldnn", "is_xpu", "is_mps", "is_ipu", "is_maia",
         "is_mtia", "is_vulkan", "is_xla", "is_cuda", "is_cpu"]  # fmt: skip
LAYOUTS = {
    "plain": lambda x: x,
    "transposed": lambda x: x.transpose(0, 2),
    "permuted": lambda x: x.permute(2, 0, 1),
    "sliced": lambda x: x[:, 1:, ::2],
    "expanded": lambda x: x[:, :1].expand(2, 5, 4),
    "broadcast_row": lambda x: x[:1].expand(3, 3, 4),
    "size_one": lambda x: x[:1, :1],
    "zero_d": lambda x: x[0, 0, 0],
    "empty": lambda x: x[:, :0],
    "vector": lambda x: x[0, 0],
    "moved_last": lambda x: x.movedim(0, -1)[..., :1],
}


def _both(layout):
    a = np.arange(24.0).reshape(2, 3, 4)
    return LAYOUTS[layout](tga.tensor(a)), LAYOUTS[layout](torch.tensor(a))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_flags_and_layout_answers(layout):
    ours, theirs = _both(layout)
    for name in FLAGS:
        assert type(getattr(torch.Tensor, name)).__name__ == "getset_descriptor"
        assert getattr(ours, name) is getattr(theirs, name), name
    assert ours.is_pinned() is theirs.is_pinned() is False
    assert ours.dim_order() == theirs.dim_order(), (ours.stride(), theirs.stride())
    assert ours.const_data_ptr() == ours.data_ptr()
    assert (theirs.const_data_ptr() == theirs.data_ptr()) is True


def test_pin_memory_without_an_accelerator():
    with pytest.raises(RuntimeError):
        torch.ones(2).pin_memory()
    with pytest.raises(RuntimeError, match="accelerator"):
        tga.ones(2).pin_memory()


def test_shared_memory_is_marked_for_every_view():
    for m in (torch, tga):
        x = m.arange(6.0)
        v = x[2:]
        assert (x.is_shared(), v.is_shared()) == (False, False)
        assert v.share_memory_() is v
        assert (x.is_shared(), v.is_shared(), x.view(2, 3).is_shared()) == (True, True, True)
        assert m.arange(6.0).is_shared() is False


@pytest.mark.parametrize(("size", "stride"), [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((4,), (2,)), ((2, 0), (1, 1)),
                                              ((), ()), ((2, 2), (0, 1))])  # fmt: skip
def test_new_empty_strided(size, stride):
    for kw in ({}, {"dtype": "float64"}, {"requires_grad": True}):
        got = tga.ones(2, dtype=tga.float32).new_empty_strided(
            size, stride, **{k: getattr(tga, v) if k == "dtype" else v for k, v in kw.items()}
        )
        want = torch.ones(2).new_empty_strided(
            size, stride, **{k: getattr(torch, v) if k == "dtype" else v for k, v in kw.items()}
        )
        assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
        assert str(got.dtype) == str(want.dtype) and got.requires_grad is want.requires_grad
    with pytest.raises(RuntimeError):
        torch.ones(2).new_empty_strided((2, 3), (1,))
    with pytest.raises(RuntimeError):
        tga.ones(2).new_empty_strided((2, 3), (1,))


@pytest.mark.parametrize(("shape", "dtype"), itertools.product([(2, 3), (4, 2, 3), (1, 1), (2, 0, 3)],
                                                                ["float64", "complex128"]))  # fmt: skip
def test_adjoint_values_views_and_functions(shape, dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype == "complex128" else 0)
    x, t = tga.tensor(a), torch.tensor(a)
    for got, want in ((x.adjoint(), t.adjoint()), (tga.adjoint(x), torch.adjoint(t))):
        assert tuple(got.shape) == tuple(want.shape) and str(got.dtype) == str(want.dtype)
        np.testing.assert_array_equal(got.numpy() if dtype != "complex128" else got.resolve_conj().numpy(),
                                      want.resolve_conj().numpy())  # fmt: skip
    if dtype == "float64" and x.numel():  # (a view: a write through it reaches the input)
        v = x.adjoint()
        v[..., 0, 0] = 100.0
        assert x.numpy()[..., 0, 0].tolist() == np.full(shape[:-2], 100.0).tolist()


def test_adjoint_of_fewer_than_two_dims():
    for m in (torch, tga):
        with pytest.raises(RuntimeError, match="matrices"):
            m.ones(3).adjoint()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            z = m.tensor(1.0 + 2.0j).adjoint()
        assert z.resolve_conj().item() == 1.0 - 2.0j
        # (PyTorch warns once a process)
        assert m is torch or any("deprecated on 0-D" in str(w.message) for w in seen)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_adjoint_gradient(dtype):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 4)) + (1j * rng.standard_normal((2, 3, 4)) if dtype == "complex128" else 0)
    w = rng.standard_normal((2, 4, 3))
    x, t = tga.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (x.adjoint() * tga.tensor(w)).abs().sum().backward()
    (t.adjoint() * torch.tensor(w)).abs().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-14)
    if dtype == "float64":  # (finite differences of real inputs; the complex gradient is PyTorch's above)
        assert tga.autograd.gradcheck(lambda v: v.adjoint() * tga.tensor(w), tga.tensor(a, requires_grad=True))


# (the input's layout, then as_strided's arguments): views over the memory of every layout
AS_STRIDED = [
    ("plain", (2, 2), (1, 2), None),
    ("plain", (3, 3), (1, 1), None),  # (overlapping windows: a place read several times)
    ("plain", (2, 3), (3, 1), 1),
    ("plain", (4,), (0,), 5),
    ("plain", (0, 2), (1, 1), None),
    ("plain", (), (), 7),
    ("transposed", (2, 3), (1, 2), None),
    ("transposed", (3, 2), (2, 5), 0),
    ("sliced", (2, 5), (3, 1), 1),  # (memory outside the input: no gradient reaches it)
    ("sliced", (3,), (2,), None),
    ("expanded", (3,), (1,), 0),  # (the input shows each place several times)
    ("expanded", (2, 2), (0, 1), 1),
]
SOURCES = {
    "plain": lambda m, x: x,
    "transposed": lambda m, x: x.reshape(3, 4).t(),
    "sliced": lambda m, x: x.reshape(3, 4).t()[1:],
    "expanded": lambda m, x: x[:3, None].expand(3, 4).t(),
}


def _as_strided_of(m, case, requires_grad=False):
    src, size, stride, offset = case
    x = m.tensor(np.arange(1.0, 13.0), dtype=m.float64, requires_grad=requires_grad)
    y = SOURCES[src](m, x).as_strided(size, stride, *(() if offset is None else (offset,)))
    return x, y


@pytest.mark.parametrize("case", AS_STRIDED, ids=str)
def test_as_strided_values_layout_and_gradient(case):
    (x, y), (t, u) = _as_strided_of(tga, case, True), _as_strided_of(torch, case, True)
    assert tuple(y.shape) == tuple(u.shape)
    assert y.stride() == u.stride() or not u.numel()  # (an empty tensor's strides here are row-major's)
    assert y.storage_offset() == u.storage_offset()
    np.testing.assert_array_equal(y.detach().numpy(), u.detach().numpy())
    w = np.linspace(0.5, 2.0, max(u.numel(), 1))[: u.numel()].reshape(u.shape)
    (y * tga.tensor(w)).sum().backward()
    (u * torch.tensor(w)).sum().backward()
    assert type(u.grad_fn).__name__ == "AsStridedBackward0"
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("case", [c for c in AS_STRIDED if c[0] in ("plain", "transposed") and 0 not in c[1]], ids=str)
def test_as_strided_gradient_against_finite_differences(case):
    src, size, stride, offset = case
    extra = () if offset is None else (offset,)

    def f(v):
        return SOURCES[src](tga, v).as_strided(size, stride, *extra) ** 2

    x = tga.tensor(np.linspace(-1.0, 1.5, 12), requires_grad=True)
    assert tga.autograd.gradcheck(f, x)
    assert tga.autograd.gradgradcheck(f, x)


def test_as_strided_shares_memory_both_ways():
    for m in (torch, tga):
        base = m.arange(12.0).reshape(3, 4)
        v = base[1:].as_strided((2, 2), (4, 1), 0)  # (from the start of the memory: before the slice)
        v[0, 0] = 100.0
        base[2, 3] = -5.0
        assert base[0, 0].item() == 100.0
        assert m.as_strided(base, (1,), (1,), 11).item() == -5.0


@pytest.mark.parametrize(
    "args", [((2, 2), (1,)), ((2, 2), (-1, 1)), ((2, 2), (1, 2), 9), ((2,), (1,), -1), ((13,), (1,))], ids=str
)
def test_as_strided_errors(args):
    with pytest.raises(RuntimeError) as theirs:
        torch.arange(12.0).as_strided(*args)
    with pytest.raises(RuntimeError) as ours:
        tga.arange(12.0).as_strided(*args)
    assert str(theirs.value).split(":")[0].split(" ")[0] in str(ours.value)


# -- storages: the memory a tensor views, shared by its views ------------------------------------------------
STORAGE_PROGRAMS = {
    "untyped": "x = torch.arange(6.).reshape(2, 3); y = x[1]; s = x.untyped_storage(); R(type(s).__name__, s.nbytes(), "
    "s.size(), len(s), s.element_size(), str(s.device), s.data_ptr() == x.data_ptr(), "
    "y.untyped_storage().data_ptr() == s.data_ptr(), s[0], s.tolist()[:8], isinstance(s, torch.UntypedStorage))",
    "typed": "x = torch.arange(6.).reshape(2, 3); ts = x.storage(); R(type(ts).__name__, ts.size(), len(ts), ts.dtype, "
    "ts.tolist(), ts.data_ptr() == x.data_ptr(), ts.element_size(), ts.nbytes(), ts[1], repr(ts), "
    "isinstance(ts, torch.TypedStorage))",
    "shared_or_not": "x = torch.arange(6.); y = x.view(2, 3); z = x.clone(); R(x.untyped_storage().data_ptr() == "
    "y.untyped_storage().data_ptr(), x.untyped_storage().data_ptr() == z.untyped_storage().data_ptr(), "
    "x[2:].untyped_storage().nbytes(), x[2:].storage().size())",
    "int16": "x = torch.arange(4, dtype=torch.int16); R(x.untyped_storage().tolist(), x.storage().tolist())",
    "scalar": "x = torch.tensor(3.5); R(x.untyped_storage().nbytes(), x.storage().tolist())",
}


@pytest.mark.parametrize("name", list(STORAGE_PROGRAMS))
def test_storages_as_pytorchs(name: str) -> None:
    from tests.differential import assert_same_as_torch  # noqa: PLC0415

    assert_same_as_torch(STORAGE_PROGRAMS[name], torch, warns=False)  # (PyTorch warns of TypedStorage once a process)
