"""Tensor methods called the ways tutorials call them, drawn from a seed and run with ``torch``
bound to PyTorch and to tinygrad_attn (tests/differential.py): the recorded values (dtype, shape,
``requires_grad``, values), the gradients and the class of each exception must be the same.

Every program takes one name of ``dir(torch.Tensor)`` both libraries have (:func:`shared_names`)
and up to three of the call forms of :data:`FORMS` that PyTorch itself takes for that name on a
float ``(2, 3)`` tensor (:func:`legal_forms`: the table is PyTorch's answers, not a hand-picked
list): method, function and in-place twin, positional and keyword ``dim``, negative dims, dim
tuples and ``None``, ``keepdim``, a second tensor, ``out=``. Each form is applied to an input
drawn from :data:`INPUTS` (contiguous, transposed, sliced with a step, expanded, 0-d, empty,
float32/float64/int64), a view of a leaf, so the gradient through the view is compared too.

Run as a script over many seeds (prints each differing program and the counts per kind)::

    PYTHONPATH=.:tests python tests/tensor/test_method_forms_programs_torch.py 0 600
"""

from __future__ import annotations

import functools
import random
import sys
import warnings
from typing import Any

from differential import PRELUDE, float32_difference, generated_failures, program_of, report, seed_tests

#: The call forms (``{n}`` the name; ``x``, ``y`` tensors of one shape; ``o`` an empty ``out=`` tensor)
FORMS = ["x.{n}()", "torch.{n}(x)", "x.{n}(-1)", "x.{n}(dim=-1)", "x.{n}(1, keepdim=True)", "x.{n}(dim=(0, -1))",
         "x.{n}(dim=None)", "x.{n}(0)", "x.{n}(y)", "torch.{n}(x, y)", "x.clone().{n}_()", "x.clone().{n}_(y)",
         "torch.{n}(x, out=o)", "torch.{n}(x, y, out=o)", "torch.{n}(x, -1)", "torch.{n}(x, dim=0, keepdim=True)",
         "x.{n}(y, alpha=2)", "x.{n}(2)", "x.{n}(0.5)", "torch.{n}(input=x)"]  # fmt: skip

#: Names left out (the name itself, or a prefix where it is four letters or more or ends with ``_``): draws,
#: memory and device plumbing, Python protocols, autograd plumbing, uninitialised memory
EXCLUDED = ("random", "normal", "uniform", "bernoulli", "exponential", "geometric", "cauchy", "log_normal",
            "multinomial", "set_", "resize", "storage", "data_ptr", "share_memory", "pin_memory", "cuda", "sparse",
            "register", "backward", "numpy", "tolist", "item", "apply_", "map_", "map2_", "record_stream", "empty", "retain",
            "requires_grad_", "detach_", "to_mkldnn", "dequantize", "q_", "int_repr", "coalesce", "indices", "values",
            "crow", "col_indices", "row_indices", "ccol", "dense", "nested", "mps", "xpu", "ipu", "hpu", "mtia", "_", "rrelu",
            "module_load", "dim_order", "new_tensor", "smm", "sspaddmm", "qscheme", "positive", "is_",
            "pin", "untyped", "element_size", "get_device", "is_set_to", "data", "grad", "type", "cpu", "to",
            "stride", "storage_offset", "nbytes", "itemsize", "dropout", "fix_", "char", "half", "bfloat16",
            "cfloat", "cdouble", "chalf", "align", "rename", "refine_names", "unflatten", "as_subclass", "new",
            "new_empty", "const_data_ptr", "mutable_data_ptr", "to_sparse")  # fmt: skip

INPUTS = {
    "contiguous": "B[:, :3]",
    "transposed": "B[:, :3].t().contiguous().t()",
    "stepped": "B[:, ::2]",
    "expanded": "B[:1, :3].expand(2, 3)",
    "zero_d": "B[0, 1]",
    "empty": "B[:0, :3]",
}

