"""The names of ``dir(torch)`` that the ``torch`` inventory (``tools/inventory.py``) lists as
present, held to PyTorch's: each function of tensors runs on the same inputs on both sides
(float64 and float32, a few shapes each), values compared, and, where it is differentiable,
the gradients of a random weighting of its outputs (``tga.autograd.grad`` against
``torch.autograd.grad``); the rest (dtypes, memory formats, switches, ``tga.testing``,
``tga.func``, windows, factories) by what PyTorch gives for them.

``NEW_NAMES`` are the names the torch inventory gained; ``test_every_new_name_is_tested``
fails when one has no case here.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

NEW_NAMES = frozenset(
    """
GradScaler empty_strided is_complex adaptive_avg_pool1d adaptive_max_pool1d affine_grid_generator alias_copy alpha_dropout alpha_dropout_
asarray avg_pool1d bartlett_window batch_norm bilinear binary_cross_entropy_with_logits blackman_window celu celu_
chain_matmul channel_shuffle channels_last channels_last_3d cholesky clone contiguous_format conv_tbc convolution
cosine_embedding_loss ctc_loss detach detach_ detach_copy diagonal_copy dropout dropout_ dtype embedding
feature_alpha_dropout feature_alpha_dropout_ feature_dropout feature_dropout_ fill_ frobenius_norm frombuffer func
get_deterministic_debug_mode grid_sampler grid_sampler_2d grid_sampler_3d gru_cell hamming_window hann_window
hardshrink hinge_embedding_loss i0_ instance_norm is_anomaly_check_nan_enabled is_anomaly_enabled is_distributed
is_floating_point is_nonzero is_same_size is_signed is_warn_always_enabled kaiser_window kl_div layer_norm lstm_cell
lstsq margin_ranking_loss matrix_rank max_pool1d max_pool1d_with_indices max_pool2d max_pool3d memory_format
native_channel_shuffle native_dropout newaxis norm_except_dim nuclear_norm pdist permute_copy pinverse pixel_shuffle
pixel_unshuffle poisson_nll_loss prelu preserve_format range resize_as_ rnn_relu_cell rnn_tanh_cell rrelu rrelu_
select_copy selu selu_ set_anomaly_enabled set_default_tensor_type set_deterministic_debug_mode set_warn_always signal
slice_copy solve split_copy split_with_sizes_copy squeeze_copy symeig t_copy testing threshold threshold_
transpose_copy triplet_margin_loss typename uint16 uint32 uint64 unbind_copy unfold_copy unsqueeze_copy view_copy vmap
windows zero_
""".split()
)


# -- the inputs: arrays made into either library's tensors ------------------------------------
@dataclass(frozen=True)
class Flt:
    """A float tensor of ``shape`` (standard normal, or ``make`` of the generator), differentiated
    when ``grad`` (and the case is)."""

    shape: tuple[int, ...]
    make: Callable[[np.random.Generator, tuple[int, ...]], np.ndarray] | None = None
    grad: bool = True


@dataclass(frozen=True)
class Arr:
    """A tensor of these values in their own dtype (integers, bool: never differentiated)."""

    values: Any


def _positive(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.2, 2.0, shape)


def _unit(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.05, 0.95, shape)


def _signs(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0)


def _spd(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _log_probs(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    z = rng.standard_normal(shape)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def _away_from_kinks(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normal values kept 0.05 away from the kinks of the piecewise functions (0, +-0.5, 1)."""
    x = rng.standard_normal(shape)
    for kink in (0.0, 0.5, -0.5, 1.0):
        x = np.where(np.abs(x - kink) < 0.05, kink + 0.1, x)
    return x


@dataclass
class Case:
    """``tga.<name>(*args)`` against ``torch.<name>(*args)``; ``variants`` are the argument lists
    (one per shape), ``seeded`` reseeds both generators first (random draws), ``grad`` compares
    gradients too."""

    name: str
    variants: list[list[Any]]
    kwargs: dict = field(default_factory=dict)
    grad: bool = True
    seeded: bool = False
    call: Callable[..., Any] | None = None  # (lib, *args) -> result, where the call is not lib.name(*args)
    label: str = ""

    @property
    def id(self) -> str:
        return self.label or self.name


def _make(spec: Any, lib: Any, dtype: str, rng: np.random.Generator, grad: bool, seen: list) -> Any:
    if isinstance(spec, Flt):
        arr = (spec.make or (lambda r, s: r.standard_normal(s)))(rng, spec.shape).astype(dtype)
        t = lib.tensor(arr, requires_grad=grad and spec.grad)
        if grad and spec.grad:
            seen.append(t)
        return t
    if isinstance(spec, Arr):
        return lib.tensor(np.asarray(spec.values))
    if isinstance(spec, tuple) and spec and all(isinstance(s, (Flt, Arr)) for s in spec):
        return tuple(_make(s, lib, dtype, rng, grad, seen) for s in spec)
    return spec


def _flat(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in _flat(x)]
    return [out]


def _host(x: Any) -> Any:
    if isinstance(x, tga.Tensor):
        return x.detach().numpy()
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return x


def _tolerance(dtype: str) -> dict:
    return {"rtol": 1e-9, "atol": 1e-10} if dtype == "float64" else {"rtol": 2e-5, "atol": 2e-5}


