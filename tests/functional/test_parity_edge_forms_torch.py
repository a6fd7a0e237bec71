"""Calls PyTorch runs that a strict reading of the docs would refuse, with PyTorch's values and
gradients: adaptive average pooling to one entry at any rank (PyTorch's mean path runs before its
rank check), ``elu_``'s ``scale``/``input_scale``, ``hardtanh_`` with ``min_val > max_val`` (no bound
check in the in-place kernel), ``normalize(p=None)`` and ``soft_margin_loss`` with a target that
broadcasts to the input; and the type errors PyTorch raises before it reads the values."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from differential import builtin_class  # noqa: E402

import tinygrad_attn as tga  # noqa: E402


def _both(call, *arrays):
    """((our value, our gradient), (PyTorch's value, PyTorch's gradient)) of ``call(F, *tensors)``
    summed against fixed weights (the gradient of the first tensor only), or the exceptions."""
    found = []
    for lib in (tga, torch):
        xs = [lib.tensor(a.copy(), requires_grad=i == 0) for i, a in enumerate(arrays)]
        try:
            y = call(lib.nn.functional, *xs)
        except Exception as e:  # noqa: BLE001 - compared by the caller
            found.append(e)
            continue
        w = lib.tensor(np.linspace(0.5, 1.5, max(y.numel(), 1)).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        found.append((y.detach().numpy(), [x.grad.numpy() if x.grad is not None else None for x in xs]))
    return found


def _same(ours, theirs):
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"PyTorch raises {type(theirs).__name__}: {theirs}; we return"
        return
    assert not isinstance(ours, Exception), f"PyTorch runs, we raise {type(ours).__name__}: {ours}"
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, atol=1e-12)
    assert ours[0].shape == theirs[0].shape
    for g, tg in zip(ours[1], theirs[1]):
        if tg is None:
            assert g is None or not np.any(g)
        else:
            np.testing.assert_allclose(g, tg, rtol=1e-12, atol=1e-12)


SHAPES = [(3,), (2, 3), (1, 2, 3), (2, 1, 2, 3), (1, 2, 1, 2, 3), (1, 1, 1, 1, 2, 2)]
SIZES = [1, 2, (1, 1), (None, 1), (1, None), (1, 1, 1), (None, None, 1), (2, 1)]


@pytest.mark.parametrize(("shape", "size", "nd"), itertools.product(SHAPES, SIZES, (2, 3)))
def test_adaptive_average_pooling_to_one_entry_at_any_rank(shape, size, nd):
    a = np.random.default_rng(len(shape)).standard_normal(shape)
    ours, theirs = _both(lambda F, x: getattr(F, f"adaptive_avg_pool{nd}d")(x, size), a)
    _same(ours, theirs)


def test_adaptive_average_pooling_to_one_entry_is_differentiable():
    a = tga.tensor(np.random.default_rng(0).standard_normal((2, 3)), requires_grad=True)
    assert tga.gradcheck(lambda x: tga.nn.functional.adaptive_avg_pool2d(x, 1), a)
    b = tga.tensor(np.random.default_rng(0).standard_normal((1, 2, 3)), requires_grad=True)
    assert tga.autograd.gradgradcheck(lambda x: tga.nn.functional.adaptive_avg_pool3d(x, 1) ** 2, b)


# (no negative input_scale: PyTorch's in-place backward picks its branch by the sign of the result, which
# such a scale flips, so its gradient there is not the derivative)
@pytest.mark.parametrize(
    ("alpha", "scale", "input_scale"), itertools.product((1.0, 0.5, 0), (1.0, 2.0, 0), (1.0, 3.0, 0.0))
)
def test_elu_in_place_with_scales(alpha, scale, input_scale):
    a = np.linspace(-2.0, 2.0, 12).reshape(3, 4) + 0.05
    ours, theirs = _both(lambda F, x: F.elu_(x * 1.0, alpha, scale, input_scale), a)
    _same(ours, theirs)


@pytest.mark.parametrize(("lo", "hi"), [(-1.0, 1.0), (5.0, 1.0), (2.5, -3.0), (0.0, 0.0), (1.0, -1.0)])
def test_hardtanh_in_place_takes_any_bounds(lo, hi):
    a = np.linspace(-4.0, 4.0, 12).reshape(3, 4) + 0.05
    ours, theirs = _both(lambda F, x: F.hardtanh_(x * 1.0, lo, hi), a)
    _same(ours, theirs)
    with pytest.raises(ValueError) as theirs_error:
        torch.nn.functional.hardtanh(torch.tensor(a), 5.0, 1.0)
    with pytest.raises(type(theirs_error.value)):
        tga.nn.functional.hardtanh(tga.tensor(a), 5.0, 1.0)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_normalize_with_p_none_is_the_two_norm(dim):
    a = np.random.default_rng(1).standard_normal((3, 4))
    ours, theirs = _both(lambda F, x: F.normalize(x, None, dim), a)
    _same(ours, theirs)


@pytest.mark.parametrize("target", [(), (4,), (1, 4), (3, 1), (3, 4), (2, 3, 4), (3,), (4, 1)])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_soft_margin_loss_broadcasts_its_target_to_the_input(target, reduction):
    rng = np.random.default_rng(2)
    x, t = rng.standard_normal((3, 4)), np.sign(rng.standard_normal(target))
    ours, theirs = _both(lambda F, a, b: F.soft_margin_loss(a, b, reduction=reduction), x, t)
    _same(ours, theirs)


ONE_CALL_ERRORS = [
    lambda F, x: F.max_pool2d(x, 1.5),
    lambda F, x: F.avg_pool1d(x, None),
    lambda F, x: F.layer_norm(x, 1.5),
    lambda F, x: F.rms_norm(x, 2.5),
    lambda F, x: F.adaptive_max_pool2d(x, 1.5),
    lambda F, x: F.adaptive_avg_pool1d(x, None),
    lambda F, x: F.fractional_max_pool2d(x, 1.5, output_size=1),
    lambda F, x: F.fractional_max_pool2d(x, 1.5),
    lambda F, x: F.kl_div(x, 0.5),
    lambda F, x: F.soft_margin_loss(x, 1),
    lambda F, x: F.hinge_embedding_loss(x, 1.0),
    lambda F, x: F.multilabel_margin_loss(x, 1),
    lambda F, x: F.multi_margin_loss(x, 1),
    lambda F, x: F.multi_margin_loss(x, 1, 3),
    lambda F, x: F.cross_entropy(x, 1),
    lambda F, x: F.nll_loss(x, None),
    lambda F, x: F.poisson_nll_loss(x, 2),
    lambda F, x: F.binary_cross_entropy_with_logits(x, x.sigmoid(), pos_weight=2.0),
    lambda F, x: F.binary_cross_entropy_with_logits(x, x.sigmoid(), None, True),
]


#: (PyTorch's fractional pooling reads the input's rank in Python before it parses kernel_size: its class on
#: a 2-D input is its rank check's IndexError, ours our rank check's error)
_RANK_FIRST = {6, 7}


@pytest.mark.parametrize("shape", [(2, 3), (1, 2, 3), (1, 1, 4, 4)])
@pytest.mark.parametrize("index", range(len(ONE_CALL_ERRORS)))
def test_a_wrong_type_raises_pytorchs_class_before_the_values_are_read(shape, index):
    if index in _RANK_FIRST and len(shape) < 3:
        return
    call = ONE_CALL_ERRORS[index]
    a = np.random.default_rng(3).standard_normal(shape)
    try:
        call(torch.nn.functional, torch.tensor(a))
    except Exception as e:  # noqa: BLE001
        theirs = e
    else:
        theirs = None
    if theirs is None:
        call(tga.nn.functional, tga.tensor(a))
        return
    with pytest.raises(type(theirs)):
        call(tga.nn.functional, tga.tensor(a))


def _outcome(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 - compared by the caller
        return type(e)
    return None


def _same_outcome(call):
    theirs, ours = _outcome(lambda: call(torch)), _outcome(lambda: call(tga))
    if theirs is None:
        assert ours is None, f"PyTorch runs, we raise {ours.__name__}"
    else:
        assert ours is not None and issubclass(ours, theirs), f"PyTorch raises {theirs.__name__}, we {ours}"


DTYPES = ["float32", "float64", "int64", "int32", "uint8", "bool"]


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rank", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize(("p", "training"), [(0.5, True), (0.5, False), (0.0, True), (1.0, True)])
def test_channel_dropout_refuses_what_pytorch_refuses(name, dtype, rank, p, training):
    def call(lib):
        x = lib.ones((2,) * rank, dtype=getattr(lib, dtype))
        with __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore")
            getattr(lib.nn.functional, name)(x, p, training)

    _same_outcome(call)


@pytest.mark.parametrize(("a", "b"), itertools.product(DTYPES[:5] + ["float16"], repeat=2))
def test_cross_and_prelu_refuse_two_dtypes(a, b):
    _same_outcome(
        lambda lib: lib.linalg.cross(lib.ones(2, 3, dtype=getattr(lib, a)), lib.ones(2, 3, dtype=getattr(lib, b)))
    )
    _same_outcome(
        lambda lib: lib.cross(lib.ones(2, 3, dtype=getattr(lib, a)), lib.ones(2, 3, dtype=getattr(lib, b)), 1)
    )
    _same_outcome(
        lambda lib: lib.nn.functional.prelu(
            lib.ones(2, 3, dtype=getattr(lib, a)), lib.full((3,), 0.25, dtype=getattr(lib, b))
        )
    )


@pytest.mark.parametrize("args", [(), (0,), (5,), (2, 4), (0, 0), (3, 1), (None,), (None, 4), (-2, 3)])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_random_bounds_refused_where_pytorchs_are(args, dtype):
    _same_outcome(lambda lib: lib.zeros(4, dtype=getattr(lib, dtype)).random_(*args))


@pytest.mark.parametrize("name", ["std", "var", "std_mean", "var_mean"])
@pytest.mark.parametrize("unbiased", [True, False, 0, 1, 1.0])  # (not None: ours is the default, "not given")
def test_unbiased_is_a_bool(name, unbiased):
    _same_outcome(lambda lib: getattr(lib, name)(lib.ones(2, 3), 0, unbiased))
    _same_outcome(lambda lib: getattr(lib.ones(2, 3), name.split("_")[0])(0, unbiased))


@pytest.mark.parametrize("rank", [0, 1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("mode", ["nearest", "linear", "bilinear", "trilinear", "area", "bicubic"])
def test_interpolate_of_each_rank_raises_pytorchs_class(rank, mode):
    _same_outcome(lambda lib: lib.nn.functional.interpolate(lib.ones((2,) * rank), scale_factor=2.0, mode=mode))


@pytest.mark.parametrize("name", ["binary_cross_entropy", "binary_cross_entropy_with_logits"])
@pytest.mark.parametrize("target", [0, 1.5, None, "a", True, "t0", "t23", "t3", "t23f"])
@pytest.mark.parametrize("weight", [None, 0, "t3"])
def test_binary_cross_entropy_targets_and_weights_raise_pytorchs_class(name, target, weight):
    made = {
        "t0": lambda lib: lib.tensor(0.5, dtype=lib.float64),
        "t23": lambda lib: lib.full((2, 3), 0.5, dtype=lib.float64),
        "t3": lambda lib: lib.full((3,), 0.5, dtype=lib.float64),
        "t23f": lambda lib: lib.full((2, 3), 0.5, dtype=lib.float32),
    }

    def call(lib):
        t = made[target](lib) if target in made else target
        w = made[weight](lib) if weight in made else weight
        getattr(lib.nn.functional, name)(lib.full((2, 3), 0.25, dtype=lib.float64), t, w)

    theirs, ours = _outcome(lambda: call(torch)), _outcome(lambda: call(tga))
    if theirs is AttributeError:  # (PyTorch's Python reads target.size(): an accident of its code, ours TypeError)
        theirs = TypeError
    if theirs is None:
        assert ours is None, f"PyTorch runs, we raise {ours.__name__}"
    else:
        assert ours is not None and issubclass(ours, theirs), f"PyTorch raises {theirs.__name__}, we {ours}"


@pytest.mark.parametrize("repeats", [2, 1.5, "ti", "tf", [1, 2, 0]])
def test_repeat_interleave_and_histogram_refuse_floats(repeats):
    made = {"ti": lambda lib: lib.tensor([1, 2, 0]), "tf": lambda lib: lib.tensor([1.0, 2.0, 0.0])}

    def call(lib):
        r = made[repeats](lib) if repeats in made else repeats
        lib.repeat_interleave(lib.arange(3.0), lib.tensor(r) if isinstance(r, list) else r)

    _same_outcome(call)
    _same_outcome(lambda lib: lib.histogram(lib.arange(6.0), 2.5 if repeats == 1.5 else 3))
    _same_outcome(lambda lib: lib.norm_except_dim(lib.ones(2, 3), 1.5 if repeats == 1.5 else 2))


@pytest.mark.parametrize("shape", [(2, 3), (1, 3), (1, 3, 1), (1, 4), (1, 4, 2), (2, 4), (3, 4, 1)])
@pytest.mark.parametrize("groups", [0, 1, 2, 3, 4, 5, -1])
@pytest.mark.parametrize("free", [False, True])
def test_group_norm_checks_the_batch_in_f_only_before_the_groups(shape, groups, free):
    """``F.group_norm`` counts the values per group as ``N * C // num_groups`` times the positions first (0
    groups: its ``ZeroDivisionError``; one value: its ``ValueError``); ``torch.group_norm`` has no such check
    and refuses ``num_groups < 1`` with a ``RuntimeError``: classes, values and gradients as PyTorch's."""
    a = np.random.default_rng(4).standard_normal(shape)
    ours, theirs = _both_free(groups, a) if free else _both(lambda F, x: F.group_norm(x, groups), a)
    if isinstance(theirs, Exception):
        assert isinstance(ours, type(theirs)), f"PyTorch raises {type(theirs).__name__}: {theirs}; ours {ours!r}"
    _same(ours, theirs)


