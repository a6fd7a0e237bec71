"""The forms PyTorch's argument parser takes and refuses, generated over families of functions and
run under PyTorch and here: where PyTorch runs ours runs with its values, where it raises ours
raises an instance of its (builtin) exception class. The forms are those a user writes by mistake
or from older code:

- a ``dtype=`` that is no dtype (a string NumPy reads as bytes or text, a list, a number, a tensor,
  a Python class): PyTorch's ``ScalarType`` is a dtype only;
- a list of ints given as one int or one by one to a free function whose method takes them one by
  one (``torch.tile(x, 2, 1)``, ``torch.reshape(x, -1)``; ``x.tile(2, 1)`` runs);
- ``None`` for a parameter that may be left out but has no ``None`` in PyTorch's schema
  (``torch.trapezoid(y, None)``, ``torch.nuclear_norm(A, None)``);
- PyTorch's deprecated forms that still run (``x.addcmul(2, a, b)``: the value first);
- shapes given to ``broadcast_shapes`` as ``None``, ints, tensors, floats or negative sizes;
- ``Tensor.type`` and ``Tensor.new`` with what is no type name and no data, and a class (a tensor class
  among them) given as data to each constructor;
- Tensor's operator methods called unbound, on a number or on two tensors;
- an int, a list of ints or a tensor where the schema takes some of these (``x.split(t)``, ``F.pad(x, 1)``),
  read before the dtype (``torch.std(int_tensor, t)`` is a ``TypeError``);
- an input with fewer axes than a pool reads (PyTorch's ``IndexError``).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from differential import builtin_class  # noqa: E402

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

X = "torch.arange(6.0, dtype=torch.float64).reshape(2, 3)"
#: what goes where a dtype goes: PyTorch's dtypes, and what is not one
DTYPES = ["torch.float32", "torch.int64", "torch.bool", "torch.complex64", "torch.uint8", "None", "'a'", "'U5'", "[]",
          "3", "1.5", X, "object", "str"]  # fmt: skip
#: calls with a ``dtype`` slot ``{d}``
DTYPE_CALLS = [
    "torch.zeros(2, dtype={d})", "torch.ones(2, 3, dtype={d})", "torch.full((2,), 1, dtype={d})",
    "torch.arange(3, dtype={d})", "torch.eye(2, dtype={d})", "torch.tensor([1, 0], dtype={d})",
    "torch.as_tensor([1, 0], dtype={d})", "torch.zeros_like(x, dtype={d})", "torch.ones_like(x, dtype={d})",
    "x.new_zeros(2, dtype={d})", "x.new_ones((2,), dtype={d})", "x.new_full((2,), 1, dtype={d})",
    "x.to(dtype={d})", "x.sum(dtype={d})", "x.cumsum(0, dtype={d})", "torch.empty(2, dtype={d}).shape",
    "torch.arange(0, 3, 1.5, dtype={d})", "torch.range(0, 2, dtype={d})", "torch.linspace(0, 2, 3, dtype={d})",
    "torch.linspace(0, 2, 0, dtype={d})", "torch.logspace(0, 1, 2, dtype={d})", "torch.randperm(3, dtype={d}).shape",
    "x.cumprod(1, dtype={d})", "torch.cumsum(x.bool(), 0, dtype={d})",
]  # fmt: skip
#: free functions whose method takes its list of ints one by one, and what a user passes as that list
LIST_CALLS = ["reshape", "tile", "flip", "permute", "hsplit", "vsplit", "tensor_split", "squeeze", "count_nonzero"]
LISTS = ["0", "-1", "1, 0", "(1, 0)", "[0]", "()", "(2, 3)", "3, 2", "(3, 2)", "2"]
#: parameters that may be left out but are never None, each given None, left out and given a value
NONE_CALLS = [
    "torch.trapezoid(x, None)", "torch.trapezoid(x, dx=None)", "torch.trapezoid(x)", "torch.trapezoid(x, dx=2)",
    "torch.trapezoid(x, torch.tensor([0.0, 1.0, 3.0], dtype=torch.float64))", "torch.trapz(x, None)",
    "torch.trapz(x, dx=0.5)", "torch.cumulative_trapezoid(x, None)", "torch.cumulative_trapezoid(x, dx=None)",
    "torch.cumulative_trapezoid(x)", "torch.trapezoid(x, 1.0)", "torch.nuclear_norm(x, None)",
    "torch.nuclear_norm(x)", "torch.nuclear_norm(x, True)", "torch.nuclear_norm(x, (0, 1))",
    "torch.as_tensor(x, None)", "torch.as_tensor(x, torch.float32)", "torch.as_tensor(x, dtype=torch.float32)",
]  # fmt: skip
#: PyTorch's deprecated value-first forms, and the mistakes beside them
DEPRECATED = [
    f"{call}".format(op=op)
    for op in ("addcmul", "addcdiv")
    for call in (
        "torch.{op}(x, 2, x, x + 1)", "x.{op}(2, x, x + 1)", "x.clone().{op}_(0.5, x, x + 1)",
        "torch.{op}(x, x, x + 1, value=2)", "torch.{op}(x, 2, x, x + 1, value=3)", "x.{op}(2, x)",
        "x.{op}(x, 2, x)", "x.{op}(torch.tensor(2.0), x, x + 1)", "x.{op}(None, x, x + 1)", "x.{op}(2, x, x, x)",
    )
]  # fmt: skip
#: PyTorch's deprecated beta-first forms (``x.addmm(beta, [alpha,] a, b)``, ``torch.addmm(beta, x, [alpha,] a, b)``),
#: by op and its input, first and second tensor, and the mistakes beside them
BETA_FIRST_OPERANDS = {
    "addmm": ("(x @ x.T)", "x", "x.T"), "addmv": ("x[:, 0]", "x", "x[0]"), "addr": ("x", "x[:, 0]", "x[0]"),
    "addbmm": ("(x @ x.T)", "x[None]", "x.T[None]"), "baddbmm": ("(x @ x.T)[None]", "x[None]", "x.T[None]"),
}  # fmt: skip
DEPRECATED += [
    call.format(op=op, i=i, a=a, b=b)
    for op, (i, a, b) in BETA_FIRST_OPERANDS.items()
    for call in (
        "{i}.{op}(2, {a}, {b})", "{i}.{op}(2, 3, {a}, {b})", "{i}.clone().{op}_(0.5, {a}, {b})",
        "torch.{op}(2, {i}, {a}, {b})", "torch.{op}(2, {i}, 3, {a}, {b})", "torch.{op}({i}, 2, {a}, {b})",
        "torch.{op}({i}, {a}, {b}, beta=2)", "{i}.{op}({a}, 2)", "{i}.{op}(2, {a}, {b}, beta=3)",
        "{i}.{op}(torch.tensor(2.0), {a}, {b})", "{i}.{op}(None, {a}, {b})", "{i}.{op}(2, {a})",
        "{i}.{op}(2, {a}, {b}, {b})", "torch.{op}(2, 3, {i}, {a}, {b})",
    )
] + ["torch.addmv_(x[:, 0].clone(), 2, x, x[0])", "torch.addmv_(2, x[:, 0].clone(), x, x[0])"]  # fmt: skip
#: parameters of an int, an int list or a tensor (PyTorch's overloads), given each kind and the wrong ones
KINDS = ["2", "-1", "[1, 1]", "(1, 2)", "'a'", "1.5", "torch.tensor(1)", "torch.tensor([1, 1])", "torch.tensor(2.5)", X]
KIND_CALLS = [
    "x.split({v})", "x.tensor_split({v})", "x.repeat_interleave({v}, dim=0)", "torch.histogram(x, {v})",
    "torch.nn.functional.pad(x, {v})", "torch.nn.functional.layer_norm(x, {v})", "torch.roll(x, {v}, 0)",
    "torch.constant_pad_nd(x, {v})", "torch.permute_copy(x, {v})", "torch.expand_copy(x, {v})",
    "x.tile(1, {v})", "x.hsplit(1, {v})", "x.var({v})", "torch.std_mean(x, {v})", "torch.std(x.long(), {v})",
    "torch.nuclear_norm(x, {v})",
]  # fmt: skip
#: ``nn.functional``'s ``inplace`` flag, which the ``torch.`` spellings of the same names do not take
INPLACE_FLAG_CALLS = [
    f"{lib}.{call}" for lib in ("torch", "torch.nn.functional")
    for call in ("celu(x, 0.5, True)", "celu(x, inplace=True)", "celu(x, 0.5)", "threshold(x, 1.0, 0.0, True)",
                 "threshold(x, 1.0, 0.0, inplace=False)", "threshold(x, 1.0, 0.0)", "rrelu(x, inplace=True)",
                 "rrelu(x, 0.1, 0.3, False, False)", "rrelu(x, 0.1, 0.3, False)")
]  # fmt: skip
#: sizes that are no list of ints (PyTorch's int[] without a length takes no lone int)
UNFLATTEN_CALLS = [f"{call}({v})" for call in ("x.unflatten(1, ", "torch.unflatten(x, 1, ")
                   for v in ("3", "-1", "1.5", "(3, 1)", "[1, 3]", "(-1,)", "torch.tensor(3)", "torch.Size([3])")]  # fmt: skip
#: inputs with fewer axes than the op reads, and with as many
POOLS = [
    f"torch.nn.functional.{f}(torch.zeros({shape}), 1)"
    for f in ("avg_pool2d", "max_pool2d", "avg_pool1d", "lp_pool2d", "unfold", "adaptive_avg_pool2d")
    for shape in ("3", "2, 3", "1, 2, 3", "1, 1, 2, 3")
]
SHAPES = ["None", "3", "(2, 1)", "[1, 3]", "()", "(2, -1)", "(2.0,)", "'ab'", X, "torch.tensor(3)", "torch.Size([3])"]
#: what ``x.type(...)`` and ``x.new(...)`` are given
TYPE_CALLS = [
    f"x.{m}({a})"
    for m in ("type", "new")
    for a in ("'a'", "[]", "'float32'", "'torch.float32'", "float", "int", "'torch.IntTensor'", "torch.int32",
              "torch.DoubleTensor", "torch.Tensor", "1.5", "True", "2", "[1.5]", "(2, 3)", "None", "3, 2")
]  # fmt: skip
#: Tensor's operator methods called unbound (PyTorch's OpInfo calls them so): on a number, PyTorch's C methods
#: raise the descriptor's TypeError; ``__rpow__`` of two tensors is ``torch.pow`` of them swapped
UNBOUND_CALLS = [
    f"torch.Tensor.{m}({a}, {b})"
    for m in ("__radd__", "__rmul__", "__rand__", "__ror__", "__rxor__", "__add__", "__mul__", "__sub__", "__eq__",
              "__lt__", "__and__", "__xor__", "__lshift__", "__truediv__", "__mod__", "__rpow__")
    for a, b in (("2", "x.long()"), ("True", "x.bool()"), ("x.bool()", "torch.tensor(True)"), ("x", "x[1]"))
]  # fmt: skip
#: classes given as data to the constructors: the legacy ones (``torch.Tensor``, ``x.new``) and ``torch.tensor``'s kin
CLASS_DATA_CALLS = [
    f"{f}({a})"
    for f in ("torch.Tensor", "torch.tensor", "torch.as_tensor", "x.new_tensor", "torch.FloatTensor")
    for a in ("torch.DoubleTensor", "torch.Tensor", "torch.LongTensor", "float", "object", "torch.float32")
]  # fmt: skip


def _programs() -> list[str]:
    out = [c.format(d=d) for c, d in itertools.product(DTYPE_CALLS, DTYPES)]
    out += [f"torch.{f}(x, {v})" for f, v in itertools.product(LIST_CALLS, LISTS)]
    out += [f"x.{f}({v})" for f, v in itertools.product(LIST_CALLS, LISTS)]
    out += NONE_CALLS + DEPRECATED + POOLS + UNFLATTEN_CALLS + INPLACE_FLAG_CALLS
    out += [c.format(v=v) for c, v in itertools.product(KIND_CALLS, KINDS)]
    out += [f"torch.broadcast_shapes({a}, {b})" for a, b in itertools.combinations_with_replacement(SHAPES, 2)]
    out += [f"torch.broadcast_shapes({a})" for a in SHAPES]
    return out + TYPE_CALLS + CLASS_DATA_CALLS + UNBOUND_CALLS


PROGRAMS = _programs()

#: forms where the library keeps a convenience of its own, by reason
KNOWN: dict[str, str] = {}


def _run(lib, code: str):
    env = {"torch": lib}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(f"x = {X}", env)  # noqa: S102 - the tables above
            return eval(code, env), None  # noqa: S307
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's below
            return None, e


def _values(v):
    if isinstance(v, (tuple, list)) and not isinstance(v, (torch.Size, tga.Size)):
        return [_values(e) for e in v]
    if hasattr(v, "detach"):
        return v.detach().cpu().numpy() if hasattr(v, "cpu") else v.numpy()
    return v


def _agree(code: str) -> str | None:
    """What differs between the two libraries' outcomes of ``code``, or None."""
    want, want_error = _run(torch, code)
    got, got_error = _run(tga, code)
    if want_error is not None:
        if got_error is None:
            return f"PyTorch raises {type(want_error).__name__} ({want_error}); ours returns {got!r}"
        if not isinstance(got_error, builtin_class(type(want_error))):
            return f"PyTorch raises {type(want_error).__name__}, ours {type(got_error).__name__}: {got_error}"
        return None
    if got_error is not None:
        return f"PyTorch returns; ours raises {type(got_error).__name__}: {got_error}"
    if code.startswith("torch.empty") or ".new(" in code and "[" not in code:
        return None  # (uninitialised memory: the call's outcome, not its values)
    a, b = _values(want), _values(got)
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{len(a)} results, ours {len(b)}"
        pairs = list(zip(a, b))
    else:
        pairs = [(a, b)]
    for p, q in pairs:
        if isinstance(p, np.ndarray):
            if str(p.dtype) != str(q.dtype) or p.shape != q.shape or not np.array_equal(p, q):
                return f"PyTorch {p.dtype} {p.shape} {p.tolist()}, ours {q.dtype} {q.shape} {q.tolist()}"
        elif str(p) != str(q).replace("tinygrad_attn", "torch"):
            return f"PyTorch {p!r}, ours {q!r}"
    return None


