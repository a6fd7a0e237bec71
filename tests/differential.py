"""Run one program written for PyTorch twice, with ``torch`` bound to PyTorch and to
tinygrad_attn, and compare what it observed: values, dtypes, shapes, strings, the class of the
exception it stopped at, and the categories of the warnings it raised.

A program calls ``R(value, ...)`` to record what it sees; a tensor is recorded as its dtype's
name, shape, ``requires_grad`` and values, a container element by element, anything else as
itself (an object by its class name). Our exception matches PyTorch's when it is an instance of
a class of that name (ours are often PyTorch's class and Python's, such as RuntimeError and
ValueError at once)."""

from __future__ import annotations

import copy
import math
import textwrap
import warnings
from typing import Any

import numpy as np

import tinygrad_attn as tga


def builtin_class(cls: type) -> type:
    """An exception class as the built-in class a user catches: the first of Python's own in its
    MRO (PyTorch's ``_LinAlgError`` and ``OutOfMemoryError`` are ``RuntimeError``s)."""
    return next((k for k in cls.__mro__ if k.__module__ == "builtins"), Exception)


def _record(v: Any, lib: Any) -> Any:
    if isinstance(v, lib.Tensor):
        a = np.array(v.detach().numpy(), copy=True)  # (PyTorch shares the memory: later changes would show)
        return ("tensor", str(v.dtype).replace("torch.", ""), tuple(v.shape), bool(v.requires_grad), a)
    if isinstance(v, np.dtype) or type(v).__name__ == "dtype":
        return ("dtype", str(v).replace("torch.", ""))
    if type(v).__name__ == "Size":
        return ("Size", tuple(v))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_record(x, lib) for x in v])
    if isinstance(v, dict):
        return (type(v).__name__, [(k, _record(x, lib)) for k, x in v.items()])
    if isinstance(v, type):
        return ("class", v.__name__)
    if v is None or isinstance(v, (bool, int, float, complex, str)):
        return v
    return ("object", type(v).__name__)