def _run(case: Case, lib: Any, args: list, dtype: str, grad: bool) -> tuple[list, list]:
    rng = np.random.default_rng(7)
    seen: list = []
    made = [_make(a, lib, dtype, rng, grad, seen) for a in args]
    if case.seeded:
        lib.manual_seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = case.call(lib, *made) if case.call else getattr(lib, case.name)(*made, **case.kwargs)
    return _flat(out), seen


CASES = [
    # nn.functional's computations under torch.X (the same arguments, or ATen's)
    Case("adaptive_avg_pool1d", [[Flt((2, 3, 7)), 3], [Flt((3, 5)), 2]]),
    Case("adaptive_max_pool1d", [[Flt((2, 3, 7)), 3], [Flt((2, 4, 5)), 2]]),
    Case("avg_pool1d", [[Flt((2, 3, 7)), 3], [Flt((1, 2, 6)), 2, 1, 1, True, False]]),
    Case("max_pool1d", [[Flt((2, 3, 7)), 3], [Flt((1, 2, 8)), 3, 2, 1, 1, True]]),
    Case("max_pool1d_with_indices", [[Flt((2, 3, 7)), 3], [Flt((1, 2, 8)), 2, 1]]),
    Case("max_pool2d", [[Flt((2, 2, 5, 6)), 2], [Flt((1, 3, 7, 5)), 3, 2, 1]]),
    Case("max_pool3d", [[Flt((1, 2, 4, 5, 4)), 2], [Flt((1, 1, 5, 5, 5)), 3, 2, 1]]),
    Case("bilinear", [[Flt((4, 3)), Flt((4, 2)), Flt((5, 3, 2)), Flt((5,))], [Flt((2, 3, 3)), Flt((2, 3, 2)),
                                                                                 Flt((4, 3, 2))]]),
    Case("celu", [[Flt((3, 4))], [Flt((2, 3, 2)), 0.7]]),
    Case("selu", [[Flt((3, 4))], [Flt((5,))]]),
    Case("hardshrink", [[Flt((3, 4), _away_from_kinks)], [Flt((6,), _away_from_kinks), 0.3]]),
    Case("threshold", [[Flt((3, 4), _away_from_kinks), 0.1, -2.0], [Flt((2, 5), _away_from_kinks), -0.5, 0.0]]),
    Case("prelu", [[Flt((2, 3, 4), _away_from_kinks), Flt((3,))], [Flt((4, 5), _away_from_kinks), Flt((1,))]]),
    Case("rrelu", [[Flt((3, 4), _away_from_kinks)], [Flt((5,), _away_from_kinks), 0.1, 0.2]]),
    # (training: the slopes drawn for the negative entries are compared by their range, below)
    Case("rrelu", [[Flt((3, 4), _away_from_kinks), 0.1, 0.3, True]], label="rrelu_training",
         call=lambda lib, x, lo, hi, train: (lambda y: (y.clamp(min=0), (y < x * hi) | (y > x * lo)))(
             lib.rrelu(x, lo, hi, train))),
    Case("channel_shuffle", [[Flt((2, 6, 3)), 3], [Flt((1, 4, 2, 2)), 2]]),
    Case("native_channel_shuffle", [[Flt((2, 6, 3)), 2]], grad=False),  # (PyTorch has no derivative for it)
    Case("pixel_shuffle", [[Flt((1, 8, 2, 3)), 2], [Flt((2, 9, 2, 2)), 3]]),
    Case("pixel_unshuffle", [[Flt((1, 2, 4, 6)), 2], [Flt((2, 1, 3, 3)), 3]]),
    Case("pdist", [[Flt((5, 3))], [Flt((4, 2)), 1.0]]),
    Case("conv_tbc", [[Flt((6, 2, 3)), Flt((3, 3, 4)), Flt((4,))], [Flt((5, 1, 2)), Flt((2, 2, 3)), Flt((3,)), 1]]),
    Case("convolution", [[Flt((2, 3, 7)), Flt((4, 3, 3)), Flt((4,)), [1], [1], [1], False, [0], 1],
                         [Flt((1, 4, 5, 5)), Flt((4, 2, 3, 3)), None, [2, 1], [1, 0], [1, 1], False, [0, 0], 2],
                         [Flt((1, 2, 4)), Flt((2, 3, 3)), Flt((3,)), [2], [1], [1], True, [1], 1]]),
    Case("layer_norm", [[Flt((3, 4)), [4]], [Flt((2, 3, 4)), [3, 4], Flt((3, 4)), Flt((3, 4)), 1e-5]]),
    Case("batch_norm", [[Flt((4, 3, 2)), Flt((3,)), Flt((3,)), Flt((3,), grad=False), Flt((3,), _positive, grad=False),
                         True, 0.1, 1e-5, False],
                        [Flt((4, 3)), None, None, Flt((3,), grad=False), Flt((3,), _positive, grad=False), False, 0.1,
                         1e-5, False]]),
    Case("instance_norm", [[Flt((2, 3, 5)), Flt((3,)), Flt((3,)), None, None, True, 0.1, 1e-5, False]]),
    Case("embedding", [[Flt((6, 3)), Arr([[0, 2, 5], [1, 1, 0]])], [Flt((5, 2)), Arr([4, 0, 4]), 4],
                       [Flt((4, 3)), Arr([1, 3]), -1, True]]),
    Case("kl_div", [[Flt((3, 4)), Flt((3, 4), _unit)], [Flt((5,)), Flt((5,), _unit), 1],
                    [Flt((2, 3)), Flt((2, 3)), 2], [Flt((2, 3)), Flt((2, 3))]],
         call=lambda lib, x, t, *r: lib.kl_div(x, t, *r[:1], log_target=len(r) == 1 and r[0] == 2)),
    Case("binary_cross_entropy_with_logits", [[Flt((3, 4)), Flt((3, 4), _unit)],
                                              [Flt((5,)), Flt((5,), _unit), Flt((5,), _positive, grad=False), Flt((5,), _positive, grad=False), 1],
                                              [Flt((2, 3)), Flt((2, 3), _unit), None, None, 2]]),
    Case("cosine_embedding_loss", [[Flt((4, 3)), Flt((4, 3)), Flt((4,), _signs, grad=False)],
                                   [Flt((5, 2)), Flt((5, 2)), Flt((5,), _signs, grad=False), 0.2, 1]]),
    Case("hinge_embedding_loss", [[Flt((3, 4), _away_from_kinks), Flt((3, 4), _signs, grad=False)],
                                  [Flt((6,), _away_from_kinks), Flt((6,), _signs, grad=False), 0.5, 2]]),
    Case("margin_ranking_loss", [[Flt((5,)), Flt((5,)), Flt((5,), _signs, grad=False)],
                                 [Flt((4,)), Flt((4,)), Flt((4,), _signs, grad=False), 0.3, 1]]),
    Case("triplet_margin_loss", [[Flt((4, 3)), Flt((4, 3)), Flt((4, 3))],
                                 [Flt((3, 5)), Flt((3, 5)), Flt((3, 5)), 2.0, 1.0, 1e-6, True, 2]]),
    Case("poisson_nll_loss", [[Flt((3, 4)), Flt((3, 4), _positive), True, False, 1e-8, 0],
                              [Flt((5,), _positive), Flt((5,), _positive), False, True, 1e-8, 1]]),
    Case("ctc_loss", [[Flt((6, 2, 4), _log_probs), Arr([[1, 2], [3, 1]]), [6, 5], [2, 2]],
                      [Flt((7, 1, 3), _log_probs), Arr([[1, 2, 1]]), [7], [3], 0, 1]]),
    Case("grid_sampler", [[Flt((1, 2, 4, 5)), Flt((1, 3, 2, 2), lambda r, s: r.uniform(-1.1, 1.1, s)), 0, 0, False],
                          [Flt((2, 1, 3, 3)), Flt((2, 2, 2, 2), lambda r, s: r.uniform(-1, 1, s)), 0, 1, True]]),
    Case("grid_sampler_2d", [[Flt((1, 2, 4, 5)), Flt((1, 3, 2, 2), lambda r, s: r.uniform(-1, 1, s)), 0, 2, False]]),
    Case("grid_sampler_3d", [[Flt((1, 2, 3, 4, 3)), Flt((1, 2, 2, 2, 3), lambda r, s: r.uniform(-1, 1, s)), 0, 0,
                              False]]),
    Case("affine_grid_generator", [[Flt((2, 2, 3)), [2, 3, 4, 5], False], [Flt((1, 3, 4)), [1, 1, 2, 3, 2], True]]),
    # dropouts: the identity unless training; training, the same draws for one seed
    *[Case(n, [[Flt((3, 4, 2)), 0.3, False], [Flt((4, 5)), 0.0, True]], label=f"{n}_eval")
      for n in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout")],
    *[Case(n, [[Flt((3, 4, 2)), 0.3, True], [Flt((2, 3, 4, 2)), 0.5, True]], seeded=True)
      for n in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout", "native_dropout")],
    # the in-place twins, on a copy of the input
    *[Case(n, [[Flt((3, 4), grad=False), *extra]], grad=False, call=(lambda name: lambda lib, x, *a: getattr(lib, name)(
        x.clone(), *a))(n))
      for n, extra in (("celu_", [0.5]), ("selu_", []), ("threshold_", [0.1, 5.0]), ("rrelu_", []), ("i0_", []),
                       ("dropout_", [0.2, False]), ("alpha_dropout_", [0.2, False]), ("feature_dropout_", [0.2, False]),
                       ("feature_alpha_dropout_", [0.2, False]), ("fill_", [2.5]), ("zero_", []))],
    *[Case(n, [[Flt((3, 4, 2), grad=False), 0.4, True]], grad=False, seeded=True, label=f"{n}_training",
           call=(lambda name: lambda lib, x, *a: getattr(lib, name)(x.clone(), *a))(n))
      for n in ("dropout_", "alpha_dropout_", "feature_dropout_", "feature_alpha_dropout_")],
    # methods as free functions
    Case("clone", [[Flt((3, 4))], [Flt(())]]),
    Case("detach", [[Flt((3, 4), grad=False)]], grad=False),
    Case("detach_", [[Flt((3,), grad=False)]], grad=False, call=lambda lib, x: lib.detach_(x * 2)),
    Case("resize_as_", [[Flt((2, 3), grad=False), Flt((3, 2), grad=False)]], grad=False,
         call=lambda lib, x, t: lib.resize_as_(x.clone(), t)),
    *[Case(n, [[Flt((2, 3))], [Arr([1, 2])], [Arr(np.array([1, 2], np.uint8))], [Arr([True])]], grad=False)
      for n in ("is_floating_point", "is_signed", "is_distributed", "is_complex")],
    Case("is_complex", [[Arr(np.array([1 + 2j], np.complex64))]], grad=False, label="is_complex_of_complex"),
    Case("is_nonzero", [[Arr([0.0])], [Arr([3])], [Arr(True)]], grad=False),
    Case("is_same_size", [[Flt((2, 3)), Flt((2, 3))], [Flt((2, 3)), Flt((3, 2))]], grad=False),
    # the copies of views
    Case("alias_copy", [[Flt((3, 4))]]),
    Case("detach_copy", [[Flt((3, 4), grad=False)]], grad=False),
    Case("diagonal_copy", [[Flt((3, 4))], [Flt((2, 3, 4)), 1, 2, 0]]),
    Case("permute_copy", [[Flt((2, 3, 4)), [2, 0, 1]]]),
    Case("select_copy", [[Flt((2, 3, 4)), 1, -1]]),
    Case("slice_copy", [[Flt((4, 5)), 1, 1, 4, 2], [Flt((6,))]]),
    Case("split_copy", [[Flt((5, 3)), 2], [Flt((3, 4)), 3, 1]]),
    Case("split_with_sizes_copy", [[Flt((5, 3)), [2, 3]], [Flt((3, 4)), [1, 3], 1]]),
    Case("squeeze_copy", [[Flt((1, 3, 1))], [Flt((1, 3, 1)), 2]]),
    Case("t_copy", [[Flt((3, 4))], [Flt((3,))]]),
    Case("transpose_copy", [[Flt((2, 3, 4)), 0, 2]]),
    Case("unbind_copy", [[Flt((3, 4))], [Flt((3, 4)), 1]]),
    Case("unfold_copy", [[Flt((3, 7)), 1, 3, 2]]),
    Case("unsqueeze_copy", [[Flt((3, 4)), 1], [Flt((3,)), -1]]),
    Case("view_copy", [[Flt((3, 4)), [2, 6]], [Flt((2, 3)), [-1]]]),
    # linear algebra's older spellings
    Case("cholesky", [[Flt((3, 3), _spd)], [Flt((2, 4, 4), _spd), True]]),
    Case("pinverse", [[Flt((3, 4))], [Flt((2, 4, 3)), 1e-10]]),
    Case("chain_matmul", [[Flt((2, 3)), Flt((3, 4)), Flt((4, 2))], [Flt((3, 3))]]),
    Case("frobenius_norm", [[Flt((3, 4)), [0, 1]], [Flt((2, 3, 4)), [2], True]]),
    Case("nuclear_norm", [[Flt((3, 4))], [Flt((3, 4)), True], [Flt((2, 3, 4)), [1, 2]]]),
    Case("norm_except_dim", [[Flt((3, 4))], [Flt((2, 3, 4)), 3, 1], [Flt((2, 3)), 2, -1]]),
    # recurrent cells
    Case("rnn_tanh_cell", [[Flt((2, 3)), Flt((2, 4)), Flt((4, 3)), Flt((4, 4)), Flt((4,)), Flt((4,))],
                           [Flt((3, 2)), Flt((3, 2)), Flt((2, 2)), Flt((2, 2))]]),
    Case("rnn_relu_cell", [[Flt((2, 3)), Flt((2, 4)), Flt((4, 3)), Flt((4, 4)), Flt((4,)), Flt((4,))]]),
    Case("gru_cell", [[Flt((2, 3)), Flt((2, 4)), Flt((12, 3)), Flt((12, 4)), Flt((12,)), Flt((12,))],
                      [Flt((1, 2)), Flt((1, 3)), Flt((9, 2)), Flt((9, 3))]]),
    Case("lstm_cell", [[Flt((2, 3)), (Flt((2, 4)), Flt((2, 4))), Flt((16, 3)), Flt((16, 4)), Flt((16,)),
                        Flt((16,))]]),
]  # fmt: skip


def _case_params() -> list:
    return [pytest.param(c, i, d, id=f"{c.id}-{i}-{d}") for c in CASES for i in range(len(c.variants))
            for d in ("float64", "float32")]  # fmt: skip


@pytest.mark.parametrize("case, variant, dtype", _case_params())
def test_values_and_gradients_match_torch(case: Case, variant: int, dtype: str) -> None:
    args = case.variants[variant]
    ours, our_inputs = _run(case, tga, args, dtype, case.grad)
    theirs, their_inputs = _run(case, torch, args, dtype, case.grad)
    assert len(ours) == len(theirs), (case.id, len(ours), len(theirs))
    tol = _tolerance(dtype)
    for o, t in zip(ours, theirs):
        if isinstance(t, torch.Tensor):
            assert isinstance(o, tga.Tensor), (case.id, type(o))
            assert tuple(o.shape) == tuple(t.shape), (case.id, o.shape, t.shape)
            assert str(o.dtype) == str(t.dtype), (case.id, o.dtype, t.dtype)
            np.testing.assert_allclose(_host(o), _host(t), err_msg=case.id, **tol)
        else:
            assert o == t and type(o) is type(t), (case.id, o, t)
    if not case.grad or not their_inputs:
        return
    outs = [(o, t) for o, t in zip(ours, theirs) if isinstance(t, torch.Tensor) and t.requires_grad]
    rng = np.random.default_rng(11)
    weights = [rng.standard_normal(tuple(t.shape)).astype(dtype) for _, t in outs]
    g_ours = tga.autograd.grad([o for o, _ in outs], our_inputs, [tga.tensor(w) for w in weights], allow_unused=True)
    g_theirs = torch.autograd.grad([t for _, t in outs], their_inputs, [torch.tensor(w) for w in weights],
                                   allow_unused=True)  # fmt: skip
    for i, (go, gt) in enumerate(zip(g_ours, g_theirs)):
        if gt is None:
            assert go is None or not np.any(_host(go)), (case.id, i)
            continue
        assert go is not None, (case.id, i)
        np.testing.assert_allclose(_host(go), _host(gt), err_msg=f"{case.id}: gradient of input {i}",
                                   **({"rtol": 1e-8, "atol": 1e-9} if dtype == "float64" else {"rtol": 1e-4, "atol": 1e-4}))  # fmt: skip


@pytest.mark.filterwarnings("ignore:.*frobenius_norm is deprecated")  # (as PyTorch's, it warns)
def test_create_graph_through_the_new_functions() -> None:
    """Second-order gradients run through the adapters (the loss's Hessian-vector product)."""
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))

    def hvp(lib: Any) -> np.ndarray:
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w)
        loss = lib.triplet_margin_loss(xt, xt.tanh(), lib.tensor(x[::-1].copy()), 1.0, 2.0, 1e-6, False, 1)
        loss = loss + lib.selu(xt @ wt.T).pow(2).sum() + lib.frobenius_norm(xt, [0, 1])
        (g,) = lib.autograd.grad(loss, xt, create_graph=True)
        (h,) = lib.autograd.grad((g * lib.tensor(w[:3])).sum(), xt)
        return _host(h)

    np.testing.assert_allclose(hvp(tga), hvp(torch), rtol=1e-8, atol=1e-10)


