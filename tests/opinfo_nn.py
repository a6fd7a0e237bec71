"""OpInfo entries of PyTorch's remaining ``torch.nn.functional`` functions (3-d convolution and
pooling, adaptive and power-average pooling, normalisation, shape rearrangements, losses),
appended to ``opinfo.OPS`` by ``tests/opinfo.py``; the format is the one described there."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from opinfo import (
    AWAY_FROM_ZERO,
    POSITIVE,
    TF,
    VALUES,
    OpInfo,
    Sample,
    _with,
    array,
    conv_transposes,
    convs,
    max_unpools,
    pools,
    shapes,
    torch,
    unary,
)

import tinygrad_attn as tga
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
    """``F.<name>`` on a copy of the input (a leaf that requires grad cannot change in place),
    its result copied: what an in-place activation keeps is the in-place mechanism's (shared
    with ``inplace=True``), not this entry's, so the in-place parity test sees the copies."""
    return (lambda x: getattr(F, name)(x * 1.0, **kw) * 1.0), (lambda x: getattr(TF, name)(x * 1.0, **kw) * 1.0)


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

# -- margin, ranking and likelihood losses -------------------------------------------------------
REDUCTIONS = st.sampled_from(["mean", "sum", "none"])


def _signs(shape: tuple) -> st.SearchStrategy:
    return hnp.arrays(np.float64, shape, elements=st.sampled_from([1.0, -1.0]))


@st.composite
def ranking_pairs(draw: Any) -> Sample:
    shape = draw(shapes(min_dims=1, max_dims=2, min_side=1))
    args = (draw(array(shape)), draw(array(shape)), draw(_signs(shape)))
    return Sample(args, {"margin": draw(st.sampled_from([0.0, 0.5])), "reduction": draw(REDUCTIONS)})


@st.composite
def signed_targets(draw: Any, margin: bool) -> Sample:
    shape = draw(shapes(min_dims=1, max_dims=3, min_side=1))
    kw = {"reduction": draw(REDUCTIONS)}
    if margin:
        kw["margin"] = draw(st.sampled_from([1.0, 0.3]))
    return Sample((draw(array(shape)), draw(_signs(shape))), kw)


@st.composite
def multilabel_soft(draw: Any) -> Sample:
    n, c = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    target = draw(hnp.arrays(np.float64, (n, c), elements=st.sampled_from([0.0, 1.0])))
    args = (draw(array((n, c))), target)
    if draw(st.booleans()):
        args += (draw(array((c,), POSITIVE)),)
    return Sample(args, {"reduction": draw(REDUCTIONS)})


@st.composite
def multi_margins(draw: Any) -> Sample:
    c = draw(st.integers(1, 4))
    lead = (draw(st.integers(1, 3)),)[: draw(st.integers(0, 1))]
    target = draw(hnp.arrays(np.int64, lead, elements=st.integers(0, c - 1)))
    args = (draw(array(lead + (c,))), target)
    if draw(st.booleans()):
        args += (draw(array((c,), POSITIVE)),)
    kw = {"p": draw(st.sampled_from([1, 2])), "margin": draw(st.sampled_from([1.0, 0.4])),
          "reduction": draw(REDUCTIONS)}  # fmt: skip
    return Sample(args, kw)


def _multi_margin(lib: Any) -> Any:
    def call(x: Any, t: Any, w: Any = None, **kw: Any) -> Any:
        return lib.multi_margin_loss(x, t, weight=w, **kw)

    return call


@st.composite
def multilabel_margins(draw: Any) -> Sample:
    c = draw(st.integers(1, 4))
    lead = (draw(st.integers(1, 3)),)[: draw(st.integers(0, 1))]
    rows = []
    for _ in range(lead[0] if lead else 1):
        labels = draw(st.lists(st.integers(0, c - 1), max_size=c))
        row = labels + [-1] * (c - len(labels))
        if len(labels) < c - 1 and draw(st.booleans()):  # (what follows the first -1 is not read)
            row[-1] = draw(st.integers(0, c - 1))
        rows.append(row)
    target = np.array(rows, np.int64).reshape(lead + (c,))
    return Sample((draw(array(lead + (c,))), target), {"reduction": draw(REDUCTIONS)})


