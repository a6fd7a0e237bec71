"""Short programs a PyTorch user writes, each run with PyTorch and with the library: the
same values and dtypes (gradients where the program returns them), the same exception
class where PyTorch raises, and no exception where it runs. One table, grouped by kind
(crashes where PyTorch runs, returns where PyTorch raises, wrong values); a program is
one line, so a new report is one more line.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")


def _grad(m, x, out):
    """``x``'s gradient of ``out`` summed with fixed weights."""
    w = m.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)).astype(np.float64)).to(out.dtype)
    (g,) = m.autograd.grad((out * w).sum(), x)
    return g


def _leaf(m, values, dtype="float64"):
    return m.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


def _inplace_on(m, x, parts):
    parts[0].mul_(2.0)
    return x


def _mha(m):
    m.manual_seed(0)
    mha = m.nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True, batch_first=True)
    with m.no_grad():
        for p in mha.parameters():
            p.copy_(m.tensor(np.linspace(-0.5, 0.5, p.numel()).reshape(tuple(p.shape)).astype(np.float32)))
    x = m.tensor(np.linspace(-1, 1, 24).reshape(2, 3, 4).astype(np.float32))
    return mha(x, x, x)


def _x(m):
    return m.arange(6, dtype=m.float64).reshape(2, 3) - 2.5


# PyTorch's add(Number other, Number alpha) and deprecated add(Number alpha, Tensor other)
_POSITIONAL_ALPHA = (
    lambda m: _x(m).add(0, 0),
    lambda m: _x(m).add(0, _x(m)),
    lambda m: _x(m).add(2, _x(m)),
    lambda m: _x(m).add(2, 3),
    lambda m: _x(m).sub(0, 0),
    lambda m: _x(m).sub(3, _x(m)),
    lambda m: _x(m).subtract(0, 0),
    lambda m: _x(m).subtract(2, 3),
    lambda m: _x(m).add_(0, _x(m)),
    lambda m: _x(m).sub_(2, _x(m)),
    lambda m: m.add(_x(m), 2, _x(m)),
    lambda m: m.sub(_x(m), 2, 3),
)