# -- the names that are not functions of tensors ---------------------------------------------------
def test_dtypes_and_the_dtype_class() -> None:
    for name in ("uint16", "uint32", "uint64"):
        assert np.dtype(getattr(tga, name)) == np.dtype(name)
        t = tga.tensor([1, 2], dtype=getattr(tga, name))
        assert str(t.dtype) == str(getattr(torch, name))
        assert t.tolist() == torch.tensor([1, 2], dtype=getattr(torch, name)).tolist()
    for t in (tga.ones(2), tga.ones(2, dtype=tga.int64), tga.ones(2, dtype=tga.uint16)):
        assert isinstance(t.dtype, tga.dtype)
    assert isinstance(tga.float32, tga.dtype) and not isinstance("float32", tga.dtype)


def test_memory_formats_and_newaxis() -> None:
    names = ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d")
    for name in names:
        assert isinstance(getattr(tga, name), tga.memory_format)
        assert repr(getattr(tga, name)).endswith(name)
    assert len({id(getattr(tga, n)) for n in names}) == 4
    assert torch.newaxis is None and tga.newaxis is None
    x = np.arange(6.0).reshape(2, 3)
    assert tuple(tga.tensor(x)[:, tga.newaxis].shape) == tuple(torch.tensor(x)[:, torch.newaxis].shape)
    y = tga.clone(tga.tensor(x), memory_format=tga.preserve_format)
    np.testing.assert_array_equal(_host(y), x)