@st.composite
def triplets(draw: Any, with_distance: bool) -> Sample:
    shape = draw(st.sampled_from([(3,), (2, 3), (4, 2)]))
    args = tuple(draw(array(shape, AWAY_FROM_ZERO)) for _ in range(3))
    kw: dict[str, Any] = {"margin": draw(st.sampled_from([1.0, 0.3])), "swap": draw(st.booleans()),
                          "reduction": draw(REDUCTIONS)}  # fmt: skip
    if with_distance:
        kw["cosine"] = draw(st.booleans())
    else:
        kw.update(p=draw(st.sampled_from([2.0, 1.0, 3.0])), eps=draw(st.sampled_from([1e-6, 0.0])))
    return Sample(args, kw)


def _triplet_with_distance(lib: Any) -> Any:
    def call(a: Any, p: Any, n: Any, cosine: bool, **kw: Any) -> Any:
        dist = (lambda u, v: 1.0 - lib.cosine_similarity(u, v, dim=-1)) if cosine else None
        return lib.triplet_margin_with_distance_loss(a, p, n, distance_function=dist, **kw)

    return call


@st.composite
def poisson_pairs(draw: Any) -> Sample:
    shape = draw(shapes(min_dims=1, max_dims=2, min_side=1))
    log_input = draw(st.booleans())
    x = draw(array(shape, VALUES if log_input else POSITIVE))
    target = draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([0.0, 1.0, 2.0, 5.0])))
    kw = {"log_input": log_input, "full": draw(st.booleans()), "reduction": draw(REDUCTIONS)}
    return Sample((x, target), kw)


@st.composite
def gaussian_triples(draw: Any) -> Sample:
    shape = draw(shapes(min_dims=1, max_dims=3, min_side=1))
    var_shape = draw(st.sampled_from([shape, shape[:-1], shape[:-1] + (1,)]))
    args = (draw(array(shape)), draw(array(shape)), draw(array(var_shape, POSITIVE)))
    kw = {"full": draw(st.booleans()), "eps": draw(st.sampled_from([1e-6, 0.5])), "reduction": draw(REDUCTIONS)}
    return Sample(args, kw)


@st.composite
def ctc_samples(draw: Any) -> Sample:
    """Log-softmax outputs ``(T, N, C)`` (or ``(T, C)``), padded or concatenated targets that
    avoid the blank, and lengths that leave every alignment possible or (zero_infinity) not."""
    t_max, n, c = draw(st.integers(1, 6)), draw(st.integers(1, 3)), draw(st.integers(2, 4))
    blank = draw(st.sampled_from([0, c - 1]))
    unbatched = n == 1 and draw(st.booleans())
    logits = draw(array((t_max, n, c)))
    lp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    labels = [lab for lab in range(c) if lab != blank]
    s_max = draw(st.integers(0, 3))
    targets = draw(hnp.arrays(np.int64, (n, max(s_max, 1)), elements=st.sampled_from(labels)))
    tl = draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, s_max)))
    il = draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, t_max)))
    zero_infinity = draw(st.booleans())
    if not zero_infinity:  # (enough frames for each target and its repeats: an impossible one costs inf)
        need = [int(tl[i]) + int(np.sum(np.diff(targets[i, : tl[i]]) == 0)) for i in range(n)]
        il = np.array([max(int(v), k) for v, k in zip(il, need)], np.int64)
        if max(il) > t_max:
            il = np.minimum(il, t_max)
            tl = np.zeros(n, np.int64)
    if unbatched:
        return Sample((lp[:, 0], targets[0, : tl[0]], np.array(il[0]), np.array(tl[0])), {"blank": blank, "reduction": draw(REDUCTIONS),
                                                             "zero_infinity": zero_infinity})  # fmt: skip
    if draw(st.booleans()):  # concatenated targets
        targets = np.concatenate([targets[i, : tl[i]] for i in range(n)]).astype(np.int64)
    kw = {"blank": blank, "reduction": draw(REDUCTIONS), "zero_infinity": zero_infinity}
    return Sample((lp, targets, il, tl), kw)


