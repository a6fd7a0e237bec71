"""No internal error reaches a user: every Tensor method PyTorch has too, called with the
arguments a user gets wrong (None, a string, a number where a tensor goes, an axis out of
range, a list, an empty or 0-d tensor, one argument too many, NumPy scalars, an index out of
range, a negative size), raises what
PyTorch raises or one of PyTorch's error classes with a message, never an ``AttributeError``,
``KeyError``, ``ZeroDivisionError``, ``UnboundLocalError``, ``NameError`` or ``AssertionError``
from our own code (unless PyTorch raises that very class there).

The same calls hold error parity: where PyTorch runs we run, and where PyTorch raises we raise,
with PyTorch's exception class (an instance of the builtin class PyTorch's error is, so code that
catches PyTorch's catches ours), except the calls listed in ``argument_parity_known`` (the lists
this check started from; an entry that now agrees with PyTorch fails the test until it is taken
off its list). Where PyTorch's own Python code fails on a non-tensor with an ``AttributeError``
(``'int' object has no attribute 'shape'``), or on a tensor where a flag or a size goes with the
``RuntimeError`` of its truth value (``Boolean value of Tensor with more than one value is
ambiguous``), our ``TypeError`` naming the argument is taken as agreeing: that class is an accident
of PyTorch's code, not a rule a user relies on.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402
from tests.tensor.argument_parity_known import KNOWN_CLASSES, KNOWN_RAISES, KNOWN_RETURNS  # noqa: E402

INTERNAL = (AttributeError, KeyError, ZeroDivisionError, UnboundLocalError, NameError, AssertionError, RecursionError)


def _internal(e: BaseException) -> bool:
    """Whether ``e`` is an internal error: of a class in ``INTERNAL`` and not also one of the library's
    users' errors (an error that is PyTorch's ``AssertionError`` and a ``RuntimeError`` is a user's)."""
    return isinstance(e, INTERNAL) and not isinstance(e, (RuntimeError, TypeError, ValueError))


_VALUES = {
    "t23": lambda lib: lib.tensor(np.arange(6.0).reshape(2, 3)),
    "ti": lambda lib: lib.tensor(np.arange(6).reshape(2, 3)),
    "t0": lambda lib: lib.tensor(2.5),
    "te": lambda lib: lib.tensor(np.zeros((0, 3))),
    "tb": lambda lib: lib.tensor(np.array([[True, False, True], [False] * 3])),
    "tix": lambda lib: lib.tensor(np.array([[0, 5, 1]])),  # (an index with an entry out of range of every axis)
}
#: (the tensor the method is called on, its arguments: a name of _VALUES is that tensor)
ARGUMENTS = [
    ("t23", ()), ("t23", (None,)), ("t23", ("a",)), ("t23", (0,)), ("t23", (5,)), ("t23", (-3,)), ("t23", (1.5,)),
    ("t23", (0, 0)), ("t23", ((2, 3),)), ("t23", ([],)), ("ti", (0,)), ("t0", (0,)), ("te", (0,)), ("tb", ()),
    ("t0", ()), ("t23", ("t23",)), ("t23", ("t0",)), ("t23", ("te",)), ("t23", ("ti",)), ("t23", (0, "t23")),
    # (an index out of range, a negative size or count, an axis one past the last, a scatter's out-of-range index)
    ("t23", (0, "tix")), ("t23", (-1,)), ("t23", (2,)), ("t23", (0, "tix", "t23")),
]  # fmt: skip
#: methods with effects outside the tensor, or that wait, or PyTorch's that take callables
_SKIP = {"backward", "register_hook", "share_memory_", "pin_memory", "cuda", "to_sparse", "storage", "untyped_storage",
         "data_ptr", "resize_", "resize_as_", "set_", "record_stream", "retain_grad", "requires_grad_",
         "register_post_accumulate_grad_hook", "apply_", "map_", "map2_", "new_tensor", "numpy", "tolist"}  # fmt: skip


def _call(lib, name, first, rest):
    x = _VALUES[first](lib)
    args = [_VALUES[a](lib) if isinstance(a, str) and a in _VALUES else a for a in rest]
    return getattr(x, name)(*args)


def _methods():
    return sorted(
        n for n in dir(torch.Tensor)
        if not n.startswith("_") and n not in _SKIP and hasattr(tga.Tensor, n) and callable(getattr(torch.Tensor, n))
    )  # fmt: skip


@pytest.mark.parametrize("name", _methods())
def test_a_mistaken_call_raises_a_users_error_not_an_internal_one(name):
    found = []
    for first, rest in ARGUMENTS:
        theirs = ours = None
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                _call(torch, name, first, rest)
            except Exception as e:  # noqa: BLE001 - compared below
                theirs = e
            try:
                _call(tga, name, first, rest)
            except Exception as e:  # noqa: BLE001
                ours = e
        if _internal(ours) and not (theirs is not None and isinstance(ours, type(theirs))):
            found.append(f"x.{name}{(first, *rest)}: {type(ours).__name__}: {ours}")
        found += _parity(f"{name}{(first, *rest)!r}", theirs, ours)
    assert not found, "\n".join(found)


