"""OpInfo entries of PyTorch's remaining ``torch.nn.functional`` functions (3-d convolution and
pooling, adaptive and power-average pooling, normalisation, shape rearrangements, losses),
appended to ``opinfo.OPS`` by ``tests/opinfo.py``; the format is the one described there."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from opinfo import (
    AWAY_FROM_ZERO,
    POSITIVE,
    TF,
    OpInfo,
    Sample,
    _with,
    array,
    conv_transposes,
    convs,
    max_unpools,
    pools,
    shapes,
    unary,
)

import tinygrad_attn.functional as F


def _call(name: str, pick: int | None = None) -> tuple[Any, Any]:
    """Ours and PyTorch's ``F.<name>`` called alike (``pick``: one element of a returned tuple)."""

    def ours(*a: Any, **kw: Any) -> Any:
        out = getattr(F, name)(*a, **kw)
        return out if pick is None else out[pick]

    def theirs(*a: Any, **kw: Any) -> Any:
        out = getattr(TF, name)(*a, **kw)
        return out if pick is None else out[pick]

    return ours, theirs


# -- 3-d convolution and pooling, adaptive and power-average pooling --------------------------
@st.composite
def pools_nd(draw: Any, nd: int, ceil: bool = True) -> Sample:
    s = draw(pools(nd))
    kw = dict(s.kwargs)
    if ceil:
        kw["ceil_mode"] = draw(st.booleans())
    return Sample(s.args, kw)


@st.composite
def avg_pools_nd(draw: Any, nd: int) -> Sample:
    # (PyTorch's avg_pool3d refuses a side shorter than the kernel, padding or not)
    s = draw(pools(nd, dilation=False).filter(lambda s: nd < 3 or min(s.args[0].shape[2:]) >= s.kwargs["kernel_size"]))
    kw = dict(s.kwargs, count_include_pad=draw(st.booleans()), ceil_mode=draw(st.booleans()))
    if nd > 1:
        kw["divisor_override"] = draw(st.sampled_from([None, 3]))
    return Sample(s.args, kw)


@st.composite
def adaptive_nd(draw: Any, nd: int, indices: bool = False) -> Sample:
    spatial = tuple(draw(st.integers(1, 5)) for _ in range(nd))
    size = tuple(draw(st.sampled_from([None, *range(1, n + 1)])) if nd > 1 else draw(st.integers(1, n + 1))
                 for n in spatial)  # fmt: skip
    size = size[0] if nd == 1 and draw(st.booleans()) else size
    if nd == 1 and isinstance(size, tuple) and size[0] > spatial[0]:
        size = (spatial[0],)
    lead = (draw(st.integers(1, 2)), 2)[draw(st.integers(0, 1)) :]  # batched or not
    kw: dict[str, Any] = {"output_size": size}
    if indices:
        kw["return_indices"] = False
    return Sample((draw(array(lead + spatial)),), kw)


@st.composite
def lp_pools(draw: Any, nd: int) -> Sample:
    kernel = draw(st.integers(1, 3))
    spatial = tuple(draw(st.integers(kernel, 5)) for _ in range(nd))
    p = draw(st.sampled_from([1.0, 2.0, 3.0]))
    x = draw(array((draw(st.integers(1, 2)), 2) + spatial, AWAY_FROM_ZERO))
    kw = {"norm_type": p, "kernel_size": kernel, "stride": draw(st.sampled_from([None, 1, 2])),
          "ceil_mode": draw(st.booleans())}  # fmt: skip
    return Sample((np.abs(x) if p != 2.0 else x,), kw)  # (odd powers of negative sums have no real root)


