"""The mechanisms that make tracing cheap, each checked for what it must not change: op
names remembered per class, the numbering of the program's globals, an absent operand
written as ``None``, ``peak_bytes`` computed when first asked, the common-subexpression
key around in-place writes, the user's frames noted once for the backward pass, and the
cyclic collector paused while a trace runs.
(How long a trace takes is measured in ``benchmarks/compile.py``, never here.)"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor
from tinygrad_attn.engine.function import Function
from tinygrad_attn.symbolic import TraceError, passes


class _Scale(Function):
    """``x * args[1]``, named by its instance (``args[0]``): an op name no class can remember."""

    __slots__ = ()

    @property
    def op_name(self) -> str:
        return self.args[0]

    def forward(self, ns, x):
        return x * self.args[1]

    def backward(self, g, ns, inputs, out):
        return (g * self.args[1],)


def test_an_op_named_by_its_instance_keeps_each_name():
    def fn(x):
        return (_Scale.apply(x, args=("double", 2.0)) + _Scale.apply(x, args=("triple", 3.0))).sum()

    x = Tensor(np.arange(3.0), requires_grad=True)
    prog = tga.jit.trace(fn, x)
    assert "double_1 = " in prog.code and "triple_1 = " in prog.code, prog.code
    prog(x)
    np.testing.assert_array_equal(x.grad.detach().numpy(), [5.0, 5.0, 5.0])


def test_constants_sharing_a_name_are_numbered_apart():
    # The same number in three dtypes: three constants c_0_5, c_0_5_2, c_0_5_3, numbered on
    # from the last one given; a clash would hand one line another dtype's constant.
    def fn(a, b, c):
        return (a * 0.5).sum() + (b * 0.5).sum().astype(np.float64) + (c * 0.5).sum().astype(np.float64)

    args = [Tensor(np.full(4, 3.0, dtype=d)) for d in (np.float64, np.float32, np.float16)]
    prog = tga.jit.trace(fn, *args)
    names = sorted(k for k in prog._env if k.startswith("c_0_5"))
    assert names == ["c_0_5", "c_0_5_2", "c_0_5_3"], names
    assert sorted(str(prog._env[k].dtype) for k in names) == ["float16", "float32", "float64"]
    for dtype in ("float16", "float32", "float64"):  # (each line's comment: a type string per shape and dtype)
        assert f"= args[{('float64', 'float32', 'float16').index(dtype)}]._data  # (4,) {dtype}" in prog.code
    new = [Tensor(np.full(4, v, dtype=t.dtype)) for v, t in zip((1.0, 2.0, 4.0), args)]
    np.testing.assert_array_equal(prog(*new).detach().numpy(), fn(*new).detach().numpy())


def test_an_absent_bias_is_written_as_none():
    x = Tensor(np.ones((2, 3), dtype=np.float32))
    w = Tensor(np.ones((4, 3), dtype=np.float32), requires_grad=True)
    prog = tga.jit.trace(lambda x: F.linear(x, w).sum(), x)
    assert "(x, w, None)" in prog.code, prog.code
    assert not any(v is None for k, v in prog._env.items() if k.startswith("c")), "None held as a named constant"
    prog(x)
    np.testing.assert_array_equal(w.grad.detach().numpy(), np.full((4, 3), 2.0, dtype=np.float32))


def test_peak_bytes_is_computed_when_first_asked():
    x = Tensor(np.ones((10, 10)), requires_grad=True)
    prog = tga.jit.trace(lambda x: ((x @ x) @ x).sum(), x)
    assert prog._peak_bytes is None  # (building a program leaves it: a replay never reads it)
    assert prog.peak_bytes == passes.peak_bytes(prog.ops, prog.dead_after) > 0
    assert prog._peak_bytes == prog.peak_bytes


def test_common_subexpressions_stop_at_an_in_place_write():
    def fn(x, y):
        a = x * y  # merged with b: nothing wrote x between them
        b = x * y
        x += 1.0
        c = x * y  # reads the new x: an op of its own
        return a + b + c

    x, y = Tensor(np.ones(3)), Tensor(np.full(3, 2.0))
    prog = tga.jit.trace(fn, x, y)
    assert sum(op.op == "mul" for op in prog.ops) == 2, prog.code
    x2 = Tensor(np.full(3, 5.0))
    np.testing.assert_array_equal(prog(x2, Tensor(np.full(3, 2.0))).detach().numpy(), [32.0, 32.0, 32.0])
    np.testing.assert_array_equal(x2.detach().numpy(), [6.0, 6.0, 6.0])


def _loss_of(x):  # (a user's helper: the step below holds its result, made here)
    return (x * 2.0).sum()


def test_the_frame_that_calls_backward_names_its_values():
    # The step's frame makes no op itself: only the backward pass, which notes it once, sees it.
    def step(x):
        loss = _loss_of(x)
        loss.backward()
        return loss

    run = tga.compile(step)
    x = Tensor(np.ones(3), requires_grad=True)
    run(x)
    assert "    loss = " in run.program.code and "return (loss,)" in run.program.code, run.program.code


def test_the_collector_is_off_while_tracing_and_on_again_after():
    seen = []

    def fn(x):
        seen.append(gc.isenabled())
        return (x * 2.0).sum()

    assert gc.isenabled()
    tga.jit.trace(fn, Tensor(np.ones(3), requires_grad=True))
    assert seen == [False] and gc.isenabled()
    with pytest.raises(TraceError):  # (a trace that fails turns it back on too)
        tga.jit.trace(lambda x: float(x.sum()), Tensor(np.ones(3)))
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off():
    gc.disable()
    try:
        tga.jit.trace(lambda x: (x * 2.0).sum(), Tensor(np.ones(3)))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_breakdown_of_a_trace_adds_up_and_leaves_the_package_as_it_was(monkeypatch, capsys):
    import sys  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    from tinygrad_attn.symbolic import codegen, program  # noqa: PLC0415

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    sys.modules.pop("compile", None)
    import compile as compile_bench  # noqa: PLC0415

    before = (Tensor.backward, passes.optimize, passes.liveness, codegen.generate)
    row = compile_bench.breakdown(only=("mha",), rounds=1)["mha"]
    assert (Tensor.backward, passes.optimize, passes.liveness, codegen.generate) == before
    assert "compile" not in vars(program)  # (the builtin again)
    assert all(row[k] > 0 for k in ("eager", "eager backward", "trace", "backward", "passes", "codegen", "compile"))
    assert row["backward"] + row["passes"] + row["codegen"] + row["compile"] < row["trace"]
    assert "program build" in capsys.readouterr().out


@pytest.mark.parametrize("base", ["add", "grad_add_1", "x__y", "_x", "x_", "class", "None", "program", "args",
                                  "1abc", "a-b", "q.proj", "", "\u00e9t\u00e9", "grad_\u00e9"])  # fmt: skip
def test_a_name_already_valid_is_kept_as_the_regex_would_make_it(base):
    import importlib  # noqa: PLC0415

    trace_module = importlib.import_module("tinygrad_attn.symbolic.trace")  # (the package's trace is the function)
    name = trace_module._identifier(base)
    assert name == trace_module._made_identifier(base) and name.isidentifier()


def test_a_program_does_not_keep_the_traced_run_alive():
    # The records found the eager op instances while tracing; the built program lets them go,
    # and the tracer with them (no cycle left for the collector: reference counting frees it).
    import weakref  # noqa: PLC0415

    from tinygrad_attn.engine.switches import _State  # noqa: PLC0415

    nodes = []

    def fn(x):
        y = (x * 2.0).tanh()
        nodes.extend([weakref.ref(y._ctx), weakref.ref(_State.tracer)])
        return y.sum()

    x = Tensor(np.ones((64, 64)), requires_grad=True)
    gc.disable()
    try:
        prog = tga.jit.trace(fn, x)
        assert nodes[0]() is None and nodes[1]() is None
    finally:
        gc.enable()
    prog(x)
    np.testing.assert_allclose(x.grad.detach().numpy(), 2.0 * (1.0 - np.tanh(2.0) ** 2))


# -- fewer records: softmax's backward, cat's, the gradient sums --------------------------
@pytest.mark.parametrize("which", ["softmax", "log_softmax"])
def test_softmax_backward_is_one_record_that_reads_only_the_output(which):
    # One record of the fused op's array backward (four primitive ops before), given None for
    # the input it does not read, so the program need not keep that input until the backward.
    f = getattr(F, which)
    rng = np.random.default_rng(0)
    w = Tensor(rng.standard_normal((3, 5)), requires_grad=True)

    def fn(x):
        return (f(x * w, -1) * x).sum()

    x = Tensor(rng.standard_normal((3, 5)))
    prog = tga.jit.trace(fn, x)
    back = [op for op in prog.ops if op.section == "backward" and op.kind in ("call", "backward")]
    ours = [op for op in back if op.kind == "backward" and op.op == which + "_backward"]
    assert len(ours) == 1, prog.code
    assert ours[0].inputs[1] is None, prog.code  # (g, the input, the output)
    assert not [op for op in back if op.kind == "call" and op.op in ("exp", "sum", "sub")], prog.code
    for _ in range(3):  # the replay's gradient is eager's, bit for bit
        x = Tensor(rng.standard_normal((3, 5)))
        w.grad = None
        prog(x)
        got = w.grad.detach().numpy()
        w.grad = None
        fn(x).backward()
        np.testing.assert_array_equal(got, w.grad.detach().numpy())


@pytest.mark.parametrize("which", ["softmax", "log_softmax"])
def test_softmax_create_graph_keeps_its_formula_through_the_output(which):
    # create_graph still records the formula (differentiable to any order), not the trace's record.
    x = Tensor(np.random.default_rng(1).standard_normal((2, 4)), requires_grad=True)
    y = getattr(F, which)(x, -1)
    (g,) = tga.autograd.grad((y * y).sum(), x, create_graph=True)
    assert g.grad_fn is not None and "backward" not in g.grad_fn.op_name
    (gg,) = tga.autograd.grad(g.sum(), x)
    with tga.decompose():
        xd = Tensor(x.detach().numpy(), requires_grad=True)
        yd = getattr(F, which)(xd, -1)
        (gd,) = tga.autograd.grad((yd * yd).sum(), xd, create_graph=True)
        (ggd,) = tga.autograd.grad(gd.sum(), xd)
    np.testing.assert_allclose(g.detach().numpy(), gd.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gg.detach().numpy(), ggd.detach().numpy(), rtol=1e-10, atol=1e-12)


def _count_calls(monkeypatch, name):
    calls = []
    orig = getattr(Tensor, name)

    def counted(self, *a, **kw):
        calls.append(name)
        return orig(self, *a, **kw)

    monkeypatch.setattr(Tensor, name, counted)
    return calls


@pytest.mark.parametrize("mode", ["trace", "create_graph"])
def test_cat_backward_is_one_line_or_slice_ops_not_the_indexing_path(monkeypatch, mode):
    # A trace: the gradient in pieces, one line; create_graph: the same Slice records as g[key]
    # made. Neither through Tensor.__getitem__.
    a = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = Tensor(np.arange(4.0).reshape(2, 2), requires_grad=True)
    scale = Tensor(np.arange(10.0).reshape(2, 5))

    def fn(a, b):
        return (tga.cat([a, b], 1) * scale).sum()

    if mode == "trace":
        prog = tga.jit.trace(fn, a, b)
        (split,) = [op for op in prog.ops if op.section == "backward" and op.op == "cat_backward"]
        assert split.fn.args == (1, (3, 2), True) and [b.nbytes for b in split.outputs] == [0, 0], prog.code
        assert not [op for op in prog.ops if op.section == "backward" and op.op == "getitem"]
        prog(a, b)
        np.testing.assert_array_equal(a.grad.detach().numpy(), scale.detach().numpy()[:, :3])
        np.testing.assert_array_equal(b.grad.detach().numpy(), scale.detach().numpy()[:, 3:])
        calls = _count_calls(monkeypatch, "__getitem__")
        a.grad = b.grad = None
        tga.jit.trace(fn, a, b)
    else:
        calls = _count_calls(monkeypatch, "__getitem__")
        ga, gb = tga.autograd.grad(fn(a, b), [a, b], create_graph=True)
        np.testing.assert_array_equal(ga.detach().numpy(), scale.detach().numpy()[:, :3])
        np.testing.assert_array_equal(gb.detach().numpy(), scale.detach().numpy()[:, 3:])
    assert calls == []


def test_stack_backward_is_one_line_with_a_hole_for_an_input_without_grad():
    rng = np.random.default_rng(4)
    xs0 = [rng.standard_normal((2, 3)) for _ in range(3)]
    w = Tensor(rng.standard_normal((2, 3, 3)))

    def fn(a, b, c):
        return (tga.stack([a, b, c], 2) * w).sum()

    def leaves():
        return [Tensor(x, requires_grad=i != 1) for i, x in enumerate(xs0)]

    xs = leaves()
    fn(*xs).backward()
    eager = [x.grad for x in xs]
    xs = leaves()
    prog = tga.jit.trace(fn, *xs)
    (split,) = [op for op in prog.ops if op.op == "stack_backward"]
    assert split.fn.args == (2, (1, 1, 1), False) and split.outputs[1] is None, prog.code
    assert f", _, {split.outputs[2].name}, = stack_backward" in prog.code
    xs = leaves()
    prog(*xs)
    for x, e in zip(xs, eager):
        if e is None:
            assert x.grad is None
        else:
            np.testing.assert_array_equal(x.grad.detach().numpy(), e.detach().numpy())


@pytest.mark.parametrize("mode", ["trace", "create_graph"])
def test_gradient_sums_apply_one_add_n_op_not_tensor_add(monkeypatch, mode):
    # x used three times: its gradients summed by one AddN op (no Tensor.__add__), values as eager's.
    rng = np.random.default_rng(2)
    x0 = rng.standard_normal((3, 4)).astype(np.float32)

    def fn(x):
        return ((x * 2.0).sum() * (x.exp()).sum()) * x.tanh().sum()

    x = Tensor(x0, requires_grad=True)
    fn(x).backward()
    eager = x.grad.detach().numpy()
    x = Tensor(x0, requires_grad=True)
    if mode == "trace":
        prog = tga.jit.trace(lambda: fn(x).backward() or None)
        calls = _count_calls(monkeypatch, "__add__")
        x.grad = None
        prog()
        sums = [op for op in prog.ops if op.section == "backward" and op.op in ("add", "add_n")]
        assert [(op.op, len(op.inputs)) for op in sums] == [("add_n", 3)], prog.code
        np.testing.assert_array_equal(x.grad.detach().numpy(), eager)
        x.grad = None
        tga.jit.trace(lambda: fn(x).backward() or None)
    else:
        calls = _count_calls(monkeypatch, "__add__")
        (g,) = tga.autograd.grad(fn(x), x, create_graph=True)
        np.testing.assert_array_equal(g.detach().numpy(), eager)
    assert [c for c in calls] == [], calls


# -- embedding: ids are a program input, looked up by one op --------------------------------
def test_embedding_in_a_trace_is_one_take_without_wrapping_negative_ids():
    # F.embedding and nn.Embedding reject negative ids (as PyTorch's): a trace records no ops
    # to wrap them (less, add, where), only the lookup; W[ids] keeps wrapping, as PyTorch's indexing.
    emb = tga.nn.Embedding(7, 3)

    def lookup(ids):
        return (emb(ids) * 2.0).sum()

    def index(ids):
        return (emb.weight[ids] * 2.0).sum()

    ids = Tensor(np.array([[1, 5], [6, 0]]))
    prog = tga.jit.trace(lookup, ids)
    fwd = [op.op for op in prog.ops if op.section == "forward" and op.kind == "call"]
    assert "take" in fwd and not {"lt", "less", "where", "add"} & set(fwd), prog.code
    wrapped = tga.jit.trace(index, ids)
    assert "where" in [op.op for op in wrapped.ops if op.kind == "call"], wrapped.code
    rng = np.random.default_rng(3)
    for _ in range(3):  # the replay's gradient is eager's, bit for bit, for each call's ids
        ids = Tensor(rng.integers(0, 7, (2, 2)))
        emb.weight.grad = None
        prog(ids)
        got = emb.weight.grad.detach().numpy()
        emb.weight.grad = None
        lookup(ids).backward()
        np.testing.assert_array_equal(got, emb.weight.grad.detach().numpy())
    with pytest.raises(IndexError, match="out of range"):  # eager: a negative id is out of range
        emb(Tensor(np.array([-1, 2])))
    with pytest.raises(IndexError, match="embedding: index -1 is out of range"):
        F.embedding(Tensor(np.array([-1, 2])), emb.weight)
    np.testing.assert_array_equal(
        index(Tensor(np.array([-1]))).detach().numpy(), (emb.weight.detach().numpy()[6] * 2.0).sum()
    )


def test_embedding_in_a_trace_takes_int32_ids_and_padding_and_refuses_float_ids():
    w = Tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)

    def fn(ids):
        return (F.embedding(ids, w, padding_idx=2) * w.sum()).sum()

    prog = tga.jit.trace(fn, Tensor(np.array([1, 0, 3], dtype=np.int32)))
    for ids in ([0, 2, 3], [2, 2, 1]):
        w.grad = None
        got = prog(Tensor(np.array(ids, dtype=np.int32)))
        g = w.grad.detach().numpy()
        w.grad = None
        ref = fn(Tensor(np.array(ids)))
        ref.backward()
        np.testing.assert_array_equal(got.detach().numpy(), ref.detach().numpy())
        np.testing.assert_array_equal(g, w.grad.detach().numpy())
    for bad in (np.array([1.0, 0.0], dtype=np.float32), np.array([True, False])):  # (PyTorch's RuntimeError)
        with pytest.raises(RuntimeError, match="embedding: Expected tensor for argument #1 'indices'"):
            tga.jit.trace(fn, Tensor(bad))


def test_a_dropped_compiled_step_frees_its_model_without_the_cyclic_collector():
    # A program's function once sat in the dict that is its globals (a reference cycle), and
    # the names of a compiled call's arguments were given by a closure calling itself: the
    # parameters, the optimizer and the whole model stayed alive after the step was dropped,
    # until a collection, which then also came in the middle of whatever ran next.
    import weakref  # noqa: PLC0415

    def once():
        m = tga.nn.Linear(4, 4)
        opt = tga.optim.Adam(m.parameters())

        def step(x):
            opt.zero_grad()
            loss = m(x).sum()
            loss.backward()
            opt.step()
            return loss

        run = tga.compile(step)
        for _ in range(2):
            run(Tensor(np.ones((2, 4), np.float32)))  # (float32, as the layer: linear promotes none)
        prog = tga.jit.trace(lambda x: (x * m.weight).sum(), Tensor(np.ones((4, 4))))
        return weakref.ref(m.weight), weakref.ref(run.program), prog

    once()  # (lazily built module state)
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        weight, program, prog = once()
        del prog
        assert weight() is None and program() is None
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()
