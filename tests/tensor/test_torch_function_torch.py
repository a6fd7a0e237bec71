"""PyTorch's ``__torch_function__`` protocol, against PyTorch: the examples of "Extending torch Python API"
(a ``ScalarTensor`` with ``HANDLED_FUNCTIONS``, a logging Tensor subclass, a ``TorchFunctionMode``) run as
written on both, and every public function is taken over by an argument's ``__torch_function__``.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402
from tinygrad_attn.engine import overrides  # noqa: E402


def _libs(lib: Any) -> tuple[Any, Any, Any]:
    """(torch, torch.nn, torch.nn.functional) of ``lib``."""
    return lib, lib.nn, lib.nn.functional


def _scalar_tensor(lib: Any) -> tuple[type, dict]:
    """The documentation's ScalarTensor, HANDLED_FUNCTIONS and ``implements(torch.mean)``, on ``lib``."""
    handled: dict = {}

    class ScalarTensor:
        def __init__(self, N: int, value: float) -> None:  # noqa: N803 - (the documentation's)
            self._N = N
            self._value = value

        def tensor(self) -> Any:
            return self._value * lib.eye(self._N)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            if kwargs is None:
                kwargs = {}
            if func not in handled or not all(issubclass(t, (lib.Tensor, ScalarTensor)) for t in types):
                return NotImplemented
            return handled[func](*args, **kwargs)

    def implements(torch_function: Any) -> Any:
        def decorator(func: Any) -> Any:
            functools.update_wrapper(func, torch_function)
            handled[torch_function] = func
            return func

        return decorator

    @implements(lib.mean)
    def mean(input: Any) -> float:
        return float(input._value) / input._N

    @implements(lib.add)
    def add(input: Any, other: Any) -> Any:
        try:
            if input._N == other._N:
                return ScalarTensor(input._N, input._value + other._value)
            raise ValueError("Shape mismatch!")
        except AttributeError:
            return lib.add(input.tensor(), other)

    return ScalarTensor, handled


@pytest.mark.parametrize("program", ["mean", "add_scalar_tensors", "add_tensor", "unhandled"])
def test_scalar_tensor_as_documented(program: str) -> None:
    def run(lib: Any) -> Any:
        ScalarTensor, _ = _scalar_tensor(lib)  # noqa: N806
        s = ScalarTensor(5, 2)
        try:
            if program == "mean":
                return lib.mean(s)
            if program == "add_scalar_tensors":
                r = lib.add(s, ScalarTensor(5, 3))
                return type(r).__name__, r._value
            if program == "add_tensor":
                return lib.add(s, lib.ones(5)).tolist()
            return lib.exp(s)
        except TypeError as e:
            return "TypeError", "exp" in str(e), "ScalarTensor" in str(e)

    assert run(tga) == run(torch)


def _logging_tensor(lib: Any) -> type:
    class LoggingTensor(lib.Tensor):
        log: list[str] = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            cls.log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    return LoggingTensor


#: small programs of a logging subclass ``x`` (and a plain tensor ``t``)
LOGGED = {
    "add": lambda lib, F, x, t: lib.add(x, t),
    "sum": lambda lib, F, x, t: x.sum(),
    "relu": lambda lib, F, x, t: F.relu(x),
    "cat": lambda lib, F, x, t: lib.cat([t, x]),
    "chain": lambda lib, F, x, t: lib.mul(x.exp(), t).mean(0),
    "softmax": lambda lib, F, x, t: F.softmax(lib.matmul(x, t.T), dim=-1),
    "plain": lambda lib, F, x, t: lib.add(t, t),
    "disabled": lambda lib, F, x, t: _disabled(lib, lambda: lib.add(x, t)),
}


def _disabled(lib: Any, fn: Any) -> Any:
    with lib._C.DisableTorchFunctionSubclass():
        return fn()


