"""PyTorch's OpInfo samples with their arguments spelt in the other ways users spell them.

A PyTorch program passes a dimension, an exponent or a bound as a Python number, a NumPy scalar
(``x.sum(np.int64(1))``, a value read from an array), a 0-d tensor (``x.narrow(0, start, n)`` with
``start = idx[0]``), a list or a tuple (``x.permute([1, 0])``, ``x.sum((0, 1))``). For every shared
OpInfo (:mod:`test_torch_opinfo`'s targets) this re-runs its samples with every scalar argument
respelt in each form and compares with PyTorch on the same respelt sample: where PyTorch runs, ours
must run and give the same values and dtypes (a NumPy scalar is no 0-d tensor: its dtype does not
promote, as PyTorch's); where PyTorch raises the sample is not ours to match (the error grid,
``tools/argument_parity.py``, holds the raises).

Reviewed differences are strict xfails with one reason each (``KNOWN``).
``python tests/ops/test_respelt_opinfo_torch.py`` prints the survey: each op x form and its first difference.
"""

from __future__ import annotations

import copy
import sys
import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow  # (a generator over PyTorch's whole inventory: the full suite's)
pytest.importorskip("expecttest")

import test_torch_opinfo as runner  # noqa: E402

SAMPLES = 6


def _numpy_scalars(x: Any) -> Any:
    """Python numbers as NumPy's scalars of the widths NumPy gives them."""
    if isinstance(x, bool):
        return np.bool_(x)
    if isinstance(x, int):
        return np.int64(x)
    if isinstance(x, float):
        return np.float64(x)
    return x


def _float32_scalars(x: Any) -> Any:
    """Python floats as ``np.float32`` (a value read from a float32 array)."""
    return np.float32(x) if isinstance(x, float) and np.isfinite(x) and abs(x) < 1e30 else x


def _tensor_scalars(x: Any) -> Any:
    """Python ints and floats as 0-d tensors (a value read from a tensor without ``.item()``)."""
    if isinstance(x, bool):
        return x
    if isinstance(x, int):
        return torch.tensor(x)
    if isinstance(x, float):
        return torch.tensor(x, dtype=torch.float64)
    return x


def _sequences(x: Any) -> Any:
    """A list of ints as a tuple and a tuple of ints as a list."""
    if isinstance(x, (list, tuple)) and x and all(isinstance(v, int) and not isinstance(v, bool) for v in x):
        return tuple(x) if isinstance(x, list) else list(x)
    return x


FORMS = {"numpy": _numpy_scalars, "float32": _float32_scalars, "tensor": _tensor_scalars, "sequence": _sequences}


def _respell(x: Any, form: Any, top: bool = True) -> Any:
    y = form(x)
    if y is not x:
        return y
    if isinstance(x, (list, tuple)) and not isinstance(x, torch.Size):
        return type(x)(_respell(v, form, False) for v in x)
    if isinstance(x, dict) and top:
        return {k: _respell(v, form, False) for k, v in x.items()}
    return x


def _changed(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return True
    if isinstance(a, (list, tuple)):
        return len(a) != len(b) or any(_changed(u, v) for u, v in zip(a, b, strict=False))
    if isinstance(a, dict):
        return any(_changed(a[k], b[k]) for k in a)
    return False


def run_form(op_id: str, form: str, *, n: int = SAMPLES) -> runner.Tally:
    """The op's float64 samples with their arguments respelt in ``form``, compared."""
    target = runner.TARGETS[op_id]
    tally = runner.Tally()
    tga_seed = runner.tga.manual_seed
    tga_seed(0)
    for sample in runner._samples(target.op, torch.float64, n, reference=False, requires_grad=False):
        args = tuple(_respell(a, FORMS[form], False) for a in sample.args)
        kwargs = _respell(dict(sample.kwargs), FORMS[form])
        if not (_changed(tuple(sample.args), args) or _changed(dict(sample.kwargs), kwargs)):
            continue
        respelt = copy.copy(sample)
        respelt.args, respelt.kwargs = args, kwargs
        runner.run_sample(target, respelt, torch.float64, tally, grads=False)
    return tally


# op id x form -> why it differs today
KNOWN: dict[tuple[str, str], str] = {}


def _params() -> list:
    out = []
    for op_id in sorted(runner.TARGETS):
        if torch.float64 not in runner._supported(runner.TARGETS[op_id].op):
            continue
        for form in FORMS:
            marks = [pytest.mark.xfail(reason=KNOWN[op_id, form], strict=True)] if (op_id, form) in KNOWN else []
            out.append(pytest.param(op_id, form, marks=marks, id=f"{op_id}-{form}"))
    return out


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("op_id", "form"), _params())
def test_argument_forms(op_id: str, form: str) -> None:
    tally = run_form(op_id, form)
    assert not tally.failures, f"{len(tally.failures)} of {tally.compared} differ; first: " + tally.failures[0]


def test_forms_respell() -> None:
    """Each form changes what it should and nothing else (the generator itself can fail)."""
    assert type(_respell((2, [0, 1], 0.5, True), FORMS["numpy"])[0]) is np.int64
    assert _respell((2, [0, 1]), FORMS["sequence"])[1] == (0, 1)
    assert isinstance(_respell({"p": 2.0}, FORMS["tensor"])["p"], torch.Tensor)
    assert _respell((True,), FORMS["tensor"]) == (True,)
    assert not _changed((1, [2]), _respell((1, [2]), FORMS["float32"]))


if __name__ == "__main__":
    total = failed = 0
    for op_id in sorted(runner.TARGETS):
        for form in FORMS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = run_form(op_id, form)
            total += t.compared
            if t.failures:
                failed += 1
                print(f"{op_id} [{form}] {len(t.failures)}/{t.compared}: {t.failures[0][:300]}", file=sys.stdout)
    print(f"compared {total} respelt samples; {failed} op x form pairs differ")
