"""The engine's fast paths give the same values and gradients as the plain ones.

- Gradient sums that the backward pass grows in place never write into an array that
  someone else holds (an add hands one gradient array to both its inputs).
- Causal attention computed in blocks of query rows equals the primitive definition.
- A weight shared by a batch (``(B, T, k) @ (k, n)``) runs as one 2-D product.
- Cached permutations and NumPy's fast spellings behave as the array API says.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, rand

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn import functional as F
from tinygrad_attn.ops import fused


# -- in-place accumulation safety ---------------------------------------------------------
def test_tensor_used_by_both_inputs_of_an_add(device, rng):
    x = rand(rng, 3, 4, device=device)
    y = x + x  # Add returns the same g for both inputs
    z = (y + y) + y  # three consumers of y: the sum grows in place after the first add
    z.backward(Tensor(np.ones((3, 4)), device=device))
    close(x.grad, np.full((3, 4), 6.0))


def test_many_consumers_do_not_touch_the_upstream_gradient(device, rng):
    x = rand(rng, 2, 3, device=device)
    h = x * 2.0
    y = h + 0.0  # g of y reaches h unchanged (the same array) through the add
    out = y + h + h + h  # h: four consumers, one of them handing on y's own gradient
    y.retain_grad()
    g = np.arange(6.0).reshape(2, 3)
    out.backward(Tensor(g, device=device))
    close(y.grad, g)  # y's gradient was not grown by the sums for h
    close(x.grad, 2.0 * 4 * g)


def test_leaves_that_share_an_array(device, rng):
    a = rand(rng, 4, device=device)
    b = Tensor(a.data, requires_grad=True)  # another leaf over a copy of the same values
    b.data = a.data  # now literally one array
    out = (a * 3.0 + b * 5.0 + a).sum()
    out.backward()
    close(a.grad, np.full(4, 4.0))
    close(b.grad, np.full(4, 5.0))
    close(a, b.detach().numpy())  # the shared data was not written


def test_gradients_accumulate_across_backward_calls_into_the_same_grad(device, rng):
    x = rand(rng, 3, device=device)
    y = rand(rng, 3, device=device)
    (x + x + x + y).sum().backward()  # (x's gradient summed in the pass's own buffer, y's handed over)
    first, held = x.grad, x.grad.detach()
    (x * 2.0 + y).sum().backward()
    assert x.grad is first  # the sum written into the first .grad's memory, as PyTorch's
    close(held, np.full(3, 5.0))
    close(y.grad, np.full(3, 2.0))
    (x * 1.0).sum().backward(create_graph=True)  # in grad mode: a new .grad, as PyTorch's
    assert x.grad is not first
    close(first, np.full(3, 5.0))
    close(x.grad, np.full(3, 6.0))


def test_higher_order_through_in_place_sums(rng):
    x = rand(rng, 3)
    y = x * x
    z = y + y + y  # y has three consumers: summed in place in a plain pass only
    (gx,) = tga.grad(z.sum(), x, create_graph=True)
    (ggx,) = tga.grad(gx.sum(), x)
    close(gx, 6.0 * x.detach().numpy())
    close(ggx, np.full(3, 6.0))


def test_the_same_output_twice_in_grad_counts_twice(rng):
    x = rand(rng, 3)
    s = (x * 2.0).sum()
    (g,) = tga.grad([s, s], x)  # its inputs are counted once, its seed gradients summed
    close(g, np.full(3, 4.0))


# -- blocked causal attention ----------------------------------------------------------------
@pytest.mark.parametrize("tq,tk", [(2 * fused.CAUSAL_BLOCK + 5, 2 * fused.CAUSAL_BLOCK + 5),
                                   (2 * fused.CAUSAL_BLOCK + 3, 3 * fused.CAUSAL_BLOCK)])  # fmt: skip
def test_blocked_causal_attention_equals_definition(tq, tk, device, rng):
    assert len(fused.causal_blocks(tq, tk)) > 2
    q, k, v = rand(rng, 2, tq, 4, device=device), rand(rng, 2, tk, 4, device=device), rand(rng, 2, tk, 3, device=device)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.grad_fn.op_name == "attention"
    g = rng.standard_normal(out.shape)
    got = tga.grad(out, [q, k, v], Tensor(g, device=device))
    with tga.decompose():
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        want = tga.grad(ref, [q, k, v], Tensor(g, device=device))
    close(out, ref.detach().numpy(), atol=1e-10, rtol=1e-9)
    for a, b in zip(got, want):
        close(a, b.detach().numpy(), atol=1e-10, rtol=1e-9)


@pytest.mark.slow  # about 3 s
def test_blocked_causal_attention_gradcheck(rng):
    t = 2 * fused.CAUSAL_BLOCK + 1
    q, k, v = rand(rng, 1, t, 2), rand(rng, 1, t, 2), rand(rng, 1, t, 2)
    assert tga.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)


def test_blocked_causal_attention_float32_matches_float64(rng):
    t = 3 * fused.CAUSAL_BLOCK
    arrs = [rng.standard_normal((2, 2, t, 8)) for _ in range(3)]
    out32 = F.scaled_dot_product_attention(*[Tensor(a.astype(np.float32)) for a in arrs], is_causal=True)
    out64 = F.scaled_dot_product_attention(*[Tensor(a) for a in arrs], is_causal=True)
    assert out32.dtype == np.float32
    close(out32, out64.detach().numpy(), atol=1e-5, rtol=1e-4)


# -- matmul with a shared weight -------------------------------------------------------------
def test_batch_times_matrix_gradients(device, rng):
    a, w = rand(rng, 2, 3, 4, device=device), rand(rng, 4, 5, device=device)
    y = a @ w
    close(y, a.detach().numpy() @ w.detach().numpy())
    g = rng.standard_normal((2, 3, 5))
    y.backward(Tensor(g, device=device))
    close(a.grad, g @ w.detach().numpy().T)
    close(w.grad, np.einsum("btk,btn->kn", a.detach().numpy(), g))
    assert tga.gradcheck(lambda a, w: a @ w, rand(rng, 2, 3, 4), rand(rng, 4, 5))


def test_batch_times_matrix_with_non_contiguous_input(rng):
    a = rand(rng, 3, 4, 2).permute(0, 2, 1)  # (3, 2, 4), not contiguous
    w = rand(rng, 4, 5)
    assert tga.gradcheck(lambda a, w: a @ w, a.detach().requires_grad_(), w)


@pytest.mark.parametrize("shape", [(1, 3, 4), (3, 4)])
def test_one_matrix_times_a_weight_takes_no_reshape(device, rng, shape, monkeypatch):
    from tinygrad_attn.ops import linalg

    ops = tga.get_device(device).ops
    a, w = rand(rng, *shape, device=device), rand(rng, 4, 5, device=device)
    calls = []
    real = ops.reshape
    monkeypatch.setattr(ops, "reshape", lambda *args, **kw: calls.append(1) or real(*args, **kw))
    out = linalg.batch_times_matrix(ops, a._data, w._data)
    assert not calls and tuple(out.shape) == shape[:-1] + (5,)
    close(Tensor._wrap(out, a._dev), a.detach().numpy() @ w.detach().numpy())
    assert tga.gradcheck(lambda a, w: a @ w, rand(rng, *shape), rand(rng, 4, 5))


# -- shape fast paths --------------------------------------------------------------------------
def test_permute_cache_still_checks(rng):
    x = rand(rng, 2, 3, 4)
    assert x.permute(2, 0, 1).shape == (4, 2, 3)
    assert x.permute((2, 0, 1)).shape == (4, 2, 3)
    assert x.permute([-1, 0, 1]).shape == (4, 2, 3)
    assert x.permute(0, 1, 2) is not x and x.permute(0, 1, 2).shape == x.shape  # (a new view, as PyTorch's)
    with pytest.raises(ValueError, match="permute"):
        x.permute(0, 0, 1)
    with pytest.raises(ValueError, match="permute"):
        x.permute(0, 1)
    assert x.mT.shape == (2, 4, 3)
    with pytest.raises(ValueError, match="mT"):
        rand(rng, 3).mT


def test_reshape_resolves_and_checks_every_time(rng):
    x = rand(rng, 2, 3, 4)
    for _ in range(2):  # the second time from the cache
        assert x.reshape(-1, 4).shape == (6, 4) and x.reshape((4, -1)).shape == (4, 6)
        assert x.reshape(np.int64(6), 4).shape == (6, 4) and x.reshape([6, 4]).shape == (6, 4)
        with pytest.raises(ValueError, match=r"shape '\[5, -1\]' is invalid for input of size 24"):
            x.reshape(5, -1)
        with pytest.raises(ValueError, match="only one dimension can be inferred"):
            x.reshape(-1, -1)
        with pytest.raises(ValueError, match=r"shape '\[7, 4\]' is invalid for input of size 24"):
            x.reshape(7, 4)
    assert x.reshape(2, 3, 4) is not x and x.reshape(2, 3, 4).shape == x.shape  # (a new view, as PyTorch's)


def test_numpy_fast_spellings_follow_the_array_api():
    ops = tga.get_device("cpu").ops
    a = np.arange(24, dtype=np.int8).reshape(2, 3, 4)
    assert ops.sum(a) == 276 and ops.sum(a).dtype == np.sum(a).dtype  # axis=None: everything
    assert ops.sum(a, axis=(0, 2), keepdims=True).shape == (1, 3, 1)
    assert ops.max(a) == 23 and ops.min(a, axis=-1).tolist() == [[0, 4, 8], [12, 16, 20]]
    assert ops.reshape(a, (6, 4)).shape == (6, 4)
    assert ops.permute_dims(a, (2, 0, 1)).shape == (4, 2, 3)
    assert ops.matrix_transpose(a).shape == (2, 4, 3)


# -- row-wise sums a slab at a time ------------------------------------------------------------
@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(fused, "_CHUNK_ELEMENTS", 16)  # every sum below goes in several slabs


def test_softmax_backward_in_slabs_equals_definition(small_chunks, device, rng):
    x = rand(rng, 2, 7, 5, device=device)
    g = Tensor(rng.standard_normal((2, 7, 5)), device=device)
    (got,) = tga.grad(x.softmax(-1), x, g)
    with tga.decompose():
        (want,) = tga.grad(x.softmax(-1), x, g)
    close(got, want.detach().numpy(), atol=1e-12, rtol=1e-10)
    (got0,) = tga.grad(x.softmax(0), x, g)  # not the last axis: one sum, as before
    with tga.decompose():
        (want0,) = tga.grad(x.softmax(0), x, g)
    close(got0, want0.detach().numpy(), atol=1e-12, rtol=1e-10)


def test_attention_backward_in_slabs_equals_definition(small_chunks, device, rng):
    q, k, v = rand(rng, 2, 9, 3, device=device), rand(rng, 2, 6, 3, device=device), rand(rng, 2, 6, 4, device=device)
    for causal in (False, True):
        got = tga.grad(F.scaled_dot_product_attention(q, k, v, is_causal=causal).sum(), [q, k, v])
        with tga.decompose():
            want = tga.grad(F.scaled_dot_product_attention(q, k, v, is_causal=causal).sum(), [q, k, v])
        for a, b in zip(got, want):
            close(a, b.detach().numpy(), atol=1e-12, rtol=1e-10)


# -- Python numbers handed to NumPy as 0-d arrays of the tensor's dtype --------------------
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
@pytest.mark.parametrize("number", [0.9, -3, 2**40, 1e-30, 0.0, -0.0, True, 1e30, float("nan"), float("inf")])
def test_numbers_give_what_numpy_gives_with_the_python_number(dtype, number):
    a = (np.arange(-3, 3) * 1.5).astype(dtype)
    x = Tensor(a)

    def forms_of(number):
        return [
            lambda t: t * number,
            lambda t: number * t,
            lambda t: t + number,
            lambda t: number - t,
            lambda t: t / number,
            lambda t: (1 / t) * number,  # (PyTorch's ``number / t``: the reciprocal, then the product)
        ]

    forms = forms_of(number)
    with np.errstate(all="ignore"):
        for i, form in enumerate(forms):
            # PyTorch's dtype where it differs from NumPy's (float64): an integer tensor with a
            # Python float, or divided, is float32
            b = a.astype(np.float32) if a.dtype.kind == "i" and (isinstance(number, float) or i >= 4) else a
            if number is True and i == 3:  # PyTorch refuses subtraction with a bool (NumPy does it)
                with pytest.raises(RuntimeError, match="Subtraction"):
                    form(x)
                continue
            try:
                ref = form(b)
                if b.dtype == np.float16 and i in (0, 1, 4, 5) and number.__class__ in (int, float):
                    # (PyTorch's float16 mul and div read a Python float at float32 and round once; n / t is
                    # the float16 reciprocal times n)
                    wide = (1 / b if i == 5 else b).astype(np.float32)
                    ref = (wide * np.float32(number) if i != 4 else wide / np.float32(number)).astype(np.float16)
            except OverflowError:  # NumPy refuses a number its integer dtype cannot hold: PyTorch wraps it around
                info = np.iinfo(b.dtype)
                wrapped = (number - info.min) % (info.max - info.min + 1) + info.min
                ref = forms_of(wrapped)[i](b)
            got = (number / x if i == 5 else form(x)).detach().numpy()
            assert got.dtype == ref.dtype
            np.testing.assert_array_equal(got, ref)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))  # -0.0 stays -0.0


def test_a_zero_keeps_its_sign_from_one_op_to_the_next():
    a = np.array([-1.5, 2.0], np.float32)
    x = Tensor(a)
    for number in (0.0, -0.0, 0.0, 1.0, 1):
        np.testing.assert_array_equal(np.signbit((x * number).detach().numpy()), np.signbit(a * number))


def test_number_gradients_use_the_same_fast_numbers(rng):
    x = rand(rng, 4, dtype=np.float32)
    ((x * 0.5 - 2.0) / 4.0 + 1.5 * x).sum().backward()
    assert x.grad.dtype == np.float32
    close(x.grad, np.full(4, 0.5 / 4.0 + 1.5), atol=1e-7)


def test_the_number_cache_stays_small():
    from tinygrad_attn.runtime import backend as device

    x = Tensor(np.ones(3, np.float32))
    for i in range(5000):  # a schedule: a new number on every step
        x * (1.0 + i * 1e-4)
    assert 0 < len(device._NP_SCALARS) <= 4096
    assert (x * 7.25).detach().numpy().tolist() == [7.25] * 3


# -- many-pass elementwise chains computed a cache-sized block at a time --------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_and_gelu_in_blocks_equal_the_whole_array_at_once(dtype, device, monkeypatch):
    from tinygrad_attn.ops import elementwise
    from tinygrad_attn.runtime.backend import get_device

    ops = get_device(device).ops
    x = Tensor(np.linspace(-6, 6, 3 * 4099).reshape(3, 4099).astype(dtype), device=device, requires_grad=True)
    g = Tensor(np.cos(np.arange(3 * 4099)).reshape(3, 4099).astype(dtype), device=device)
    results = {}
    for block in (None, 1000):  # all at once, then in 13 blocks (the last one short)
        monkeypatch.setattr(ops, "cache_block", block)
        x.grad = None
        y = F.gelu(x)
        y.backward(g)
        erf = Tensor(elementwise.erf_array(ops, x._data), device=device).detach().numpy()
        results[block] = (erf, y.detach().numpy(), x.grad.detach().numpy())
    for whole, blocked in zip(results[None], results[1000]):
        np.testing.assert_array_equal(blocked, whole)


def test_blockwise_keeps_shapes_and_several_outputs(device):
    from tinygrad_attn.ops.elementwise import blockwise
    from tinygrad_attn.runtime.backend import get_device

    ops = get_device(device).ops
    a = Tensor(np.arange(2 * 3 * 50, dtype=np.float64).reshape(2, 3, 50), device=device)._data
    b = Tensor(np.ones((2, 3, 50)), device=device)._data
    ops_small = type(ops)(**vars(ops))
    ops_small.cache_block = 7
    s, p = blockwise(ops_small, lambda u, v: (u + v, u * 2.0), a, b)
    assert tuple(s.shape) == (2, 3, 50) and tuple(p.shape) == (2, 3, 50)
    close(Tensor(s, device=device), np.arange(300.0).reshape(2, 3, 50) + 1)
    close(Tensor(p, device=device), np.arange(300.0).reshape(2, 3, 50) * 2)


# -- gradients of slices added into one array in place ---------------------------------------
def test_slices_of_one_tensor_give_the_dense_gradient(device, rng):
    x = rand(rng, 4, 6, device=device)
    w = rand(rng, 4, 6, device=device)
    a = x.detach().numpy()
    parts = x.chunk(3, axis=1)  # three consumers of x, each a slice
    y = (parts[0] * 2.0).sum() + (parts[1].exp()).sum() + (parts[2] * w[:, 4:]).sum()
    y = y + (x[1:3] * x[1:3]).sum() + (x * w).sum()  # overlapping slices, the same slice twice, x itself
    y.backward()
    ref = np.zeros((4, 6))
    ref[:, :2] += 2.0
    ref[:, 2:4] += np.exp(a[:, 2:4])
    ref[:, 4:] += w.detach().numpy()[:, 4:]
    ref[1:3] += 2 * a[1:3]
    ref += w.detach().numpy()
    close(x.grad, ref, atol=1e-12)


def test_a_slice_never_writes_into_a_gradient_another_tensor_shares(device, rng):
    x = rand(rng, 3, 4, device=device)
    y = rand(rng, 3, 4, device=device)
    s = x + y  # an add hands one gradient array to both x and y
    loss = (s * s).sum() + (x[:, 1:3] * 5.0).sum()
    loss.backward()
    g = 2 * (x.detach().numpy() + y.detach().numpy())
    close(y.grad, g, atol=1e-12)  # untouched by x's slice
    g[:, 1:3] += 5.0
    close(x.grad, g, atol=1e-12)


def test_many_slices_make_one_full_size_array(monkeypatch, rng):
    from tinygrad_attn.runtime.backend import get_device

    ops = get_device("cpu").ops
    made = []
    real = ops.slice_grad

    def counting(g, shape, key):
        made.append(key)
        return real(g, shape, key)

    monkeypatch.setattr(ops, "slice_grad", counting)
    x = rand(rng, 2, 16, 3)
    h = Tensor.zeros(2, 3, dtype=np.float64)
    for t in range(16):  # an RNN reading one time step at a time
        h = (h + x[:, t]).tanh()
    h.sum().backward()
    assert len(made) == 1  # not one full-size array per step
    assert tga.gradcheck(lambda x: _rnn_like(x), x)


def _rnn_like(x):
    h = Tensor.zeros(2, 3, dtype=np.float64)
    for t in range(x.shape[1]):
        h = (h + x[:, t]).tanh()
    return h.sum()


def test_second_order_through_slices(rng):
    x = rand(rng, 5)
    (g,) = tga.grad((x[:3] ** 3).sum() + (x[2:] ** 2).sum(), x, create_graph=True)
    g.sum().backward()
    a = x.detach().numpy()
    ref = np.zeros(5)
    ref[:3] += 6 * a[:3]
    ref[2:] += 2.0
    close(x.grad, ref, atol=1e-12)


def test_softmax_and_attention_computing_in_place_leave_their_inputs_alone(device, rng):
    x = rand(rng, 3, 5, device=device)
    q, k, v = (rand(rng, 2, 4, 3, device=device) for _ in range(3))
    before = [t.detach().numpy().copy() for t in (x, q, k, v)]
    y = x.softmax(-1) + 0.0
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    (y.sum() + o.sum()).backward()
    for t, b in zip((x, q, k, v), before):
        np.testing.assert_array_equal(t.detach().numpy(), b)
    close(y.sum(-1), np.ones(3), atol=1e-12)


# -- NumPy's where as a copy and a masked store ------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int64, np.bool_])
@pytest.mark.parametrize("fill", [-np.inf, 0.0, -0.0, 3, np.nan, True, np.float64(2.5), np.array(7, np.int8)])
@pytest.mark.parametrize("cond_shape", [(5, 6), (1, 6), (3, 1, 1), (3, 5, 6)])
def test_where_with_a_scalar_side_is_numpys_where(monkeypatch, dtype, fill, cond_shape):
    from tinygrad_attn.runtime import backend as device

    monkeypatch.setattr(device, "WHERE_COPY_MIN", 1)  # take the fast path on small arrays
    rng = np.random.default_rng(0)
    full = (rng.standard_normal((3, 5, 6)) * 4).astype(dtype)
    cond = rng.random(cond_shape) < 0.5
    ops = tga.get_device("cpu").ops
    for args in ((cond, fill, full), (cond, full, fill)):
        try:
            want = np.where(*args)
        except (OverflowError, TypeError) as e:
            with pytest.raises(type(e)):
                ops.where(*args)
            continue
        got = ops.where(*args)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        if want.dtype.kind == "f":  # -0.0 stays -0.0
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        assert not np.shares_memory(got, full)


def test_where_fast_path_is_taken_for_large_masked_fills(monkeypatch):
    from tinygrad_attn.runtime import backend as device

    calls = []
    real = np.copyto
    monkeypatch.setattr(device.np, "copyto", lambda *a, **k: calls.append(1) or real(*a, **k))
    s = np.ones((4, 64, 64), np.float32)
    blocked = ~np.tri(64, 64, 0, dtype=bool)
    out = tga.get_device("cpu").ops.where(blocked, -np.inf, s)
    assert calls and np.isneginf(out[:, 0, 1:]).all() and (out[:, 1, :2] == 1).all()


# -- index_add by sorting (the gradient of a gather: embeddings) --------------------------------
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("n_index", [0, 1, 7, 40])
def test_index_add_sums_as_numpy_add_at(axis, n_index):
    rng = np.random.default_rng(axis * 100 + n_index)
    shape = (5, 6, 4)
    index = rng.integers(-shape[axis], shape[axis], n_index)  # repeats, and negative indices
    vshape = list(shape)
    vshape[axis] = n_index
    values = rng.standard_normal(vshape)
    want = np.zeros(shape)
    np.add.at(want, (slice(None),) * axis + (index,), values)
    got = tga.get_device("cpu").index_add(shape, axis, index, values)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_embedding_gradient_counts_every_repeat(rng):
    table = Tensor(rng.standard_normal((4, 3)), requires_grad=True)
    ids = np.array([[0, 3, 3], [3, -1, 2]])  # -1 is row 3 again
    table[ids].sum().backward()
    close(table.grad, np.array([[1.0] * 3, [0.0] * 3, [1.0] * 3, [4.0] * 3]))
