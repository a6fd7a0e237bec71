"""``tga.set_default_dtype`` / ``get_default_dtype`` against PyTorch's: every factory, Python
float inference, integer promotion with a float, and the parameters of every module kind follow
the default dtype, for each floating dtype PyTorch takes as its default."""

from __future__ import annotations

import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

MAKERS = {
    "tensor of floats": lambda m: m.tensor([1.0, 2.0]),
    "tensor of a float": lambda m: m.tensor(2.5),
    "Tensor constructor": lambda m: m.Tensor([1.0]),
    "zeros": lambda m: m.zeros(2),
    "ones": lambda m: m.ones(2, 3),
    "empty": lambda m: m.empty(2),
    "full of a float": lambda m: m.full((2,), 1.5),
    "rand": lambda m: m.rand(2),
    "randn": lambda m: m.randn(2),
    "arange of floats": lambda m: m.arange(0.0, 3.0),
    "linspace": lambda m: m.linspace(0, 1, 3),
    "eye": lambda m: m.eye(2),
    "int times a float": lambda m: m.tensor([1, 2]) * 0.5,
    "int divided": lambda m: m.tensor([1, 2]) / 2,
    "exp of ints": lambda m: m.tensor([1, 2]).exp(),
    "Linear": lambda m: m.nn.Linear(2, 2).weight,
    "Embedding": lambda m: m.nn.Embedding(3, 2).weight,
    "LayerNorm": lambda m: m.nn.LayerNorm(2).bias,
    "Conv1d": lambda m: m.nn.Conv1d(2, 2, 1).weight,
    "LSTM": lambda m: m.nn.LSTM(2, 2).weight_ih_l0,
    "GRU": lambda m: m.nn.GRU(2, 2).bias_hh_l0,
    "MultiheadAttention": lambda m: m.nn.MultiheadAttention(4, 2).in_proj_bias,
    "BatchNorm1d": lambda m: m.nn.BatchNorm1d(2).running_mean,
    "TransformerEncoderLayer": lambda m: m.nn.TransformerEncoderLayer(4, 2, 8).linear1.weight,
    "Normal of numbers": lambda m: m.distributions.Normal(0.0, 1.0).loc,
}


@pytest.fixture(params=["float64", "float16", "float32"])
def default(request):
    torch.set_default_dtype(getattr(torch, request.param))
    tga.set_default_dtype(getattr(tga, request.param))
    yield request.param
    torch.set_default_dtype(torch.float32)
    tga.set_default_dtype(tga.float32)


@pytest.mark.parametrize("what", MAKERS)
def test_factories_and_modules_follow_the_default_dtype(default, what):
    assert (
        str(tga.get_default_dtype()).removeprefix("torch.")
        == str(torch.get_default_dtype()).removeprefix("torch.")
        == default
    )
    theirs = MAKERS[what](torch).dtype
    assert str(MAKERS[what](tga).dtype) == str(theirs), what


@pytest.mark.parametrize("name", ["int64", "bool", "int32"])
def test_only_a_floating_dtype_can_be_the_default(name):
    with pytest.raises(TypeError):
        torch.set_default_dtype(getattr(torch, name))
    with pytest.raises(TypeError, match="floating-point"):
        tga.set_default_dtype(getattr(tga, name))
    assert tga.get_default_dtype() == tga.float32


# the float ops of one tensor: an integer or bool input computes in the default dtype
FLOAT_OPS = """acos acosh arcsin arcsinh arctan arctanh asin asinh atan atanh cosh sinh tan angle deg2rad rad2deg
digamma erfc erfinv exp2 expm1 log1p log10 log2 lgamma logit i0 sinc corrcoef cov""".split()
SPECIAL_FLOAT_OPS = """digamma entr erfc erfcx erfinv exp2 expm1 gammaln i0 i0e i1 i1e log1p log_ndtr logit ndtr ndtri
psi sinc modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 scaled_modified_bessel_k0
scaled_modified_bessel_k1 spherical_bessel_j0 bessel_j0 bessel_j1 bessel_y0 bessel_y1 airy_ai""".split()


def _dtype_or_error(fn, *args):
    try:
        return str(fn(*args).dtype).removeprefix("torch.")
    except Exception as e:  # (float16 has no kernel for some: PyTorch's class of the error is compared)
        return next(c.__name__ for c in (NotImplementedError, RuntimeError, TypeError, ValueError, Exception)
                    if isinstance(e, c))  # fmt: skip


# (where an op of an integer or bool tensor is refused, both raise; the class differs here)
KNOWN = {
    **{
        (d, "corrcoef", "bool"): "PyTorch's cov checks bool itself (RuntimeError), ours is its dtype list's "
        "NotImplementedError"
        for d in ("float16", "float32", "float64")
    },
    **{(d, "cov", "bool"): "as corrcoef" for d in ("float16", "float32", "float64")},
}


@pytest.mark.parametrize("made", ["int64", "uint8", "bool"])
@pytest.mark.parametrize("name", FLOAT_OPS + [f"special.{n}" for n in SPECIAL_FLOAT_OPS])
def test_float_ops_of_integers_follow_the_default_dtype(request, default, name, made):
    if (default, name, made) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[default, name, made]))
    ours, theirs = (
        getattr(m.special, name[8:]) if name.startswith("special.") else getattr(m, name) for m in (tga, torch)
    )
    x = [[1, 0, 1], [0, 1, 1]] if made == "bool" else [[1, 2, 0], [3, 1, 2]]
    a, t = tga.tensor(x, dtype=getattr(tga, made)), torch.tensor(x, dtype=getattr(torch, made))
    assert _dtype_or_error(ours, a) == _dtype_or_error(theirs, t)