LOSSES = [
    OpInfo("margin_ranking_loss", *_call("margin_ranking_loss"), ranking_pairs(), ("margin_ranking_loss",),
           composite=True, extremes=False, grad_args=2),
    OpInfo("hinge_embedding_loss", *_call("hinge_embedding_loss"), signed_targets(True), ("hinge_embedding_loss",),
           composite=True, extremes=False, grad_args=1),
    OpInfo("soft_margin_loss", *_call("soft_margin_loss"), signed_targets(False), ("soft_margin_loss",),
           composite=True, extremes=False, grad_args=1),
    OpInfo("multilabel_soft_margin_loss", *_call("multilabel_soft_margin_loss"), multilabel_soft(),
           ("multilabel_soft_margin_loss",), composite=True, extremes=False, grad_args=1),
    OpInfo("multi_margin_loss", _multi_margin(F), _multi_margin(TF), multi_margins(), ("multi_margin_loss",),
           composite=True, extremes=False, grad_args=1, gradgrad=False),
    OpInfo("multilabel_margin_loss", *_call("multilabel_margin_loss"), multilabel_margins(),
           ("multilabel_margin_loss",), composite=True, extremes=False, gradgrad=False),
    OpInfo("triplet_margin_loss", *_call("triplet_margin_loss"), triplets(False), ("triplet_margin_loss",),
           composite=True, extremes=False),
    OpInfo("triplet_margin_with_distance_loss", _triplet_with_distance(F), _triplet_with_distance(TF),
           triplets(True), ("triplet_margin_with_distance_loss",), extremes=False),
    OpInfo("poisson_nll_loss", *_call("poisson_nll_loss"), poisson_pairs(), ("poisson_nll_loss",), composite=True,
           extremes=False, grad_args=1),
    OpInfo("gaussian_nll_loss", *_call("gaussian_nll_loss"), gaussian_triples(), ("gaussian_nll_loss",),
           composite=True, extremes=False),
    OpInfo("ctc_loss", *_call("ctc_loss"), ctc_samples(), ("ctc_loss",), composite=True, extremes=False,
           grad_args=1, gradgrad=False),
]  # fmt: skip
# (ctc_loss, multi_margin_loss, multilabel_margin_loss: PyTorch's have no second derivative)


# -- dropouts: deterministic where PyTorch's is (eval mode, p = 0 or 1); their random masks are
# tested in tests/nn/test_more_modules.py
@st.composite
def dropouts(draw: Any, ranks: tuple[int, ...]) -> Sample:
    shape = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.sampled_from(ranks))))
    training = draw(st.booleans())
    p = draw(st.sampled_from([0.0, 1.0] if training else [0.0, 0.3, 1.0]))
    return Sample((draw(array(shape)),), {"p": p, "training": training})


DROPOUTS = [
    OpInfo("dropout1d", *_call("dropout1d"), dropouts((2, 3)), ("dropout1d",)),
    OpInfo("dropout2d", *_call("dropout2d"), dropouts((3, 4)), ("dropout2d",)),
    OpInfo("dropout3d", *_call("dropout3d"), dropouts((4, 5)), ("dropout3d",)),
    OpInfo("alpha_dropout", *_call("alpha_dropout"), dropouts((1, 2, 3)), ("alpha_dropout",)),
    OpInfo("feature_alpha_dropout", *_call("feature_alpha_dropout"), dropouts((2, 3, 4)), ("feature_alpha_dropout",)),
]