POOLING = [
    OpInfo("conv3d", *_call("conv3d"), convs(3), ("conv3d",), composite=True, extremes=False),
    OpInfo("conv_transpose3d", *_call("conv_transpose3d"), conv_transposes(3), ("conv_transpose3d",),
           extremes=False),
    OpInfo("max_pool3d", *_call("max_pool3d"), pools_nd(3), ("max_pool3d",), composite=True, extremes=False),
    OpInfo("max_pool_with_indices", lambda x, **kw: F.max_pool3d_with_indices(x, **kw)[1],
           lambda x, **kw: TF.max_pool3d_with_indices(x, **kw)[1], pools_nd(3, ceil=False),
           ("max_pool3d_with_indices",), grad=False, extremes=False),
    OpInfo("max_pool1d_with_indices", *_call("max_pool1d_with_indices", 1), pools_nd(1, ceil=False),
           ("max_pool1d_with_indices",), grad=False, extremes=False),
    OpInfo("max_pool2d_with_indices", *_call("max_pool2d_with_indices", 0), pools_nd(2, ceil=False),
           ("max_pool2d_with_indices",), extremes=False),
    OpInfo("avg_pool1d", *_call("avg_pool1d"), avg_pools_nd(1), ("avg_pool1d",), composite=True, extremes=False),
    OpInfo("avg_pool3d", *_call("avg_pool3d"), avg_pools_nd(3), ("avg_pool3d",), composite=True, extremes=False),
    OpInfo("max_unpool3d", *_call("max_unpool3d"), max_unpools(3), ("max_unpool3d",), extremes=False, grad_args=1),
    OpInfo("adaptive_avg_pool1d", *_call("adaptive_avg_pool1d"), adaptive_nd(1), ("adaptive_avg_pool1d",),
           composite=True, extremes=False),
    OpInfo("adaptive_avg_pool3d", *_call("adaptive_avg_pool3d"), adaptive_nd(3), ("adaptive_avg_pool3d",),
           composite=True, extremes=False),
    *[OpInfo(f"adaptive_max_pool{nd}d", *_call(f"adaptive_max_pool{nd}d"), adaptive_nd(nd, True),
             (f"adaptive_max_pool{nd}d",), composite=True, extremes=False) for nd in (1, 2, 3)],
    *[OpInfo(f"adaptive_max_pool{nd}d_with_indices", *_call(f"adaptive_max_pool{nd}d_with_indices", 1),
             adaptive_nd(nd), (f"adaptive_max_pool{nd}d_with_indices",), grad=False, extremes=False)
      for nd in (1, 2, 3)],
    *[OpInfo(f"lp_pool{nd}d", *_call(f"lp_pool{nd}d"), lp_pools(nd), (f"lp_pool{nd}d",), composite=True,
             extremes=False) for nd in (1, 2, 3)],
]  # fmt: skip


# -- normalisation ---------------------------------------------------------------------------
@st.composite
def group_norms(draw: Any) -> Sample:
    groups, per = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    c = groups * per
    shape = (draw(st.integers(1, 2)), c) + tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2))))
    args: tuple = (draw(array(shape)),)
    if draw(st.booleans()):
        args += (draw(array((c,))), draw(array((c,))))
    if shape[0] * per * int(np.prod(shape[2:])) == 1:  # (PyTorch refuses it: a batch of one value)
        shape = (2,) + shape[1:]
    x = draw(array(shape))
    args = (x,) + args[1:]
    return Sample(args, {"num_groups": groups, "eps": draw(st.sampled_from([1e-5, 0.1]))})


def _group_norm(lib: Any) -> Any:
    def call(x: Any, w: Any = None, b: Any = None, **kw: Any) -> Any:
        return lib.group_norm(x, kw.pop("num_groups"), w, b, **kw)

    return call


@st.composite
def instance_norms(draw: Any) -> Sample:
    c = draw(st.integers(1, 3))
    spatial = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 2))))
    spatial = spatial[:-1] + (spatial[-1] + 1,)  # (more than one position per instance)
    args = (draw(array((draw(st.integers(1, 2)), c) + spatial)), draw(array((c,))), draw(array((c,))))
    kw = {"use_input_stats": draw(st.booleans()), "eps": draw(st.sampled_from([1e-5, 0.1]))}
    if not kw["use_input_stats"]:
        args += (draw(array((c,))), draw(array((c,), POSITIVE)))
    return Sample(args, kw)


