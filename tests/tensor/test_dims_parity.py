"""Every method and function that takes an axis raises where PyTorch raises, with PyTorch's
exception class, and returns a result of PyTorch's shape where PyTorch runs: axes in range,
negative, out of range on both sides, repeated, and of 0-d tensors.

The names come from the two inventories, not from a list kept by hand: PyTorch's
``torch.overrides.get_testing_overrides()`` (the signature of every function and Tensor method)
and our Tensor's signatures, each name whose parameters include an axis. Each must have a call
below (``CALLS``) or a reason it has none (``NOT_AN_AXIS``), so a new axis-taking name cannot
miss this test.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

AXIS_PARAMETERS = {"dim", "dims", "axis", "dim0", "dim1", "dim2", "start_dim", "end_dim", "source", "destination"}


def _method(name):
    return lambda m, x, d: getattr(x, name)(d)


def _idx(m, shape):
    return m.zeros(shape, dtype=m.int64)


def _src(m, x):
    return m.ones(x.shape, dtype=x.dtype)


# name -> call(m, x, d): m is torch or tga, x a float64 tensor of m, d an axis (or a tuple of axes).
CALLS = {
    **{
        n: _method(n)
        for n in (
            "all any amax amin argmax argmin argsort cumprod cumsum logcumsumexp cummax cummin log_softmax softmax "
            "mean sum std var logsumexp prod max min squeeze unsqueeze unbind sort size stride nansum nanmean "
            "median nanmedian mode count_nonzero".split()
        )
    },
    "cumprod_": lambda m, x, d: x.clone().cumprod_(d),
    "cumsum_": lambda m, x, d: x.clone().cumsum_(d),
    "squeeze_": lambda m, x, d: x.clone().squeeze_(d),
    "unsqueeze_": lambda m, x, d: x.clone().unsqueeze_(d),
    "norm": lambda m, x, d: x.norm(dim=d),
    "flip": lambda m, x, d: x.flip(d if isinstance(d, tuple) else (d,)),
    "topk": lambda m, x, d: x.topk(1, d),
    "kthvalue": lambda m, x, d: x.kthvalue(1, d),
    "chunk": lambda m, x, d: x.chunk(2, d),
    "split": lambda m, x, d: x.split(1, d),
    "tensor_split": lambda m, x, d: x.tensor_split(2, d),
    "select": lambda m, x, d: x.select(d, 0),
    "narrow": lambda m, x, d: x.narrow(d, 0, 1),
    "index_select": lambda m, x, d: x.index_select(d, _idx(m, (1,))),
    "gather": lambda m, x, d: x.gather(d, _idx(m, x.shape)),
    "take_along_dim": lambda m, x, d: x.take_along_dim(_idx(m, x.shape), d),
    "repeat_interleave": lambda m, x, d: x.repeat_interleave(2, dim=d),
    "roll": lambda m, x, d: x.roll(1, d),
    "diagonal": lambda m, x, d: x.diagonal(0, d, -1),
    "diff": lambda m, x, d: x.diff(dim=d),
    "transpose": lambda m, x, d: x.transpose(d, -1),
    "transpose_": lambda m, x, d: x.clone().transpose_(d, -1),
    "swapaxes": lambda m, x, d: x.swapaxes(d, -1),
    "swapaxes_": lambda m, x, d: x.clone().swapaxes_(d, -1),
    "swapdims": lambda m, x, d: x.swapdims(d, -1),
    "swapdims_": lambda m, x, d: x.clone().swapdims_(d, -1),
    "movedim": lambda m, x, d: x.movedim(d, 0),
    "moveaxis": lambda m, x, d: x.moveaxis(d, 0),
    "permute": lambda m, x, d: x.permute(*((d,) * x.ndim if isinstance(d, tuple) else (d, *range(1, x.ndim)))),
    "flatten": lambda m, x, d: x.flatten(d),
    "unflatten": lambda m, x, d: x.unflatten(d, (-1,)),
    "std_mean": lambda m, x, d: m.std_mean(x, d),
    "aminmax": lambda m, x, d: m.aminmax(x, dim=d),
    "quantile": lambda m, x, d: x.quantile(0.5, dim=d),
    "nanquantile": lambda m, x, d: x.nanquantile(0.5, dim=d),
    "unique": lambda m, x, d: m.unique(x, dim=d),
    "unique_consecutive": lambda m, x, d: m.unique_consecutive(x, dim=d),
    "trapezoid": lambda m, x, d: m.trapezoid(x, dim=d),
    "trapz": lambda m, x, d: m.trapz(x, dim=d),
    "cumulative_trapezoid": lambda m, x, d: m.cumulative_trapezoid(x, dim=d),
    "renorm": lambda m, x, d: x.renorm(2, d, 1.0),
    "renorm_": lambda m, x, d: x.clone().renorm_(2, d, 1.0),
    "rot90": lambda m, x, d: x.rot90(1, (d, -1) if not isinstance(d, tuple) else d),
    "split_with_sizes": lambda m, x, d: x.split_with_sizes([1, x.shape[d] - 1] if x.ndim else [1], d),
    "diag_embed": lambda m, x, d: m.diag_embed(x, 0, d, -1),
    "cross": lambda m, x, d: (
        m.cross(m.ones(*x.shape[:-1], 3, dtype=x.dtype), m.ones(*x.shape[:-1], 3, dtype=x.dtype), dim=d)
        if x.ndim
        else m.cross(x, x, dim=d)
    ),
    "F.gumbel_softmax": lambda m, x, d: m.nn.functional.gumbel_softmax(x, dim=d),
    "var_mean": lambda m, x, d: m.var_mean(x, d),
    "cat": lambda m, x, d: m.cat([x, x], d),
    "concat": lambda m, x, d: m.concat([x, x], d),
    "concatenate": lambda m, x, d: m.concatenate([x, x], d),
    "stack": lambda m, x, d: m.stack([x, x], d),
    "cosine_similarity": lambda m, x, d: m.cosine_similarity(x, x, dim=d),
    "F.normalize": lambda m, x, d: m.nn.functional.normalize(x, dim=d),
    "F.glu": lambda m, x, d: m.nn.functional.glu(m.cat([x, x], d) if x.ndim else x, d),
    "F.softmin": lambda m, x, d: m.nn.functional.softmin(x, d),
    "F.softmax": lambda m, x, d: m.nn.functional.softmax(x, d),
    "F.log_softmax": lambda m, x, d: m.nn.functional.log_softmax(x, d),
    "index_add": lambda m, x, d: x.index_add(d, _idx(m, (1,)), x.narrow(d, 0, 1) if x.ndim else x),
    "index_add_": lambda m, x, d: x.clone().index_add_(d, _idx(m, (1,)), x.narrow(d, 0, 1) if x.ndim else x),
    "index_copy": lambda m, x, d: x.index_copy(d, _idx(m, (1,)), x.narrow(d, 0, 1) if x.ndim else x),
    "index_copy_": lambda m, x, d: x.clone().index_copy_(d, _idx(m, (1,)), x.narrow(d, 0, 1) if x.ndim else x),
    "index_fill": lambda m, x, d: x.index_fill(d, _idx(m, (1,)), 0.5),
    "index_fill_": lambda m, x, d: x.clone().index_fill_(d, _idx(m, (1,)), 0.5),
    "scatter": lambda m, x, d: x.scatter(d, _idx(m, x.shape), _src(m, x)),
    "scatter_": lambda m, x, d: x.clone().scatter_(d, _idx(m, x.shape), _src(m, x)),
    "scatter_add": lambda m, x, d: x.scatter_add(d, _idx(m, x.shape), _src(m, x)),
    "scatter_add_": lambda m, x, d: x.clone().scatter_add_(d, _idx(m, x.shape), _src(m, x)),
    "scatter_reduce": lambda m, x, d: x.scatter_reduce(d, _idx(m, x.shape), _src(m, x), "sum"),
    "scatter_reduce_": lambda m, x, d: x.clone().scatter_reduce_(d, _idx(m, x.shape), _src(m, x), "sum"),
}

# (the tensor functions of shape_functions.py, math_functions.py and statistics.py written later)
CALLS.update({
    "diagonal_scatter": lambda m, x, d: m.diagonal_scatter(x, x.diagonal(0, d, -1) * 0, 0, d, -1),
    "select_scatter": lambda m, x, d: x.select_scatter(x.select(d, 0) * 2, d, 0),
    "slice_scatter": lambda m, x, d: x.slice_scatter(x.narrow(d, 0, 1) * 2, d, 0, 1),
    "narrow_copy": lambda m, x, d: x.narrow_copy(d, 0, 1),
    "unsafe_chunk": lambda m, x, d: x.unsafe_chunk(2, d),
    "unsafe_split": lambda m, x, d: x.unsafe_split(1, d),
    "unsafe_split_with_sizes": lambda m, x, d: x.unsafe_split_with_sizes([x.shape[d]], d),
    "index_reduce": lambda m, x, d: x.index_reduce(d, m.zeros(1, dtype=m.int64), x.narrow(d, 0, 1), "amax"),
    "index_reduce_": lambda m, x, d: x.clone().index_reduce_(d, m.zeros(1, dtype=m.int64), x.narrow(d, 0, 1), "prod"),
    "gradient": lambda m, x, d: m.gradient(x, dim=d),
    "hash_tensor": lambda m, x, d: x.hash_tensor(d),
})  # fmt: skip
# (torch's *_copy functions and older norms, tests/tensor/test_torch_namespace.py)
CALLS.update({
    "diagonal_copy": lambda m, x, d: m.diagonal_copy(x, 0, d, -1),
    "permute_copy": lambda m, x, d: m.permute_copy(x, [d, *range(1, x.ndim)]),
    "select_copy": lambda m, x, d: m.select_copy(x, d, 0),
    "slice_copy": lambda m, x, d: m.slice_copy(x, d, 0, 1),
    "split_copy": lambda m, x, d: m.split_copy(x, 1, d),
    "split_with_sizes_copy": lambda m, x, d: m.split_with_sizes_copy(x, [x.shape[d]], d),
    "squeeze_copy": lambda m, x, d: m.squeeze_copy(x, d),
    "transpose_copy": lambda m, x, d: m.transpose_copy(x, d, -1),
    "unbind_copy": lambda m, x, d: m.unbind_copy(x, d),
    "unsqueeze_copy": lambda m, x, d: m.unsqueeze_copy(x, d),
    "frobenius_norm": lambda m, x, d: m.frobenius_norm(x, [d]),
    "nuclear_norm": lambda m, x, d: m.nuclear_norm(x, [d, -1]),
    "norm_except_dim": lambda m, x, d: m.norm_except_dim(x, 2, d),
})  # fmt: skip
# Names whose axis-like parameter is not one axis of the input, each with its reason.
NOT_AN_AXIS = {
    "masked_scatter": "'source' is the tensor the values come from, not movedim's source axis",
    "masked_scatter_": "as masked_scatter",
    "put": "'source' is the tensor the values come from",
    "put_": "as put",
    "set_": "'source' is the tensor whose memory it shows",
    "tensordot": "its dims are how many, or which, axes to contract: a count, or a pair of lists (test_more_ops)",
    "tile": "its dims are the repetition counts per axis, not axes",
}

# Random results: their shapes are compared, not their values.
RANDOM = {"F.gumbel_softmax"}

# Several axes at once (a repeated axis raises): the reductions and shape ops that take a tuple.
TUPLE_AXES = "all any amax amin mean sum std var logsumexp norm flip permute squeeze nansum count_nonzero".split()


def _axis_taking_names() -> set[str]:
    from torch.overrides import get_testing_overrides

    names = set()
    for fn, sig_of in get_testing_overrides().items():
        name = getattr(fn, "__name__", None)
        try:
            params = set(inspect.signature(sig_of).parameters)
        except (TypeError, ValueError):
            continue
        if not name or name.startswith("_") or not params & AXIS_PARAMETERS:
            continue
        if fn is getattr(torch.Tensor, name, None) and hasattr(tga.Tensor, name):
            names.add(name)
        elif fn is getattr(torch, name, None) and hasattr(tga, name):
            names.add(name)
        elif fn is getattr(torch.nn.functional, name, None) and hasattr(tga.nn.functional, name):
            names.add("F." + name)
    for name in dir(tga.Tensor):
        fn = getattr(tga.Tensor, name, None)
        if name.startswith("_") or not callable(fn) or not hasattr(torch.Tensor, name):
            continue
        try:
            if set(inspect.signature(fn).parameters) & AXIS_PARAMETERS:
                names.add(name)
        except (TypeError, ValueError):
            continue
    return names


def test_every_axis_taking_name_is_checked():
    unchecked = sorted(_axis_taking_names() - set(CALLS) - set(NOT_AN_AXIS))
    assert not unchecked, f"axis-taking names with no call in CALLS (add one, or a reason in NOT_AN_AXIS): {unchecked}"


def _shapes(out) -> object:
    if isinstance(out, (tuple, list)):
        return tuple(_shapes(o) for o in out)
    if isinstance(out, (int, torch.Size)) or (isinstance(out, tuple) and all(isinstance(s, int) for s in out)):
        return tuple(out) if not isinstance(out, int) else out
    return tuple(out.shape)


def _run(call, m, x, d):
    try:
        return call(m, x, d), None
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return None, e


def _ours_has(name: str) -> bool:
    """Whether the call's name exists here (the inventory test counts the ones that do not)."""
    if name.startswith("F."):
        return hasattr(tga.nn.functional, name[2:])
    return hasattr(tga.Tensor, name) or hasattr(tga, name)