# -- embedding bags ----------------------------------------------------------------------------
@st.composite
def embedding_bags(draw: Any) -> Sample:
    """A table, ids in rows (2-D) or runs (1-D with offsets, empty bags among them), maybe
    per-sample weights (mode "sum"), a padding index; the arrays in that order."""
    num, dim = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    mode = draw(st.sampled_from(["sum", "mean", "max"]))
    kw: dict[str, Any] = {"mode": mode, "padding_idx": draw(st.sampled_from([None, 0, -1]))}
    if draw(st.booleans()):
        ids = draw(
            hnp.arrays(np.int64, (draw(st.integers(1, 3)), draw(st.integers(1, 3))), elements=st.integers(0, num - 1))
        )
        offsets = None
    else:
        ids = draw(hnp.arrays(np.int64, (draw(st.integers(1, 6)),), elements=st.integers(0, num - 1)))
        cuts = sorted(draw(st.lists(st.integers(0, ids.size), min_size=0, max_size=3)))
        offsets = np.array([0, *cuts], np.int64)
    args: tuple = (draw(array((num, dim))), ids) + (() if offsets is None else (offsets,))
    if mode == "sum" and draw(st.booleans()):
        kw["weighted"] = True
        args += (draw(array(ids.shape)),)
    return Sample(args, kw)


def _embedding_bag(lib: Any) -> Any:
    def call(w: Any, ids: Any, *rest: Any, weighted: bool = False, **kw: Any) -> Any:
        psw = rest[-1] if weighted else None
        offsets = rest[0] if len(rest) > int(weighted) else None
        return lib.embedding_bag(ids, w, offsets, per_sample_weights=psw, **kw)

    return call


BAGS = [
    OpInfo("embedding_bag", _embedding_bag(F), _embedding_bag(TF), embedding_bags(), ("embedding_bag",),
           composite=True, extremes=False, gradgrad=False),
]  # fmt: skip
# (embedding_bag: PyTorch's has no second derivative for the max mode, and its others are linear)


# -- the deprecated spellings of interpolate (their warnings silenced: the values are compared)
@st.composite
def upsamples(draw: Any, nd: int | None) -> Sample:
    nd = nd or draw(st.integers(1, 2))
    x = draw(array((draw(st.integers(1, 2)), 2) + tuple(draw(st.integers(2, 3)) for _ in range(nd))))
    if draw(st.booleans()):
        return Sample((x,), {"size": tuple(draw(st.integers(1, 4)) for _ in range(nd))})
    return Sample((x,), {"scale_factor": draw(st.sampled_from([2.0, 1.5]))})


