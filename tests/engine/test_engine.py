"""The engine package (tinygrad_attn/engine/): what it may import, and the behaviour that
depends on there being one engine (one backward pass, one gradient accumulation)."""

from __future__ import annotations

import ast
import pathlib

import numpy as np

import tinygrad_attn as tga
from tinygrad_attn import Tensor

PKG = pathlib.Path(tga.__file__).parent
ENGINE = PKG / "engine"


def _imports(path: pathlib.Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports, lazy ones (inside functions) included, as absolute
    names; imports under ``if TYPE_CHECKING:`` never run and are left out."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = "tinygrad_attn." + ".".join(path.relative_to(PKG).with_suffix("").parts[:-1])
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # ``from .. import ops`` imports a module too: name each imported name's module
            found.append((node.lineno, mod))
            found.extend((node.lineno, f"{mod}.{a.name}") for a in node.names)
    return found


def _outside_engine(path: pathlib.Path) -> list[str]:
    bad = []
    for line, mod in _imports(path):
        if not mod.startswith("tinygrad_attn"):
            continue
        if mod.startswith("tinygrad_attn.engine"):
            continue
        bad.append(f"{path.name}:{line}: {mod}")
    return bad


def test_the_engine_imports_no_op_and_not_the_tensor_class():
    files = sorted(ENGINE.glob("*.py"))
    assert {f.name for f in files} >= {"switches.py", "function.py", "backward.py", "versions.py", "composite.py"}
    bad = [b for f in files for b in _outside_engine(f)]
    assert not bad, "the engine imports modules above it:\n" + "\n".join(bad)


def test_the_import_check_sees_lazy_imports(tmp_path):
    # A lazy import inside a function (as the engine once had for the view ops) is caught.
    f = ENGINE / "_probe_for_test.py"
    try:
        f.write_text(
            "def f():\n    from ..ops import Slice\n    from ..tensors import _tensor\n    return Slice, _tensor\n"
        )
        bad = _outside_engine(f)
    finally:
        f.unlink()
    assert any("tinygrad_attn.ops" in b for b in bad)
    assert any("tinygrad_attn.tensors._tensor" in b for b in bad)


def test_autograd_is_the_pytorch_face_only():
    # tga.autograd's package module re-exports the public names and has no code of its own
    # (the custom Function, grad/backward with PyTorch's arguments and functional are its submodules)
    tree = ast.parse((PKG / "autograd" / "__init__.py").read_text())
    kinds = {type(n).__name__ for n in tree.body}
    assert kinds <= {"Expr", "ImportFrom", "Assign"}, kinds
    for name in ("grad", "backward", "Function", "no_grad", "enable_grad", "detect_anomaly"):
        assert callable(getattr(tga.autograd, name))


def test_view_ops_declare_it():
    from tinygrad_attn import ops
    from tinygrad_attn.ops.alias import Alias, Copy, InPlace

    for cls in (ops.Slice, ops.Reshape, ops.Permute, ops.Expand, ops.movement.MatrixTranspose):
        assert cls.view, cls
    for cls in (ops.Add, ops.Exp, ops.Sum, ops.Cat, ops.SliceGrad, Alias, Copy):
        assert not cls.view, cls
    assert InPlace.rebases and not Alias.rebases


def test_a_replayed_grad_is_writable():
    a = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = Tensor(np.ones((2, 3)), requires_grad=True)

    def step(a: Tensor) -> Tensor:
        # (a + b).sum() sends both a read-only broadcast of ones: .grad must be a copy
        loss = (a * a).sum() + (a + b).sum()
        loss.backward()
        return loss

    compiled = tga.compile(step)
    for _ in range(3):  # (the first call traces; the others replay)
        a.grad = b.grad = None
        compiled(a)
        a.grad.mul_(10)  # raised 'assignment destination is read-only'
        b.grad.mul_(10)
        np.testing.assert_allclose(a.grad.detach().numpy(), 10 * (2 * np.arange(6.0).reshape(2, 3) + 1))
        np.testing.assert_allclose(b.grad.detach().numpy(), np.full((2, 3), 10.0))


def test_two_leaves_that_receive_one_gradient_get_grads_of_their_own():
    c, d = Tensor(np.ones(3), requires_grad=True), Tensor(np.ones(3), requires_grad=True)

    def step(x: Tensor) -> Tensor:
        loss = (c + d + x).sum()  # the add hands one array to both leaves
        loss.backward()
        return loss

    compiled = tga.compile(step)
    for _ in range(3):
        c.grad = d.grad = None
        compiled(Tensor(np.ones(3)))
        c.grad.mul_(10)
        np.testing.assert_allclose(d.grad.detach().numpy(), np.ones(3))  # untouched by c's change


def test_traced_and_eager_gradients_agree_through_the_one_engine():
    # A fused op (softmax), broadcasting (a bias), a slice read twice, a gradient that two
    # leaves share (an add): the traced pass is the engine's own pass with the tracer's namespace.
    from tinygrad_attn.symbolic.trace import Tracer

    rng = np.random.default_rng(0)
    w0, b0, x0 = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.standard_normal((2, 4))

    def loss_of(w, b, x):
        h = (x @ w + b).softmax(-1)
        return (h[:, :2] * h[:, 1:]).sum() + (w + w).sum()

    def run(compiled: bool):
        w, b = Tensor(w0, requires_grad=True), Tensor(b0, requires_grad=True)
        x = Tensor(x0)
        if compiled:

            def step(x):
                loss = loss_of(w, b, x)
                loss.backward()
                return loss

            f = tga.compile(step)
            for _ in range(2):  # a trace, then a replay
                w.grad = b.grad = None
                f(x)
        else:
            loss_of(w, b, x).backward()
        return w.grad.detach().numpy(), b.grad.detach().numpy()

    assert not hasattr(Tracer, "run_backward")  # (its own copy of the pass is gone)
    traced = run(True)
    for a, b in zip(traced, run(False)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_a_hook_sees_every_op_and_step_and_nests():
    from tinygrad_attn.engine.switches import Hook, observing

    class Log(Hook):
        def __init__(self):
            self.ops, self.steps = [], []

        def op(self, fn, inputs, out):
            self.ops.append(fn.op_name)
            super().op(fn, inputs, out)

        def after_step(self, fn, grads, ns):
            self.steps.append(fn.op_name)
            super().after_step(fn, grads, ns)

    x = Tensor([1.0, 2.0], requires_grad=True)
    outer, inner = Log(), Log()
    with observing(outer), observing(inner), tga.detect_anomaly():
        ((x * 3.0).exp()).sum().backward()
    assert inner.ops == outer.ops == ["mul", "exp", "sum"]
    assert inner.steps == outer.steps == ["sum", "exp", "mul"]
    with observing(outer):
        pass
    (x * 2.0).sum()  # no hook any more: nothing seen
    assert len(outer.ops) == 3


def test_the_explorer_records_the_order_through_the_hook_without_patching_classes():
    from tinygrad_attn import ops
    from tinygrad_attn.engine.switches import Hook, observing
    from tinygrad_attn.viz import explore

    watched = (ops.Mul, ops.Exp, ops.Sum)
    before = {c: c.__dict__["backward"] for c in watched}
    seen = []

    class Check(Hook):  # (outside the explorer's own hook: it passes each step on to this one)
        def after_step(self, fn, grads, ns):
            seen.append(all(c.__dict__["backward"] is before[c] for c in watched))
            seen.append(type(fn).backward is before.get(type(fn), type(fn).backward))

    x = Tensor([1.0, 2.0], requires_grad=True)
    loss = (x * 3.0).exp().sum()
    with observing(Check()):
        page = explore(loss)
    assert [s["op"] for s in page.data["steps"]] == ["sum", "exp", "mul"]
    assert seen and all(seen)


def _module_aliases(path: pathlib.Path, tree: ast.Module) -> dict[str, str]:
    """The names under which ``path`` imports modules of the package (``from . import ops``,
    ``from .engine import function as _function``), each with the module's dotted name."""
    package = "tinygrad_attn." + ".".join(path.relative_to(PKG).with_suffix("").parts[:-1])
    aliases = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.level:
            continue
        base = package.strip(".").split(".")
        base = base[: len(base) - node.level + 1] + ([node.module] if node.module else [])
        for a in node.names:
            rel = pathlib.Path(*base[1:], a.name)
            if (PKG / rel.with_suffix(".py")).exists() or (PKG / rel / "__init__.py").exists():
                aliases[a.asname or a.name] = ".".join([*base, a.name])
    return aliases


def test_no_module_writes_another_modules_globals():
    # One owner per global: a module that must set another's (a registration) calls a
    # function of that module, so that each global is written where it is declared.
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        aliases = _module_aliases(path, tree)
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for t in targets if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) else ():
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in aliases:
                    bad.append(f"{path.relative_to(PKG)}:{node.lineno}: {aliases[t.value.id]}.{t.attr}")
    assert not bad, "modules that write another module's globals:\n" + "\n".join(bad)