# name -> program(m): ``m`` is torch or tinygrad_attn
CRASHES = {
    "T_of_3d": lambda m: m.arange(24.0).reshape(2, 3, 4).T,
    "T_of_1d": lambda m: m.arange(3.0).T,
    "where_one_argument": lambda m: m.where(m.tensor([[0, 1], [2, 0]])),
    "div__rounding_mode": lambda m: m.tensor([7.0, -7.0]).div_(2.0, rounding_mode="floor"),
    "fill__int_with_float": lambda m: m.tensor([1, 2]).fill_(2.5),
    "fill__bool_with_float": lambda m: m.tensor([True, False]).fill_(0.0),
    "masked_fill__int_with_float": lambda m: m.tensor([1, 2]).masked_fill_(m.tensor([True, False]), 3.7),
    "l1_broadcast_target": lambda m: m.nn.functional.l1_loss(m.ones(2, 3), m.zeros(3)),
    "smooth_l1_broadcast_target": lambda m: m.nn.functional.smooth_l1_loss(m.ones(2, 3), m.zeros(3)),
    "huber_broadcast_target": lambda m: m.nn.functional.huber_loss(m.ones(2, 3), m.zeros(3)),
    "cat_legacy_empty": lambda m: m.cat([m.ones(2, 3), m.tensor([])]),
    "uint8_times_big_int": lambda m: m.tensor([1, 2], dtype=m.uint8) * 300,
    "new_zeros_device": lambda m: m.ones(2).new_zeros((2, 2), device="cpu"),
    "new_ones_device": lambda m: m.ones(2).new_ones((2,), device="cpu"),
    "new_full_device": lambda m: m.ones(2).new_full((2,), 3.0, device="cpu"),
    "new_empty_device": lambda m: m.ones(2).new_empty((2,), device="cpu").shape,
    "narrow_tensor_start": lambda m: m.arange(5).narrow(0, m.tensor(1), 2),
    "var_mean_unbiased_positional": lambda m: m.var_mean(m.tensor([1.0, 2.0, 4.0]), True),
    "repeat_interleave_output_size": lambda m: m.tensor([1, 2]).repeat_interleave(m.tensor([1, 2]), output_size=3),
    "interpolate_bicubic": lambda m: m.nn.functional.interpolate(
        m.arange(16.0).reshape(1, 1, 4, 4), scale_factor=2, mode="bicubic", align_corners=False
    ),
    "interpolate_area": lambda m: m.nn.functional.interpolate(
        m.arange(16.0).reshape(1, 1, 4, 4), size=(2, 3), mode="area"
    ),
    "norm_nuc": lambda m: m.norm(m.tensor([[1.0, 2.0], [3.0, 4.0]]), p="nuc"),
    "sign_bool": lambda m: m.sign(m.tensor([True, False])),
    "softsign_int": lambda m: m.nn.functional.softsign(m.tensor([-2, 0, 3])),
    "mha_bias_kv_zero_attn": _mha,
    "cat_empty": lambda m: m.cat([m.zeros(0, 3), m.zeros(0, 3)]),
    "batch_norm_empty": lambda m: m.nn.functional.batch_norm(m.zeros(0, 3), m.zeros(3), m.ones(3)),
    "gather_empty": lambda m: m.gather(m.zeros(2, 3), 1, m.zeros(2, 0, dtype=m.int64)),
    "chunk_zero": lambda m: m.arange(4).chunk(0),
    "arange_zero_step": lambda m: m.arange(0, 5, 0),
    "index_put_": lambda m: m.zeros(4).index_put_((m.tensor([0, 2]),), m.tensor([1.0, 2.0])),
    "index_put__accumulate": lambda m: m.zeros(4).index_put_(
        (m.tensor([0, 0]),), m.tensor([1.0, 2.0]), accumulate=True
    ),
    # a Python number, a 0-d tensor or varargs where PyTorch's parser takes them (and refuses the rest)
    "copy__of_numbers": lambda m: [_x(m).copy_(v) for v in (0, 5, -3, 2.5, True)],
    "copy__of_a_list": lambda m: _x(m).copy_([1.0, 2.0, 3.0]),
    "add_sub_positional_alpha": lambda m: [f(m) for f in _POSITIONAL_ALPHA],
    "subtract_alpha_first": lambda m: _x(m).subtract(2, _x(m)),
    "add_tensor_then_alpha": lambda m: _x(m).add(_x(m), 2),
    "split_varargs": lambda m: [_x(m).hsplit(0, 0), _x(m).vsplit(0, 0), _x(m).tile(0, 0), _x(m).tile(2, 1)],
    "split_of_empty_by_0": lambda m: [m.zeros(0, 3).split(0), m.zeros(0, 3).unsafe_split(0)],
    "split_by_0d": lambda m: [_x(m).split(m.tensor(1)), _x(m).split(m.tensor(2.5)), _x(m).split(m.tensor(2), 1)],
    "topk_0d_k0": lambda m: list(m.tensor(2.5).topk(0)),
    "to_a_number": lambda m: [_x(m).float().to(v) for v in (1.5, True, 0.5)],
    "nan_to_num_none": lambda m: [_x(m).nan_to_num(None), _x(m).nan_to_num_(None, None, None)],
    "random_fills_0d": lambda m: [
        (m.manual_seed(0), f(_x(m), m.tensor(2.5)))[1]
        for f in (m.Tensor.normal_, m.Tensor.log_normal_, m.Tensor.cauchy_, m.Tensor.exponential_)
    ],
    "bernoulli_int_p0": lambda m: [_x(m).long().bernoulli(0), _x(m).long().bernoulli(1.0)],
    "take_along_dim_empty_float": lambda m: _x(m).take_along_dim(m.zeros(0, 3)),
    "dims_as_0d": lambda m: [
        _x(m).sum(m.tensor(0)),
        _x(m).argmax(m.tensor(1)),
        _x(m).roll(m.tensor(1)),
        _x(m).movedim(m.tensor(0), 1),
        _x(m).chunk(m.tensor(2)),
        _x(m).kthvalue(m.tensor(2))[0],
        _x(m).tile(m.tensor(2)),
        _x(m).clone().squeeze_(m.tensor(0)),
    ],  # fmt: skip
    "lerp_0d_weight_other_dtype": lambda m: [
        m.lerp(_x(m), _x(m) * 2, m.tensor(0.25)),
        _x(m).clone().lerp_(_x(m) * 3, m.tensor(0.5)),
    ],  # fmt: skip
    "resize__0d": lambda m: _x(m).clone().resize_(m.tensor(3)),
    "clamp_number_and_0d_bound": lambda m: _x(m).clamp(1, m.tensor(2.5)),
    "subtract__number_and_0d_alpha": lambda m: _x(m).subtract_(1, m.tensor(0.5)),
    "clamp_tensor_and_number_bounds": lambda m: _x(m).clamp(m.tensor([1.0, 2.0, 3.0]), 2.0),
}

