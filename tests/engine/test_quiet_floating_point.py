"""Ops compute at NaN, the infinities, both zeros and the largest floats without NumPy's
floating-point warnings ("divide by zero encountered in log"): PyTorch gives the same values
without a word, and a program under ``warnings.simplefilter("error")`` must not stop where
PyTorch's runs. Every Tensor method PyTorch has too, forward and backward, is called on such
values with the argument forms users write (engine/quiet.py is the mechanism)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

_EXTREMES = [[np.inf, -np.inf, np.nan, 0.0], [-0.0, 1.0, -1.0, 0.5], [3.0e38, -3.0e38, 1.0e-45, 2.0]]
_FLOATS = {"float32": (np.float32, torch.float32, tga.float32), "float64": (np.float64, torch.float64, tga.float64)}
#: the arguments after the tensor: "x" is the tensor itself
_FORMS = [(), ("x",), (0,), (0.0,), (-1,), (1,), (2,), ("x", "x"), (0, "x"), (-1, True)]
_SKIP = {"backward", "register_hook", "share_memory_", "pin_memory", "cuda", "to_sparse", "storage", "untyped_storage",
         "data_ptr", "resize_", "resize_as_", "set_", "record_stream", "retain_grad", "requires_grad_", "numpy",
         "register_post_accumulate_grad_hook", "apply_", "map_", "map2_", "tolist", "item", "new_tensor"}  # fmt: skip
#: errors of our own code, not a user's: they must not hide a warning behind them
_INTERNAL = (AttributeError, KeyError, ZeroDivisionError, UnboundLocalError, NameError, AssertionError, RecursionError)
_USERS = (RuntimeError, TypeError, ValueError)  # (the library's errors: an internal error is none of these)
_DUNDERS = ["__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__rpow__",
            "__rtruediv__", "__rfloordiv__", "__rmod__", "__neg__", "__abs__", "__matmul__"]  # fmt: skip


def _methods() -> list[str]:
    names = {
        n for n in dir(torch.Tensor)
        if not n.startswith("_") and n not in _SKIP and hasattr(tga.Tensor, n) and callable(getattr(torch.Tensor, n))
    }  # fmt: skip
    return sorted(names | set(_DUNDERS))


def _call(lib_dtype, name: str, form: tuple, grad: bool):
    data = np.array(_EXTREMES)
    lib = tga if lib_dtype in (tga.float32, tga.float64) else torch
    x = lib.tensor(data, dtype=lib_dtype, requires_grad=grad)
    y = x.clone() if name.endswith("_") and not name.endswith("__") else x  # (in place: on a non-leaf copy)
    args = [x.detach().clone() if a == "x" else a for a in form]
    return _differentiated(lib, x, getattr(y, name)(*args), grad)


def _differentiated(lib, x, out, grad: bool):
    """``out``, and (``grad``) the gradient of each of its outputs that requires grad taken to ``x``."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    if grad:
        diff = [o for o in outs if isinstance(o, lib.Tensor) and o.requires_grad]
        if diff:
            lib.autograd.grad([o.sum() for o in diff], [x], allow_unused=True)
    return out


def _quiet_where_torch_runs(call, label: str, forms, dtype: str) -> None:
    """``call(dtype, form, grad)`` with each form, both ways: where PyTorch runs it, ours warns no NumPy
    warning and raises no internal error (a user's error there is test_no_internal_errors' subject)."""
    _, theirs_dtype, ours_dtype = _FLOATS[dtype]
    found = []
    for form in forms:
        for grad in (False, True):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    call(theirs_dtype, form, grad)
            except Exception:  # noqa: BLE001 - PyTorch refuses this form: nothing to hold ours to
                continue
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    call(ours_dtype, form, grad)
                except _INTERNAL as e:
                    if not isinstance(e, _USERS):  # (a user's error that is PyTorch's AssertionError too is none)
                        found.append(f"{label}{form} grad={grad}: raises {type(e).__name__}: {e}")
                except Exception:  # noqa: BLE001, S110
                    pass
            found += [f"{label}{form} grad={grad}: {m}" for m in _numpy_warnings(caught)]
    assert not found, "\n".join(sorted(set(found))[:20])


