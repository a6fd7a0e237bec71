"""``tga.jit`` (PyTorch's ``torch.jit`` names; ``trace`` records a Program) and ``tga.trace``,
which is ``torch.trace``, the sum of a matrix's diagonal."""

import re
from pathlib import Path

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor

torch = pytest.importorskip("torch")


def test_jit_trace_returns_a_program_that_replays():
    x = Tensor(np.arange(3.0), requires_grad=True)
    prog = tga.jit.trace(lambda x: (x * x).sum(), x)
    assert isinstance(prog, tga.Program)
    assert float(prog(Tensor(np.array([1.0, 2.0, 4.0]), requires_grad=True))) == 21.0


@pytest.mark.parametrize("spelling", ["positional", "tuple", "keyword"])
def test_jit_trace_takes_pytorchs_example_spellings(spelling):
    a, b = Tensor(np.ones(2)), Tensor(np.full(2, 3.0))
    fn = lambda a, b: a * b  # noqa: E731
    prog = {"positional": lambda: tga.jit.trace(fn, a, b), "tuple": lambda: tga.jit.trace(fn, (a, b)),
            "keyword": lambda: tga.jit.trace(fn, example_inputs=(a, b))}[spelling]()  # fmt: skip
    np.testing.assert_array_equal(prog(Tensor(np.array([1.0, 2.0])), b).detach().numpy(), [3.0, 6.0])


def test_is_tracing_inside_a_trace_only():
    seen = []
    tga.jit.trace(lambda x: seen.append(tga.jit.is_tracing()) or x * 2.0, Tensor(np.ones(2)))
    assert seen == [True] and not tga.jit.is_tracing() and tga.jit.is_scripting() is False


@pytest.mark.parametrize("name", ["script", "trace_module", "save", "load", "freeze", "optimize_for_inference"])
def test_torchscript_functions_raise_naming_themselves(name):
    with pytest.raises(NotImplementedError, match=rf"jit\.{name}\b"):
        getattr(tga.jit, name)(lambda x: x, Tensor(np.ones(1)))


def test_jit_decorators_leave_the_function():
    def f(x):
        return x

    assert tga.jit.ignore(f) is f and tga.jit.ignore(drop=True)(f) is f and tga.jit.unused(f) is f
    assert tga.jit.export(f) is f and tga.jit.annotate(list, [1]) == [1]
    assert set(tga.jit.__all__) <= set(dir(torch.jit))


def test_trace_of_a_callable_names_the_tracer():
    with pytest.raises(TypeError, match=r"tga\.jit\.trace"):
        tga.trace(lambda x: x * 2.0, Tensor(np.ones(2)))
    with pytest.raises(TypeError, match=r"tga\.jit\.trace"):
        tga.trace(lambda x: x * 2.0)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "uint8", "int8", "int16"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2), (0, 3), (1, 1)])
def test_trace_values_and_dtypes_as_torch(dtype, shape):
    a = np.random.default_rng(0).integers(0, 9, size=shape).astype(dtype)
    ours, theirs = tga.trace(tga.tensor(a)), torch.trace(torch.tensor(a))
    assert str(ours.dtype) == str(theirs.dtype) and ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy().astype(np.float64), theirs.detach().numpy().astype(np.float64))
    assert float(tga.tensor(a).trace()) == float(ours)


@pytest.mark.parametrize("shape", [(), (3,), (2, 2, 2)])
def test_trace_of_a_non_matrix_raises_as_torch(shape):
    with pytest.raises(RuntimeError) as theirs:
        torch.trace(torch.ones(shape))
    with pytest.raises(RuntimeError, match=r"trace: expected a matrix, but got tensor with dim") as ours:
        tga.trace(tga.ones(shape))
    assert str(theirs.value) in str(ours.value)


def test_trace_gradient_against_finite_differences_and_torch():
    a = np.random.default_rng(1).standard_normal((3, 4))
    x = Tensor(a, requires_grad=True)
    assert tga.gradcheck(tga.trace, a)
    (g,) = tga.grad(tga.trace(x) * 3.0, [x], create_graph=True)
    t = torch.tensor(a, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.trace(t) * 3.0, [t])
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy())


def test_jit_trace_of_a_module_reads_its_parameters_at_each_replay():
    m = tga.nn.Linear(2, 3)
    x = Tensor(np.ones((1, 2), dtype=np.float32))
    prog = tga.jit.trace(m, (x,))  # (PyTorch's usual spelling: the module and a tuple of examples)
    np.testing.assert_allclose(prog(x).detach().numpy(), m(x).detach().numpy())
    with tga.no_grad():
        m.weight.mul_(2.0)
    np.testing.assert_allclose(prog(x).detach().numpy(), m(x).detach().numpy())


def test_the_tracer_is_asked_for_through_the_switches_helpers_only():
    """Outside the tracer's own package one place (``engine/switches.py``: ``tracing``,
    ``active_tracer``, ``check_host_read``) reads which tracer records the thread."""
    root = Path(tga.__file__).parent
    readers = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if p.parts[len(root.parts)] != "symbolic" and p != root / "engine" / "switches.py"
        and re.search(r"\.tracer\b", p.read_text(encoding="utf-8"))
    )  # fmt: skip
    assert not readers, f"read the tracer through engine.switches' helpers instead: {readers}"


def test_the_switches_helpers_answer_inside_a_trace_only():
    from tinygrad_attn.engine.switches import active_tracer, check_host_read, tracing

    x, const = Tensor(np.ones((2, 2))), Tensor(np.ones(3))
    seen = []

    def f(a):
        seen.append((tracing(), active_tracer() is not None))
        check_host_read(const, "item")  # (not a value of the program: allowed)
        with pytest.raises(tga.symbolic.TraceError, match=r"\.item\(\) on a traced tensor"):
            check_host_read(a, "item")
        return a * 2

    tga.jit.trace(f, x)
    assert seen == [(True, True)]
    assert (tracing(), active_tracer()) == (False, None)
    check_host_read(x, "item")  # (outside a trace: nothing to refuse)


@pytest.mark.parametrize("value", [1e38, -1e300, 3e-30, 2.5, float("inf"), float("-inf"), float("nan")])
@pytest.mark.parametrize("kind", [np.float32, np.float64])
def test_a_named_constant_is_an_identifier(value: float, kind: type) -> None:
    """A number the device holds (a NumPy scalar) is a named global of the printed program: its
    name shows the value, and is a Python identifier whatever the value's repr (``1e+38``)."""
    from types import SimpleNamespace  # noqa: PLC0415

    from tinygrad_attn.symbolic.codegen import _Names  # noqa: PLC0415

    with np.errstate(over="ignore"):
        x = kind(value)
    names = _Names(SimpleNamespace(ops=[]))
    name = names.operand(x)
    assert name.isidentifier() and names.env[name] is x