RAISES = {
    "bce_outside_0_1": lambda m: m.nn.functional.binary_cross_entropy(m.tensor([1.5, 0.5]), m.tensor([1.0, 0.0])),
    "narrow_past_end": lambda m: m.arange(5).narrow(0, 3, 4),
    "linear_float64_input": lambda m: m.nn.Linear(3, 2)(m.ones(1, 3, dtype=m.float64)),
    "linear_int64_input": lambda m: m.nn.Linear(3, 2)(m.ones(1, 3, dtype=m.int64)),
    "inplace_on_chunk": lambda m: _inplace_on(m, x := m.ones(4, requires_grad=True) * 1.0, x.chunk(2)),
    "inplace_on_split": lambda m: _inplace_on(m, x := m.ones(4, requires_grad=True) * 1.0, x.split(2)),
    "inplace_on_unbind": lambda m: _inplace_on(m, x := m.ones(2, 2, requires_grad=True) * 1.0, x.unbind(0)),
    "tensor_of_str": lambda m: m.tensor(["a"]),
    "mean_int": lambda m: m.tensor([1, 2]).mean(),
    "var_int": lambda m: m.tensor([1, 2]).var(),
    "norm_int": lambda m: m.tensor([1, 2]).norm(),
    "int_floor_divide_zero": lambda m: m.tensor([1, 2]) // 0,
    "int_remainder_zero": lambda m: m.tensor([1, 2]) % m.tensor([1, 0]),
}