def _instance_norm(lib: Any) -> Any:
    def call(x: Any, w: Any, b: Any, rm: Any = None, rv: Any = None, **kw: Any) -> Any:
        return lib.instance_norm(x, rm, rv, w, b, **kw)

    return call


@st.composite
def local_response_norms(draw: Any) -> Sample:
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 5))) + tuple(
        draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 2)))
    )
    kw = {"size": draw(st.integers(1, 4)), "alpha": draw(st.sampled_from([1e-4, 0.5])),
          "beta": draw(st.sampled_from([0.75, 1.5])), "k": draw(st.sampled_from([1.0, 2.0]))}  # fmt: skip
    return Sample((draw(array(shape)),), kw)


NORMS = [
    OpInfo("group_norm", _group_norm(F), _group_norm(TF), group_norms(), ("group_norm",), composite=True,
           extremes=False),
    OpInfo("instance_norm", _instance_norm(F), _instance_norm(TF), instance_norms(), ("instance_norm",),
           composite=True, extremes=False, grad_args=3),
    OpInfo("local_response_norm", *_call("local_response_norm"), local_response_norms(), ("local_response_norm",),
           composite=True, extremes=False),
]  # fmt: skip


# -- activations -------------------------------------------------------------------------------
@st.composite
def prelus(draw: Any) -> Sample:
    shape = draw(shapes(min_dims=0, max_dims=4, min_side=1))
    per_channel = len(shape) >= 2 and draw(st.booleans())
    c = shape[1] if per_channel else 1
    w = draw(array((c,) if per_channel or draw(st.booleans()) else ()))
    # (inputs away from the kink at 0, where PyTorch's second derivative takes another side than its first)
    return Sample((draw(array(shape, AWAY_FROM_ZERO)), w), {})


def _in_place(name: str, **kw: Any) -> tuple[Any, Any]:
    """``F.<name>`` on a copy of the input (a leaf that requires grad cannot change in place)."""
    return (lambda x: getattr(F, name)(x * 1.0, **kw)), (lambda x: getattr(TF, name)(x * 1.0, **kw))


ACTIVATIONS = [
    OpInfo("hardshrink", lambda x, **kw: F.hardshrink(x, **kw), lambda x, **kw: TF.hardshrink(x, **kw),
           _with(unary(), lambd=st.sampled_from([0.5, 0.0, 1.0])), ("hardshrink",), composite=True),
    OpInfo("softshrink", lambda x, **kw: F.softshrink(x, **kw), lambda x, **kw: TF.softshrink(x, **kw),
           _with(unary(), lambd=st.sampled_from([0.5, 0.0, 1.0])), ("softshrink",), composite=True),
    OpInfo("tanhshrink", *_call("tanhshrink"), unary(), ("tanhshrink",), composite=True),
    OpInfo("prelu", *_call("prelu"), prelus(), ("prelu",), composite=True),
    OpInfo("rrelu_eval", lambda x, **kw: F.rrelu(x, **kw), lambda x, **kw: TF.rrelu(x, **kw),
           _with(unary(), lower=st.sampled_from([0.125, 0.0]), upper=st.sampled_from([1 / 3, 0.5])),
           ("rrelu",), composite=True),
    OpInfo("rrelu_", *_in_place("rrelu_"), unary(), ("rrelu_",)),
    OpInfo("relu_", *_in_place("relu_"), unary(), ("relu_",)),
    OpInfo("elu_", *_in_place("elu_", alpha=0.7), unary(AWAY_FROM_ZERO), ("elu_",)),
    OpInfo("celu_", *_in_place("celu_", alpha=0.7), unary(AWAY_FROM_ZERO), ("celu_",)),
    OpInfo("selu_", *_in_place("selu_"), unary(AWAY_FROM_ZERO), ("selu_",)),
    OpInfo("leaky_relu_", *_in_place("leaky_relu_", negative_slope=0.2), unary(), ("leaky_relu_",)),
    OpInfo("hardtanh_", *_in_place("hardtanh_", min_val=-0.5, max_val=2.0), unary(AWAY_FROM_ZERO), ("hardtanh_",)),
    OpInfo("threshold_", *_in_place("threshold_", threshold=0.1, value=-2.0), unary(AWAY_FROM_ZERO),
           ("threshold_",)),
]  # fmt: skip
# (elu_, celu_, selu_ away from their kink at 0, where the second derivative is a convention)