def builtin_class(e: BaseException) -> type:
    """The builtin exception class an error is an instance of (PyTorch's ``LinAlgError`` is a
    ``RuntimeError``, its ``OutOfMemoryError`` too): the class code that catches it names."""
    return next(c for c in type(e).__mro__ if c.__module__ == "builtins")


def same_class(theirs: BaseException, ours: BaseException) -> bool:
    """Whether our error is caught where PyTorch's is (see the module's docstring)."""
    accident = isinstance(theirs, AttributeError) or (
        isinstance(theirs, RuntimeError) and str(theirs).startswith("Boolean value of Tensor with")
    )
    if accident and isinstance(ours, TypeError):
        return True
    return isinstance(ours, builtin_class(theirs))


def _parity(key: str, theirs: BaseException | None, ours: BaseException | None) -> list[str]:
    """What breaks error parity in one call (see the module's docstring)."""
    raises, returns, classes = key in KNOWN_RAISES, key in KNOWN_RETURNS, key in KNOWN_CLASSES
    if theirs is None and ours is not None and not raises:
        return [f"{key}: PyTorch runs, we raise {type(ours).__name__}: {ours}"]
    if theirs is not None and ours is None and not returns:
        return [f"{key}: PyTorch raises {type(theirs).__name__}: {theirs}; we return"]
    both = theirs is not None and ours is not None
    if both and not classes and not same_class(theirs, ours):
        return [f"{key}: PyTorch raises {type(theirs).__name__}: {theirs}; we raise {type(ours).__name__}: {ours}"]
    if (
        (raises and not (theirs is None and ours is not None))
        or (returns and not (theirs is not None and ours is None))
        or (classes and not (both and not same_class(theirs, ours)))
    ):
        return [f"{key}: agrees with PyTorch now: take it off argument_parity_known"]
    return []


#: free functions' argument sets: a tensor first or not, then the mistakes above
FREE_ARGUMENTS = [
    (), ("t23",), ("t23", None), ("t23", "a"), ("t23", 0), ("t23", 5), ("t23", 1.5), ("t23", "t23"), ("t23", "t0"),
    ("t0",), ("te",), ("tb",), ("ti",), (None,), ("a",), (3,), ([1, 2],), ("t23", "t23", "t23"), ("t23", 0, 0),
    ("t23", (2, 3)),
    # (an index out of range, a negative size or count, an axis one past the last, indices into a table)
    ("t23", 0, "tix"), ("t23", -1), ("t23", 2), ("tix", "t23"),
]  # fmt: skip
#: functions that change global state or touch files
_FREE_SKIP = {"save", "load", "set_default_dtype", "set_default_device", "set_printoptions", "manual_seed", "seed",
              "set_rng_state", "use_deterministic_algorithms", "set_num_threads", "set_grad_enabled", "compile",
              "set_flush_denormal", "set_num_interop_threads", "set_warn_always", "set_anomaly_enabled",
              "set_default_tensor_type", "from_file", "set_deterministic_debug_mode", "set_float32_matmul_precision",
              "promote_types", "can_cast"}  # fmt: skip


def _free_functions():
    import types  # noqa: PLC0415

    return sorted(
        n for n in dir(torch)
        if not n.startswith("_") and n not in _FREE_SKIP and hasattr(tga, n) and callable(getattr(torch, n))
        and not isinstance(getattr(torch, n), (type, types.ModuleType))
    )  # fmt: skip


def _check_free(space, prefix: str, name: str, argument_sets) -> None:
    found = []
    for args in argument_sets:
        theirs = ours = None
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                getattr(space(torch), name)(
                    *[_VALUES[a](torch) if isinstance(a, str) and a in _VALUES else a for a in args]
                )
            except Exception as e:  # noqa: BLE001 - compared below
                theirs = e
            try:
                getattr(space(tga), name)(
                    *[_VALUES[a](tga) if isinstance(a, str) and a in _VALUES else a for a in args]
                )
            except Exception as e:  # noqa: BLE001
                ours = e
        if _internal(ours) and not (theirs is not None and isinstance(ours, type(theirs))):
            found.append(f"{prefix}{name}{args}: {type(ours).__name__}: {ours}")
        found += _parity(f"{prefix}{name}{args!r}", theirs, ours)
    assert not found, "\n".join(found)


@pytest.mark.parametrize("name", _free_functions())
def test_a_mistaken_call_of_a_free_function_raises_a_users_error(name):
    _check_free(lambda lib: lib, "tga.", name, FREE_ARGUMENTS)


#: ``nn.functional``'s argument sets: the free functions' and a flag given as an int (``F.relu(x, 1)``)
FUNCTIONAL_ARGUMENTS = [*FREE_ARGUMENTS, ("t23", 1), ("t23", 0, 1), ("t23", True), ("t23", "t23", 0)]


def _functionals():
    import types  # noqa: PLC0415

    F = torch.nn.functional
    return sorted(
        n for n in dir(F)
        if not n.startswith("_") and callable(getattr(F, n)) and hasattr(tga.nn.functional, n)
        and not isinstance(getattr(F, n), (type, types.ModuleType))
    )  # fmt: skip


@pytest.mark.parametrize("name", _functionals())
def test_a_mistaken_call_of_a_functional_raises_a_users_error(name):
    _check_free(lambda lib: lib.nn.functional, "F.", name, FUNCTIONAL_ARGUMENTS)
