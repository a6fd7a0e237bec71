"""The package's layering: the Tensor class imports nothing built on it (lazy imports
included), its themed method modules and free functions import it one way, and each
composite has one implementation that is both the method and the free function."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn.engine import declare

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import import_graph  # noqa: E402

P = "tinygrad_attn."
EDGES = import_graph.graph()
COMPONENTS = import_graph.components(EDGES)

#: what the Tensor class may import: the engine, the ops, and the helpers below it
BELOW_TENSOR = {
    "autograd",
    "runtime.backend",
    "tensors.dtypes",
    "tensors.shape.dims",
    "tensors.promotion",
    "random",
    "ops",
    "tensors.mutation.inplace",
    "tensors.printing",
}  # (inplace: the Tensor class reaches it by registration; printing: the repr's options, importing nothing)
#: modules that build on the Tensor class (they install themselves on it, or use it)
ABOVE_TENSOR = ["tensors.shape.dims", "tensors.promotion", "tensors.reduce.tensor_reduce", "tensors.shape.tensor_shape",
                "tensors.elementwise.tensor_torch", "tensors.elementwise.tensor_arith",
                "tensors.factories.tensor_creation", "tensors.tensor_functions", "tensors.elementwise.math_functions",
                "functional", "functional.activations", "tensors.factories.creation", "tensors.index.indexing",
                "tensors.mutation.inplace_variants", "ops.compare", "ops.transfer"]  # fmt: skip


def _component_of(name: str) -> set[str]:
    return next(c for c in COMPONENTS if name in c)


def test_the_tensor_class_imports_only_what_is_below_it():
    for m in EDGES[P + "tensors._tensor"]:
        short = m.removeprefix(P)
        assert any(short == b or short.startswith(b + ".") for b in BELOW_TENSOR) or short.startswith("engine"), (
            f"_tensor.py imports {short}, which builds on it; install its methods from tinygrad_attn/__init__.py instead"
        )


@pytest.mark.parametrize("name", ABOVE_TENSOR)
def test_the_modules_built_on_the_tensor_import_it_one_way(name):
    assert P + "tensors._tensor" not in _component_of(P + name) or name in ("ops.compare", "ops.transfer"), (
        f"{name} and _tensor import each other: {sorted(_component_of(P + name))}"
    )


def test_the_rules_below_the_tensor_import_nothing_above_them():
    assert EDGES[P + "tensors.shape.dims"] == set()
    assert EDGES[P + "engine.warn"] == set()  # (a leaf every layer may warn through)
    assert EDGES[P + "engine.bfloat16"] == set()  # (NumPy's bfloat16, a leaf every layer may ask about)
    assert EDGES[P + "tensors.promotion"] <= {P + "tensors.dtypes", P + "engine.warn", P + "engine.bfloat16"}
    for op_module in ("ops.compare", "ops.transfer"):
        assert {m.removeprefix(P) for m in EDGES[P + op_module]} <= {"autograd", "engine", "engine.function"}


def test_no_module_of_the_package_is_in_an_import_cycle():
    # Issue 17 asked for at most the Tensor class and the engine's function core; the engine
    # learns the Tensor class by registration, the fused ops their definitions from the
    # modules that write them, and the program's records sit below its passes, so there is
    # no knot left at all (four before: 14, 12, 4 and 2 modules).
    assert all(len(c) == 1 for c in COMPONENTS), [sorted(c) for c in COMPONENTS if len(c) > 1]


def test_imports_only_a_type_checker_reads_are_not_edges(tmp_path):
    pkg = tmp_path / "tinygrad_attn"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\nelse:\n    from .c import C\n"
    )
    (pkg / "b.py").write_text("from .a import f\n")
    (pkg / "c.py").write_text("")
    edges = import_graph.graph(pkg)
    assert edges["tinygrad_attn.a"] == {"tinygrad_attn.c"}  # (the else branch runs)


def test_the_tool_counts_lazy_imports(tmp_path):
    pkg = tmp_path / "tinygrad_attn"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from .b import f\n")
    (pkg / "b.py").write_text("def f():\n    from . import a  # a lazy import is still an edge\n")
    (pkg / "c.py").write_text("from .sub import d\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "d.py").write_text("from ..b import f\n")
    edges = import_graph.graph(pkg)
    assert edges["tinygrad_attn.b"] == {"tinygrad_attn.a"}
    assert edges["tinygrad_attn.c"] == {"tinygrad_attn.sub.d"}
    assert edges["tinygrad_attn.sub.d"] == {"tinygrad_attn.b"}
    assert import_graph.components(edges)[0] == {"tinygrad_attn.a", "tinygrad_attn.b"}


# -- one implementation per composite ----------------------------------------------------
SAME = {
    "sum": tga.sum, "mean": tga.mean, "var": tga.var, "std": tga.std, "max": tga.max, "min": tga.min,
    "amax": tga.amax, "amin": tga.amin, "logsumexp": tga.logsumexp, "argmax": tga.argmax, "argmin": tga.argmin,
    "prod": tga.prod, "cumsum": tga.cumsum, "cumprod": tga.cumprod, "norm": tga.norm, "all": tga.all,
    "any": tga.any, "softmax": tga.softmax, "log_softmax": tga.log_softmax, "gelu": F.gelu, "dropout": F.dropout,
    "squeeze": tga.squeeze, "unsqueeze": tga.unsqueeze, "flatten": tga.flatten, "permute": tga.permute,
    "transpose": tga.transpose, "reshape": tga.reshape, "chunk": tga.chunk, "sort": tga.sort, "topk": tga.topk,
    "gather": tga.gather, "flip": tga.flip, "roll": tga.roll, "tril": tga.tril, "triu": tga.triu,
    "sin": tga.sin, "cos": tga.cos, "floor": tga.floor, "sign": tga.sign, "square": tga.square,
}  # fmt: skip


def _one(fn):
    """The function itself under a free function's check of its first argument or its out= adapter."""
    return declare.one_function(fn)


@pytest.mark.parametrize("name", sorted(SAME))
def test_the_method_is_the_free_function(name):
    assert _one(getattr(tga.Tensor, name)) is _one(SAME[name])


def test_softmax_is_one_function_under_two_names_and_nn_functional_has_its_own_spelling():
    # (PyTorch's torch.softmax(input, dim, dtype) needs dim; F.softmax(input, dim=None, _stacklevel, dtype) does not)
    assert _one(tga.softmax) is tga.Tensor.softmax and F.softmax is not tga.Tensor.softmax
    x = tga.tensor(np.arange(6.0).reshape(2, 3))
    assert tga.equal(x.softmax(0), F.softmax(x, 0)) and tga.equal(x.log_softmax(1), F.log_softmax(x, 1))
    with pytest.raises(TypeError, match="missing"):
        x.softmax()


def test_std_has_no_nan_gradient_at_zero_spread():
    for std in (lambda x: x.std(), lambda x: tga.std(x), lambda x: x.std(0, keepdim=True)):
        x = tga.tensor(np.full((3,), 2.0), requires_grad=True)
        std(x).sum().backward()
        np.testing.assert_array_equal(x.grad.detach().numpy(), np.zeros(3))


def test_max_and_min_are_one_rule():
    x = tga.tensor(np.array([[1.0, 5.0], [7.0, 3.0]]))
    assert x.max().item() == 7.0 and x.min().item() == 1.0
    assert x.max(1).indices.tolist() == [1, 0] and x.min(1).indices.tolist() == [0, 1]
    assert x.max(axis=0).tolist() == [7.0, 5.0] and x.min(axis=0).tolist() == [1.0, 3.0]