def _quiet(lib: Any, name: str) -> Any:
    def call(*a: Any, **kw: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return getattr(lib, name)(*a, **kw)

    return call


UPSAMPLES = [
    OpInfo("upsample", _quiet(F, "upsample"), _quiet(TF, "upsample"), upsamples(None), ("upsample",), extremes=False),
    OpInfo("upsample_nearest", _quiet(F, "upsample_nearest"), _quiet(TF, "upsample_nearest"), upsamples(None),
           ("upsample_nearest",), extremes=False),
    OpInfo("upsample_bilinear", _quiet(F, "upsample_bilinear"), _quiet(TF, "upsample_bilinear"), upsamples(2),
           ("upsample_bilinear",), extremes=False),
]  # fmt: skip


@st.composite
def affine_grids(draw: Any) -> Sample:
    nd, n = draw(st.integers(2, 3)), draw(st.integers(1, 2))
    size = (n, 1) + tuple(draw(st.integers(1, 3)) for _ in range(nd))
    return Sample((draw(array((n, nd, nd + 1))),), {"size": size, "align_corners": draw(st.booleans())})


@st.composite
def grid_samples(draw: Any) -> Sample:
    n, c, h, w = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    out = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    grid = draw(array((n, *out, 2), st.floats(-1.3, 1.3)))
    kw = {"mode": draw(st.sampled_from(["bilinear", "nearest"])),
          "padding_mode": draw(st.sampled_from(["zeros", "border", "reflection"])),
          "align_corners": draw(st.booleans())}  # fmt: skip
    return Sample((draw(array((n, c, h, w))), grid), kw)


GRIDS = [
    OpInfo("affine_grid", *_call("affine_grid"), affine_grids(), ("affine_grid",), extremes=False),
    OpInfo("grid_sample", *_call("grid_sample"), grid_samples(), ("grid_sample",), extremes=False, gradgrad=False),
]
# (grid_sample: PyTorch's has no second derivative)

# gumbel_softmax draws noise: compared through what does not depend on the draw (each sample sums to
# 1, so its gradient is 0); its distribution is tested in tests/nn/test_more_modules.py
GUMBEL = [
    OpInfo("gumbel_softmax", lambda x, **kw: F.gumbel_softmax(x, **kw).sum(-1),
           lambda x, **kw: TF.gumbel_softmax(x, **kw).sum(-1),
           _with(unary(min_dims=1, min_side=1), tau=st.sampled_from([1.0, 0.5]), hard=st.booleans()), ("gumbel_softmax",),
           extremes=False, atol=1e-12),
]  # fmt: skip

NN_FUNCTIONAL = POOLING + NORMS + ACTIVATIONS + REARRANGE + LOSSES + DROPOUTS + BAGS + UPSAMPLES + GRIDS + GUMBEL


# -- fractional pooling (placements given), pdist, conv_tbc, linear_cross_entropy, functional MHA -----
@st.composite
def fractional_pools(draw: Any, nd: int) -> Sample:
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    k = draw(st.integers(1, 2))
    side = draw(st.integers(k + (nd == 3), 4))
    out = draw(st.integers(1, side - k + 1 - (nd == 3)))  # (PyTorch's 3-d windows may not end at the input's end)
    x = draw(array((n, c) + (side,) * nd))
    u = draw(array((n, c, nd), st.floats(0.0, 0.99)))
    return Sample((x, u), {"kernel_size": k, "output_size": out})


@st.composite
def pdists(draw: Any) -> Sample:
    x = draw(array((draw(st.integers(2, 4)), draw(st.integers(1, 3)))))  # (PyTorch's backward crashes on < 2 rows)
    return Sample((x,), {"p": draw(st.sampled_from([1.0, 1.5, 2.0, 3.0]))})


@st.composite
def conv_tbcs(draw: Any) -> Sample:
    t, b, c, o, pad = (draw(st.integers(1, 4)), draw(st.integers(1, 2)), draw(st.integers(1, 2)),
                       draw(st.integers(1, 2)), draw(st.integers(0, 1)))  # fmt: skip
    k = draw(st.integers(1, t + 2 * pad))
    return Sample((draw(array((t, b, c))), draw(array((k, c, o))), draw(array((o,)))), {"pad": pad})


@st.composite
def linear_cross_entropies(draw: Any) -> Sample:
    n, f, c = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(2, 4))
    target = np.asarray(draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)), dtype=np.int64)
    kw = {"reduction": draw(st.sampled_from(["mean", "sum", "none"])),
          "label_smoothing": draw(st.sampled_from([0.0, 0.1]))}  # fmt: skip
    return Sample((draw(array((n, f))), draw(array((c, f))), target), kw)


@st.composite
def mha_forwards(draw: Any) -> Sample:
    heads = draw(st.integers(1, 2))
    e, n, tq, tk = 2 * heads, draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    arrays = (array((tq, n, e)), array((tk, n, e)), array((tk, n, e)), array((3 * e, e)), array((3 * e,)),
              array((e, e)), array((e,)))  # fmt: skip
    return Sample(tuple(draw(a) for a in arrays), {"num_heads": heads, "need_weights": draw(st.booleans())})


def _mha(fn: Any) -> Any:
    def call(q: Any, k: Any, v: Any, w_in: Any, b_in: Any, w_out: Any, b_out: Any, num_heads: int,
             need_weights: bool) -> Any:  # fmt: skip
        return fn(q, k, v, q.shape[-1], num_heads, w_in, b_in, None, None, False, 0.0, w_out, b_out,
                  need_weights=need_weights)[0]  # fmt: skip

    return call


def _fractional(name: str, pick: int | None = None) -> tuple[Any, Any]:
    ours, theirs = _call(name, pick)
    return (lambda x, u, **kw: ours(x, _random_samples=u, **kw)), (
        lambda x, u, **kw: theirs(x, _random_samples=u, **kw)
    )