@pytest.mark.parametrize("name", LOGGED)
def test_logging_subclass_as_pytorch(name: str) -> None:
    def run(lib: Any) -> Any:
        lib_, _, F = _libs(lib)  # noqa: N806
        LoggingTensor = _logging_tensor(lib)  # noqa: N806
        x = (
            lib.tensor([[1.0, -2.0], [3.0, 0.5]]).as_subclass(LoggingTensor)
            if lib is torch
            else LoggingTensor([[1.0, -2.0], [3.0, 0.5]])
        )
        t = lib.tensor([[0.5, 1.0], [2.0, -1.0]])
        out = LOGGED[name](lib_, F, x, t)
        return list(LoggingTensor.log), type(out).__name__, out.tolist()

    ours, theirs = run(tga), run(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(np.asarray(ours[2]), np.asarray(theirs[2]), rtol=1e-6, atol=1e-7)


def _recording_mode(lib: Any) -> Any:
    class Recording(lib.overrides.TorchFunctionMode):
        def __init__(self) -> None:
            super().__init__()
            self.log: list[str] = []

        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            self.log.append(func.__name__)
            return func(*args, **(kwargs or {}))

    return Recording()


#: programs whose calls a mode records, by the func names it sees (``m``: a Linear, ReLU, Linear model)
RECORDED = {
    "add": lambda lib, nn, F, x, m: lib.add(x, x),
    "sum": lambda lib, nn, F, x, m: x.sum(),
    "relu": lambda lib, nn, F, x, m: F.relu(x),
    "model": lambda lib, nn, F, x, m: m(x).sum().backward(),
    "ops": lambda lib, nn, F, x, m: (lib.softmax(x, -1), x.view(15), x.mean(0), x.transpose(0, 1), x.exp()),
    "functional": lambda lib, nn, F, x, m: (F.softmax(x, dim=1), lib.matmul(x, x.t()), lib.where(x.gt(0), x, 0.0)),
    "nested": lambda lib, nn, F, x, m: _nested(lib, x),
    "operator": lambda lib, nn, F, x, m: x > 0,
    "property": lambda lib, nn, F, x, m: x.T,
}
KNOWN = {
    "operator": "an operator passes Tensor.__gt__, named __gt__; PyTorch's operators are named as the method (gt)",
    "property": "properties are not dispatched here; PyTorch calls the mode with the property's __get__",
}


def _nested(lib: Any, x: Any) -> Any:
    outer, inner = _recording_mode(lib), _recording_mode(lib)
    with outer, inner:
        lib.add(x, 1)
        x.neg()
    return outer.log, inner.log


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN[n])) if n in KNOWN else n for n in RECORDED],
)
def test_mode_records_what_pytorch_records(name: str) -> None:
    def run(lib: Any) -> Any:
        lib_, nn, F = _libs(lib)  # noqa: N806
        lib.manual_seed(0)
        x = lib.randn(5, 3, requires_grad=name == "model")
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))  # (made before the mode is entered)
        mode = _recording_mode(lib)
        with mode:
            out = RECORDED[name](lib_, nn, F, x, model)
        return mode.log, out if name == "nested" else None

    assert run(tga) == run(torch)


def test_switches_and_helpers_as_pytorch() -> None:
    def run(lib: Any) -> Any:
        ScalarTensor, _ = _scalar_tensor(lib)  # noqa: N806
        s, t = ScalarTensor(2, 1.0), lib.ones(2)
        p = lib.nn.Parameter(lib.ones(2))
        ov = lib.overrides
        calls = []

        @ov.wrap_torch_function(lambda a, b=None: (a,))
        def mine(a: Any, b: Any = None) -> str:
            return "mine"

        class Taking:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
                calls.append(func is mine)
                return "taken"

        with lib._C.DisableTorchFunction():
            disabled = ov.has_torch_function((s,))
        return (
            ov.has_torch_function((s, t)), ov.has_torch_function((t, p)), disabled,
            ov.is_tensor_like(t), ov.is_tensor_like(s), ov.is_tensor_like(3),
            lib.nn.Parameter.__torch_function__ is lib._C._disabled_torch_function_impl,
            type(p * 2).__name__, mine(t), mine(Taking()), calls,
            ov.handle_torch_function(mine, (Taking(),), 1) if ov.has_torch_function((Taking(),)) else None,
            ov.is_tensor_method_or_property(lib.Tensor.add), ov.is_tensor_method_or_property(lib.add),
        )  # fmt: skip

    assert run(tga) == run(torch)