def _numpy_warnings(caught) -> list[str]:
    return [
        str(w.message) for w in caught if issubclass(w.category, RuntimeWarning) and "encountered" in str(w.message)
    ]


@pytest.mark.parametrize("dtype", sorted(_FLOATS))
@pytest.mark.parametrize("name", _methods())
def test_an_op_at_extreme_values_warns_as_pytorch_does(name: str, dtype: str) -> None:
    # (an operator takes its one operand: PyTorch's dunders also take add's other forms)
    forms = [f for f in _FORMS if name not in _DUNDERS or len(f) == (name not in ("__neg__", "__abs__"))]
    _quiet_where_torch_runs(lambda dt, form, grad: _call(dt, name, form, grad), f"x.{name}", forms, dtype)


_NOT_OPS = ("set_", "manual_seed", "seed", "save", "load", "use_", "compile", "default", "print", "rand", "normal",
            "bernoulli", "poisson", "multinomial", "dropout", "empty", "from_", "frombuffer", "is_", "can_cast")  # fmt: skip


def _functions() -> list[str]:
    torch_ops = {n for n in dir(torch._C._VariableFunctions) if not n.startswith("_")}
    ours = {f"torch.{n}" for n in torch_ops if callable(getattr(tga, n, None))}
    functional = {
        f"F.{n}"
        for n in dir(torch.nn.functional)
        if not n.startswith("_") and callable(getattr(tga.nn.functional, n, None))
    }
    return sorted(n for n in ours | functional if not any(bad in n for bad in _NOT_OPS))


def _call_function(lib, dtype, name: str, form: tuple, grad: bool):
    space, _, attr = name.partition(".")
    fn = getattr(lib if space == "torch" else lib.nn.functional, attr)
    x = lib.tensor(np.array(_EXTREMES), dtype=dtype, requires_grad=grad)
    return _differentiated(lib, x, fn(x, *[x.detach().clone() if a == "x" else a for a in form]), grad)


@pytest.mark.parametrize("dtype", sorted(_FLOATS))
@pytest.mark.parametrize("name", _functions())
def test_a_function_at_extreme_values_warns_as_pytorch_does(name: str, dtype: str) -> None:
    def call(dt, form, grad):
        return _call_function(tga if dt in (tga.float32, tga.float64) else torch, dt, name, form, grad)

    _quiet_where_torch_runs(call, name, _FORMS, dtype)


@pytest.mark.parametrize("replay", ["compile", "jit.trace"])
def test_a_replayed_program_at_extreme_values_is_quiet(replay: str) -> None:
    def step(x):
        return (x.log() * x / x + x.sqrt() + x.exp() * 1e38 + x.float().int()).sum()

    x = tga.tensor(np.array(_EXTREMES), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        if replay == "compile":
            f = tga.compile(step)
            outs = [f(x) for _ in range(4)]
            outs[-1].backward()
        else:
            f = tga.jit.trace(step, (x.detach(),))
            outs = [f(x.detach()) for _ in range(3)]
    assert all(o.shape == () for o in outs)


def _optimizers() -> list[str]:
    return sorted(
        n for n in dir(torch.optim)
        if isinstance(getattr(torch.optim, n), type) and issubclass(getattr(torch.optim, n), torch.optim.Optimizer)
        and n not in ("Optimizer", "SparseAdam") and hasattr(tga.optim, n)
    )  # fmt: skip


@pytest.mark.parametrize("name", _optimizers())
def test_an_update_with_infinite_gradients_is_quiet(name: str) -> None:
    """A NaN loss or an exploding gradient: the update writes NaN and inf, as PyTorch's, silently."""
    shape = (2, 2) if name == "Muon" else (4,)  # (Muon takes matrices only)
    p = tga.nn.Parameter(tga.tensor([1.0, 2.0, 3.0, 4.0]).reshape(shape))
    extra = {"momentum": 0.9} if name == "SGD" else {}
    opt = getattr(tga.optim, name)([p], lr=0.1, **extra)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for grad in ([np.inf, np.nan, 0.0, -np.inf], [1.0, 0.0, np.nan, 1e308]):
            p.grad = tga.tensor(grad).reshape(shape)
            opt.step((lambda: (p * p).sum()) if name == "LBFGS" else None)
    assert p.shape == shape
