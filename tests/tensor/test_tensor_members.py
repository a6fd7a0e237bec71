"""PyTorch's smaller Tensor members (``is_contiguous is_nonzero is_signed new resize apply_
map_ register_post_accumulate_grad_hook ...``) and the tensor functions written with them
(``put index_reduce *_scatter unsafe_split gradient histogram logspace fill native_*_norm``)
against PyTorch: the same values, dtypes and exception classes; the differentiable ones also
against central finite differences in float64 (``tga.gradcheck``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn.engine.declare import one_function

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
SHAPES = [(), (1,), (2,), (0,), (2, 3), (1, 1)]


def _both(values: Any, dtype: str = "float64") -> tuple[Any, Any]:
    a = np.asarray(values, dtype=dtype)
    return tga.tensor(a), torch.tensor(a)


def _outcome(fn: Any, *args: Any) -> Any:
    """``fn(*args)``: a value (tensors as lists with their dtype), or the exception class it raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*args)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e)
    return _plain(out)


def _plain(out: Any) -> Any:
    if isinstance(out, (list, tuple)) and any(hasattr(o, "detach") or isinstance(o, (list, tuple)) for o in out):
        return [_plain(o) for o in out]
    if isinstance(out, tuple):  # (a shape: torch.Size, a Size or a tuple alike)
        return tuple(out)
    if hasattr(out, "detach"):
        return (out.detach().numpy().tolist(), str(out.dtype).removeprefix("torch."))
    return out


def _same(fn: Any, ours: tuple, theirs: tuple) -> None:
    a, b = _outcome(fn, *ours), _outcome(fn, *theirs)
    if isinstance(b, type):
        assert isinstance(a, type) and issubclass(a, b), f"PyTorch raises {b.__name__}, ours gave {a}"
    else:
        _equal(a, b)


def _equal(a: Any, b: Any) -> None:
    """Equal outcomes: the same structure and dtypes; floats to a few units in the last place (sums taken
    in another order)."""
    if isinstance(b, list) and b and isinstance(b[0], tuple):
        assert isinstance(a, list) and len(a) == len(b), f"{a} != PyTorch's {b}"
        for u, v in zip(a, b):
            _equal(u, v)
    elif isinstance(b, tuple) and len(b) == 2 and isinstance(b[1], str):
        assert isinstance(a, tuple) and a[1] == b[1], f"dtype {a[1] if isinstance(a, tuple) else a} != PyTorch's {b[1]}"
        x, y = np.asarray(a[0]), np.asarray(b[0])
        assert x.shape == y.shape, f"shape {x.shape} != PyTorch's {y.shape}"
        if y.dtype.kind == "f":
            np.testing.assert_allclose(x, y, rtol=1e-6 if b[1] == "float32" else 1e-13, atol=1e-14)
        else:
            assert x.tolist() == y.tolist(), f"{a} != PyTorch's {b}"
    else:
        assert a == b, f"{a} != PyTorch's {b}"


# -- attributes and helpers ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_predicates_as_pytorch(dtype: str, shape: tuple) -> None:
    values = np.arange(int(np.prod(shape))).reshape(shape) % 2
    ours, theirs = _both(values, dtype)
    for fn in (lambda t: t.is_signed(), lambda t: t.is_nonzero(), lambda t: t.ndimension(), lambda t: t.is_cpu,
               lambda t: t.is_contiguous(), lambda t: t.is_distributed(), lambda t: t.output_nr,
               lambda t: t.is_same_size(t.reshape(-1)), lambda t: t.is_same_size(t), lambda t: t.equal(t + 0),
               lambda t: t.retains_grad):  # fmt: skip
        _same(fn, (ours,), (theirs,))


def test_is_contiguous_follows_the_memory_order() -> None:
    ours, theirs = _both(np.ones((2, 3)))
    for fn in (lambda t: t.T.is_contiguous(), lambda t: t[:, ::2].is_contiguous(), lambda t: t[1].is_contiguous(),
               lambda t: t.T.contiguous().is_contiguous()):  # fmt: skip
        _same(fn, (ours,), (theirs,))