_HEAD = """
def G(f, leaf):
    try:
        out = f()
    except Exception as e:
        R(("raised", tuple(c.__name__ for c in type(e).__mro__)))
        return
    R(out)
    ts = [t for t in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(t, torch.Tensor)]
    ts = [t for t in ts if t.requires_grad and t.is_floating_point()]
    if ts and leaf.grad is None:
        try:
            sum((t.double() * (torch.arange(t.numel(), dtype=torch.float64) * 0.37 + 0.5).reshape(t.shape)).sum()
                for t in ts).backward()
            R(leaf.grad)
        except Exception as e:
            R(("raised", tuple(c.__name__ for c in type(e).__mro__)))
        leaf.grad = None
"""


def _excludes(entry: str, name: str) -> bool:
    return name == entry or ((len(entry) >= 4 or entry.endswith("_")) and name.startswith(entry))


@functools.cache
def shared_names() -> tuple[str, ...]:
    """The public methods of ``torch.Tensor`` that tinygrad_attn's Tensor has, but :data:`EXCLUDED`."""
    import torch  # noqa: PLC0415 - (the oracle's inventory)

    import tinygrad_attn as tga  # noqa: PLC0415

    out = []
    for n in dir(torch.Tensor):
        if n.startswith("_") or not hasattr(tga.Tensor, n) or any(_excludes(e, n) for e in EXCLUDED):
            continue
        if n.endswith("_") and not hasattr(torch.Tensor, n[:-1]):
            continue
        if callable(getattr(torch.Tensor, n, None)):
            out.append(n.removesuffix("_") if n.endswith("_") else n)
    return tuple(sorted(set(out)))


@functools.cache
def legal_forms() -> dict[str, tuple[str, ...]]:
    """For each shared name, the forms of :data:`FORMS` PyTorch runs on a float ``(2, 3)`` tensor."""
    import torch  # noqa: PLC0415 - (the oracle's answers make the table)

    table = {}
    for n in shared_names():
        ok = []
        for form in FORMS:
            src = form.format(n=n)
            if src.startswith("torch.") and not hasattr(torch, n):
                continue
            scope = {"torch": torch, "x": torch.tensor([[0.3, -1.2, 0.8], [1.1, 0.4, -0.7]]),
                     "y": torch.tensor([[0.5, 1.5, 2.0], [0.25, 1.0, 3.0]]), "o": torch.empty(0)}  # fmt: skip
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    eval(src, scope)  # noqa: S307 - the table's own text
                ok.append(form)
            except Exception:  # noqa: BLE001, S112 - a form PyTorch refuses is not drawn
                continue
        if ok:
            table[n] = tuple(ok)
    return table


def _vals(r: random.Random, n: int) -> list[float]:
    return [round(r.uniform(-2.0, 2.0), 3) for _ in range(n)]


def k_forms(r: random.Random) -> str:
    table = legal_forms()
    name = r.choice(sorted(table))
    dt = r.choice(["torch.float32", "torch.float64", "torch.float64", "torch.int64"])
    grad = dt != "torch.int64"
    kind = r.choice(sorted(INPUTS))
    lines = [f"DT = {dt}", f"L = torch.tensor({_vals(r, 12)!r}, dtype=torch.float64).reshape(2, 6)",
             f"L = (L * 3).round().to(DT) if DT == torch.int64 else L.to(DT){'.requires_grad_()' if grad else ''}",
             "B = L", f"x = {INPUTS[kind]}",
             f"y = (torch.tensor({[abs(v) + 0.25 for v in _vals(r, 6)]!r}, dtype=torch.float64).reshape(2, 3) * 4)"
             ".round().to(DT)", "y = y[0, 1] if x.ndim == 0 else y[:0] if x.numel() == 0 else y",
             "o = torch.empty(0, dtype=DT)"]  # fmt: skip
    for form in r.sample(table[name], min(3, len(table[name]))):
        lines.append(f"G(lambda: {form.format(n=name)}, L)")
    lines.append("R(L, x)")
    return "\n".join(lines) + "\n"