@pytest.mark.parametrize("obj", [lambda lib: lib.ones(2), lambda lib: lib.ones(2, dtype=lib.int64), lambda lib: 3,
                                 lambda lib: "s", lambda lib: len, lambda lib: [1], lambda lib: np.zeros(1),
                                 lambda lib: math.sqrt, lambda lib: np.float64])  # fmt: skip
def test_typename(obj: Callable) -> None:
    assert tga.typename(obj(tga)) == torch.typename(obj(torch))


def test_set_default_tensor_type() -> None:
    try:
        for t in ("DoubleTensor", "FloatTensor"):
            with pytest.warns(UserWarning, match="deprecated"):
                tga.set_default_tensor_type(getattr(tga, t))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.set_default_tensor_type(getattr(torch, t))
            assert str(tga.get_default_dtype()) == str(torch.get_default_dtype())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tga.set_default_tensor_type("torch.DoubleTensor")
            assert tga.get_default_dtype() == tga.float64
            with pytest.raises(TypeError, match="floating"):
                tga.set_default_tensor_type(tga.LongTensor)
            with pytest.raises(TypeError, match="floating"):
                torch.set_default_tensor_type(torch.LongTensor)
    finally:
        tga.set_default_dtype(tga.float32)
        torch.set_default_dtype(torch.float32)


