"""PyTorch's free functions of arithmetic, comparison and logic (``tga.add(x, y, alpha=2)``,
``tga.div(x, y, rounding_mode="floor")``, ``tga.greater``, ...) against PyTorch: values, dtypes
and the exception class, for each dtype pair and operand kind; and each is the same function
as its Tensor method where PyTorch has both."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn.engine.declare import one_function

torch = pytest.importorskip("torch")

BINARY = ["add", "sub", "mul", "div", "true_divide", "gt", "lt", "ge", "le", "eq", "ne", "greater", "less",
          "greater_equal", "less_equal", "not_equal", "multiply", "divide", "subtract", "floor_divide", "remainder",
          "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "logical_and",
          "logical_or", "logical_xor", "rsub"]  # fmt: skip
UNARY = ["neg", "negative", "positive", "absolute", "bitwise_not"]
KWARGS = {"add": [{"alpha": 2}, {"alpha": 0.5}], "sub": [{"alpha": 3}], "rsub": [{"alpha": 2}],
          "div": [{"rounding_mode": "floor"}, {"rounding_mode": "trunc"}, {"rounding_mode": None},
                  {"rounding_mode": "bogus"}]}  # fmt: skip
DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64"]
A = np.array([[5, -3, 7], [2, 0, -6]])
B = np.array([[2, 3, -2], [1, 4, 5]])  # (no zero divisor)


def _outcome(fn: Any) -> Any:
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e)
    return str(out.dtype).removeprefix("torch."), np.asarray(out.detach().numpy(), dtype=np.float64)


def _compare(name: str, ours: Any, theirs: Any) -> None:
    o, t = _outcome(ours), _outcome(theirs)
    if isinstance(t, type) or isinstance(o, type):
        assert isinstance(o, type) and isinstance(t, type) and issubclass(o, t), f"{name}: torch {t}, ours {o}"
        return
    assert o[0] == t[0], f"{name}: dtype torch {t[0]}, ours {o[0]}"
    np.testing.assert_allclose(o[1], t[1], rtol=1e-6, err_msg=name)


def _arg(lib: Any, values: np.ndarray, dtype: str) -> Any:
    return lib.tensor(values.astype(dtype).tolist(), dtype=getattr(lib, dtype))


@pytest.mark.parametrize("name", BINARY)
def test_binary_free_functions_as_torch(name: str) -> None:
    for da in DTYPES:
        for db in DTYPES:
            for kw in KWARGS.get(name, [{}]):
                _compare(f"{name}({da}, {db}, {kw})", *(lambda lib=lib, da=da, db=db, kw=kw: getattr(lib, name)(
                    _arg(lib, A, da), _arg(lib, B, db), **kw) for lib in (tga, torch)))  # fmt: skip
        for number in (2, 2.5, True):
            for kw in KWARGS.get(name, [{}]):
                _compare(f"{name}({da}, {number!r}, {kw})", *(lambda lib=lib, da=da, n=number, kw=kw: getattr(lib, name)(
                    _arg(lib, A, da), n, **kw) for lib in (tga, torch)))  # fmt: skip


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_free_functions_as_torch(name: str, dtype: str) -> None:
    _compare(f"{name}({dtype})", lambda: getattr(tga, name)(_arg(tga, A, dtype)),
             lambda: getattr(torch, name)(_arg(torch, A, dtype)))  # fmt: skip


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_a_number_first(name: str) -> None:
    _compare(name, lambda: getattr(tga, name)(3, _arg(tga, B, "float32")),
             lambda: getattr(torch, name)(3, _arg(torch, B, "float32")))  # fmt: skip


@pytest.mark.parametrize("name", [n for n in BINARY + UNARY if hasattr(torch.Tensor, n) and n != "absolute"])
def test_the_method_is_the_free_function(name: str) -> None:
    fn = getattr(tga, name)
    assert getattr(tga.Tensor, name) is one_function(fn)  # (under the free function's out= adapter or check)


def test_rsub_is_no_method_as_in_torch() -> None:
    assert not hasattr(torch.Tensor, "rsub") and not hasattr(tga.Tensor, "rsub")


def test_gradients_through_alpha_and_rounding() -> None:
    a = np.random.default_rng(0).standard_normal((2, 3))
    b = np.random.default_rng(1).standard_normal((2, 3)) + 3.0
    for fn in (lambda m, x, y: m.add(x, y, alpha=2.5), lambda m, x, y: m.sub(x, y, alpha=-1.5),
               lambda m, x, y: m.rsub(x, y, alpha=2), lambda m, x, y: m.div(x, y, rounding_mode="floor"),
               lambda m, x, y: m.true_divide(x, y), lambda m, x, y: m.multiply(x, m.negative(y))):  # fmt: skip
        x, y = tga.tensor(a, requires_grad=True), tga.tensor(b, requires_grad=True)
        tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        (fn(tga, x, y) * tga.tensor(a)).sum().backward()
        (fn(torch, tx, ty) * torch.tensor(a)).sum().backward()
        np.testing.assert_allclose(x.grad.detach().numpy(), tx.grad.detach().numpy())
        np.testing.assert_allclose(y.grad.detach().numpy(), ty.grad.detach().numpy())
        assert tga.gradcheck(lambda x, y, fn=fn: fn(tga, x, y), a, b)


def test_floor_divide_has_no_derivative_as_torch() -> None:
    x = tga.tensor([1.5, 2.5], requires_grad=True)
    y = tga.floor_divide(x, 2)
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="derivative for floor_divide is not implemented"):
        y.sum().backward()
