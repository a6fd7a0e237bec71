"""Convolution and pooling: functional forms and layers against PyTorch (float64, values and
gradients), fused against decomposed (first order and create_graph=True), finite
differences on every CPU namespace, one graph node each."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import close, rand
from torch_oracle import assert_matches_torch

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# name -> (ours, theirs, input shapes); the same call on both sides.
CASES = {
    "conv1d": (lambda x, w, b: F.conv1d(x, w, b), lambda x, w, b: TF.conv1d(x, w, b), [(2, 3, 7), (4, 3, 3), (4,)]),
    "conv1d_strided_padded_dilated": (
        lambda x, w: F.conv1d(x, w, None, stride=2, padding=2, dilation=2),
        lambda x, w: TF.conv1d(x, w, None, stride=2, padding=2, dilation=2),
        [(2, 2, 9), (3, 2, 3)],
    ),
    "conv1d_same_groups": (
        lambda x, w, b: F.conv1d(x, w, b, padding="same", groups=2),
        lambda x, w, b: TF.conv1d(x, w, b, padding="same", groups=2),
        [(1, 4, 6), (6, 2, 4), (6,)],
    ),
    "conv2d": (
        lambda x, w, b: F.conv2d(x, w, b),
        lambda x, w, b: TF.conv2d(x, w, b),
        [(2, 3, 5, 6), (4, 3, 3, 2), (4,)],
    ),
    "conv2d_stride_pad": (
        lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2)),
        lambda x, w, b: TF.conv2d(x, w, b, stride=(2, 1), padding=(1, 2)),
        [(2, 2, 5, 4), (3, 2, 3, 3), (3,)],
    ),
    "conv2d_same_dilated": (
        lambda x, w: F.conv2d(x, w, padding="same", dilation=2),
        lambda x, w: TF.conv2d(x, w, padding="same", dilation=2),
        [(1, 2, 6, 5), (2, 2, 2, 3)],
    ),
    "conv2d_groups_valid": (
        lambda x, w, b: F.conv2d(x, w, b, padding="valid", groups=3),
        lambda x, w, b: TF.conv2d(x, w, b, padding="valid", groups=3),
        [(2, 3, 4, 4), (6, 1, 2, 2), (6,)],
    ),
    "conv2d_patches": (  # a ViT's patch embedding: stride == kernel (the reshape/permute path), a ragged edge
        lambda x, w, b: F.conv2d(x, w, b, stride=2),
        lambda x, w, b: TF.conv2d(x, w, b, stride=2),
        [(2, 3, 5, 4), (4, 3, 2, 2), (4,)],
    ),
    "conv2d_unbatched": (
        lambda x, w: F.conv2d(x, w, padding=1),
        lambda x, w: TF.conv2d(x, w, padding=1),
        [(2, 4, 3), (3, 2, 3, 3)],
    ),  # fmt: skip
    "max_pool1d": (
        lambda x: F.max_pool1d(x, 3, stride=2, padding=1),
        lambda x: TF.max_pool1d(x, 3, stride=2, padding=1),
        [(2, 3, 8)],
    ),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), lambda x: TF.max_pool2d(x, 2), [(2, 3, 4, 5)]),
    "max_pool2d_pad_dilation": (
        lambda x: F.max_pool2d(x, (3, 2), stride=(2, 1), padding=1, dilation=(1, 2)),
        lambda x: TF.max_pool2d(x, (3, 2), stride=(2, 1), padding=1, dilation=(1, 2)),
        [(1, 2, 6, 6)],
    ),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 2), lambda x: TF.avg_pool2d(x, 2), [(2, 3, 4, 6)]),
    "avg_pool2d_pad": (
        lambda x: F.avg_pool2d(x, 3, stride=2, padding=1),
        lambda x: TF.avg_pool2d(x, 3, stride=2, padding=1),
        [(1, 2, 5, 6)],
    ),
    "avg_pool2d_pad_excluded": (
        lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
        lambda x: TF.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
        [(1, 2, 5, 6)],
    ),
    "avg_pool2d_divisor": (
        lambda x: F.avg_pool2d(x, 2, stride=1, divisor_override=3),
        lambda x: TF.avg_pool2d(x, 2, stride=1, divisor_override=3),
        [(1, 2, 3, 4)],
    ),
    "adaptive_avg_pool2d": (
        lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
        lambda x: TF.adaptive_avg_pool2d(x, (3, 2)),
        [(2, 2, 7, 5)],
    ),
    "adaptive_avg_pool2d_none": (
        lambda x: F.adaptive_avg_pool2d(x, (None, 1)),
        lambda x: TF.adaptive_avg_pool2d(x, (None, 1)),
        [(1, 3, 4, 6)],
    ),
}

# ceil_mode: a last, partial window (PyTorch's output length rule and avg divisor)
CASES.update({
    "max_pool2d_ceil": (
        lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
        lambda x: TF.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
        [(1, 2, 6, 7)],
    ),
    "max_pool1d_ceil": (
        lambda x: F.max_pool1d(x, 2, stride=2, ceil_mode=True),
        lambda x: TF.max_pool1d(x, 2, stride=2, ceil_mode=True),
        [(2, 3, 7)],
    ),
    "avg_pool2d_ceil": (
        lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
        lambda x: TF.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
        [(1, 2, 6, 7)],
    ),
    "avg_pool2d_ceil_pad_excluded": (
        lambda x: F.avg_pool2d(x, 2, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        lambda x: TF.avg_pool2d(x, 2, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        [(1, 2, 5, 6)],
    ),
})  # fmt: skip

# transposed convolutions: strides, output_padding, groups, dilation, padding beyond the kernel's reach
CASES.update({
    "conv_transpose2d": (
        lambda x, w, b: F.conv_transpose2d(x, w, b),
        lambda x, w, b: TF.conv_transpose2d(x, w, b),
        [(2, 4, 5, 4), (4, 3, 3, 3), (3,)],
    ),
    "conv_transpose2d_strided_output_padded": (
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=(2, 3), padding=1, output_padding=(1, 2)),
        lambda x, w, b: TF.conv_transpose2d(x, w, b, stride=(2, 3), padding=1, output_padding=(1, 2)),
        [(1, 2, 3, 4), (2, 2, 3, 2), (2,)],
    ),
    "conv_transpose2d_groups_dilated": (
        lambda x, w: F.conv_transpose2d(x, w, None, 2, 2, 1, 2, 2),
        lambda x, w: TF.conv_transpose2d(x, w, None, 2, 2, 1, 2, 2),
        [(2, 4, 3, 3), (4, 1, 2, 3)],
    ),
    "conv_transpose1d_unbatched_cropped": (  # padding 2 > the kernel's reach 1: the output is cropped
        lambda x, w: F.conv_transpose1d(x, w, stride=3, padding=2),
        lambda x, w: TF.conv_transpose1d(x, w, stride=3, padding=2),
        [(3, 5), (3, 2, 2)],
    ),
})  # fmt: skip


def _inputs(rng, shapes, device="cpu"):
    return [rand(rng, *s, device=device) for s in shapes]


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch_values_and_gradients(name, rng):
    ours, theirs, shapes = CASES[name]
    xs = _inputs(rng, shapes)
    ts = [torch.tensor(x.detach().numpy(), requires_grad=True) for x in xs]
    for decomposed in (False, True):
        with tga.decompose() if decomposed else _nothing():
            y = ours(*xs)
            yt = theirs(*ts)
            close(y, yt.detach().numpy(), atol=1e-12, rtol=1e-10)
            w = rng.standard_normal(y.shape)
            gs = tga.grad((y * Tensor(w)).sum(), xs)
            gts = torch.autograd.grad((yt * torch.tensor(w)).sum(), ts)
            for g, gt in zip(gs, gts):
                close(g, gt.detach().numpy(), atol=1e-12, rtol=1e-10)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_equals_decomposed_to_second_order(name, rng):
    ours, _, shapes = CASES[name]
    xs = _inputs(rng, shapes)
    results = []
    for decomposed in (False, True):
        with tga.decompose() if decomposed else _nothing():
            y = ours(*xs)
            g = tga.grad((y * y).sum(), xs, create_graph=True)
            gg = tga.grad(sum((gi * gi).sum() for gi in g), xs)
        results.append([y, *g, *gg])
    for a, b in zip(*results):
        close(a, b.detach().numpy(), atol=1e-9, rtol=1e-9)


GRADCHECKED = ["conv1d_same_groups", "conv2d_stride_pad", "conv2d_patches", "max_pool2d_pad_dilation",
               "avg_pool2d_pad_excluded", "adaptive_avg_pool2d", "max_pool2d_ceil", "avg_pool2d_ceil",
               "avg_pool2d_ceil_pad_excluded", "conv_transpose2d_strided_output_padded",
               "conv_transpose2d_groups_dilated", "conv_transpose1d_unbatched_cropped"]  # fmt: skip


@pytest.mark.parametrize("decomposed", [False, True], ids=["fused", "decomposed"])
@pytest.mark.parametrize("name", GRADCHECKED)
def test_gradcheck(name, decomposed, device, rng):
    ours, _, shapes = CASES[name]
    xs = _inputs(rng, shapes, device)
    with tga.decompose() if decomposed else _nothing():
        assert tga.gradcheck(ours, *xs)


@pytest.mark.parametrize("name", ["conv2d", "conv2d_patches", "max_pool2d", "avg_pool2d_pad", "adaptive_avg_pool2d"])
def test_one_node_each_that_decompose_opens(name, rng):
    ours, _, shapes = CASES[name]
    xs = _inputs(rng, shapes)
    node = ours(*xs)._ctx  # (the op itself; grad_fn is its face under PyTorch's name)
    assert isinstance(node, tga.engine.FusedFunction)
    assert all(t is None or any(t is x for x in xs) for t in node.inputs)  # straight from the inputs: one node
    with tga.decompose():
        y = ours(*xs)
    assert not isinstance(y._ctx, tga.engine.FusedFunction)
    assert y.grad_fn.scope is not None and y.grad_fn.scope.kind == "composite"


@pytest.mark.parametrize("device_name", ["cpu", "array_api_strict:device1"])
def test_runs_on_each_namespace(device_name, rng):
    x, w, b = _inputs(rng, [(2, 2, 5, 5), (3, 2, 3, 3), (3,)], device_name)
    y = F.conv2d(x, w, b, stride=2, padding=1)
    p = F.max_pool2d(y, 2, stride=1)
    (p.sum() + F.avg_pool2d(x, 2).sum() + F.adaptive_avg_pool2d(x, 2).sum()).backward()
    assert x.grad.device == x.device and w.grad.shape == w.shape


def test_max_pool_gradient_goes_to_the_first_maximum_as_pytorch():
    x = np.array([[[1.0, 3.0, 3.0, 0.0, 2.0, 2.0]]])
    xo, xt = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    F.max_pool1d(xo, 2, stride=1).sum().backward()
    TF.max_pool1d(xt, 2, stride=1).sum().backward()
    close(xo.grad, xt.grad.detach().numpy())


# -- layers ------------------------------------------------------------------------------
LAYERS = [
    (lambda: nn.Conv1d(3, 4, 3, padding=1), lambda: torch.nn.Conv1d(3, 4, 3, padding=1), (2, 3, 6)),
    (lambda: nn.Conv2d(2, 6, (3, 2), stride=2, padding=1, groups=2, bias=False),
     lambda: torch.nn.Conv2d(2, 6, (3, 2), stride=2, padding=1, groups=2, bias=False), (2, 2, 5, 6)),
    (lambda: nn.Conv2d(3, 8, kernel_size=4, stride=4), lambda: torch.nn.Conv2d(3, 8, kernel_size=4, stride=4),
     (2, 3, 8, 8)),
    (lambda: nn.Conv2d(2, 3, 3, padding="same", padding_mode="reflect"),
     lambda: torch.nn.Conv2d(2, 3, 3, padding="same", padding_mode="reflect"), (1, 2, 5, 4)),
    (lambda: nn.Conv1d(2, 2, 3, padding=1, padding_mode="circular"),
     lambda: torch.nn.Conv1d(2, 2, 3, padding=1, padding_mode="circular"), (1, 2, 5)),
    (lambda: nn.MaxPool1d(2), lambda: torch.nn.MaxPool1d(2), (2, 3, 6)),
    (lambda: nn.MaxPool2d(3, stride=2, padding=1), lambda: torch.nn.MaxPool2d(3, stride=2, padding=1), (1, 2, 5, 5)),
    (lambda: nn.AvgPool2d(2), lambda: torch.nn.AvgPool2d(2), (1, 2, 4, 4)),
    (lambda: nn.AdaptiveAvgPool2d(1), lambda: torch.nn.AdaptiveAvgPool2d(1), (2, 3, 3, 5)),
]  # fmt: skip


@pytest.mark.parametrize("i", range(len(LAYERS)))
def test_layers_match_torch_with_its_weights(i, rng):
    make_ours, make_theirs, shape = LAYERS[i]
    ours, theirs = make_ours(), make_theirs()
    assert_matches_torch(ours, theirs, ours, theirs, [rng.standard_normal(shape)])


def test_conv_parameters_init_and_repr_as_pytorch():
    ours, theirs = nn.Conv2d(4, 6, (3, 2), groups=2), torch.nn.Conv2d(4, 6, (3, 2), groups=2)
    assert [(n, p.shape) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]
    assert repr(ours) == repr(theirs)
    assert repr(nn.Conv1d(2, 3, 3, padding="same", bias=False)) == repr(torch.nn.Conv1d(2, 3, 3, padding="same",
                                                                                       bias=False))  # fmt: skip
    bound = 1 / np.sqrt(2 * 3 * 2)  # U(±1/sqrt(fan_in)), fan_in = in/groups * kernel
    w = nn.Conv2d(4, 600, (3, 2), groups=2).weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound


def test_bad_arguments_raise_naming_the_op_and_shapes(rng):
    x, w = _inputs(rng, [(1, 3, 5, 5), (4, 2, 3, 3)])
    with pytest.raises(RuntimeError, match=r"conv2d: input \(1, 3, 5, 5\).*weight \(4, 2, 3, 3\)"):
        F.conv2d(x, w)
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided"):
        F.conv2d(x, rand(rng, 4, 3, 3, 3), stride=2, padding="same")
    with pytest.raises(ValueError, match="conv2d: input of spatial size"):
        F.conv2d(x, rand(rng, 4, 3, 7, 7))
    with pytest.raises(ValueError, match="max_pool2d: pad should be at most half"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(ValueError, match="conv1d: expected a 2-D"):
        F.conv1d(x, rand(rng, 4, 3, 3))


def test_pictures_name_the_op_and_its_geometry(rng):
    from tinygrad_attn.viz.graph import op_lines  # noqa: PLC0415 - only this test draws

    x, w = _inputs(rng, [(1, 2, 6, 6), (4, 1, 3, 3)])
    title, lines = op_lines(F.conv2d(x, w, stride=2, padding=1, groups=2))
    assert title == "conv2d" and "kernel (3, 3) · stride (2, 2) · padding ((1, 1), (1, 1)) · groups 2" in lines
    title, lines = op_lines(F.adaptive_avg_pool2d(x, (2, 3)))
    assert title == "adaptive_avg_pool2d" and "output (2, 3)" in lines
    assert "kernel (2, 2) · stride (2, 2)" in op_lines(F.max_pool2d(x, 2))[1]


@pytest.mark.parametrize("decomposed", [False, True], ids=["fused", "decomposed"])
@pytest.mark.parametrize(
    ("args", "shape"),
    [((3, 2, 1), (2, 3, 6, 7)), ((2, 2, 0, 1, True), (2, 1, 5, 5)), ((3, 1, 0, 2), (1, 2, 7, 6)), ((2,), (3, 4, 5))],
)
def test_max_pool2d_return_indices_as_pytorch(args, shape, decomposed, rng):
    x = rand(rng, *shape)
    ti = TF.max_pool2d(torch.tensor(x.detach().numpy()), *args, return_indices=True)
    with tga.decompose() if decomposed else _nothing():
        y, i = F.max_pool2d(x, *args, return_indices=True)
    close(y, ti[0].detach().numpy(), atol=0, rtol=0)
    assert i.dtype == tga.int64 and i.requires_grad is False
    np.testing.assert_array_equal(i.detach().numpy(), ti[1].detach().numpy())
    y.sum().backward()  # the values keep their gradient
    assert x.grad.shape == x.shape


def test_max_pool1d_and_layer_return_indices_as_pytorch(rng):
    x = rand(rng, 2, 3, 9)
    y, i = F.max_pool1d(x, 3, 2, 1, return_indices=True)
    ty, ti = TF.max_pool1d(torch.tensor(x.detach().numpy()), 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(i.detach().numpy(), ti.detach().numpy())
    y2, i2 = nn.MaxPool2d(2, return_indices=True, ceil_mode=True)(rand(rng, 1, 1, 5, 5))
    assert y2.shape == i2.shape == (1, 1, 3, 3)


def test_conv_transpose_bad_arguments_raise_naming_the_op_and_shapes(rng):
    x = rand(rng, 1, 4, 5, 5)
    with pytest.raises(ValueError, match=r"conv_transpose2d: input \(1, 4, 5, 5\).*weight \(3, 2, 3, 3\)"):
        F.conv_transpose2d(x, rand(rng, 3, 2, 3, 3))
    with pytest.raises(ValueError, match="conv_transpose2d: output_padding"):
        F.conv_transpose2d(x, rand(rng, 4, 2, 3, 3), stride=2, output_padding=2)
    with pytest.raises(ValueError, match=r"conv_transpose2d: .*gives an empty output \(0, 0\)"):
        F.conv_transpose2d(rand(rng, 1, 1, 2, 2), rand(rng, 1, 1, 1, 1), padding=1)


@pytest.mark.parametrize(
    ("kw", "shape", "output_size"),
    [({"kernel_size": 2}, (2, 3, 5, 6), None), ({"kernel_size": 3, "stride": (3, 4), "padding": 1}, (1, 2, 7, 7), (7, 8)),
     ({"kernel_size": 2}, (3, 5, 4), (1, 3, 5, 4))],
)  # fmt: skip
def test_max_unpool2d_inverts_max_pool2d_as_pytorch(kw, shape, output_size, rng):
    x = rand(rng, *shape)
    ty, ti = TF.max_pool2d(torch.tensor(x.detach().numpy()), return_indices=True, **kw)
    y, i = F.max_pool2d(x, return_indices=True, **kw)
    yr = Tensor(y.detach().numpy(), requires_grad=True)
    ytr = ty.detach().requires_grad_(True)
    u = F.max_unpool2d(yr, i, output_size=output_size, **kw)
    ut = TF.max_unpool2d(ytr, ti, output_size=output_size, **kw)
    close(u, ut.detach().numpy(), atol=0, rtol=0)
    w = rng.standard_normal(u.shape)
    (u * Tensor(w)).sum().backward()
    (ut * torch.tensor(w)).sum().backward()
    close(yr.grad, ytr.grad.detach().numpy(), atol=1e-12, rtol=1e-12)


def test_max_unpool_gradcheck_and_errors(device, rng):
    x = rand(rng, 2, 3, 6, device=device)
    y, i = F.max_pool1d(x, 2, return_indices=True)
    assert tga.gradcheck(lambda v: F.max_unpool1d(v, i, 2), rand(rng, 2, 3, 3, device=device))
    assert tga.gradcheck(
        lambda v: F.max_unpool2d(v, i.reshape(2, 3, 1, 3), (1, 2)), rand(rng, 2, 3, 1, 3, device=device)
    )
    with pytest.raises(
        ValueError, match=r"max_unpool1d: indices must be an integer Tensor of the input's shape \(2, 3, 3\)"
    ):
        F.max_unpool1d(y, i.float(), 2)


@pytest.mark.parametrize(
    ("name", "args", "kwargs"),
    [
        ("Conv1d", (3, 4, 3), {}),
        ("Conv2d", (3, 4, (2, 3)), {"stride": 2, "padding": 1, "dilation": 2, "bias": False}),
        ("Conv2d", (4, 4, 3), {"groups": 2, "padding": 1, "padding_mode": "reflect"}),
        ("ConvTranspose1d", (3, 4, 3), {"stride": 2, "output_padding": 1}),
        ("ConvTranspose2d", (4, 6, (3, 2)), {"padding": 1, "dilation": 2, "groups": 2, "bias": False}),
        ("ConvTranspose2d", (2, 3, 3), {}),
    ],
)
def test_conv_reprs_name_what_differs_from_the_defaults_as_pytorch(name, args, kwargs):
    assert repr(getattr(nn, name)(*args, **kwargs)) == repr(getattr(torch.nn, name)(*args, **kwargs))


@pytest.mark.parametrize("kernel", [(2, 3), (3, 3), (1, 4)])
def test_same_padding_keeps_what_pytorch_keeps(kernel, rng):
    # PyTorch pads a copy of the input for the odd part of 'same' padding (an even kernel), so
    # the convolution keeps the copy and the input may change in place before backward; with
    # an odd kernel it keeps the input itself, and the change raises.
    torch = pytest.importorskip("torch")
    x0, w0 = rng.standard_normal((1, 2, 4, 5)), rng.standard_normal((3, 2, *kernel))

    def attempt(m, conv):
        x, w = m.tensor(x0, requires_grad=True), m.tensor(w0, requires_grad=True)
        xi = x * 1.0
        y = conv(xi, w, padding="same")
        xi.add_(1.0)
        try:
            y.sum().backward()
        except RuntimeError:
            return "raises", None
        return "ok", w.grad

    ours, theirs = attempt(tga, F.conv2d), attempt(torch, torch.nn.functional.conv2d)
    assert ours[0] == theirs[0] == ("ok" if any(k % 2 == 0 for k in kernel) else "raises")
    if ours[1] is not None:
        close(ours[1], theirs[1].detach().numpy(), atol=1e-12)
