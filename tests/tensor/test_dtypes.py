"""Dtype promotion as ``torch.result_type``: a grid of every binary operator over dtype
pairs, with each operand a dimensioned tensor, a 0-d tensor, a Python or a NumPy scalar;
float ops of integers in float32; the factories' inferred dtypes."""

from __future__ import annotations

import itertools
import operator

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402
from tinygrad_attn import Tensor  # noqa: E402
from tinygrad_attn.tensors.dtypes import result_type  # noqa: E402

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float32", "float64"]
OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
             "floordiv": operator.floordiv, "pow": operator.pow, "maximum": lambda a, b: a.maximum(b)}  # fmt: skip
SCALARS = {"py_bool": True, "py_int": 3, "py_float": 0.5, "np_float64": np.float64(0.5), "np_int64": np.int64(3),
           "np_float32": np.float32(0.5)}  # fmt: skip


def _tensor(lib, dtype: str, rank: str):
    a = np.array([1, 2, 3]) if rank == "dim" else np.array(2)
    a = a.astype(dtype)
    return torch.tensor(a) if lib == "torch" else Tensor(a)


def _outcome(fn):
    try:
        return str(fn().dtype).replace("torch.", "")
    except Exception:  # (what PyTorch refuses, ours may refuse or take: only its dtype is compared)
        return "error"


def _operands():
    for d1, r1 in itertools.product(DTYPES, ("dim", "0d")):
        for d2, r2 in itertools.product(DTYPES, ("dim", "0d")):
            yield (d1, r1), (d2, r2)
        for s in SCALARS:
            yield (d1, r1), (s, None)


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_binary_ops_promote_as_torch_result_type(name):
    op, bad = OPERATORS[name], []
    for (d1, r1), (d2, r2) in _operands():
        if name == "maximum" and r2 is None:
            continue  # (maximum takes a tensor)
        if name == "pow" and d1 == "bool" and d2 in ("bool", "py_bool"):
            continue  # (a bool to a bool power: NumPy computes it in int8, a documented difference)

        def run(lib, d1=d1, r1=r1, d2=d2, r2=r2):
            b = _tensor(lib, d2, r2) if r2 else SCALARS[d2]
            return op(_tensor(lib, d1, r1), b)

        with np.errstate(all="ignore"):
            theirs, ours = _outcome(lambda: run("torch")), _outcome(lambda: run("ours"))
        if theirs != "error" and theirs != ours:
            bad.append(f"{d1} {r1} {name} {d2} {r2 or ''}: torch {theirs}, here {ours}")
    assert not bad, "\n".join(bad)


def test_result_type_is_torchs():
    for a, b in itertools.product(DTYPES + ["float16", "int16"], repeat=2):
        for ra, rb in itertools.product((0, 1), repeat=2):
            x, y = np.ones((2,) * ra, a), np.ones((2,) * rb, b)
            want = str(torch.result_type(torch.tensor(x), torch.tensor(y)))
            assert str(result_type(x, y)) == want, (a, ra, b, rb)


@pytest.mark.parametrize("kinds", list(itertools.product(("tensor", "0-d", "number"), repeat=2)))
def test_the_public_result_type_is_torchs_for_tensors_and_numbers(kinds):
    """``tga.result_type(tensor, other)``: PyTorch's two operands, each a tensor or a number."""

    def operand(lib, kind, dtype):
        if kind == "number":
            return {"b": True, "i": 3, "u": 3, "f": 2.5}[np.dtype(dtype).kind]
        return lib.tensor(np.ones((2,) if kind == "tensor" else (), dtype))

    for a, b in itertools.product(DTYPES, repeat=2):
        want = torch.result_type(operand(torch, kinds[0], a), operand(torch, kinds[1], b))
        got = tga.result_type(operand(tga, kinds[0], a), operand(tga, kinds[1], b))
        assert str(got) == str(want), (kinds, a, b)


def test_the_public_result_type_takes_two_operands_as_torchs():
    for args in ((), (tga.ones(2),), (tga.ones(2), 1, 1), (tga.ones(2), (2, 3)), (tga.ones(2), None)):
        with pytest.raises(TypeError):
            tga.result_type(*args)
        with pytest.raises(TypeError):
            torch.result_type(*[torch.ones(2) if isinstance(a, Tensor) else a for a in args])


def test_numpy_scalars_keep_float32_and_its_gradient():
    """``scores / np.sqrt(d_k)``, as many tutorials write it."""
    w = Tensor(np.ones((2, 3), np.float32), requires_grad=True)
    y = w * np.float64(0.5) / np.sqrt(np.float64(4.0))
    assert y.dtype == np.float32
    y.sum().backward()
    assert w.grad.dtype == np.float32
    assert (Tensor(np.array([1, 2], np.int32)) + tga.tensor(1)).dtype == np.int32
    u = Tensor(np.array([250, 3], np.uint8)) + tga.tensor(10)  # wraps in uint8, as torch
    np.testing.assert_array_equal(
        u.detach().numpy(), (torch.tensor([250, 3], dtype=torch.uint8) + torch.tensor(10)).detach().numpy()
    )


def test_float_ops_of_integers_and_factories_infer_dtypes_as_torch():
    cases = {
        "exp_int": lambda m: m.tensor(2).exp(),
        "sqrt_ints": lambda m: m.tensor([1, 4]).sqrt(),
        "log_bool": lambda m: m.tensor([True, False]).log(),
        "sigmoid_int": lambda m: m.tensor([1, 2]).sigmoid(),
        "tanh_int": lambda m: m.tensor([1, 2]).tanh(),
        "int_div_int": lambda m: m.tensor(3) / m.tensor(2),
        "arange": lambda m: m.arange(10),
        "arange_float": lambda m: m.arange(0, 1, 0.25),
        "full_int": lambda m: m.full((2,), 4),
        "full_bool": lambda m: m.full((2,), True),
        "full_float": lambda m: m.full((2,), 0.5),
    }
    for name, f in cases.items():
        with np.errstate(divide="ignore"):
            assert str(f(tga).dtype) == str(f(torch).dtype), name
    assert Tensor.arange(10).dtype == np.int64 and Tensor.full((2,), 4).dtype == np.int64
    np.testing.assert_array_equal(Tensor.arange(2**31, 2**31 + 3).detach().numpy(), [2**31, 2**31 + 1, 2**31 + 2])
    with pytest.raises(TypeError):
        tga.zeros(2.7, 3)