@pytest.mark.slow
def test_the_generated_forms_are_many_and_each_family_has_both_outcomes():
    assert len(PROGRAMS) > 300
    raised = sum(_run(torch, c)[1] is not None for c in PROGRAMS)
    assert 0.2 * len(PROGRAMS) < raised < 0.8 * len(PROGRAMS)


def test_a_sample_of_the_forms_is_met_as_in_torch():
    """Every 12th form (each family's), for the fast suite; the slow test runs them all."""
    found = [f"{c}: {why}" for c in PROGRAMS[::12] if c not in KNOWN and (why := _agree(c)) is not None]
    assert not found, "\n".join(found)


@pytest.mark.slow
@pytest.mark.parametrize(
    "code",
    [pytest.param(c, marks=[pytest.mark.xfail(reason=KNOWN[c], strict=True)] if c in KNOWN else []) for c in PROGRAMS],
)
def test_an_argument_form_is_met_as_in_torch(code):
    found = _agree(code)
    assert found is None, f"{code}: {found}"


@pytest.mark.parametrize("sizes", [3, 6, np.int64(2)])
def test_unflatten_refuses_a_lone_int_by_naming_its_sizes(sizes):
    with pytest.raises(TypeError, match=r"unflatten\(\): argument 'sizes'"):
        tga.zeros(6, 2).unflatten(0, sizes)