def _both_free(groups, a):
    """:func:`_both` of ``torch.group_norm(x, groups)``, each library's own."""
    found = []
    for lib in (tga, torch):
        x = lib.tensor(a.copy(), requires_grad=True)
        try:
            y = lib.group_norm(x, groups)
        except Exception as e:  # noqa: BLE001 - compared by the caller
            found.append(e)
            continue
        w = lib.tensor(np.linspace(0.5, 1.5, max(y.numel(), 1)).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        found.append((y.detach().numpy(), [x.grad.numpy()]))
    return found


LOSS_ORDER_CALLS = [
    "F.binary_cross_entropy(x, t)", "F.binary_cross_entropy_with_logits(x, t)", "F.nll_loss(x, t.long())",
    "torch.binary_cross_entropy_with_logits(x, t)", "F.cross_entropy(x, t.long())",
]  # fmt: skip


#: (torch.binary_cross_entropy_with_logits broadcasts a float target, which ours refuses: its integer inputs only)
LOSS_ORDER_CASES = [
    (call, dtype) for call in LOSS_ORDER_CALLS for dtype in ("int64", "float64") if dtype == "int64" or call[0] == "F"
]


@pytest.mark.parametrize(("call", "dtype"), LOSS_ORDER_CASES)
@pytest.mark.parametrize("shapes", [((1, 3), (2, 3)), ((2, 3), (2, 3)), ((2, 3), (2,))])
def test_a_loss_compares_the_sizes_before_the_dtype_as_pytorch(call, dtype, shapes):
    """``F``'s losses compare the sizes in Python (``ValueError``) before the kernel refuses an integer
    input; ``torch.binary_cross_entropy_with_logits`` is the kernel alone, its dtype check first."""
    found = []
    for lib in (torch, tga):
        x = lib.zeros(shapes[0], dtype=getattr(lib, dtype))
        t = lib.zeros(shapes[1], dtype=lib.float64)
        try:
            eval(call, {"F": lib.nn.functional, "torch": lib, "x": x, "t": t})  # noqa: S307 - the table above
            found.append(None)
        except Exception as e:  # noqa: BLE001 - compared below
            found.append(type(e))
    theirs, ours = found
    assert (theirs is None) == (ours is None), f"PyTorch {theirs}, ours {ours}"
    if theirs is not None:
        assert issubclass(ours, builtin_class(theirs)), f"PyTorch {theirs.__name__}, ours {ours.__name__}"