def _cases():
    for name in sorted(n for n in CALLS if _ours_has(n)):
        for shape in [(), (3,), (2, 3, 4)]:
            nd = len(shape)
            axes = list(range(-nd - 2, nd + 2)) if nd else [-2, -1, 0, 1]
            for d in axes:
                yield name, shape, d
            if name in TUPLE_AXES and nd:
                yield name, shape, (0, 0)
                yield name, shape, (0, -nd)
                yield name, shape, (0, nd)


@pytest.mark.parametrize("name, shape, d", list(_cases()))
def test_axis_rules_are_pytorchs(name, shape, d):
    a = np.arange(1.0, 1.0 + int(np.prod(shape))).reshape(shape)
    call = CALLS[name]
    with warnings.catch_warnings():  # (var of one element: PyTorch's warning, and ours)
        warnings.simplefilter("ignore", UserWarning)
        theirs, their_error = _run(call, torch, torch.tensor(a), d)
        ours, our_error = _run(call, tga, tga.tensor(a), d)
    if their_error is not None:
        assert our_error is not None, f"{name}{shape} axis {d}: PyTorch raises {their_error!r}, we return"
        assert isinstance(our_error, type(their_error)), (
            f"{name}{shape} axis {d}: PyTorch raises {type(their_error).__name__} ({their_error}), "
            f"we raise {type(our_error).__name__} ({our_error})"
        )
        return
    assert our_error is None, f"{name}{shape} axis {d}: PyTorch runs, we raise {our_error!r}"
    assert _shapes(ours) == _shapes(theirs), f"{name}{shape} axis {d}"
    if name in RANDOM:
        return
    for o, t in zip(_leaves(ours), _leaves(theirs)):
        np.testing.assert_allclose(
            np.asarray(o.tolist(), dtype=float), t.double().detach().numpy(), err_msg=f"{name}{shape} axis {d}"
        )


def _leaves(out) -> list:
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in _leaves(o)]
    return [out] if hasattr(out, "shape") and not isinstance(out, torch.Size) and hasattr(out, "tolist") else []