def test_layout_and_grad_dtype() -> None:
    x = tga.ones(2, requires_grad=True)
    assert x.layout is tga.strided and repr(tga.strided).endswith("strided")
    assert x.grad_dtype == x.dtype
    x.grad_dtype = x.dtype  # (its own dtype: nothing changes)
    with pytest.raises(RuntimeError, match="leaf"):
        _ = (x * 2).grad_dtype
    with pytest.raises(NotImplementedError, match="grad_dtype"):
        x.grad_dtype = tga.float64


def test_retains_grad_as_pytorch() -> None:
    for lib in (tga, torch):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        assert (x.retains_grad, y.retains_grad) == (False, False)
        y.retain_grad()
        assert (x.retains_grad, y.retains_grad) == (False, True)


@pytest.mark.parametrize(
    "args",
    [(), (2, 3), (0,), ([1, 2],), ([[1.5], [2.5]],), ((2, 3),), "size", "same-tensor", "other-tensor"],
    ids=str,
)
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_new_as_pytorch(args: Any, dtype: str) -> None:
    ours, theirs = _both([1, 2], dtype)

    def call(t: Any) -> Any:
        if args == "size":
            return tuple(t.new(t.size()).shape)
        if args == "same-tensor":
            return t.new(t * 3)
        if args == "other-tensor":
            return t.new(t.double())
        out = t.new(*args)
        return out if out.numel() and args and not isinstance(args[0], int) else out.shape

    a, b = _outcome(call, ours), _outcome(call, theirs)
    if isinstance(b, type):
        assert isinstance(a, type) and issubclass(a, b)
    else:  # (sizes: uninitialised values in PyTorch, compared by shape)
        assert (tuple(a) if isinstance(a, tuple) else a) == (tuple(b) if isinstance(b, tuple) else b)


@pytest.mark.parametrize("sizes", [(3, 2), (6,), (1, 6, 1), (4,), (7,)])
def test_resize_and_resize_as(sizes: tuple) -> None:
    data = np.arange(6.0).reshape(2, 3)
    ours, theirs = _both(data)
    _same(lambda t: t.resize(*sizes), (ours,), (theirs,))
    _same(lambda t: t.resize_as(t.new_zeros(sizes)), (ours,), (theirs,))
    _same(lambda t: t.clone().resize_as_(t.new_zeros(sizes)).shape, (ours,), (theirs,))


@pytest.mark.filterwarnings("ignore:non-inplace resize is deprecated")
def test_resize_differentiates() -> None:
    with pytest.warns(UserWarning, match="deprecated"):
        tga.ones(2).resize(2)
    assert tga.gradcheck(lambda x: tga.Tensor.resize(x, 3, 2) * tga.arange(6.0).reshape(3, 2), np.random.rand(2, 3))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_apply_map_map2_as_pytorch(dtype: str) -> None:
    data = np.arange(6).reshape(2, 3) % 3
    for fn in (lambda t: t.clone().apply_(lambda v: v * 2 + 1),
               lambda t: t.clone().map_(t[0] * 0 + 1, lambda a, b: a + b * 0.7),
               lambda t: t.clone().map2_(t[:1], t[:, :1], lambda a, b, c: a * 3 + b - c),
               lambda t: t.clone().map_(t[0, :2], lambda a, b: a)):  # fmt: skip
        _same(fn, _both(data, dtype)[:1], _both(data, dtype)[1:])


def test_apply_refuses_a_tensor_that_requires_grad() -> None:
    _same(lambda t: t.apply_(lambda v: v), (tga.ones(2, requires_grad=True),), (torch.ones(2, requires_grad=True),))


def test_bfloat16_casts_as_pytorch() -> None:
    pytest.importorskip("ml_dtypes")
    values = [1.0, 1.00390625, -2.5e-3, 3.0e38, float("inf")]
    ours, theirs = tga.tensor(values).bfloat16(), torch.tensor(values).bfloat16()
    assert str(ours.dtype) == str(theirs.dtype) == "torch.bfloat16"
    assert ours.tolist() == theirs.tolist()


