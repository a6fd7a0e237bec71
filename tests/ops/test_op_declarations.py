"""Ops describe themselves: a unique name per class, and the declarations (``primitive``,
``elementwise``) that the registry, the tracer, fusion and the pictures read instead of
lists of op names."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import sys
from pathlib import Path

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor, ops
from tinygrad_attn.engine.function import Function


def _every_op_class() -> list[type]:
    """Every ``Function`` subclass the package defines: all its modules imported, then the
    subclasses walked recursively."""
    for m in pkgutil.walk_packages(tga.__path__, "tinygrad_attn."):
        if not m.name.endswith("__main__"):  # (the command line: it parses sys.argv on import)
            importlib.import_module(m.name)
    found, todo = [], [Function]
    while todo:
        for sub in todo.pop().__subclasses__():
            # (the package's own: not a class another test made and dropped with its module)
            if sub not in found and sub.__module__.startswith("tinygrad_attn.") and sub.__module__ in sys.modules:
                found.append(sub)
                todo.append(sub)
    return found


def test_every_op_class_has_a_name_of_its_own():
    classes = _every_op_class()
    assert len(classes) > 80  # (the walk found the package's ops, not a handful)
    by_name: dict[str, list[str]] = {}
    for cls in classes:
        by_name.setdefault(cls.op_name_of(), []).append(f"{cls.__module__}.{cls.__qualname__}")
    shared = {n: cs for n, cs in by_name.items() if len(cs) > 1}
    assert not shared, f"op classes sharing a display name (give each its own `name`): {shared}"


def test_a_traced_argmin_prints_as_argmin(rng):
    x = Tensor(rng.standard_normal((3, 4)))
    code = tga.jit.trace(lambda x: (x.argmin(1), x.argmax(0), x.cummin(1).indices, x.cummax(1).indices), x).code
    assert "argmin_1 = " in code and "argmax_1 = " in code
    assert "cumargmin_1 = " in code and "cumargmax_1 = " in code


def test_argmin_and_argmax_are_two_ops_with_one_forward(rng):
    x = Tensor(rng.standard_normal((3, 4)), requires_grad=True)
    lo, hi = ops.ArgExtreme.apply(x, args=(1, "min")), ops.ArgExtreme.apply(x, args=(1, "max"))
    np.testing.assert_array_equal(lo.detach().numpy()[:, 0], x.detach().numpy().argmin(1))
    np.testing.assert_array_equal(hi.detach().numpy()[:, 0], x.detach().numpy().argmax(1))
    assert x.argmin(1).tolist() == x.detach().numpy().argmin(1).tolist()
    prefixes = [[int(np.argmin(r[: j + 1])) for j in range(4)] for r in x.detach().numpy()]  # (no ties in normal draws)
    assert x.cummin(1).indices.tolist() == prefixes


def test_the_distinct_pow_gather_and_scatter_ops_print_their_own_names(rng):
    a = Tensor(rng.uniform(0.5, 2.0, (2, 3)))
    b = Tensor(rng.uniform(0.5, 2.0, (2, 3)))
    idx = Tensor(np.array([[0, 2, 1], [1, 1, 0]]))
    code = tga.jit.trace(lambda a, b: (a**2.0, a**b, a.gather(1, idx), a.scatter_add(1, idx, b)), a, b).code
    for name in ("pow_scalar_1 = ", "pow_1 = ", "gather_along_1 = ", "scatter_add_along_1 = "):
        assert name in code, (name, code)


def test_primitives_are_the_ops_that_declare_it():
    assert ops.PRIMITIVES == {n: c for n, c in ops.OPS.items() if c.__dict__.get("primitive", False)}
    assert {"Add", "Matmul", "Sum", "Reshape", "Gather", "Where", "Atan2"} <= set(ops.PRIMITIVES)
    # not inherited: a transpose is a permute, argmin an ArgExtreme, a fused op no primitive
    assert not {"Transpose", "ArgMin", "SoftmaxAlongDim", "Take"} & set(ops.PRIMITIVES)
    for name, cls in ops.OPS.items():
        assert getattr(ops, name) is cls and issubclass(cls, Function)


def test_no_op_class_is_named_like_an_nn_module():
    """``ops.Convolution2d`` builds the node ``nn.Conv2d`` adds: one name, one thing."""
    import tinygrad_attn.nn as nn

    assert not sorted(n for n in ops.OPS if hasattr(nn, n))


#: The op classes renamed apart from the nn modules, by their new class name, and the label
#: (``op_name``) each showed before and must still show in programs, pictures and errors.
_RENAMED_LABELS = {
    "Convolution": "conv", "Convolution1d": "conv1d", "Convolution2d": "conv2d", "Convolution3d": "conv3d",
    "MaxPooling": "max_pool", "MaxPooling1d": "max_pool1d", "MaxPooling2d": "max_pool2d", "MaxPooling3d": "max_pool3d",
    "AveragePooling": "avg_pool", "AveragePooling1d": "avg_pool1d", "AveragePooling2d": "avg_pool2d",
    "AveragePooling3d": "avg_pool3d", "AdaptiveAveragePooling2d": "adaptive_avg_pool2d",
    "Affine": "linear", "LayerNormalization": "layer_norm", "SoftmaxAlongDim": "softmax",
    "LogSoftmaxAlongDim": "log_softmax", "HyperbolicTangent": "tanh", "HyperbolicTangentBackward": "tanh_backward",
    "Logistic": "sigmoid", "LogisticBackward": "sigmoid_backward", "GRURecurrence": "gru",
    "LSTMRecurrence": "lstm", "SlidingWindows": "unfold",
}  # fmt: skip


@pytest.mark.parametrize("cls_name", sorted(_RENAMED_LABELS))
def test_a_renamed_op_class_keeps_its_label(cls_name):
    assert ops.OPS[cls_name].op_name_of() == _RENAMED_LABELS[cls_name]


def test_renamed_ops_print_and_run_under_their_labels(rng):
    """A traced program names its values and callables by the op's label, not its class."""
    nn = tga.nn
    conv, lin, norm = nn.Conv2d(2, 3, 3), nn.Linear(12, 5), nn.LayerNorm(5)

    def f(x):
        y = nn.functional.max_pool2d(conv(x), 2).tanh().sigmoid().flatten(1)
        return nn.functional.log_softmax(norm(lin(y)), -1).softmax(-1).unfold(1, 2, 1).sum()

    x = Tensor(rng.standard_normal((2, 2, 6, 6)).astype(np.float32), requires_grad=True)
    program = tga.jit.trace(f, x)
    for label in ("conv2d", "max_pool2d", "tanh", "sigmoid", "linear", "layer_norm", "log_softmax", "softmax",
                  "unfold"):  # fmt: skip
        assert f"{label}_1 = " in program.code, (label, program.code)
    for cls_name in _RENAMED_LABELS:
        assert cls_name not in program.code, (cls_name, program.code)
    np.testing.assert_allclose(program(x).detach().numpy(), f(x).detach().numpy(), rtol=1e-5)