KINDS = {"forms": k_forms}


def _differ(src: str, torch: Any) -> tuple[str, str] | None:
    return float32_difference(src, torch)


def failures(seeds: range, torch: Any) -> list[tuple]:
    return generated_failures(KINDS, seeds, torch, _differ, PRELUDE + _HEAD)


def program(seed: int) -> str:
    return program_of(KINDS, seed)


# -- the tests ------------------------------------------------------------------------------------

FAST_SEEDS = range(0, 60)
SLOW_SEEDS = range(60, 1260)

_INPLACE_NODIFF = (
    "a comparison or logical op in place (lt_, eq_, logical_and_, heaviside_, ...) on a tensor that requires grad: "
    "PyTorch's result keeps requires_grad=True (a node whose gradient is zero); ours is a value without history"
)
_INPLACE_NO_DERIV = (
    "acosh_/asinh_/atanh_ on a tensor that requires grad: PyTorch's in-place twins have no derivative (backward "
    "raises NotImplementedError); ours differentiate as the out-of-place ops"
)
_NO_DERIVATIVE_OUTPUTS = (
    "unique/unique_consecutive/geqrf of a tensor that requires grad: PyTorch's outputs require grad (a node that "
    "refuses backward); ours do not"
)
_UNANALYSED = "{} on the drawn input (out=, a view, 0-d or empty) differs; not yet analysed"

#: Differences known and not yet fixed, by seed: each must still differ (a fixed one is taken off).
KNOWN: dict[int, str] = {
    **dict.fromkeys([50, 61, 192, 207, 254, 276, 391, 393, 401, 434, 482, 502, 514, 630, 635, 638, 649, 665, 805, 875, 893, 921, 930, 975, 977, 982, 1006, 1070, 1090, 1127, 1140, 1183, 1185, 1190, 1249], _INPLACE_NODIFF),
    **dict.fromkeys([28, 224, 255, 309, 382, 488, 520, 546, 604, 815, 879, 914, 944, 1038, 1056, 1067, 1119, 1128], _INPLACE_NO_DERIV),
    **dict.fromkeys([56, 128, 185, 270, 289, 598, 871, 1169], _NO_DERIVATIVE_OUTPUTS),
    **dict.fromkeys([526, 571, 973], _UNANALYSED.format('conj_physical')),
    **dict.fromkeys([781], _UNANALYSED.format('diag')),
    **dict.fromkeys([71, 423], _UNANALYSED.format('floor_divide')),
    **dict.fromkeys([632, 699, 1016], _UNANALYSED.format('hardshrink')),
    **dict.fromkeys([227, 340, 602, 865, 868, 1137], _UNANALYSED.format('inner')),
    **dict.fromkeys([122, 838, 1184], _UNANALYSED.format('logit')),
    **dict.fromkeys([244, 457, 751, 951, 1053], _UNANALYSED.format('slice_scatter')),
    **dict.fromkeys([6, 238], _UNANALYSED.format('svd')),
    **dict.fromkeys([231], _UNANALYSED.format('unsafe_chunk')),
}  # fmt: skip

test_method_form_programs_run_as_in_torch, test_more_method_form_programs_run_as_in_torch = seed_tests(
    failures, KNOWN, FAST_SEEDS, SLOW_SEEDS, 30, 300
)


def test_the_forms_cover_most_shared_names() -> None:
    """PyTorch takes at least one form of the table for most shared names (the rest need other inputs)."""
    import pytest  # noqa: PLC0415

    pytest.importorskip("torch")
    assert len(legal_forms()) >= 0.6 * len(shared_names()), sorted(set(shared_names()) - set(legal_forms()))


if __name__ == "__main__":
    report(failures, KINDS, sys.argv)