def test_anomaly_warn_always_and_deterministic_debug_mode() -> None:
    try:
        for lib in (tga, torch):
            lib.set_anomaly_enabled(True, False)
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
            lib.set_anomaly_enabled(False)
            assert not lib.is_anomaly_enabled()
            lib.set_warn_always(True)
            assert lib.is_warn_always_enabled()
            lib.set_warn_always(False)
            assert not lib.is_warn_always_enabled()
            for mode, number in (("warn", 1), ("error", 2), ("default", 0), (1, 1), (0, 0)):
                lib.set_deterministic_debug_mode(mode)
                assert lib.get_deterministic_debug_mode() == number
                assert lib.are_deterministic_algorithms_enabled() == (number != 0)
            for bad in ("sometimes", 5):
                with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
                    lib.set_deterministic_debug_mode(bad)
    finally:
        for lib in (tga, torch):
            lib.set_anomaly_enabled(False)
            lib.set_deterministic_debug_mode(0)


@pytest.mark.parametrize("lib", [tga, torch], ids=["tga", "torch"])
def test_anomaly_enabled_detects_nan(lib: Any) -> None:
    x = lib.tensor([-1.0], requires_grad=True)
    try:
        lib.set_anomaly_enabled(True)
        with pytest.raises(RuntimeError), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's own note of the NaN)
            lib.autograd.grad(x.sqrt().sum(), x)
    finally:
        lib.set_anomaly_enabled(False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lib.autograd.grad(x.sqrt().sum(), x)  # (off again: no error)


@pytest.mark.parametrize("name", ["matrix_rank", "solve", "lstsq", "symeig", "eig"])
def test_removed_linalg_functions_raise_as_pytorch(name: str) -> None:
    for lib in (tga, torch):
        tensors = [lib.eye(2)] * (2 if name in ("solve", "lstsq") else 1)
        with pytest.raises(RuntimeError, match="removed"):
            getattr(lib, name)(*tensors)


# -- factories --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])  # fmt: skip
@pytest.mark.parametrize("length", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows(name: str, length: int, periodic: bool, dtype: str) -> None:
    ours = getattr(tga, name)(length, periodic, dtype=getattr(tga, dtype))
    theirs = getattr(torch, name)(length, periodic, dtype=getattr(torch, dtype))
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(_host(ours), _host(theirs), **_tolerance(dtype))


def test_window_parameters_and_errors() -> None:
    for args in ((7, False, 0.6, 0.3), (6, True, 0.5, 0.5)):
        np.testing.assert_allclose(_host(tga.hamming_window(*args)), _host(torch.hamming_window(*args)), atol=1e-6)
    np.testing.assert_allclose(_host(tga.kaiser_window(9, False, 4.0)), _host(torch.kaiser_window(9, False, 4.0)),
                               atol=1e-6)  # fmt: skip
    assert tga.hann_window(4).dtype == tga.float32 and tga.hann_window(4).tolist() == torch.hann_window(4).tolist()
    for lib in (tga, torch):
        with pytest.raises(RuntimeError, match="floating point"):
            lib.hann_window(3, dtype=lib.int64)
        with pytest.raises(RuntimeError, match="non-negative"):
            lib.hann_window(-1)


@pytest.mark.parametrize("name, kw", [("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {}),
                                      ("exponential", {"tau": 2.0}), ("gaussian", {"std": 0.7}),
                                      ("general_cosine", {"a": [0.4, 0.3, 0.2]}), ("general_hamming", {"alpha": 0.6}),
                                      ("hamming", {}), ("hann", {}), ("kaiser", {"beta": 3.0}), ("nuttall", {})])  # fmt: skip
@pytest.mark.parametrize("sym", [True, False])
def test_signal_windows(name: str, kw: dict, sym: bool) -> None:
    assert tga.windows is tga.signal.windows
    for length in (0, 1, 2, 5, 8):
        ours = getattr(tga.signal.windows, name)(length, sym=sym, **kw)
        theirs = getattr(torch.signal.windows, name)(length, sym=sym, **kw)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(_host(ours), _host(theirs), atol=1e-6, err_msg=f"{name}({length}, sym={sym})")


@pytest.mark.parametrize("args", [(0, 3), (1, 2, 0.25), (3, 0, -1), (0, 1, 0.3), (-2.5, 2.5, 0.5)])
def test_range(args: tuple) -> None:
    with pytest.warns(UserWarning, match="deprecated"):
        ours = tga.range(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.range(*args)
        assert tga.range(0, 3, dtype=tga.int64).tolist() == torch.range(0, 3, dtype=torch.int64).tolist()
    assert str(ours.dtype) == "torch.float32"
    np.testing.assert_allclose(_host(ours), _host(theirs), rtol=1e-6)


@pytest.mark.filterwarnings("ignore:torch.asarray. unspecified requires_grad")  # (PyTorch's note of a changed default)
def test_asarray_shares_and_copies_as_pytorch() -> None:
    for lib in (tga, torch):
        a = np.arange(3.0)
        t = lib.asarray(a)
        t[0] = 5.0
        assert a[0] == 5.0  # (shared)
        c = lib.asarray(a, copy=True)
        c[1] = 7.0
        assert a[1] == 1.0  # (copied)
        x = lib.ones(2, requires_grad=True)
        assert lib.asarray(x) is x and lib.asarray(x, copy=True).requires_grad
        assert lib.asarray([1, 2]).tolist() == [1, 2] and lib.asarray([1.5]).dtype == lib.float32
        assert lib.asarray(np.arange(3), dtype=lib.float64).tolist() == [0.0, 1.0, 2.0]
        with pytest.raises(ValueError, match="can't alias"):
            lib.asarray([1, 2], copy=False)
        with pytest.raises(ValueError, match="can't alias"):
            lib.asarray(np.arange(3), dtype=lib.float32, copy=False)


def test_frombuffer_as_pytorch() -> None:
    for lib in (tga, torch):
        b = bytearray(np.array([1, 2, 3], np.int32).tobytes())
        t = lib.frombuffer(b, dtype=lib.int32)
        assert t.tolist() == [1, 2, 3]
        t[0] = 9
        assert np.frombuffer(bytes(b), np.int32)[0] == 9  # (shared)
        assert lib.frombuffer(b, dtype=lib.int32, count=1, offset=4).tolist() == [2]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert lib.frombuffer(b"abcd", dtype=lib.uint8).tolist() == [97, 98, 99, 100]
        for bad in (b"", b"abc"):
            with pytest.raises(ValueError):
                lib.frombuffer(bad, dtype=lib.int32)


@pytest.mark.parametrize("size, stride", [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((2, 3), (0, 1)), ((0, 3), (3, 1)),
                                          ((4,), (2,)), ((), ())])  # fmt: skip
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_empty_strided(size: tuple, stride: tuple, dtype: str) -> None:
    ours = tga.empty_strided(size, stride, dtype=getattr(tga, dtype))
    theirs = torch.empty_strided(size, stride, dtype=getattr(torch, dtype))
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
    assert ours.stride() == theirs.stride() and ours.is_contiguous() == theirs.is_contiguous()
    for lib in (tga, torch):
        with pytest.raises(RuntimeError, match="dimensionality of sizes"):
            lib.empty_strided((2, 3), (1,))


def test_grad_scaler_is_amps() -> None:
    assert tga.GradScaler is tga.amp.GradScaler and torch.GradScaler is torch.amp.GradScaler


# -- tga.testing ------------------------------------------------------------------------------
_PAIRS = [
    (lambda lib: lib.tensor([1.0, 2.0, 3.0]), lambda lib: lib.tensor([1.0, 2.1, 3.0])),
    (lambda lib: lib.tensor([1.0, 2.0]), lambda lib: lib.tensor([1.0, 2.0 + 1e-7])),
    (lambda lib: lib.ones(2), lambda lib: lib.ones(3)),
    (lambda lib: lib.ones(2), lambda lib: lib.ones(2, dtype=lib.float64)),
    (lambda lib: 1.0, lambda lib: 1.0 + 1e-8),
    (lambda lib: 3, lambda lib: 3.0),
    (lambda lib: [lib.ones(2)], lambda lib: [lib.zeros(2)]),
    (lambda lib: {"a": lib.ones(1)}, lambda lib: {"a": lib.zeros(1)}),
    (lambda lib: lib.tensor([float("nan")]), lambda lib: lib.tensor([float("nan")])),
    (lambda lib: lib.tensor([1, 2]), lambda lib: lib.tensor([1, 3])),
    (lambda lib: lib.tensor([1.0, math.inf]), lambda lib: lib.tensor([1.0, math.inf])),
    (lambda lib: (lib.ones(2), 2), lambda lib: (lib.ones(2), 2)),
]


@pytest.mark.parametrize("pair", range(len(_PAIRS)))
def test_assert_close_agrees_with_pytorch(pair: int) -> None:
    a, e = _PAIRS[pair]

    def outcome(lib: Any) -> tuple:
        try:
            lib.testing.assert_close(a(lib), e(lib))
        except (AssertionError, TypeError, ValueError) as err:
            first = str(err).splitlines()[0]
            return type(err).__name__, first.replace("torch.", "").replace("tinygrad_attn.tensors._tensor.", "")
        return ("passed",)

    assert outcome(tga) == outcome(torch)


def test_assert_close_options() -> None:
    x, y = tga.tensor([1.0, float("nan")]), tga.tensor([1.05, float("nan")])
    tga.testing.assert_close(x, y, rtol=0.1, atol=0.0, equal_nan=True)
    with pytest.raises(AssertionError, match="custom"):
        tga.testing.assert_close(x, y, msg="custom")
    with pytest.raises(ValueError, match="must be either specified or omitted"):
        tga.testing.assert_close(x, y, rtol=0.1)
    tga.testing.assert_close(tga.ones(2), tga.ones(2, dtype=tga.float64), check_dtype=False)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
def test_make_tensor_draws_as_pytorch(dtype: str) -> None:
    """The same seed gives the same tensor: the uniform and integer draws are PyTorch's."""
    for kw in ({}, {"low": -2, "high": 3}, {"noncontiguous": True}, {"exclude_zero": True}):
        if dtype == "bool" and "low" in kw:
            continue
        tga.manual_seed(5)
        torch.manual_seed(5)
        ours = tga.testing.make_tensor(3, 4, dtype=getattr(tga, dtype), device="cpu", **kw)
        theirs = torch.testing.make_tensor(3, 4, dtype=getattr(torch, dtype), device="cpu", **kw)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(_host(ours).astype(float), _host(theirs).astype(float), rtol=1e-6, err_msg=str(kw))
    t = tga.testing.make_tensor((2, 2), dtype=tga.float64, device="cpu", requires_grad=True)
    assert t.requires_grad and t.is_leaf
    for lib in (tga, torch):
        with pytest.raises(ValueError, match="must be less than"):
            lib.testing.make_tensor(2, dtype=lib.int64, device="cpu", low=3, high=1)
        with pytest.raises(ValueError, match="requires_grad"):
            lib.testing.make_tensor(2, dtype=lib.int64, device="cpu", requires_grad=True)


# -- tga.func and tga.vmap --------------------------------------------------------------------
def _same(a: Any, b: Any) -> None:
    fa, fb = _flat(a), _flat(b)
    assert len(fa) == len(fb)
    for x, y in zip(fa, fb):
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(_host(x), _host(y), rtol=1e-9, atol=1e-10)


_RNG = np.random.default_rng(3)
_X, _W, _CT = _RNG.standard_normal((4, 3)), _RNG.standard_normal((3, 2)), _RNG.standard_normal((4, 2))


def _layer(v: Any, w: Any) -> Any:
    return (v @ w).tanh()


def _loss(w: Any, v: Any) -> Any:
    return ((v @ w).tanh() ** 2).sum()


def _curve(v: Any) -> Any:
    return (v.sin() * v).sum()


FUNC_CASES = {
    "vmap": lambda lib, x, w: lib.vmap(_layer, (0, None))(x, w),
    "vmap_out_dims": lambda lib, x, w: lib.vmap(_layer, (0, None), 1)(x, w),
    "vmap_in_dim_1": lambda lib, x, w: lib.vmap(lambda v: v.sum(), 1)(x),
    "vmap_tuple_out": lambda lib, x, w: lib.vmap(lambda v: (v.sum(), v * 2))(x),
    "vmap_nested": lambda lib, x, w: lib.vmap(lib.vmap(lambda a: a * a))(x),
    "vmap_kwargs": lambda lib, x, w: lib.vmap(lambda v, scale: v * scale)(x, scale=2.0),
    "func.vmap_of_grad": lambda lib, x, w: lib.vmap(lib.func.grad(_loss), (None, 0))(w, x),
    "func.grad": lambda lib, x, w: lib.func.grad(_loss)(w, x),
    "func.grad_argnums": lambda lib, x, w: lib.func.grad(_loss, (0, 1))(w, x),
    "func.grad_has_aux": lambda lib, x, w: lib.func.grad(lambda v: (_curve(v), v * 3), has_aux=True)(x),
    "func.grad_and_value": lambda lib, x, w: lib.func.grad_and_value(_loss)(w, x),
    "func.grad_of_grad": lambda lib, x, w: lib.func.grad(lambda v: lib.func.grad(_curve)(v).sum())(x[0]),
    "func.jacrev": lambda lib, x, w: lib.func.jacrev(lambda v: v.sin() * v.sum())(x[0]),
    "func.jacrev_argnums": lambda lib, x, w: lib.func.jacrev(_layer, (0, 1))(x, w),
    "func.jacfwd": lambda lib, x, w: lib.func.jacfwd(_layer, 1)(x, w),
    "func.hessian": lambda lib, x, w: lib.func.hessian(_curve)(x[0]),
    "func.vjp": lambda lib, x, w: (lambda r: (r[0], r[1](lib.tensor(_CT))))(lib.func.vjp(_layer, x, w)),
    "func.jvp": lambda lib, x, w: lib.func.jvp(lambda v: v.sin(), (x,), (x * 0.5,)),
}


@pytest.mark.parametrize("name", sorted(FUNC_CASES))
def test_func_transforms_match_torch(name: str) -> None:
    fn = FUNC_CASES[name]
    _same(fn(tga, tga.tensor(_X), tga.tensor(_W)), fn(torch, torch.tensor(_X), torch.tensor(_W)))


def test_vmap_gradients_flow_and_errors() -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor(_X, requires_grad=True)
        y = lib.vmap(lambda v: (v * v).sum().sqrt())(x)
        return lib.autograd.grad((y * lib.tensor(_X[:, 0])).sum(), x)

    _same(run(tga), run(torch))
    for lib in (tga, torch):
        with pytest.raises(ValueError, match="same size in the mapped dimension"):
            lib.vmap(lambda a, b: a + b)(lib.ones(2), lib.ones(3))
        with pytest.raises(ValueError):
            lib.vmap(lambda a: a, in_dims=None)(lib.ones(2))
    tga.manual_seed(0)
    same = tga.vmap(lambda v: v + tga.rand(()), randomness="same")(tga.zeros(3))
    assert len(set(same.tolist())) == 1


def test_functional_call() -> None:
    lin = tga.nn.Linear(3, 2)
    params = {"weight": tga.tensor(_W.T), "bias": tga.zeros(2, dtype=tga.float64)}
    out = tga.func.functional_call(lin, params, (tga.tensor(_X),))
    np.testing.assert_allclose(_host(out), _X @ _W, rtol=1e-12)


# -- coverage ---------------------------------------------------------------------------------------
OTHER_TESTS = {  # names tested by the tests above that are not a Case
    "uint16", "uint32", "uint64", "dtype", "memory_format", "contiguous_format", "preserve_format", "channels_last",
    "channels_last_3d", "newaxis", "typename", "set_default_tensor_type", "set_anomaly_enabled", "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled", "set_warn_always", "is_warn_always_enabled", "set_deterministic_debug_mode",
    "get_deterministic_debug_mode", "matrix_rank", "solve", "lstsq", "symeig", "eig", "hann_window", "hamming_window",
    "blackman_window", "bartlett_window", "kaiser_window", "signal", "windows", "range", "asarray", "frombuffer",
    "GradScaler", "testing", "func", "vmap", "empty_strided",
}  # fmt: skip


def test_every_new_name_is_tested() -> None:
    tested = {c.name for c in CASES} | OTHER_TESTS
    assert sorted(NEW_NAMES - tested) == []
    missing_in_torch = sorted(n for n in NEW_NAMES if not hasattr(torch, n))
    missing_here = sorted(n for n in NEW_NAMES if not hasattr(tga, n))
    assert missing_in_torch == [] and missing_here == []