def test_post_accumulate_grad_hook_as_pytorch() -> None:
    seen: dict[str, list] = {}
    for name, lib in (("ours", tga), ("torch", torch)):
        calls: list = []
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        handle = w.register_post_accumulate_grad_hook(
            lambda p, calls=calls: calls.append(p.grad.detach().numpy().tolist())
        )
        (w * w).sum().backward()
        (w * 3).sum().backward()
        handle.remove()
        (w * 3).sum().backward()
        with pytest.raises(RuntimeError):
            (w * 2).register_post_accumulate_grad_hook(lambda p: None)
        with pytest.raises(RuntimeError):
            lib.ones(2).register_post_accumulate_grad_hook(lambda p: None)
        seen[name] = calls
    assert seen["ours"] == seen["torch"] and len(seen["ours"]) == 2


def test_post_accumulate_hook_steps_an_optimizer_per_parameter() -> None:
    """The use PyTorch documents: each parameter updated as soon as its gradient is complete."""
    w = tga.tensor([1.0, 2.0], requires_grad=True)

    def step(p: tga.Tensor) -> None:
        with tga.no_grad():
            p -= 0.5 * p.grad
        p.grad = None

    w.register_post_accumulate_grad_hook(step)
    (w * w).sum().backward()
    np.testing.assert_allclose(w.detach().numpy(), [0.0, 0.0])
    assert w.grad is None


# -- tensor functions ------------------------------------------------------------------------
def test_put_as_pytorch() -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((2, 3))
    for index, src, acc in [([0, -1], [5.0, 6.0], False), ([1, 1, 4], [1.0, 2.0, 3.0], True), ([], [], False),
                            ([6], [1.0], False), ([-7], [1.0], False), ([0, 1], [1.0], False)]:  # fmt: skip
        for dtype in ("int64", "float64"):
            _same(lambda x, i, s, acc=acc: x.put(i, s, acc), (tga.tensor(data), tga.tensor(np.array(index, dtype)),
                  tga.tensor(src)), (torch.tensor(data), torch.tensor(np.array(index, dtype)), torch.tensor(src)))  # fmt: skip
    _same(lambda x, i, s: x.put_(i, s), (tga.zeros(3), tga.tensor([2]), tga.tensor([1])),
          (torch.zeros(3), torch.tensor([2]), torch.tensor([1])))  # fmt: skip
    x = tga.zeros(2, 2)
    assert x.put_(tga.tensor([3]), tga.tensor([7.0])) is x and x[1, 1].item() == 7.0


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin", "sum"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_index_reduce_as_pytorch(reduce: str, include_self: bool, dtype: str) -> None:
    x = np.arange(12).reshape(4, 3) % 5 - 2
    src = np.arange(9).reshape(3, 3) % 4 - 1
    index = np.array([0, 2, 0])
    for dim, s in ((0, src), (1, np.resize(src, (4, 3)))):  # (3 rows into rows 0 and 2; 3 columns into 0 and 2)
        _same(lambda a, i, b, dim=dim: a.index_reduce(dim, i, b, reduce, include_self=include_self),
              (tga.tensor(x.astype(dtype)), tga.tensor(index), tga.tensor(s.astype(dtype))),
              (torch.tensor(x.astype(dtype)), torch.tensor(index), torch.tensor(s.astype(dtype))))  # fmt: skip


def test_index_reduce_gradcheck() -> None:
    rng = np.random.default_rng(1)
    index = tga.tensor([0, 2, 0])
    for reduce in ("prod", "mean", "amax", "amin"):
        assert tga.gradcheck(lambda x, s, r=reduce: x.index_reduce(0, index, s, r, include_self=False),
                             rng.uniform(0.5, 2, (3, 2)), rng.uniform(0.5, 2, (3, 2)))  # fmt: skip


def _views() -> list:
    return [
        ("diagonal_scatter", lambda x: x.diagonal(1, 0, 2), {"offset": 1, "dim1": 0, "dim2": 2}),
        ("diagonal_scatter", lambda x: x.diagonal(-1, 2, 1), {"offset": -1, "dim1": 2, "dim2": 1}),
        ("select_scatter", lambda x: x.select(1, -1), {"dim": 1, "index": -1}),
        ("slice_scatter", lambda x: x[:, :, 1::2], {"dim": 2, "start": 1, "step": 2}),
        ("slice_scatter", lambda x: x[-1:], {"start": -1, "end": 10}),
    ]