class _Taking:
    """Takes every call over, recording the ``func`` it was given."""

    seen: list[Any] = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
        cls.seen.append(func)
        return "taken"


def _taken(fn: Any, args: tuple) -> str:
    """What a call of ``fn`` with ``args`` did: ``taken`` (the override saw ``fn`` itself), ``ran`` or ``raised``."""
    _Taking.seen.clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(*args)
    except Exception:  # noqa: BLE001 - (a refusal of the call, as PyTorch's)
        return "raised"
    return "taken" if isinstance(r, str) and r == "taken" and _Taking.seen == [fn] else "ran"


def _public_functions() -> list[tuple[str, Any, Any]]:
    """(name, ours, PyTorch's) of every public function (``tga.X`` and ``F.X``) PyTorch also has."""
    out = []
    for name, fn in overrides._PUBLIC.values():
        short = name.rpartition(".")[2]
        ns = torch.nn.functional if name.startswith("nn.functional.") else torch
        theirs = getattr(ns, short, None)
        if callable(theirs) and not isinstance(theirs, type):
            out.append((name, fn, theirs))
    return out


def _sweep(functions: list[tuple[str, Any, Any]]) -> tuple[int, list]:
    """Every function with the first and the second argument an overriding object: where PyTorch's is taken
    over, ours must be, with ``func`` ours itself."""
    ran, wrong = 0, []
    for name, ours, theirs in functions:
        for args in ((_Taking(),), (tga.ones(2), _Taking())):
            torch_args = tuple(torch.ones(2) if isinstance(a, tga.Tensor) else a for a in args)
            if _taken(theirs, torch_args) != "taken":
                continue
            ran += 1
            if _taken(ours, args) != "taken":
                wrong.append((name, len(args)))
    return ran, wrong


def test_a_few_public_functions_are_taken_over() -> None:
    names = {"add", "mean", "matmul", "cat", "where", "exp_", "nn.functional.relu", "nn.functional.linear"}
    ran, wrong = _sweep([f for f in _public_functions() if f[0] in names])
    assert ran >= 8 and not wrong


@pytest.mark.slow
def test_every_public_function_is_taken_over_as_pytorchs() -> None:
    ran, wrong = _sweep(_public_functions())
    assert ran > 500, ran
    assert not wrong, wrong


def test_plain_calls_learn_their_classes_and_a_mode_sees_methods_only_while_entered() -> None:
    x = tga.ones(2)
    add = tga.Tensor.add
    mode = _recording_mode(tga)
    with mode:
        assert tga.Tensor.add is not add  # (the methods behind the check while a mode is entered)
        x.add(1)
    assert tga.Tensor.add is add and mode.log == ["add"]
    x.add(1)
    assert mode.log == ["add"]


def test_a_pytorch_tensor_meeting_ours_neither_recurses_nor_runs_its_function_on_ours() -> None:
    """``torch.tensor([1.]) == tga.tensor([1.])`` hands PyTorch's ``eq`` to our ``__torch_function__``; ours
    declines it (NotImplemented), so Python's fallback answers (False, or PyTorch's TypeError): it recursed
    until the interpreter crashed."""
    import pytest  # noqa: PLC0415

    torch = pytest.importorskip("torch")
    import tinygrad_attn as tga  # noqa: PLC0415

    assert (torch.tensor([1.0]) == tga.tensor([1.0])) is False
    with pytest.raises(TypeError):
        torch.add(torch.tensor([1.0]), tga.tensor([1.0]))