_THROWAWAY = '''
from tinygrad_attn.engine.function import Function


class Cube(Function):
    """x ** 3: a primitive added as one class, to see that nothing else needs a line."""

    __slots__ = ()
    primitive = True
    elementwise = "{0} * {0} * {0}"
    reads_output = False

    def forward(self, ns, a):
        return a * a * a

    def backward(self, g, ns, inputs, out):
        return (g * (3.0 * inputs[0] * inputs[0]),)
'''


def test_a_new_primitive_is_one_class(tmp_path, monkeypatch, rng):
    """A module with one op class, put beside the package's ops: the registry lists it as a
    primitive, and the engine, the tracer, fusion and the pictures take it as it is."""
    from tinygrad_attn.symbolic.fusion import elementwise_groups  # noqa: PLC0415
    from tinygrad_attn.viz.graph import forward_graph  # noqa: PLC0415

    (tmp_path / "throwaway_cube.py").write_text(_THROWAWAY)
    monkeypatch.setattr(ops, "__path__", [*ops.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, "tinygrad_attn.ops.throwaway_cube", raising=False)
    try:
        found = ops._load_ops()
        cube = found["Cube"]
        assert cube.__dict__["primitive"] and cube.__module__ == "tinygrad_attn.ops.throwaway_cube"
        x = Tensor(rng.standard_normal((2, 3)), requires_grad=True)
        assert tga.gradcheck(lambda x: cube.apply(x), x)
        prog = tga.jit.trace(lambda x: (cube.apply(x) + 1.0).sum(), x)
        assert " = cube(x)" in prog.code or "fused: cube, add" in prog.code  # (a fused group's line names its ops)
        (k,) = [k for k in elementwise_groups(prog) if k.records[0].fn.__class__ is cube]  # cube, then + 1
        assert k.lines[0].endswith(" = x * x * x;") and len(k.lines) == 2
        assert [n.title for n in forward_graph(cube.apply(x)).nodes][1] == "cube"
    finally:
        sys.modules.pop("tinygrad_attn.ops.throwaway_cube", None)


def _op_name_keys(tree: ast.AST, names: set[str]) -> list[int]:
    """Lines that compare an op's name with a literal (``fn.op_name == "softmax"``,
    ``op.op in ("add", "mul")``) or build a table keyed by op names (3 keys or more)."""

    def is_name(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute):
            return node.attr in ("op_name", "op")
        if isinstance(node, ast.Name):
            return node.id == "op_name"
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "op_name_of"

    def literals(node: ast.AST) -> list[str]:
        elts = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
        return [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]

    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(is_name(s) for s in sides) and any(set(literals(s)) & names for s in sides):
                bad.append(node.lineno)
        elif isinstance(node, ast.Dict) and len(node.keys) >= 3:
            keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
            if all(k in names for k in keys):
                bad.append(node.lineno)
    return bad


@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_the_tracer_fusion_and_pictures_know_no_op_by_its_name():
    """They read what the ops declare (``elementwise``, ``heads_axis``, the class itself);
    a list of op names would miss the next op, or one renamed."""
    names = {c.op_name_of() for c in _every_op_class()}
    root = Path(tga.__file__).parent
    found = {}
    for path in sorted([*root.glob("symbolic/*.py"), *root.glob("viz/*.py")]):
        lines = _op_name_keys(ast.parse(path.read_text(encoding="utf-8")), names)
        if lines:
            found[str(path.relative_to(root))] = lines
    assert not found, f"op names used as keys (declare an attribute on the op classes instead): {found}"
    assert _op_name_keys(
        ast.parse('C = {"add": "a", "mul": "b", "exp": "c"}\nif fn.op_name == "softmax": pass'), names
    ) == [1, 2]  # (the check itself sees both kinds)