@pytest.mark.parametrize(("name", "view", "kw"), _views())
def test_scatters_into_views(name: str, view: Any, kw: dict) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4))
    src = rng.standard_normal(tuple(view(torch.tensor(x)).shape))
    _same(lambda a, b: getattr(a, name)(b, **kw), _both(x)[:1] + _both(src)[:1], _both(x)[1:] + _both(src)[1:])
    _same(lambda a, b: getattr(a, name)(b[..., :1], **kw), _both(x)[:1] + _both(src)[:1], _both(x)[1:] + _both(src)[1:])
    assert tga.gradcheck(lambda a, b: getattr(tga, name)(a, b, **kw), x, src)


def test_unsafe_splits_as_pytorch_and_writable() -> None:
    x = np.arange(10.0).reshape(5, 2)
    for fn in (lambda t: t.unsafe_split(2), lambda t: t.unsafe_chunk(3, 1), lambda t: t.unsafe_split_with_sizes([1, 4]),
               lambda t: t.unsafe_split(3, -1), lambda t: t.narrow_copy(0, -2, 2)):  # fmt: skip
        _same(fn, _both(x)[:1], _both(x)[1:])
    t = tga.tensor(x, requires_grad=True) * 1
    a, _ = t.unsafe_split_with_sizes([2, 3])  # (unsafe_split takes one int size, as PyTorch's)
    a.mul_(2)  # (PyTorch refuses this for split's pieces, and allows it here)
    assert t[0, 0].item() == 0 and t[1, 1].item() == 6.0
    assert tga.gradcheck(lambda v: tga.cat([p * (k + 1.0) for k, p in enumerate(v.unsafe_chunk(3))]), x)


@pytest.mark.parametrize("shape", [(2, 3), (4,), 6, (3, 1, 2)])
def test_unravel_index_as_pytorch(shape: Any) -> None:
    for idx in ([5, 0, -1, 7], [[1, 2]], 4, []):
        a = np.array(idx, dtype=np.int64)
        _same(lambda i: tga.unravel_index(i, shape) if isinstance(i, tga.Tensor) else torch.unravel_index(i, shape),
              (tga.tensor(a),), (torch.tensor(a),))  # fmt: skip
    _same(lambda i: (tga if isinstance(i, tga.Tensor) else torch).unravel_index(i, (2, 3)), _both([1.0])[:1],
          _both([1.0])[1:])  # fmt: skip


def test_addbmm_and_ger() -> None:
    rng = np.random.default_rng(3)
    m, b1, b2 = rng.standard_normal((2, 4)), rng.standard_normal((3, 2, 5)), rng.standard_normal((3, 5, 4))
    _same(lambda *t: t[0].addbmm(t[1], t[2], beta=0.5, alpha=2), _both(m)[:1] + _both(b1)[:1] + _both(b2)[:1],
          _both(m)[1:] + _both(b1)[1:] + _both(b2)[1:])  # fmt: skip
    _same(lambda *t: t[0].addbmm(t[1][0], t[2]), _both(m)[:1] + _both(b1)[:1] + _both(b2)[:1],
          _both(m)[1:] + _both(b1)[1:] + _both(b2)[1:])  # fmt: skip
    assert tga.gradcheck(lambda a, b, c: tga.addbmm(a, b, c, beta=0.5, alpha=2.0), m, b1, b2)
    x = tga.tensor(m)
    assert x.addbmm_(tga.tensor(b1), tga.tensor(b2)) is x
    assert tga.gradcheck(lambda a, b: a.ger(b), m[0], m[1])


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_as_pytorch(edge_order: int) -> None:
    rng = np.random.default_rng(4)
    f = rng.standard_normal((4, 5))
    coords = np.cumsum(rng.uniform(0.5, 1.5, 5))
    cases = [{}, {"spacing": 2.0}, {"spacing": [0.5, 3.0]}, {"dim": 1}, {"dim": (0, -1), "spacing": [2.0, 1.0]},
             {"spacing": "coords", "dim": 1}]  # fmt: skip

    def call(t: Any, kw: dict) -> Any:
        lib = tga if isinstance(t, tga.Tensor) else torch
        kw = dict(kw)
        if kw.get("spacing") == "coords":
            kw["spacing"] = (lib.tensor(coords),)
        return lib.gradient(t, edge_order=edge_order, **kw)

    for kw in cases:
        _same(lambda t, kw=kw: call(t, kw), _both(f)[:1], _both(f)[1:])
        assert tga.gradcheck(lambda t, kw=kw: tga.cat([g.reshape(-1) for g in call(t, kw)]), f)
    _same(lambda t: call(t[:, :edge_order], {"dim": 1}), _both(f)[:1], _both(f)[1:])  # too few points
    _same(lambda t: call(t, {}), _both([1, 4, 9])[:1], _both([1, 4, 9])[1:])  # (integers: the default float)


