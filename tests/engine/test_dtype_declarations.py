"""The dtype declaration of ``engine/declare.py`` (``@public(dtypes=...)``, ``accepts``,
``check_dtype``): one check before any computing, PyTorch's exception class, a message naming
the op and the dtype, the promoted dtype of several operands deciding, and the method and
in-place spellings checked as the function is.

Which dtypes each op declares is checked against PyTorch by
``tests/ops/test_torch_opinfo_errors.py`` (``tools/dtype_support.py`` prints the survey)."""

from __future__ import annotations

import pytest
import tinygrad_attn.nn.functional as F

import tinygrad_attn as tga
from tinygrad_attn.engine.declare import DTYPE_KINDS, accepts, check_dtype, dtype_codes

GRID = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


@pytest.mark.parametrize("kind", sorted(DTYPE_KINDS))
@pytest.mark.parametrize("dtype", GRID)
def test_accepts_refuses_exactly_the_dtypes_outside_its_kind(kind, dtype):
    @accepts(kind)
    def op(input):
        return "computed"

    x = tga.zeros(2, dtype=getattr(tga, dtype))
    if dtype in DTYPE_KINDS[kind]:
        assert op(x) == "computed"
        return
    with pytest.raises(NotImplementedError) as e:  # (PyTorch's class: a RuntimeError too)
        op(x)
    assert isinstance(e.value, RuntimeError)
    assert '"op" not implemented for' in str(e.value) and dtype in str(e.value)


def test_the_promoted_dtype_of_the_operands_decides():
    @accepts("floating", ("input", "other"))
    def op(input, other):
        return (input + other).dtype

    i, f = tga.ones(2, dtype=tga.int64), tga.ones(2)
    assert op(i, f) == tga.float32  # (an integer with a float: the float kernel, as PyTorch's)
    assert op(i, 0.5) == tga.float32
    with pytest.raises(NotImplementedError, match="'Long'"):
        op(i, i)
    with pytest.raises(NotImplementedError):
        op(other=i, input=i)  # (keywords too)


def test_arguments_that_are_not_tensors_are_left_to_the_op():
    @accepts("floating")
    def op(input):
        return input

    assert op(3) == 3 and op(None) is None


def test_a_misspelt_operand_is_an_error_at_declaration():
    with pytest.raises(ValueError, match="no parameter"):
        accepts("floating", ("input", "otter"))(lambda input, other: None)
    with pytest.raises(ValueError, match="unknown dtypes"):
        dtype_codes(("float33",))


@pytest.mark.parametrize(
    "call",
    [
        lambda x: tga.logaddexp(x, x),
        lambda x: x.logaddexp(x),
        lambda x: x.lerp_(x, 0.5),
        lambda x: x.cumsum_(0),  # (inplace_dtypes: the twin takes fewer dtypes than the function)
        lambda x: F.silu(x),
        lambda x: x.round(decimals=1),  # (check_dtype: round's decimals are float-only, as PyTorch's)
    ],
)
def test_every_spelling_is_checked(call):
    with pytest.raises(NotImplementedError):
        call(tga.tensor([True, False]))
    assert tga.tensor([1, 2]).round().dtype == tga.int64  # (round without decimals takes integers)


def test_check_dtype_names_the_op():
    with pytest.raises(NotImplementedError, match="\"upsample_linear\" not implemented for 'Byte'"):
        check_dtype("upsample_linear", tga.zeros(2, dtype=tga.uint8), "floating")
    check_dtype("anything", 2.5, "floating")  # (a number is not checked)


def test_the_declared_function_is_the_one_at_every_name():
    assert tga.Tensor.logaddexp is tga.logaddexp.adapts  # (the free function: PyTorch's out= adapter of it)
    bfloat16 = ("bfloat16",) if str(tga.bfloat16.kind) == "f" and tga.bfloat16.__class__ is tga.dtype else ()
    assert tga.logaddexp.accepted_dtypes == ("float16", "float32", "float64", "complex64", "complex128", *bfloat16)
