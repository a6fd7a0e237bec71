"""PyTorch's remaining ``torch.nn`` modules against PyTorch: state dict names, shapes and
loading, ``repr``, outputs and every gradient (input and parameters) in float64, over the
constructor options of each."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from torch_oracle import assert_matches_torch

from tinygrad_attn import Tensor, nn

torch = pytest.importorskip("torch")


def _grid(**options: list) -> list[dict]:
    """Every combination of the given constructor options."""
    keys = list(options)
    return [dict(zip(keys, values)) for values in itertools.product(*options.values())]


# name -> (constructor positional args, option grid, input shape)
POOLING = {
    "Conv3d": ((2, 4, 2), _grid(stride=[1, 2], padding=[0, 1, "same"], dilation=[1, 2], groups=[1, 2],
                                bias=[True, False], padding_mode=["zeros", "reflect", "circular"]), (2, 2, 5, 5, 4)),
    "ConvTranspose3d": ((2, 4, 2), _grid(stride=[1, 2], padding=[0, 1], output_padding=[0, 1], groups=[1, 2],
                                         bias=[True, False], dilation=[2]), (2, 2, 3, 2, 3)),
    "MaxPool3d": ((2,), _grid(stride=[None, 1], padding=[0, 1], ceil_mode=[False, True]), (2, 2, 5, 4, 5)),
    "AvgPool1d": ((3,), _grid(stride=[None, 2], padding=[0, 1], ceil_mode=[False, True],
                              count_include_pad=[True, False]), (2, 3, 7)),
    "AvgPool3d": ((2,), _grid(stride=[None, 1], padding=[0, 1], ceil_mode=[False, True],
                              count_include_pad=[True, False], divisor_override=[None, 3]), (2, 2, 4, 5, 3)),
    "AdaptiveAvgPool1d": ((3,), [{}], (2, 3, 7)),
    "AdaptiveAvgPool3d": (((2, None, 3),), [{}], (2, 3, 4, 5, 6)),
    "AdaptiveMaxPool1d": ((3,), _grid(return_indices=[False, True]), (2, 3, 7)),
    "AdaptiveMaxPool2d": (((3, 2),), _grid(return_indices=[False, True]), (2, 3, 7, 5)),
    "AdaptiveMaxPool3d": ((2,), _grid(return_indices=[False, True]), (3, 5, 4, 3)),
    "LPPool1d": ((2, 3), _grid(stride=[None, 2], ceil_mode=[False, True]), (2, 3, 8)),
    "LPPool2d": ((3, 2), _grid(stride=[None, 1], ceil_mode=[False, True]), (2, 3, 5, 5)),
    "LPPool3d": ((2, 2), _grid(stride=[None, 1], ceil_mode=[False, True]), (2, 3, 3, 5, 4)),
}  # fmt: skip

NORMS = {
    "GroupNorm": ((2, 4), _grid(eps=[1e-5, 0.1], affine=[True, False], bias=[True, False]), (3, 4, 5)),
    "BatchNorm3d": ((3,), _grid(momentum=[0.1, None], affine=[True, False], track_running_stats=[True, False]),
                    (2, 3, 2, 3, 2)),
    "SyncBatchNorm": ((3,), _grid(momentum=[0.1, None], affine=[True, False], track_running_stats=[True, False]),
                      (4, 3, 5)),
    "InstanceNorm1d": ((3,), _grid(momentum=[0.1, None], affine=[True, False], track_running_stats=[True, False]),
                       (2, 3, 5)),
    "InstanceNorm2d": ((3,), _grid(affine=[True, False], track_running_stats=[True, False], bias=[True, False]),
                       (3, 4, 5)),
    "InstanceNorm3d": ((3,), _grid(affine=[True, False], track_running_stats=[True, False]), (2, 3, 2, 3, 4)),
    "LocalResponseNorm": ((3,), _grid(alpha=[1e-4, 0.5], beta=[0.75, 1.5], k=[1.0, 2.0]), (2, 5, 3, 2)),
}  # fmt: skip

ACTIVATIONS = {
    "PReLU": ((), _grid(num_parameters=[1, 3], init=[0.25, -0.5]), (2, 3, 4)),
    "Hardshrink": ((), _grid(lambd=[0.5, 1.0]), (2, 3, 4)),
    "Softshrink": ((), _grid(lambd=[0.5, 0.0]), (2, 3, 4)),
    "Tanhshrink": ((), [{}], (2, 3)),
    "Softmax2d": ((), [{}], (2, 3, 4, 2)),
}

PADDING = {
    f"{kind}Pad{nd}d": ((), _grid(padding=[1, (3, 1, 2, 1, 1, 2)[: 2 * nd], (0, 2, 1, 0, 2, 1)[: 2 * nd]],
                                  **({"value": [0.0, -1.5]} if kind == "Constant" else {})), shape)
    for kind in ("Zero", "Constant", "Reflection", "Replication", "Circular")
    for nd, shape in ((1, (2, 3, 7)), (2, (3, 7, 6)), (3, (2, 2, 7, 6, 5)))
}  # fmt: skip

REARRANGE = {
    "PixelShuffle": ((2,), [{}], (2, 8, 3, 2)),
    "PixelUnshuffle": ((2,), [{}], (2, 3, 4, 6)),
    "ChannelShuffle": ((3,), [{}], (2, 6, 3, 2)),
    "Unfold": (((2, 3),), _grid(dilation=[1, (2, 1)], padding=[0, 1], stride=[1, (2, 1)]), (2, 3, 5, 6)),
    "Fold": (((4, 5), 2), _grid(dilation=[1], padding=[0], stride=[1]), (2, 12, 12)),
}
REARRANGE["Fold-strided"] = (((5, 6), (2, 3)), _grid(dilation=[(1, 2)], padding=[1], stride=[(2, 1)]), (2, 18, 12))

TABLES = [POOLING, NORMS, ACTIVATIONS, PADDING, REARRANGE]
CASES = [pytest.param(name.split("-")[0], args, kw, shape, id=f"{name}-{i}")
         for table in TABLES for name, (args, grid, shape) in table.items() for i, kw in enumerate(grid)]  # fmt: skip


def _positive(name: str, x: np.ndarray) -> np.ndarray:
    return np.abs(x) + 0.1 if name.startswith("LPPool") else x  # (odd powers of negative sums have no real root)


@pytest.mark.parametrize("name, args, kw, shape", CASES)
def test_module_matches_torch(name, args, kw, shape, rng):
    torch.manual_seed(0)
    if name == "Conv3d" and kw["padding"] == "same" and kw["stride"] != 1:
        with pytest.raises(ValueError):
            torch.nn.Conv3d(*args, **kw)
        with pytest.raises(ValueError):
            nn.Conv3d(*args, **kw)
        return
    theirs = getattr(torch.nn, name)(*args, **kw)
    ours = getattr(nn, name)(*args, **kw)
    assert repr(ours) == repr(theirs)
    with torch.no_grad():  # (parameters away from their initial ones and zeros)
        for p in theirs.parameters():
            p.normal_()
    x = _positive(name, rng.standard_normal(shape))
    for _ in range(2):  # (twice: running statistics move on from what the first step left)
        assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [x])
        x = x * 2.0 + 0.5
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[k].detach().numpy(), v.detach().numpy(), atol=1e-12, err_msg=k)
    ours.eval(), theirs.eval()
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [x])


@pytest.mark.parametrize("kw", _grid(lower=[0.125, 0.0], upper=[1 / 3, 0.9], inplace=[False, True]))
def test_rrelu_random_slopes_in_training_and_torch_in_eval(kw, rng):
    ours, theirs = nn.RReLU(**kw), torch.nn.RReLU(**kw)
    assert repr(ours) == repr(theirs)
    x = rng.standard_normal((50, 40))
    xt = nn.Parameter(x)
    y = ours(xt * 1.0)
    y.sum().backward()
    ratio, grad = y.detach().numpy() / x, xt.grad.detach().numpy()
    neg = x < 0
    np.testing.assert_allclose(ratio[~neg], 1.0)
    assert ratio[neg].min() >= kw["lower"] and ratio[neg].max() <= kw["upper"]
    assert np.unique(ratio[neg]).size > 100  # (one slope per element)
    np.testing.assert_allclose(grad, ratio, rtol=1e-12)  # the drawn slope is the gradient
    ours.eval(), theirs.eval()
    assert_matches_torch(ours, theirs, lambda x: ours(x * 1.0), lambda x: theirs(x * 1.0), [x])


# (module maker, input shape): PyTorch raises for each; ours raises an exception of PyTorch's class
BAD_INPUTS = {
    "conv3d-4d-weight": (lambda m: m.Conv3d(2, 3, 2), (2, 2, 4, 4)),
    "conv3d-channels": (lambda m: m.Conv3d(2, 3, 2), (1, 3, 4, 4, 4)),
    "maxpool3d-2d": (lambda m: m.MaxPool3d(2), (4, 4)),
    "avgpool1d-4d": (lambda m: m.AvgPool1d(2), (1, 1, 4, 4)),
    "adaptive-max-2d-on-1d": (lambda m: m.AdaptiveMaxPool2d(2), (4,)),
    "groupnorm-channels": (lambda m: m.GroupNorm(2, 4), (2, 3, 5)),
    "instancenorm1d-4d": (lambda m: m.InstanceNorm1d(3), (2, 3, 4, 5)),
    "instancenorm2d-affine-channels": (lambda m: m.InstanceNorm2d(3, affine=True), (2, 4, 4, 5)),
    "instancenorm-one-position": (lambda m: m.InstanceNorm1d(3), (2, 3, 1)),
    "batchnorm3d-4d": (lambda m: m.BatchNorm3d(3), (2, 3, 4, 5)),
    "lrn-2d": (lambda m: m.LocalResponseNorm(2), (3, 4)),
    "softmax2d-2d": (lambda m: m.Softmax2d(), (3, 4)),
    "prelu-channels": (lambda m: m.PReLU(3), (2, 4, 5)),
    "reflection2d-2d": (lambda m: m.ReflectionPad2d(1), (2, 3)),
    "reflection1d-too-wide": (lambda m: m.ReflectionPad1d(3), (1, 3)),
    "zeropad2d-1d": (lambda m: m.ZeroPad2d(1), (3,)),
    "pixelshuffle-channels": (lambda m: m.PixelShuffle(2), (1, 3, 2, 2)),
    "pixelunshuffle-height": (lambda m: m.PixelUnshuffle(2), (1, 3, 3, 2)),
    "channelshuffle-channels": (lambda m: m.ChannelShuffle(2), (1, 3, 2)),
    "unfold-empty": (lambda m: m.Unfold(3), (1, 1, 2, 2)),
    "fold-blocks": (lambda m: m.Fold((3, 3), 2), (1, 4, 3)),
    "fold-kernel": (lambda m: m.Fold((3, 3), 2), (1, 5, 4)),
}


@pytest.mark.parametrize("make, shape", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_raises_torch_exception_class(make, shape):
    x = np.zeros(shape)
    with pytest.raises(Exception) as theirs:  # noqa: PT011 - the class is what is compared
        make(torch.nn)(torch.tensor(x))
    with pytest.raises(theirs.type):
        make(nn)(nn.Parameter(x))


def _signs(rng, *shape):
    return rng.choice([-1.0, 1.0], shape)


def _ctc_inputs(rng):
    logits = rng.standard_normal((6, 3, 4))
    lp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    return [lp], [np.array([[1, 1, 2], [3, 0, 0], [2, 3, 0]]), np.array([6, 4, 5]), np.array([3, 1, 2])]


# name -> (option grid, rng -> (differentiable arrays, other arrays)); forward(*differentiable, *other)
LOSSES = {
    "MarginRankingLoss": (_grid(margin=[0.0, 0.5], reduction=["mean", "sum", "none"]),
                          lambda r: ([r.standard_normal(5), r.standard_normal(5)], [_signs(r, 5)])),
    "HingeEmbeddingLoss": (_grid(margin=[1.0, 0.3], reduction=["mean", "none"]),
                           lambda r: ([r.standard_normal((3, 4))], [_signs(r, 3, 4)])),
    "SoftMarginLoss": (_grid(reduction=["mean", "sum"]), lambda r: ([r.standard_normal((3, 4))], [_signs(r, 3, 4)])),
    "MultiLabelMarginLoss": (_grid(reduction=["mean", "none"]),
                             lambda r: ([r.standard_normal((3, 4))], [np.array([[3, 0, -1, 1], [1, -1, 2, 2],
                                                                                 [0, 1, 2, 3]])])),
    "MultiLabelSoftMarginLoss": (_grid(weight=[None, [0.5, 1.0, 2.0, 1.5]], reduction=["mean", "sum"]),
                                 lambda r: ([r.standard_normal((3, 4))], [r.integers(0, 2, (3, 4)).astype(float)])),
    "MultiMarginLoss": (_grid(p=[1, 2], margin=[1.0, 0.4], weight=[None, [0.5, 1.0, 2.0, 1.5]],
                              reduction=["mean", "none"]),
                        lambda r: ([r.standard_normal((3, 4)) * 2.0], [np.array([0, 3, 1])])),
    "TripletMarginLoss": (_grid(margin=[1.0, 0.3], p=[2.0, 1.0], swap=[False, True], reduction=["mean", "none"]),
                          lambda r: ([r.standard_normal((3, 4)) for _ in range(3)], [])),
    "TripletMarginWithDistanceLoss": (_grid(margin=[1.0, 0.3], swap=[False, True]),
                                      lambda r: ([r.standard_normal((3, 4)) for _ in range(3)], [])),
    "PoissonNLLLoss": (_grid(log_input=[True, False], full=[False, True], reduction=["mean", "none"]),
                       lambda r: ([r.random((3, 4)) + 0.2], [r.integers(0, 6, (3, 4)).astype(float)])),
    "GaussianNLLLoss": (_grid(full=[False, True], eps=[1e-6, 0.3], reduction=["mean", "sum"]),
                        lambda r: ([r.standard_normal((3, 4)), r.random((3, 1)) + 0.1], [r.standard_normal((3, 4))])),
    "CTCLoss": (_grid(blank=[0], reduction=["mean", "sum", "none"], zero_infinity=[False, True]), _ctc_inputs),
}  # fmt: skip
LOSS_CASES = [pytest.param(name, kw, make, id=f"{name}-{i}")
              for name, (grid, make) in LOSSES.items() for i, kw in enumerate(grid)]  # fmt: skip


@pytest.mark.parametrize("name, kw, make", LOSS_CASES)
def test_loss_module_matches_torch(name, kw, make, rng):
    diff, other = make(rng)
    if name == "GaussianNLLLoss":  # (forward(input, target, var): the target is not differentiated)
        diff, other = diff[:1], [other[0], diff[1]]
        ours, theirs = nn.GaussianNLLLoss(**kw), torch.nn.GaussianNLLLoss(**kw)
        assert repr(ours) == repr(theirs)
        assert_matches_torch(ours, theirs, lambda x: ours(x, Tensor(other[0]), Tensor(other[1])),
                             lambda x: theirs(x, torch.tensor(other[0]), torch.tensor(other[1])), diff)  # fmt: skip
        return
    weight = kw.get("weight")
    kt = dict(kw, weight=torch.tensor(weight)) if weight is not None else kw
    ours, theirs = getattr(nn, name)(**kw), getattr(torch.nn, name)(**kt)
    assert repr(ours) == repr(theirs)
    ours_other, theirs_other = [Tensor(a) for a in other], [torch.tensor(a) for a in other]
    assert_matches_torch(ours, theirs, lambda *xs: ours(*xs, *ours_other), lambda *xs: theirs(*xs, *theirs_other), diff)


@pytest.mark.filterwarnings("ignore:dropout2d")
@pytest.mark.parametrize("name, shape", [("Dropout1d", (40, 30, 3)), ("Dropout1d", (60, 4)), ("Dropout2d", (40, 30, 2, 2)),
                                         ("Dropout3d", (40, 30, 2, 1, 2)), ("Dropout3d", (60, 2, 1, 2))])  # fmt: skip
@pytest.mark.parametrize("inplace", [False, True])
def test_channel_dropout_zeroes_whole_channels(name, shape, inplace, rng):
    p = 0.4
    ours, theirs = getattr(nn, name)(p, inplace), getattr(torch.nn, name)(p, inplace)
    assert repr(ours) == repr(theirs)
    x = rng.random(shape) + 0.5
    xt = nn.Parameter(x)
    y = ours(xt * 1.0)
    y.sum().backward()
    lead = 2 if len(shape) in (3, 5) or (name == "Dropout2d" and len(shape) == 4) else 1
    ratio = (y.detach().numpy() / x).reshape(shape[:lead] + (-1,))
    kept = ratio[..., 0]
    assert set(np.round(np.unique(kept), 9)) <= {0.0, round(1 / (1 - p), 9)}
    np.testing.assert_allclose(ratio, np.broadcast_to(kept[..., None], ratio.shape))  # one draw per channel
    assert abs((kept == 0).mean() - p) < 0.1
    np.testing.assert_allclose(xt.grad.detach().numpy().reshape(ratio.shape), ratio)  # the mask is the gradient
    ours.eval()
    np.testing.assert_array_equal(ours(Tensor(x)).detach().numpy(), x)


@pytest.mark.parametrize("name", ["AlphaDropout", "FeatureAlphaDropout"])
def test_alpha_dropout_keeps_mean_and_variance_as_torch(name, rng):
    p = 0.3
    ours, theirs = getattr(nn, name)(p), getattr(torch.nn, name)(p)
    assert repr(ours) == repr(theirs)
    x = rng.standard_normal((400, 300, 2))
    y, yt = ours(Tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy()
    for out in (y, yt):
        assert abs(out.mean()) < 0.05 and abs(out.var() - 1.0) < 0.05
    # each value is a x + c where kept and the one saturation value where dropped, PyTorch's a and c
    a = 1.0 / np.sqrt((1.7580993408473766**2 * p + 1.0) * (1.0 - p))
    c = 1.7580993408473766 * a * p
    dropped = np.isclose(y, -1.7580993408473766 * a + c, rtol=0.0, atol=1e-12)
    np.testing.assert_allclose(y[~dropped], a * x[~dropped] + c)
    assert abs(dropped.mean() - p) < 0.02
    if name == "FeatureAlphaDropout":  # (whole channels)
        assert (dropped.all(-1) | ~dropped.any(-1)).all()
    ours.eval()
    np.testing.assert_array_equal(ours(Tensor(x)).detach().numpy(), x)


def _bag_inputs(layout: str, rng):
    ids = rng.integers(0, 7, 9)
    if layout == "2d":
        return ids.reshape(3, 3), None
    if layout == "last":
        return ids, np.array([0, 2, 2, 5, 9])
    return ids, np.array([0, 2, 2, 5])  # (an empty bag among them)


@pytest.mark.parametrize("layout", ["2d", "offsets", "last"])
@pytest.mark.parametrize("kw", _grid(mode=["sum", "mean", "max"], padding_idx=[None, 2, -1], max_norm=[None, 1.0]))
def test_embedding_bag_matches_torch(layout, kw, rng):
    ids, offsets = _bag_inputs(layout, rng)
    kw = dict(kw, include_last_offset=layout == "last")
    ours, theirs = nn.EmbeddingBag(7, 3, **kw), torch.nn.EmbeddingBag(7, 3, **kw)
    assert repr(ours) == repr(theirs)
    ids_o, ids_t = Tensor(ids), torch.tensor(ids)
    off_o, off_t = (None, None) if offsets is None else (Tensor(offsets), torch.tensor(offsets))
    weights = [rng.random(ids.shape)] if kw["mode"] == "sum" else []
    assert_matches_torch(ours, theirs, lambda *w: ours(ids_o, off_o, *w), lambda *w: theirs(ids_t, off_t, *w), weights)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy())  # (max_norm's renorm)


def test_embedding_bag_from_pretrained_and_errors():
    table = np.arange(12.0).reshape(4, 3)
    for freeze in (True, False):
        ours = nn.EmbeddingBag.from_pretrained(Tensor(table), freeze=freeze, mode="sum")
        theirs = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(table), freeze=freeze, mode="sum")
        assert ours.weight.requires_grad == theirs.weight.requires_grad == (not freeze)
        ids = np.array([[0, 3], [2, 2]])
        np.testing.assert_array_equal(ours(Tensor(ids)).detach().numpy(), theirs(torch.tensor(ids)).detach().numpy())
    bag = nn.EmbeddingBag(4, 3)
    for call in (
        lambda m, t: m(t(np.array([[0, 1]])), t(np.array([0]))),  # 2-D input with offsets
        lambda m, t: m(t(np.array([0, 1]))),  # 1-D input without offsets
        lambda m, t: m(t(np.array([0, 1])), t(np.array([0])), t(np.ones(2))),
    ):  # weights with mode="mean"
        with pytest.raises(Exception) as theirs_error:  # noqa: PT011 - the class is what is compared
            call(torch.nn.EmbeddingBag(4, 3), torch.tensor)
        with pytest.raises(theirs_error.type):
            call(bag, Tensor)


# name -> (constructor args, input shape): the first forward sets the channels; then as the eager layer
LAZY = {
    "LazyConv1d": ((4, 2), (2, 3, 5)),
    "LazyConv2d": ((4, 2), (3, 4, 4)),  # (unbatched)
    "LazyConv3d": ((2, 2), (1, 3, 3, 3, 3)),
    "LazyConvTranspose1d": ((4, 2), (2, 3, 5)),
    "LazyConvTranspose2d": ((4, 2), (2, 3, 3, 3)),
    "LazyConvTranspose3d": ((2, 2), (1, 3, 2, 2, 2)),
    "LazyBatchNorm1d": ((), (4, 3)),
    "LazyBatchNorm2d": ((), (2, 3, 2, 2)),
    "LazyBatchNorm3d": ((), (2, 3, 2, 2, 2)),
    "LazyInstanceNorm1d": ((), (2, 3, 5)),
    "LazyInstanceNorm2d": ((), (2, 3, 2, 2)),
    "LazyInstanceNorm3d": ((), (2, 3, 2, 2, 2)),
}


@pytest.mark.parametrize("name", LAZY)
def test_lazy_module_becomes_the_eager_layer(name, rng):
    args, shape = LAZY[name]
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    params = list(ours.parameters())
    x = rng.standard_normal(shape).astype(np.float32)
    ours(Tensor(x)), theirs(torch.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__ == name[4:]
    assert repr(ours) == repr(theirs)
    assert [p is q for p, q in zip(params, ours.parameters())] == [True] * len(params)  # (the same objects)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()
    }
    ours.train(), theirs.train()
    assert_matches_torch(ours, theirs, lambda x: ours(x), lambda x: theirs(x), [x.astype(np.float64)])


def _pipeline(x, w, gw, emb):
    """A few of the new functions in a row (conv3d, group_norm, adaptive max pooling, pixel
    shuffle, unfold/fold, a triplet loss, an embedding bag), reduced to a scalar."""
    import tinygrad_attn.functional as F  # noqa: PLC0415

    y = F.group_norm(F.conv3d(x, w, padding=1), 2, gw)  # (2, 4, 3, 3, 3)
    y = F.adaptive_max_pool3d(y, 2).reshape(2, 4, 4, 2)  # (2, 4, 4, 2)
    y = F.pixel_shuffle(y, 2)  # (2, 1, 8, 4)
    cols = F.unfold(y, 2, stride=2)  # (2, 4, 8)
    back = F.fold(cols, (8, 4), 2, stride=2)
    bags = F.embedding_bag(Tensor(np.array([[0, 1], [2, 2]])), emb, mode="max")  # (2, 3)
    loss = F.triplet_margin_loss(cols.sum(-1), cols.mean(-1), back.reshape(2, -1)[:, :4])
    return loss + (back * back).mean() + bags.sum()


def test_new_functions_trace_replay_and_draw(rng):
    from tinygrad_attn.symbolic.trace import trace as jit_trace  # noqa: PLC0415
    from tinygrad_attn.viz.render import draw_graph  # noqa: PLC0415

    def args():
        return [
            Tensor(rng.standard_normal(s), requires_grad=True) for s in ((2, 2, 3, 3, 3), (4, 2, 3, 3, 3), (4,), (3, 3))
        ]

    prog = jit_trace(_pipeline, *args())
    new = args()
    got = prog(*new).detach().numpy()
    grads = [t.grad.detach().numpy() for t in new]
    for t in new:
        t.grad = None
    want = _pipeline(*new)
    want.backward()
    np.testing.assert_allclose(got, want.detach().numpy(), atol=1e-10)
    for g, t in zip(grads, new):
        np.testing.assert_allclose(g, t.grad.detach().numpy(), atol=1e-10)
    source = draw_graph(_pipeline(*args())).source
    for name in ("conv3d", "group_norm", "adaptive_max_pool3d", "embedding_bag", "triplet_margin_loss"):
        assert name in source, name


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_samples_the_softmax(hard, rng):
    import tinygrad_attn.functional as F  # noqa: PLC0415

    logits = np.log(np.array([0.1, 0.2, 0.7]))
    x = Tensor(np.tile(logits, (20000, 1)), requires_grad=True)
    y = F.gumbel_softmax(x, tau=0.5, hard=hard)
    picked = np.bincount(y.detach().numpy().argmax(-1), minlength=3) / 20000
    np.testing.assert_allclose(picked, [0.1, 0.2, 0.7], atol=0.02)  # (the argmax of logits + Gumbel noise)
    if hard:
        assert set(np.unique(y.detach().numpy())) == {0.0, 1.0}
    (y * Tensor(rng.standard_normal(y.shape))).sum().backward()
    assert np.abs(x.grad.detach().numpy()).sum() > 0  # (hard or not, the soft sample's gradient)


def test_nll_loss_2d_is_nll_loss_on_images(rng):
    with pytest.warns(FutureWarning, match="NLLLoss2d` has been deprecated"):
        ours = nn.NLLLoss2d(ignore_index=1)
    with pytest.warns(FutureWarning):
        theirs = torch.nn.NLLLoss2d(ignore_index=1)
    logits = rng.standard_normal((2, 3, 4, 4))
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    target = rng.integers(0, 3, (2, 4, 4))
    assert isinstance(ours, nn.NLLLoss) and repr(ours) == repr(theirs)
    assert_matches_torch(ours, theirs, lambda x: ours(x, Tensor(target)), lambda x: theirs(x, torch.tensor(target)),
                         [logp])  # fmt: skip