def test_histogram_as_pytorch() -> None:
    rng = np.random.default_rng(5)
    data = rng.standard_normal(20).astype(np.float32)
    data[:3] = [0.0, 1.0, 1.0]
    for args, kw in [((4,), {}), ((3,), {"range": (0.0, 1.0)}), ((2,), {"density": True}),
                     ((5,), {"weight": "w"}), (("edges",), {"density": True, "weight": "w"})]:  # fmt: skip

        def call(t: Any, args: tuple = args, kw: dict = kw) -> Any:
            lib = tga if isinstance(t, tga.Tensor) else torch
            kw = {k: (t.abs() if v == "w" else v) for k, v in kw.items()}
            a = [lib.tensor([-1.0, 0.0, 1.0, 2.5], dtype=t.dtype) if v == "edges" else v for v in args]
            return lib.histogram(t, *a, **kw)

        _same(call, _both(data, "float32")[:1], _both(data, "float32")[1:])
    for bad in ([1, 2], [[1.0, np.inf]], [[]]):
        x = np.asarray(bad, dtype="int64" if bad == [1, 2] else "float32").reshape(-1)
        _same(lambda t: t.histogram(2), _both(x, x.dtype.name)[:1], _both(x, x.dtype.name)[1:])
    _same(lambda t: t.histogram(2, range=(1.0, 1.0)), _both([1.0, 2.0])[:1], _both([1.0, 2.0])[1:])
    r = tga.histogram(tga.tensor([1.0, 2.0]), 2)
    assert r.hist is r[0] and r.bin_edges is r[1]


def test_histogramdd_as_pytorch() -> None:
    pts = np.random.default_rng(6).standard_normal((10, 2)).astype(np.float32)
    for bins, kw in [(2, {}), ([2, 3], {"range": [-1.0, 1.0, -2.0, 2.0]}), (3, {"density": True})]:
        _same(lambda t, b=bins, kw=kw: (tga if isinstance(t, tga.Tensor) else torch).histogramdd(t, b, **kw),
              _both(pts, "float32")[:1], _both(pts, "float32")[1:])  # fmt: skip


def test_nonzero_static_and_inf_tests() -> None:
    data = np.array([[0.0, np.inf], [-np.inf, np.nan]])
    for fn in (lambda t: t.nonzero_static(size=2), lambda t: t.nonzero_static(size=6, fill_value=9),
               lambda t: t.nonzero_static(size=-1), lambda t: t.isposinf(), lambda t: t.isneginf(),
               lambda t: t.isreal(), lambda t: t[:0].isreal()):  # fmt: skip
        _same(fn, _both(data)[:1], _both(data)[1:])
    _same(lambda t: t.isneginf(), _both([1, -2], "int64")[:1], _both([1, -2], "int64")[1:])