VALUES = {
    "narrow_negative_start": lambda m: m.arange(5).narrow(0, -2, 2),
    "arange_float_bounds_int64": lambda m: m.arange(0.5, 3.7, 0.9, dtype=m.int64),
    "arange_float_bounds_int64_b": lambda m: m.arange(-1.2, 2.0, 1.1, dtype=m.int64),
    "sign_nan": lambda m: m.sign(m.tensor([float("nan"), -0.0, 2.0])),
    "threshold_nan": lambda m: m.nn.functional.threshold(m.tensor([float("nan"), 1.0, 0.1]), 0.5, -1.0),
    "max_unpool1d_duplicate_grad": lambda m: _grad(
        m,
        x := _leaf(m, [[[1.0, 2.0, 3.0]]]),
        m.nn.functional.max_unpool1d(x, m.tensor([[[1, 1, 2]]]), 2, 1, output_size=(4,)),
    ),
    "max_unpool2d_duplicate_grad": lambda m: _grad(
        m,
        x := _leaf(m, [[[[1.0, 2.0], [3.0, 4.0]]]]),
        m.nn.functional.max_unpool2d(x, m.tensor([[[[0, 0], [5, 5]]]]), 2),
    ),
    "index_copy_duplicate_grad": lambda m: _grad(
        m,
        x := _leaf(m, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
        m.zeros(2, 2, dtype=m.float64).index_copy(0, m.tensor([0, 0, 1]), x),
    ),
    "clone_negative_zero": lambda m: 1.0 / m.tensor([-0.0], requires_grad=True).clone().detach(),
    "hypot_float32_overflow": lambda m: m.hypot(m.tensor([3e38], dtype=m.float32), m.tensor([3e38], dtype=m.float32)),
    "hypot_float32_tiny": lambda m: m.hypot(m.tensor([3e-30], dtype=m.float32), m.tensor([4e-30], dtype=m.float32)),
    "huber_inf_grad": lambda m: _grad(
        m,
        x := _leaf(m, [float("inf"), -float("inf"), 0.5]),
        m.nn.functional.huber_loss(x, m.zeros(3, dtype=m.float64), reduction="none"),
    ),
    "smooth_l1_inf_grad": lambda m: _grad(
        m,
        x := _leaf(m, [float("inf"), -float("inf"), 0.5]),
        m.nn.functional.smooth_l1_loss(x, m.zeros(3, dtype=m.float64), reduction="none"),
    ),
    "var_fractional_correction": lambda m: m.tensor([1.0, 2.0, 4.0, 8.0]).var(correction=1.5),
    "scatter_reduce_amax_int64": lambda m: m.zeros(2, dtype=m.int64).scatter_reduce(
        0, m.tensor([0, 0, 1]), m.tensor([1073741827, 5, 1073741825]), "amax"
    ),
    "fmod_mixed_width": lambda m: m.fmod(m.tensor([2**40 + 3]), m.tensor(2**20 + 1, dtype=m.int32)),
    "prod_uint8": lambda m: m.tensor([100, 200], dtype=m.uint8).prod(),
    "prod_int16": lambda m: m.tensor([300, 300], dtype=m.int16).prod(),
    "cumsum_dtype": lambda m: m.tensor([1, 2, 3], dtype=m.uint8).cumsum(0, dtype=m.int32),
    "any_uint8": lambda m: m.tensor([0, 3], dtype=m.uint8).any(),
    "square_bool": lambda m: m.square(m.tensor([True, False])),
    "relu6_int": lambda m: m.nn.functional.relu6(m.tensor([-3, 2, 9])),
    "clamp_min_eq_max_grad": lambda m: _grad(
        m,
        x := _leaf(m, [0.5, 1.0, 2.0]),
        x.clamp(m.tensor([1.0, 1.0, 1.0], dtype=m.float64), m.tensor([1.0, 1.0, 1.0], dtype=m.float64)),
    ),
    "where_0d_float64": lambda m: m.where(m.tensor([True, False]), m.ones(2), m.tensor(2.0, dtype=m.float64)),
    "clamp_0d_float64": lambda m: m.ones(2).clamp(m.tensor(0.5, dtype=m.float64)),
    "int_with_0d_float16": lambda m: m.where(m.tensor([True, False]), m.tensor([1, 2]), m.tensor(0.5, dtype=m.float16)),
}

# Known differences: each line a program of the tables above and why it still differs
# (xfail strict: a fix shows as a failure here, and the line goes).
KNOWN: dict[str, str] = {}


def _cases():
    for table in (CRASHES, RAISES, VALUES):
        for name in table:
            marks = [pytest.mark.xfail(strict=True, reason=KNOWN[name])] if name in KNOWN else []
            yield pytest.param(table[name], id=name, marks=marks)


def _run(m, program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return program(m), None
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return None, e


def _plain(x):
    if isinstance(x, (tuple, list)):
        return [_plain(v) for v in x]
    if hasattr(x, "detach") and hasattr(x, "dtype"):
        x = x.detach()
        dtype = str(x.dtype).removeprefix("torch.")
        return dtype, np.asarray(x.tolist(), dtype=np.float64 if dtype != "bool" else bool)
    return x


def _same(ours, theirs, where: str) -> None:
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), f"{where}: {ours!r} against {theirs!r}"
        for i, (o, t) in enumerate(zip(ours, theirs)):
            _same(o, t, f"{where}[{i}]")
        return
    if isinstance(theirs, tuple) and len(theirs) == 2 and isinstance(theirs[1], np.ndarray):
        assert isinstance(ours, tuple), f"{where}: {ours!r}, PyTorch's a tensor"
        assert ours[0] == theirs[0], f"{where}: dtype {ours[0]}, PyTorch's {theirs[0]}"
        np.testing.assert_array_equal(np.signbit(ours[1]), np.signbit(theirs[1]), err_msg=f"{where}: signs")
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6, atol=1e-9, equal_nan=True, err_msg=where)
        return
    assert ours == theirs, f"{where}: {ours!r}, PyTorch's {theirs!r}"


@pytest.mark.parametrize("program", list(_cases()))
def test_a_program_does_what_pytorchs_does(program):
    theirs, their_error = _run(torch, program)
    ours, our_error = _run(tga, program)
    if their_error is not None:
        assert our_error is not None, f"PyTorch raises {their_error!r}; we return {ours!r}"
        assert isinstance(our_error, type(their_error)), (
            f"PyTorch raises {type(their_error).__name__}, we {type(our_error).__name__}: {our_error}"
        )
        return
    assert our_error is None, f"PyTorch runs; we raise {our_error!r}"
    _same(_plain(ours), _plain(theirs), "result")