# -- rearrangements ----------------------------------------------------------------------------
@st.composite
def shuffles(draw: Any, unshuffle: bool) -> Sample:
    r = draw(st.integers(1, 3))
    lead = tuple(draw(st.integers(1, 2)) for _ in range(draw(st.integers(0, 2))))
    c, h, w = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    shape = lead + ((c, h * r, w * r) if unshuffle else (c * r * r, h, w))
    return Sample((draw(array(shape)),), {"downscale_factor" if unshuffle else "upscale_factor": r})


@st.composite
def channel_shuffles(draw: Any) -> Sample:
    g, per = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    rest = tuple(draw(st.integers(1, 2)) for _ in range(draw(st.integers(1, 2))))
    return Sample((draw(array((draw(st.integers(1, 2)), g * per) + rest)),), {"groups": g})


@st.composite
def block_args(draw: Any) -> tuple[dict, tuple[int, int], tuple[int, int]]:
    """Keyword arguments of unfold/fold, an image size they fit, and its number of blocks per side."""
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 2)))
    d = (draw(st.integers(1, 2)), 1)
    p = (draw(st.integers(0, 1)), 0)
    s = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    size = tuple(dd * (kk - 1) + 1 - 2 * pp + draw(st.integers(0, 3)) for kk, dd, pp in zip(k, d, p))
    size = tuple(max(n, 1) for n in size)
    out = tuple((n + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for n, kk, dd, pp, ss in zip(size, k, d, p, s))
    kw = {"kernel_size": k, "dilation": d, "padding": p, "stride": s}
    return kw, size, out


@st.composite
def unfolds(draw: Any) -> Sample:
    kw, size, _ = draw(block_args())
    lead = (draw(st.integers(1, 2)),)[: draw(st.integers(0, 1))]  # batched or not
    return Sample((draw(array(lead + (draw(st.integers(1, 2)),) + size)),), kw)


@st.composite
def folds(draw: Any) -> Sample:
    kw, size, out = draw(block_args())
    lead = (draw(st.integers(1, 2)),)[: draw(st.integers(0, 1))]
    cols = (draw(st.integers(1, 2)) * kw["kernel_size"][0] * kw["kernel_size"][1], out[0] * out[1])
    return Sample((draw(array(lead + cols)),), dict(kw, output_size=size))


REARRANGE = [
    OpInfo("pixel_shuffle", *_call("pixel_shuffle"), shuffles(False), ("pixel_shuffle",)),
    OpInfo("pixel_unshuffle", *_call("pixel_unshuffle"), shuffles(True), ("pixel_unshuffle",)),
    OpInfo("channel_shuffle", *_call("channel_shuffle"), channel_shuffles(), ("channel_shuffle",)),
    OpInfo("native_channel_shuffle", *_call("native_channel_shuffle"), channel_shuffles(),
           ("native_channel_shuffle",), grad=False),
    OpInfo("F.unfold", *_call("unfold"), unfolds(), ("unfold",), extremes=False),
    OpInfo("F.fold", *_call("fold"), folds(), ("fold",), extremes=False),
]  # fmt: skip
# (native_channel_shuffle: PyTorch's has no derivative; ours is channel_shuffle's)
# (unfold and fold without extremes: PyTorch sums overlapping blocks in another order, inf - inf differs)

NN_FUNCTIONAL = POOLING + NORMS + ACTIVATIONS + REARRANGE