@pytest.mark.parametrize("steps", [0, 1, 2, 5, 50])
@pytest.mark.parametrize("dtype", [None, "float64", "int64", "float32"])
def test_logspace_and_scalar_tensor(steps: int, dtype: str | None) -> None:
    for base in (10.0, 2.0, 0.5):

        def call(lib: Any, base: float = base) -> Any:
            return lib.logspace(-1.5, 2, steps, base, dtype=None if dtype is None else getattr(lib, dtype))

        a, b = _outcome(call, tga), _outcome(call, torch)
        np.testing.assert_allclose(a[0], b[0], rtol=1e-6)
        assert a[1] == b[1]
    for s in (3, 2.5, True):
        _same(lambda lib, s=s: lib.scalar_tensor(s, dtype=None if dtype is None else getattr(lib, dtype)), (tga,),
              (torch,))  # fmt: skip


def test_fill_as_pytorch() -> None:
    for value in (2.7, 3, True):
        for dtype in ("int64", "float32", "bool"):
            _same(lambda t, v=value: (tga if isinstance(t, tga.Tensor) else torch).fill(t, v), _both([1, 2], dtype)[:1],
                  _both([1, 2], dtype)[1:])  # fmt: skip
    _same(lambda t: (tga if isinstance(t, tga.Tensor) else torch).fill(t, t), _both([1.0, 2.0])[:1],
          _both([1.0, 2.0])[1:])  # fmt: skip
    assert tga.gradcheck(lambda x, v: tga.fill(x, v), np.ones((2, 3)), np.array(0.5))


def test_native_norms_as_pytorch() -> None:
    rng = np.random.default_rng(7)
    x, w, b = rng.standard_normal((3, 4, 2)), rng.standard_normal(4), rng.standard_normal(4)

    def run(lib: Any, name: str) -> Any:
        t, wt, bt = (lib.tensor(a) for a in (x, w, b))
        if name == "layer":
            return lib.native_layer_norm(t, (4, 2), None, None, 1e-5)
        if name == "group":
            return lib.native_group_norm(t, wt, bt, 3, 4, 2, 2, 1e-5)
        if name == "group_norm":
            return lib.group_norm(t, 2, wt, bt, 1e-5, True)
        if name == "pad":
            return lib.constant_pad_nd(t, (1, -1, 2, 0), 3.5)
        rm, rv = lib.zeros(4, dtype=lib.float64), lib.ones(4, dtype=lib.float64)
        out = lib.native_batch_norm(t, wt, bt, rm, rv, name == "batch_train", 0.2, 1e-5)
        return [*out, rm, rv]

    for name in ("layer", "group", "group_norm", "pad", "batch_train", "batch_eval"):
        a, b_ = _outcome(run, tga, name), _outcome(run, torch, name)
        assert [v[1] for v in a] == [v[1] for v in b_] if isinstance(a, list) else a[1] == b_[1]
        for u, v in zip(a if isinstance(a, list) else [a], b_ if isinstance(b_, list) else [b_]):
            np.testing.assert_allclose(np.array(u[0]), np.array(v[0]), rtol=1e-10, atol=1e-12)
    assert tga.gradcheck(lambda t, wt, bt: tga.cat([o.reshape(-1) for o in tga.native_group_norm(
        t, wt, bt, 3, 4, 2, 2, 1e-5)]), x, w, b)  # fmt: skip
    assert tga.gradcheck(lambda t, wt: tga.native_layer_norm(t, (2,), wt, None, 1e-5)[0], x, w[:2])
    assert tga.gradcheck(lambda t, wt, bt: tga.native_batch_norm(t, wt, bt, None, None, True, 0.1, 1e-5)[0], x, w, b)


def test_top_level_spellings_are_the_functional_ones() -> None:
    F = tga.nn.functional
    for name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "rms_norm"):
        fn = getattr(tga, name)
        assert one_function(fn) is one_function(getattr(F, name))  # (a free function's check of its input)
    x = tga.tensor(np.random.default_rng(8).standard_normal((2, 3, 5)))
    assert x.hardshrink(0.3).equal(F.hardshrink(x, 0.3))
    assert tga.Tensor.prelu is one_function(F.prelu) and tga.Tensor.hardshrink is one_function(F.hardshrink)


