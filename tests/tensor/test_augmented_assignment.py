"""Every augmented assignment (``+= -= *= /= //= %= **= @= &= |= ^= <<= >>=``) against PyTorch,
from a generated matrix: each operator × the target's dtype × the operand (a tensor of each
dtype, a 0-d tensor of each dtype, a Python int, float and bool) × the target (a leaf, a
non-leaf, a view, an alias, a parameter, a leaf inside ``no_grad``). Compared: whether it
raises (the same exception class), and otherwise the result's identity (the same tensor,
changed in place), dtype and values, what a view's base and an alias see, the version
counter and, for a non-leaf, the gradient that flows back."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

OPS = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "@=": operator.imatmul,
    "&=": operator.iand, "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift, ">>=": operator.irshift,
}  # fmt: skip
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
TARGET_VALUES = np.array([[3, 5, 7], [2, 4, 6], [1, 3, 2]])  # (all nonzero: no integer division by zero here)
OPERAND_VALUES = np.array([[1, 2, 3], [2, 1, 2], [3, 2, 1]])
SCALARS = {"int": 3, "float": 2.5, "bool": True}
TARGETS = ["leaf", "non-leaf", "view", "alias", "parameter", "no_grad"]


def _tensor(lib: Any, values: np.ndarray, dtype: str, **kw: Any) -> Any:
    return lib.tensor(values.astype(dtype).tolist(), dtype=getattr(lib, dtype), **kw)


def _operands(target: str) -> list[tuple[str, Any]]:
    """(name, maker(lib)) for every operand kind; the other targets than a leaf take the target's
    own dtype's tensors only (the dtype rules are the leaf's; these check the in-place writing)."""
    out = [(f"scalar {k}", lambda lib, v=v: v) for k, v in SCALARS.items()]
    for d in DTYPES if target == "leaf" else ["float64", "int64", "bool"]:
        out.append((f"tensor {d}", lambda lib, d=d: _tensor(lib, OPERAND_VALUES, d)))
        out.append((f"0-d {d}", lambda lib, d=d: _tensor(lib, OPERAND_VALUES[0, 1], d)))
    return out


def _run(lib: Any, op: str, dtype: str, target: str, operand: Any) -> dict:
    """The scenario in ``lib`` (torch or tinygrad_attn); what it observed, or the exception's class."""
    seen: dict[str, Any] = {}
    try:
        other = operand(lib)
        if target == "non-leaf":  # made by an op from a leaf that requires grad (integers: no grad to track)
            leaf = _tensor(lib, TARGET_VALUES, dtype, requires_grad=dtype.startswith("float"))
            x = leaf * 1 if dtype != "bool" else leaf & True
        elif target == "parameter":
            leaf = x = lib.nn.Parameter(_tensor(lib, TARGET_VALUES, dtype))
        else:
            x = _tensor(lib, TARGET_VALUES, dtype, requires_grad=target == "no_grad" and dtype.startswith("float"))
        base, alias = x, x.detach()
        if target == "view":
            x = base[1:]
        before = x._version
        if target == "no_grad":
            with lib.no_grad():
                r = OPS[op](x, other)
        else:
            r = OPS[op](x, other)
        seen = {"same": r is x, "dtype": str(r.dtype).removeprefix("torch."), "value": _host(r),
                "base": _host(base), "alias": _host(alias), "bumped": x._version > before}  # fmt: skip
        if target == "non-leaf" and leaf.requires_grad:
            r.sum().backward()
            seen["grad"] = _host(leaf.grad)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        seen["raises"] = type(e)
    return seen


def _host(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu().detach().numpy() if hasattr(t, "cpu") else t.detach().numpy(), dtype=np.float64)


def _differences(ours: dict, theirs: dict, dtype: str) -> list[str]:
    if "raises" in theirs or "raises" in ours:
        t, o = theirs.get("raises"), ours.get("raises")
        if t is None or o is None or not issubclass(o, t):
            return [f"raises: torch {t and t.__name__}, ours {o and o.__name__}"]
        return []
    out = [
        f"{k}: torch {theirs[k]}, ours {ours.get(k)}" for k in ("same", "dtype", "bumped") if ours.get(k) != theirs[k]
    ]
    tol = 2e-3 if dtype == "float16" or theirs["dtype"] == "float16" else 1e-6
    for k in ("value", "base", "alias", "grad"):
        if k in theirs and not (k in ours and ours[k].shape == theirs[k].shape
                                and np.allclose(ours[k], theirs[k], rtol=tol, atol=tol, equal_nan=True)):  # fmt: skip
            out.append(f"{k}: torch {theirs[k].tolist()}, ours {ours.get(k, np.array(None)).tolist()}")
    return out


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op", list(OPS))
def test_augmented_assignment_as_torch(op: str, target: str) -> None:
    wrong = []
    for dtype in DTYPES:
        for name, operand in _operands(target):
            if op == "**=" and target == "non-leaf" and name in ("tensor bool", "0-d bool"):
                # PyTorch's backward of pow subtracts 1 from a bool exponent and raises there (its
                # forward works); ours differentiates: compared in test_pow_with_a_bool_exponent_tensor
                continue
            theirs = _run(torch, op, dtype, target, operand)
            ours = _run(tga, op, dtype, target, operand)
            wrong += [f"{dtype} {op} {name}: {d}" for d in _differences(ours, theirs, dtype)]
    assert not wrong, f"{len(wrong)} differences from PyTorch:\n" + "\n".join(wrong[:40])


