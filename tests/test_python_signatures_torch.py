"""PyTorch's Python-level API takes the same parameters here: every public function and class
that a PyTorch module of the Python API (``torch.nn``, ``torch.optim``, ``torch.distributions``,
``torch.utils.data``, ``torch.autograd``, ...) shares with ours, and every method of such a
class, has PyTorch's parameter names in PyTorch's order, of PyTorch's kinds, with PyTorch's
defaults, wherever ``inspect`` can read PyTorch's signature.

The inventory is read from PyTorch's modules when the tests are collected, so a name either side
adds later is covered at once. The rules of the comparison:

- defaults are compared by ``repr``; a function default is compared by its name (its address
  differs), and a ``Generator`` default by its class (PyTorch's is its C generator object);
- ours may take keyword-only parameters after all of PyTorch's (no PyTorch call reaches them, so
  each PyTorch call means the same);
- the names of ``*args`` and ``**kwargs`` are not compared (no caller names them);
- where PyTorch's signature is ``(*args, **kwargs)`` alone (a C++ overload set, a module whose
  ``__init__`` is ``Module``'s), the signatures say nothing: ``CALLS`` holds calls PyTorch's
  accepts (and ones it rejects), made on both sides and compared, and a name without one fails;
- ``Tensor``'s methods are left to ``tests/tensor/test_signatures.py``.

``PROGRAMS`` calls, by keyword, each parameter that was renamed or added to match, under PyTorch
and under ours, and compares the results. ``KNOWN`` lists the differences left, each with its
reason, as strict xfails.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

P = inspect.Parameter

#: PyTorch's modules of the Python API compared, by their path under ``torch``
MODULES = (
    "nn", "nn.functional", "nn.init", "nn.utils", "nn.utils.rnn", "nn.utils.parametrize",
    "nn.utils.parametrizations", "nn.utils.prune", "nn.utils.stateless", "optim", "optim.lr_scheduler",
    "optim.swa_utils", "utils.data", "utils.checkpoint", "utils.hooks", "distributions",
    "distributions.constraints", "distributions.transforms", "autograd", "autograd.functional", "func", "fft",
    "random",
)  # fmt: skip

#: name -> why ours differs from PyTorch's (strict xfails)
KNOWN: dict[str, str] = {}


def _ours_module(path: str) -> Any:
    try:
        return importlib.import_module("tinygrad_attn." + path)
    except ImportError:
        mod: Any = tga
        for part in path.split("."):
            mod = getattr(mod, part, None)
        return mod


def _signature(obj: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):  # a builtin without a readable signature
        return None


def _inventory() -> dict[str, tuple[Any, Any]]:
    """name -> (PyTorch's callable, ours), each pair once (under the first module that has it)."""
    out: dict[str, tuple[Any, Any]] = {}
    seen: set[tuple[int, int]] = set()

    def add(name: str, theirs: Any, ours: Any) -> None:
        if (id(theirs), id(ours)) in seen or _signature(theirs) is None:
            return
        seen.add((id(theirs), id(ours)))
        out[name] = (theirs, ours)

    for path in MODULES:
        theirs_mod, ours_mod = importlib.import_module("torch." + path), _ours_module(path)
        if ours_mod is None:
            continue
        for n in sorted(dir(theirs_mod)):
            t, o = getattr(theirs_mod, n), getattr(ours_mod, n, None)
            if n.startswith("_") or o is None or not callable(t) or not callable(o):
                continue
            if not getattr(t, "__module__", "").startswith("torch") or t is torch.Tensor:
                continue  # (typing's names re-exported; Tensor's methods: tests/tensor/test_signatures.py)
            add(f"{path}.{n}", t, o)
            if inspect.isclass(t) and inspect.isclass(o):
                for a in sorted(vars(t)):
                    ta, oa = getattr(t, a, None), getattr(o, a, None)
                    if a.startswith("_") or oa is None or not callable(ta):
                        continue
                    if inspect.isclass(ta) or isinstance(vars(t)[a], property):
                        continue  # (a class attribute naming another class; a property)
                    add(f"{path}.{n}.{a}", ta, oa)
    return out


INVENTORY = _inventory()

_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _default(p: P) -> str:
    d = p.default
    if d is P.empty:
        return "<required>"
    if isinstance(d, (torch.Generator, tga.Generator)):
        return "<Generator>"  # (PyTorch's default generator is a C object; ours its twin)
    if callable(d) and hasattr(d, "__name__") and not isinstance(d, type):
        return f"<function {d.__name__}>"
    return _ADDRESS.sub("", repr(d))


def _params(sig: inspect.Signature) -> list[tuple[str, Any, str]]:
    # (a caller never names *args or **kwargs: those are compared by kind alone)
    var = {P.VAR_POSITIONAL: "args", P.VAR_KEYWORD: "kwargs"}
    return [(var.get(p.kind, p.name), p.kind, _default(p)) for p in sig.parameters.values()]


def _varargs_only(sig: inspect.Signature) -> bool:
    kinds = [p.kind for p in sig.parameters.values() if p.name != "self"]
    return bool(kinds) and set(kinds) <= {P.VAR_POSITIONAL, P.VAR_KEYWORD}


def _describe(params: list[tuple[str, Any, str]]) -> str:
    marks = {P.POSITIONAL_ONLY: "/", P.KEYWORD_ONLY: "kw:", P.VAR_POSITIONAL: "*", P.VAR_KEYWORD: "**"}
    return ", ".join(f"{marks.get(k, '')}{n}" + ("" if d == "<required>" else f"={d}") for n, k, d in params)


# -- calls, where PyTorch's signature is (*args, **kwargs) alone ------------------------------------
def _record(fn: Callable[[Any], Any], lib: Any) -> Any:
    """What ``fn(lib)`` gives, as plain data: numbers and lists, or the class of what it raised."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the class raised is the result compared
        return ("raises", [c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"][0])
    return _plain(out)


def _plain(v: Any) -> Any:
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, (torch.Tensor, tga.Tensor)):
        return np.asarray(v.detach().numpy()).round(5).tolist()
    if isinstance(v, (torch.nn.Module, tga.nn.Module)):
        return [(n, tuple(p.shape)) for n, p in v.named_parameters()] + [type(v).__name__]
    return v


def _x(lib: Any, *shape: int) -> Any:
    n = int(np.prod(shape))
    return lib.tensor(np.sin(np.arange(n) * 0.7 + 0.3).reshape(shape).tolist())


def _no_args(name: str) -> list[Callable[[Any], Any]]:
    """A module whose PyTorch ``__init__`` is ``Module``'s: made without arguments, and an argument
    rejected."""
    cls = name.split(".")[-1]
    return [lambda m: getattr(m.nn, cls)()(_x(m, 2, 3, 2, 2)), lambda m: getattr(m.nn, cls)(1)]


def _rnn(cls: str) -> list[Callable[[Any], Any]]:
    def by_keyword(m: Any) -> Any:
        m.manual_seed(0)
        return getattr(m.nn, cls)(input_size=3, hidden_size=4, num_layers=2, bias=False, batch_first=True,
                                  dropout=0.0, bidirectional=True)  # fmt: skip

    return [
        by_keyword,
        lambda m: getattr(m.nn, cls)(3, 4, 1, True, False, 0.0, False),
        lambda m: getattr(m.nn, cls)(3, 4, nonsense=1),
    ]


def _pool(fn: str, nd: int) -> list[Callable[[Any], Any]]:
    shape = (1, 2) + (5,) * nd
    return [
        lambda m: getattr(m.nn.functional, fn)(input=_x(m, *shape), kernel_size=2, stride=1, padding=1, dilation=1,
                                               ceil_mode=True, return_indices=True),  # fmt: skip
        lambda m: getattr(m.nn.functional, fn)(_x(m, *shape), 3, 2, 0, 1, False, False),
    ]


def _adaptive(fn: str, nd: int) -> list[Callable[[Any], Any]]:
    shape = (1, 2) + (5,) * nd
    return [
        lambda m: getattr(m.nn.functional, fn)(input=_x(m, *shape), output_size=3, return_indices=True),
        lambda m: getattr(m.nn.functional, fn)(_x(m, *shape), 2, False),
    ]


def _fractional(fn: str, nd: int) -> list[Callable[[Any], Any]]:
    shape = (1, 2) + (6,) * nd
    samples = [[[0.3] * nd, [0.7] * nd]]
    return [
        lambda m: getattr(m.nn.functional, fn)(input=_x(m, *shape), kernel_size=2, output_size=3, output_ratio=None,
                                               return_indices=True, _random_samples=m.tensor(samples)),  # fmt: skip
    ]


CALLS: dict[str, list[Callable[[Any], Any]]] = {
    **{f"nn.{c}": _no_args(f"nn.{c}") for c in ("LogSigmoid", "Sigmoid", "Softmax2d", "Softsign", "Tanh", "Tanhshrink")},
    "nn.Module": [lambda m: m.nn.Module().training, lambda m: m.nn.Module(1)],
    "nn.Identity": [lambda m: m.nn.Identity(3, flag=True)(_x(m, 2, 3))],
    "nn.Container": [lambda m: list(m.nn.Container(a=m.nn.Tanh()).named_children())[0][0]],
    **{f"nn.{c}": _rnn(c) for c in ("RNN", "GRU", "LSTM")},
    "nn.NLLLoss2d": [
        lambda m: m.nn.NLLLoss2d(weight=None, ignore_index=1, reduction="sum")(
            _x(m, 2, 3, 2, 2), m.tensor([[[0, 1], [2, 1]], [[1, 1], [0, 2]]])),
    ],
    "nn.Module.to": [lambda m: m.nn.Linear(2, 2).to(dtype=m.float64).weight.dtype == m.float64,
                     lambda m: m.nn.Linear(2, 2).to("cpu", m.float64, non_blocking=False).bias.dtype == m.float64],
    **{f"nn.functional.max_pool{d}d": _pool(f"max_pool{d}d", d) for d in (1, 2, 3)},
    **{f"nn.functional.adaptive_max_pool{d}d": _adaptive(f"adaptive_max_pool{d}d", d) for d in (1, 2, 3)},
    **{f"nn.functional.fractional_max_pool{d}d": _fractional(f"fractional_max_pool{d}d", d) for d in (2, 3)},
    "nn.utils.rnn.PackedSequence.cpu": [
        lambda m: m.nn.utils.rnn.pack_padded_sequence(_x(m, 3, 2), [3, 2]).cpu().data,
    ],
}  # fmt: skip


def _cases(names: Any) -> list[Any]:
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN[n])) if n in KNOWN else n
            for n in sorted(names)]  # fmt: skip


@pytest.mark.parametrize("name", _cases(INVENTORY))
def test_signature_as_pytorch(name: str) -> None:
    theirs, ours = INVENTORY[name]
    t_sig, o_sig = _signature(theirs), _signature(ours)
    assert o_sig is not None, f"{name}: ours has no readable signature; PyTorch's is {t_sig}"
    t, o = _params(t_sig), _params(o_sig)
    if t == o:
        return
    if _varargs_only(t_sig):
        assert name in CALLS, f"{name}: PyTorch's is {t_sig}; CALLS needs calls it accepts, to compare ours by"
        for i, call in enumerate(CALLS[name]):
            want, got = _record(call, torch), _record(call, tga)
            assert got == want, f"{name}: call {i} gives {got}, PyTorch's {want}"
        return
    extra = o[len(t) :]
    if o[: len(t)] == t and all(k is P.KEYWORD_ONLY for _, k, _ in extra):
        return  # (ours' keyword-only extras come after all of PyTorch's)
    pytest.fail(f"{name}:\n  PyTorch's ({_describe(t)})\n  ours      ({_describe(o)})")


# -- each renamed or added parameter, called by keyword on both sides ---------------------------
PROGRAMS: dict[str, Callable[[Any], Any]] = {}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_keyword_call_as_pytorch(name: str) -> None:
    want, got = _record(PROGRAMS[name], torch), _record(PROGRAMS[name], tga)
    assert want[0] != "raises" if isinstance(want, tuple) else True, f"{name}: PyTorch's raises {want}"
    assert got == want, f"{name}: ours gives {got}, PyTorch's {want}"


def test_inventory_is_pytorchs() -> None:
    """The inventory is PyTorch's API (hundreds of names), and every KNOWN and CALLS name is in it."""
    assert len(INVENTORY) > 1000
    assert set(KNOWN) <= set(INVENTORY), sorted(set(KNOWN) - set(INVENTORY))
    assert set(CALLS) <= set(INVENTORY), sorted(set(CALLS) - set(INVENTORY))