def run(program: str, lib: Any) -> tuple[list[Any], tuple[str, ...] | None, list[str]]:
    """What ``program`` recorded with ``torch`` = ``lib``, the names of the exception's classes
    (None when it ran to its end) and the categories of its warnings."""
    seen: list[Any] = []
    scope = {"torch": lib, "nn": lib.nn, "F": lib.nn.functional, "np": np, "copy": copy, "math": math,
             "R": lambda *vs: seen.extend(_record(v, lib) for v in vs)}  # fmt: skip
    lib.set_grad_enabled(True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(textwrap.dedent(program), scope)  # noqa: S102 - the program is the test's own text
            raised = None
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            raised = tuple(c.__name__ for c in type(e).__mro__)
    lib.set_grad_enabled(True)
    cats = sorted({w.category.__name__ for w in caught if w.category is not DeprecationWarning})
    return seen, raised, cats


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            return np.allclose(a.astype(np.complex128), b.astype(np.complex128), rtol=1e-5, atol=1e-6, equal_nan=True)
        return np.array_equal(a, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-7) or (math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b


def assert_same_as_torch(program: str, torch: Any, warns: bool = True) -> None:
    """``program`` records the same things, stops at the same exception class (or none) and
    (``warns``) warns in the same categories with tinygrad_attn as with PyTorch."""
    want, want_raised, want_warn = run(program, torch)
    got, got_raised, got_warn = run(program, tga)
    for i, (w, g) in enumerate(zip(want, got)):
        assert _same(w, g), f"record {i}: PyTorch {w!r}, tinygrad_attn {g!r}"
    assert len(want) == len(got), f"PyTorch recorded {len(want)} values, tinygrad_attn {len(got)} (raised {got_raised})"
    if want_raised is None:
        assert got_raised is None, f"tinygrad_attn raised {got_raised[0]}, PyTorch ran to the end"
    else:
        assert got_raised is not None, f"PyTorch raised {want_raised[0]}, tinygrad_attn ran to the end"
        assert want_raised[0] in got_raised, f"PyTorch raised {want_raised[0]}, tinygrad_attn {got_raised}"
    if warns:
        assert want_warn == got_warn, f"warnings: PyTorch {want_warn}, tinygrad_attn {got_warn}"


#: The start of a known reason that is rounding whose size depends on the machine (the CPU's vector width
#: orders a float32 sum; cancellation leaves noise of that order): such a seed may agree on another CPU,
#: so it is not required to differ (every other known seed is, until it is taken off the list).
ROUNDING = "rounding, machine-dependent: "


def assert_seeds_as_in_torch(failures: Any, seeds: range, torch: Any, known: Any = ()) -> None:
    """A program generator's check: ``failures(seeds, torch)`` (the ``(seed, source, why)`` of each
    program that differs from PyTorch) lists none but ``known`` seeds, and each known seed among
    ``seeds`` still differs (one that runs as in PyTorch now comes off the list)."""
    bad = failures(seeds, torch)
    new = [(s, src, why) for s, src, why in bad if s not in known]
    shown = "\n\n".join(
        f"seed {s}: {why if isinstance(why, str) else ': '.join(why)}\n{src}" for s, src, why in new[:5]
    )
    assert not new, f"{len(new)} of {len(seeds)} programs differ from PyTorch; the first:\n\n{shown}"
    steady = {s for s in known if not str(known[s]).startswith(ROUNDING)} if hasattr(known, "items") else set(known)
    fixed = sorted(steady & set(seeds) - {s for s, _, _ in bad})
    assert not fixed, f"seeds {fixed} now run as in PyTorch: take them off KNOWN"


# -- programs that go on past a refused step ---------------------------------------------------------

#: Defines ``T(lambda: expr)`` for a program: it records ``expr``'s value, or the classes of the
#: exception it raises, so that one refused step does not end the program.
PRELUDE = """
def T(f):
    try:
        R(f())
    except Exception as e:
        R(("raised", tuple(c.__name__ for c in type(e).__mro__)))
"""


def alike(w: Any, g: Any) -> bool:
    """:func:`_same`, with float16 values compared to float16's precision (PyTorch's vectorised
    log, exp, ... round a unit in the last place differently from NumPy's)."""
    if isinstance(w, tuple) and isinstance(g, tuple) and len(w) == len(g) == 5 and w[0] == g[0] == "tensor":
        if w[1] == g[1] == "float16" and w[2:4] == g[2:4]:
            return bool(np.allclose(w[4].astype(np.float64), g[4].astype(np.float64), rtol=2e-3, atol=1e-3,
                                    equal_nan=True))  # fmt: skip
    if isinstance(w, tuple) and isinstance(g, tuple) and len(w) == len(g) == 2 and isinstance(w[1], list):
        return (
            w[0] == g[0]
            and isinstance(g[1], list)
            and len(w[1]) == len(g[1])
            and all(alike(a, b) for a, b in zip(w[1], g[1]))
        )
    return _same(w, g)


def float32_alike(want: Any, got: Any, scaled: float = 1e-3) -> bool:
    """:func:`alike`, with float32 tensors compared to float32's precision relative to the tensor's
    largest entry: a softmax's gradient is a difference of nearly equal products, and an optimizer
    step divides by gradients near its eps, so float32 sums in another order differ in the last
    bits of the smaller entries. Float64 tensors keep the strict comparison (a wrong formula shows
    there), and dtypes, shapes, NaN and infinity positions must match at every precision."""
    if (
        isinstance(want, tuple)
        and isinstance(got, tuple)
        and len(want) == len(got) == 5
        and want[0] == got[0] == "tensor"
    ):
        if want[1] == got[1] == "float32" and want[2:4] == got[2:4]:
            w, g = want[4].astype(np.float64), got[4].astype(np.float64)
            if not np.array_equal(np.isnan(w), np.isnan(g)) or not np.array_equal(
                np.where(np.isinf(w), w, 0), np.where(np.isinf(g), g, 0)
            ):
                return False
            ok = np.isfinite(w)
            scale = float(np.abs(w[ok]).max()) if ok.any() else 0.0
            return bool(np.all(np.abs(w[ok] - g[ok]) <= scaled * scale + 1e-4 * np.abs(w[ok]) + 1e-6))
    if isinstance(want, tuple) and isinstance(got, tuple) and len(want) == len(got) == 2 and isinstance(want[1], list):
        return (
            want[0] == got[0]
            and isinstance(got[1], list)
            and len(want[1]) == len(got[1])
            and all(float32_alike(a, b, scaled) for a, b in zip(want[1], got[1]))
        )
    return alike(want, got)


def _raised(record: Any) -> list[str] | None:
    """The exception classes a ``T`` record holds (None: it holds a value)."""
    if isinstance(record, tuple) and len(record) == 2 and record[0] == "tuple" and len(record[1]) == 2:
        tag, names = record[1]
        if tag == "raised" and isinstance(names, tuple):
            return names[1]
    return None


def difference(src: str, torch: Any, close: Any = alike) -> tuple[str, str] | None:
    """How ``src`` (which may use ``T``: start it with :data:`PRELUDE`) runs differently with
    tinygrad_attn than with PyTorch: (class, detail), or None. The classes: ``crash`` (PyTorch
    runs, we raise), ``returns`` (PyTorch raises, we run on), ``exception`` (another class),
    ``value`` (a record differs: ``close(pytorch_record, our_record)`` is false)."""
    want, want_raised, _ = run(src, torch)
    got, got_raised, _ = run(src, tga)
    for i, (w, g) in enumerate(zip(want, got)):
        w_raised, g_raised = _raised(w), _raised(g)
        if w_raised is None and g_raised is not None:
            return "crash", f"record {i}: PyTorch {w!r}, tinygrad_attn raises {g_raised[0]}"
        if w_raised is not None and g_raised is None:
            return "returns", f"record {i}: PyTorch raises {w_raised[0]}, tinygrad_attn returns {g!r}"
        if w_raised is not None and g_raised is not None and w_raised[0] not in g_raised:
            return "exception", f"record {i}: PyTorch raises {w_raised[0]}, tinygrad_attn {g_raised[0]}"
        if w_raised is None and not close(w, g):
            return "value", f"record {i}: PyTorch {w!r}, tinygrad_attn {g!r}"
    if want_raised is None and got_raised is not None:
        return "crash", f"PyTorch runs, tinygrad_attn raises {got_raised[0]}"
    if want_raised is not None and got_raised is None:
        return "returns", f"PyTorch raises {want_raised[0]}, tinygrad_attn runs on"
    if want_raised is not None and want_raised[0] not in got_raised:
        return "exception", f"PyTorch raises {want_raised[0]}, tinygrad_attn {got_raised[0]}"
    if len(want) != len(got):
        return "value", f"PyTorch recorded {len(want)} values, tinygrad_attn {len(got)}"
    return None


def float32_difference(src: str, torch: Any) -> tuple[str, str] | None:
    """:func:`difference` under :func:`float32_alike`, where a float32 program (``DT = torch.float32``)
    whose values differ beyond it is still taken as rounding when the same program in float64 agrees
    strictly and the float32 values agree to 1e-2 of each tensor's largest entry: a gradient that is a
    difference of nearly equal float32 terms loses most of its bits in any summation order (which
    depends on the CPU's vector width and on the compiled loops), while a wrong formula shows in float64."""
    why = difference(src, torch, float32_alike)
    if why is None or why[0] != "value" or "DT = torch.float32\n" not in src:
        return why
    if difference(src, torch, lambda w, g: float32_alike(w, g, 1e-2)) is not None:
        return why
    if difference(src.replace("DT = torch.float32\n", "DT = torch.float64\n"), torch) is not None:
        return why
    return None


def seed_tests(failures: Any, known: Any, fast: range, slow: range, fast_block: int, slow_block: int) -> tuple:
    """A program generator's two tests: its ``fast`` seeds in blocks of ``fast_block``, and (marked
    slow) its ``slow`` seeds in blocks of ``slow_block``, each block checked by
    :func:`assert_seeds_as_in_torch` against ``known``. Bind them to ``test_`` names of the module."""
    import pytest  # noqa: PLC0415 - (the harness imports pytest only where tests are made)

    def check(seeds: range) -> None:
        assert_seeds_as_in_torch(failures, seeds, pytest.importorskip("torch"), known)

    @pytest.mark.parametrize("block", range(0, len(fast), fast_block))
    def fast_test(block: int) -> None:
        check(fast[block : block + fast_block])

    @pytest.mark.slow
    @pytest.mark.parametrize("block", range(0, len(slow), slow_block))
    def slow_test(block: int) -> None:
        check(slow[block : block + slow_block])

    return fast_test, slow_test


def report(failures: Any, kinds: Any, argv: list[str]) -> None:
    """A generator run as a script (``python tests/.../test_X.py LO HI``): each differing program of
    seeds LO..HI (0..2000 by default), then the counts by program kind (and exception class)."""
    import torch  # noqa: PLC0415 - (the oracle, when run as a script)

    lo, hi = (int(a) for a in argv[1:3]) if len(argv) > 2 else (0, 2000)
    found = failures(range(lo, hi), torch)
    counts: dict[Any, int] = {}
    for s, src, why in found:
        kind = list(kinds)[s % len(kinds)]
        key = (kind, why[0]) if isinstance(why, tuple) else kind
        counts[key] = counts.get(key, 0) + 1
        print(f"--- seed {s}: {': '.join(why) if isinstance(why, tuple) else why}\n{src}")
    print(f"{len(found)} of {hi - lo} differ; by kind: {dict(sorted(counts.items(), key=str))}")


def program_of(kinds: dict, seed: int) -> str:
    """The program of ``seed``: kinds in turn (``seed % len(kinds)``), each drawn from ``seed``."""
    import random  # noqa: PLC0415

    kind = list(kinds)[seed % len(kinds)]
    return textwrap.dedent(kinds[kind](random.Random(seed))).strip() + "\n"


def generated_failures(kinds: dict, seeds: range, torch: Any, differ: Any, prelude: str = "") -> list[tuple]:
    """``(seed, program, why)`` of each program of ``seeds`` that ``differ(prelude + program, torch)``
    finds different from PyTorch."""
    out = []
    for seed in seeds:
        src = program_of(kinds, seed)
        why = differ(prelude + src, torch)
        if why is not None:
            out.append((seed, src, why))
    return out