MORE = [
    OpInfo("fractional_max_pool2d", *_fractional("fractional_max_pool2d"), fractional_pools(2),
           ("fractional_max_pool2d",), grad_args=1, extremes=False),
    OpInfo("fractional_max_pool3d", *_fractional("fractional_max_pool3d"), fractional_pools(3),
           ("fractional_max_pool3d",), grad_args=1, extremes=False),
    OpInfo("fractional_max_pool2d_with_indices", *_fractional("fractional_max_pool2d_with_indices", 1),
           fractional_pools(2), ("fractional_max_pool2d_with_indices",), grad=False, extremes=False),
    OpInfo("fractional_max_pool3d_with_indices", *_fractional("fractional_max_pool3d_with_indices", 1),
           fractional_pools(3), ("fractional_max_pool3d_with_indices",), grad=False, extremes=False),
    OpInfo("pdist", *_call("pdist"), pdists(), ("pdist",), extremes=False, gradgrad=False),
    OpInfo("conv_tbc", *_call("conv_tbc"), conv_tbcs(), ("conv_tbc",), extremes=False),
    OpInfo("linear_cross_entropy", *_call("linear_cross_entropy"), linear_cross_entropies(),
           ("linear_cross_entropy",), grad_args=2, extremes=False),
    OpInfo("multi_head_attention_forward", _mha(F.multi_head_attention_forward),
           _mha(lambda *a, **kw: TF.multi_head_attention_forward(*a, **kw)),  # (torch on first use, not at import)
           mha_forwards(), ("multi_head_attention_forward",), extremes=False,
           gradgrad=False),
    # (pdist, and the attention PyTorch computes without weights, have no second derivative in PyTorch)
    # (assert_int_or_pair returns None for an int or a pair, as PyTorch's: the entry passes its array through)
    OpInfo("assert_int_or_pair", lambda x, arg: (F.assert_int_or_pair(arg, "kernel_size", "{} must be a pair"), x)[1],
           lambda x, arg: (TF.assert_int_or_pair(arg, "kernel_size", "{} must be a pair"), x)[1],
           st.sampled_from([3, (1, 2), [2, 2]]).map(lambda a: Sample((np.zeros(2),), {"arg": a})),
           ("assert_int_or_pair",), grad=False, extremes=False),
]  # fmt: skip


# -- grouped products (float32 inside: PyTorch's CPU kernel takes no float64; rows of 4 floats, the 16
# bytes it reads at a time)
@st.composite
def grouped_mms(draw: Any) -> Sample:
    """Operands of one of ``grouped_mm``'s four layouts and the ends of its groups (``offs``), the last
    at the end of the grouped axis (past it PyTorch leaves the result uninitialised)."""
    layout = draw(st.sampled_from(["2d x 3d", "3d x 2d", "2d x 2d", "3d x 3d"]))
    groups = draw(st.integers(1, 3))
    length = 4 * draw(st.integers(1, 2)) if layout != "2d x 3d" else draw(st.integers(1, 6))
    ends = sorted(draw(st.lists(st.integers(0, length), min_size=groups - 1, max_size=groups - 1))) + [length]
    sizes = {
        "2d x 3d": ((length, 4), (groups, 4, 4)),
        "3d x 2d": ((groups, 2, 4), (4, length)),
        "2d x 2d": ((2, length), (length, 4)),
        "3d x 3d": ((groups, 2, 4), (groups, 4, 4)),
    }[layout]
    offs = None if layout == "3d x 3d" else tuple(ends)
    return Sample(tuple(draw(array(s)) for s in sizes), {"offs": offs})


def _grouped_mm(lib: Any, make: Any) -> Any:
    def call(a: Any, b: Any, offs: tuple | None) -> Any:
        o = None if offs is None else make(offs)
        return lib.grouped_mm(a.float(), b.float(), offs=o).double()

    return call


MORE += [
    OpInfo("grouped_mm", _grouped_mm(F, lambda o: tga.tensor(list(o), dtype=tga.int32)),
           _grouped_mm(TF, lambda o: torch.tensor(list(o), dtype=torch.int32)), grouped_mms(), ("grouped_mm",),
           extremes=False, atol=1e-4, rtol=1e-4),
]  # fmt: skip
NN_FUNCTIONAL += MORE