def test_pow_with_a_bool_exponent_tensor() -> None:
    # x ** True is x, x ** False is 1: PyTorch's forward, and the gradient of x ** float(e)
    e = np.array([[True, False, True]] * 3)
    x = tga.tensor(TARGET_VALUES.astype(np.float64), requires_grad=True)
    y = x * 1
    y **= tga.tensor(e)
    y.sum().backward()
    t = torch.tensor(TARGET_VALUES.astype(np.float64), requires_grad=True)
    (t**1 * torch.tensor(e.astype(np.float64))).sum().backward()  # (d/dx x ** 1 = 1 where e, 0 elsewhere)
    np.testing.assert_array_equal(y.detach().numpy(), torch.tensor(TARGET_VALUES) ** torch.tensor(e))
    np.testing.assert_array_equal(x.grad.detach().numpy(), t.grad.detach().numpy())


# (float division by zero: NumPy warns where PyTorch is silent; the values are compared)
@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("op", ["//=", "%="])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "float32"])
@pytest.mark.parametrize("divisor", ["scalar", "0-d", "tensor with a zero"])
def test_division_by_zero_as_torch(op: str, dtype: str, divisor: str) -> None:
    # integers: PyTorch's RuntimeError (NumPy would warn and give 0); floats: inf and nan
    def zero(lib: Any) -> Any:
        return {"scalar": 0, "0-d": _tensor(lib, np.array(0), dtype),
                "tensor with a zero": _tensor(lib, OPERAND_VALUES * (np.arange(3) != 1), dtype)}[divisor]  # fmt: skip

    theirs = _run(torch, op, dtype, "leaf", zero)
    ours = _run(tga, op, dtype, "leaf", zero)
    assert not _differences(ours, theirs, dtype), _differences(ours, theirs, dtype)
    assert ("raises" in theirs) == (dtype != "float32")


def test_int_tensor_remainder_by_a_float_names_the_dtypes() -> None:
    x = tga.tensor([1, 2, 3], dtype=tga.int32)
    with pytest.raises(RuntimeError, match=r"result type Float can't be cast to the desired output type Int"):
        x %= 2.5
    with pytest.raises(RuntimeError, match=r"result type Float can't be cast to the desired output type Int"):
        x /= 2
    x //= tga.tensor([2, 2, 2], dtype=tga.int64)  # (int64 computed, written back as int32)
    assert x.dtype == tga.int32 and x.tolist() == [0, 1, 1]


def test_augmented_assignment_through_an_index_writes_the_base() -> None:
    # x[i] op= v: Python reads x[i], applies op=, and stores the result back with __setitem__
    for op in ("+=", "*=", "//=", "<<=", "|="):
        ours, theirs = tga.tensor(TARGET_VALUES), torch.tensor(TARGET_VALUES)
        for t, lib in ((ours, tga), (theirs, torch)):
            row = t[1]
            t[1] = OPS[op](row, 2)
            col = t[:, 0]
            OPS[op](col, _tensor(lib, np.array([1, 2, 1]), "int64"))
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


@pytest.mark.parametrize("op", [op for op in OPS if op != "@="])
def test_augmented_assignment_on_each_device(op: str, device: str) -> None:
    # each dtype, written in place on the device, gives the CPU's values (the matrix above holds the CPU to PyTorch);
    # array_api_strict has no float16, and its + and * take no bools (out of place as well: not this file's subject)
    for dtype in [d for d in DTYPES if not (device.startswith("array_api_strict") and d in ("float16", "bool"))]:
        for operand in (OPERAND_VALUES, 2):
            results = []
            for dev in ("cpu", device):
                x = tga.tensor(TARGET_VALUES.astype(dtype), device=dev)
                other = tga.tensor(OPERAND_VALUES.astype(dtype), device=dev) if operand is OPERAND_VALUES else operand
                alias = x.detach()
                try:
                    r = OPS[op](x, other)
                except Exception as e:  # noqa: BLE001 - the class is what is compared
                    results.append(type(e))
                    continue
                assert r is x and str(r.device) == str(tga.device(dev))
                results.append((str(r.dtype), _host(alias).tolist()))
            assert results[0] == results[1], (dtype, op, operand is OPERAND_VALUES)