@pytest.mark.parametrize("dtype", DTYPES)
def test_hash_tensor_as_pytorch(dtype: str) -> None:
    data = (
        np.array([[1.5, -2.0, 0.0], [3.0, np.nan, -0.0]]) if dtype.startswith("float") else np.arange(6).reshape(2, 3)
    )
    for fn in (lambda t: t.hash_tensor(), lambda t: t.hash_tensor(1), lambda t: t.hash_tensor((0, 1), keepdim=True),
               lambda t: t.hash_tensor(0, keepdim=True), lambda t: t[:0].hash_tensor(), lambda t: t[:, :0].hash_tensor(1),
               lambda t: t[:0].hash_tensor(1), lambda t: t.hash_tensor(mode=1)):  # fmt: skip
        _same(fn, _both(data, dtype)[:1], _both(data, dtype)[1:])


FINITE_DIFFERENCES = {
    "put": (lambda x, s: x.put(tga.tensor([0, -1, 2]), s), (2, 3), (3,)),
    "put_accumulate": (lambda x, s: x.put(tga.tensor([1, 1, -5]), s, accumulate=True), (2, 3), (3,)),
    "narrow_copy": (lambda x: x.narrow_copy(1, 1, 2), (2, 3)),
    "unsafe_split_with_sizes": (lambda x: tga.cat([p * (k + 1.0) for k, p in enumerate(x.unsafe_split_with_sizes(
        [1, 2], 1))], 1), (2, 3)),
    "constant_pad_nd": (lambda x: tga.constant_pad_nd(x, (1, -1, 0, 2), 0.5), (2, 3)),
    "group_norm": (lambda x, w, b: tga.group_norm(x, 2, w, b, 1e-5, False), (2, 4, 3), (4,), (4,)),
    "native_layer_norm": (lambda x, w, b: tga.native_layer_norm(x, (3,), w, b, 1e-5)[0], (2, 4, 3), (3,), (3,)),
    "hardshrink": (lambda x: x.hardshrink(0.05), (2, 3)),
    "prelu": (lambda x, w: x.prelu(w), (2, 3), (3,)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(FINITE_DIFFERENCES))
def test_gradients_against_finite_differences(name: str) -> None:
    fn, *shapes = FINITE_DIFFERENCES[name]
    rng = np.random.default_rng(sorted(FINITE_DIFFERENCES).index(name))
    args = [rng.uniform(0.2, 1.5, s) * rng.choice([-1, 1], s) for s in shapes]  # (away from 0: kinks and shrinks)
    assert tga.gradcheck(fn, *args)


def test_bfloat16_is_named_and_held() -> None:
    """Scripts name torch.bfloat16 in tables and comparisons (nanoGPT's ``ptdtype = {...}[dtype]``)
    and make tensors and modules of it (with ml_dtypes; without it they are refused: see
    tests/tensor/test_bfloat16_torch.py)."""
    import copy
    import pickle

    pytest.importorskip("ml_dtypes")
    table = {"float32": tga.float32, "bfloat16": tga.bfloat16, "float16": tga.float16}
    assert table["float32"] is tga.float32 and str(table["bfloat16"]) == "torch.bfloat16"
    assert tga.bfloat16.is_floating_point and tga.bfloat16.itemsize == 2 and not tga.bfloat16.is_complex
    assert tga.ones(2).dtype != tga.bfloat16 and tga.bfloat16 != tga.float16 and tga.bfloat16 == tga.bfloat16
    assert pickle.loads(pickle.dumps(tga.bfloat16)) is tga.bfloat16 and copy.deepcopy(tga.bfloat16) is tga.bfloat16
    assert not tga.cuda.is_bf16_supported()
    for make in (lambda: tga.ones(2, dtype=tga.bfloat16), lambda: tga.ones(2).to(tga.bfloat16),
                 lambda: tga.tensor([1.0], dtype=tga.bfloat16), lambda: tga.nn.Linear(2, 2).to(tga.bfloat16).weight,
                 lambda: tga.nn.Linear(2, 2, dtype=tga.bfloat16).weight, lambda: tga.zeros(2).type(tga.bfloat16),
                 lambda: tga.arange(3, dtype=tga.bfloat16), lambda: tga.ones(2).sum(dtype=tga.bfloat16)):  # fmt: skip
        assert make().dtype is tga.bfloat16
