"""Free functions take their first tensor as ``input=`` (``torch.sin(input=x)``), as PyTorch's,
whatever name the library's declaration gives it, and refuse it given twice."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

CALLS = ["sin(input=x)", "clone(input=x)", "exp(input=x, out=torch.empty(0))", "numel(input=x)", "flatten(input=x)",
         "isinf(input=x)", "add(input=x, other=x, alpha=2)", "relu(input=x)", "adjoint(input=x)", "floor(input=x)",
         "sum(input=x, dim=0)", "sin(x, input=x)"]  # fmt: skip


@pytest.mark.parametrize("call", CALLS)
def test_free_functions_take_input_by_keyword(call: str) -> None:
    def run(lib):  # noqa: ANN001, ANN202
        try:
            out = eval(f"torch.{call}", {"torch": lib, "x": lib.tensor([[0.5, -1.5, 2.0], [1.0, 0.25, -3.0]])})  # noqa: S307
        except TypeError:
            return "TypeError"
        return np.asarray(out.numpy() if hasattr(out, "numpy") else out)

    want, got = run(torch), run(tga)
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(got, want)
