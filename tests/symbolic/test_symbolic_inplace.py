"""In-place ops inside tga.jit.trace and tga.compile: the program writes where the eager run
wrote, replays give eager's values, gradients and side effects, and the passes respect
the writes (no merged reads across a write, no dropped write that is read later)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.symbolic import passes


def _args(specs, seed, device):
    """Tensors of ``specs`` ((shape, requires_grad) pairs), the same values for a seed."""
    rng = np.random.default_rng(seed)
    return [Tensor(rng.standard_normal(s), device=device, requires_grad=g) for s, g in specs]


def _eager(fn, args):
    out = fn(*args)
    if isinstance(out, Tensor) and out.requires_grad and out.shape == ():
        out.backward()
    return out


def _same(a, b, atol=1e-10):
    assert (a is None) == (b is None)
    if a is not None:
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=atol, rtol=1e-9)


def check_replay(fn, specs, device="cpu", replays=2):
    """Trace ``fn`` on one set of arguments, replay it on others, and compare each replay
    with an eager run on equal arguments: the result, every ``.grad`` and the arguments'
    values afterwards (fn may change them in place)."""
    prog = tga.jit.trace(fn, *_args(specs, 0, device))
    for seed in range(1, replays + 1):
        new, ref = _args(specs, seed, device), _args(specs, seed, device)
        got = prog(*new)
        want = _eager(fn, ref)
        _same(got, want)
        for a, b in zip(new, ref):
            _same(a, b)
            _same(a.grad, b.grad)
    return prog


def _stores(prog):
    return [op for op in prog.ops if op.kind == "store"]


# -- in-place ops on intermediates, inputs, with and without grad ---------------------------
def test_inplace_ops_on_intermediates_with_grad(device):
    def fn(x, w):
        h = x * w
        h += 1.0
        h.clamp_(-0.5, 2.0)
        h.mul_(w)
        h[0] = w[0] * 3.0
        h[1:, 2:] += x[1:, :2]
        h.masked_fill_(x > 1.0, 0.25)
        h.sub_(x, alpha=0.5)
        return (h * h).sum()

    prog = check_replay(fn, [((3, 4), True), ((3, 4), True)], device)
    assert len(_stores(prog)) >= 7 and "[...] = " in prog.code


def test_inplace_ops_without_grad(device):
    def fn(x, y):
        h = x * 2.0
        h.add_(y)
        h.zero_()
        h.copy_(y[0])  # broadcast into every row
        h[:, 0] = 5.0
        h.div_(2.0)
        h[1] = y[2]
        return h

    prog = check_replay(fn, [((3, 4), False), ((3, 4), False)], device)
    assert "# backward" not in prog.code


def test_index_array_and_mask_stores(device):
    idx = Tensor(np.array([2, 0]), device=device)
    mask = Tensor(np.array([[True, False, False, True]] * 3), device=device)

    def fn(x, v):
        h = x * 1.0
        h[idx] = v  # index array: rows 2 and 0
        h[mask] = 0.0  # a constant mask (one made from traced values is a TraceError: its shape is data)
        return (h * x).sum()

    check_replay(fn, [((3, 4), True), ((2, 4), True)], device)
    check_replay(fn, [((3, 4), False), ((2, 4), False)], device)


def test_an_input_changed_in_place_is_changed_by_the_replay(device):
    def fn(x, c):
        c += 1.0  # an argument without grad: the caller's tensor changes
        y = x + c
        c.mul_(2.0)
        return (y * c).sum()

    prog = check_replay(fn, [((3,), True), ((3,), False)], device)
    assert _stores(prog) and all(op.inputs[0].kind == "arg" for op in _stores(prog))


def test_a_write_the_program_does_not_read_is_kept_for_an_input_dropped_otherwise():
    def fn(x, c):
        c.add_(1.0)  # the caller sees it: kept although nothing in fn reads c again
        t = x * 2.0
        t.add_(1.0)  # nobody reads t again: dead, with the add that computed it
        return x * 3.0

    prog = check_replay(fn, [((3,), False), ((3,), False)])
    (store,) = _stores(prog)
    assert store.inputs[0].kind == "arg"
    assert [op.op for op in prog.ops if op.kind == "call"] == ["add", "mul"]


def test_a_tensor_outside_fn_changed_in_place_is_state_of_the_replay():
    count = Tensor(np.zeros(2))

    def fn(x):
        count.add_(1.0)  # a tensor fn reaches: each call (eager or replayed) counts
        return x * count

    x = Tensor(np.ones(2))
    prog = tga.jit.trace(fn, x)
    np.testing.assert_allclose(count.detach().numpy(), [1, 1])
    np.testing.assert_allclose(prog(x).detach().numpy(), [2, 2])
    np.testing.assert_allclose(prog(x).detach().numpy(), [3, 3])
    np.testing.assert_allclose(count.detach().numpy(), [3, 3])


def test_a_tensor_made_inside_fn_starts_each_replay_afresh(device):
    def fn(x):
        acc = Tensor.zeros(3, dtype=x.dtype, device=x.device)  # made by fn: a new one each eager call
        acc += x
        acc[0] = 7.0
        return acc * 2.0

    prog = check_replay(fn, [((3,), False)], device, replays=3)
    assert any(op.kind == "load" and op.outputs[0].kind == "init" for op in prog.ops)
    assert prog.peak_bytes >= 2 * 3 * 8  # the copy counts: the program allocates it


@pytest.mark.parametrize("grad", [True, False])
def test_seq2seq_outputs_written_step_by_step(device, grad):
    """``outputs = zeros(T, B, V); outputs[t] = step(...)`` and a backward through it."""
    T = 4

    def fn(x, w):
        outputs = Tensor.zeros(T, 2, 3, dtype=x.dtype, device=x.device)
        h = x
        for t in range(T):
            h = (h @ w).tanh()
            outputs[t] = h[:, :3]
        return (outputs * outputs).sum() if grad else outputs

    prog = check_replay(fn, [((2, 4), grad), ((4, 4), grad)], device)
    assert len(_stores(prog)) == T


@pytest.mark.parametrize("zero", [True, False])
def test_compiled_step_with_inplace_ops_equals_eager(zero):
    """A training step with an update written by hand (in place, under no_grad): the
    update is ops of the program, writing into the parameter's array. ``.grad`` read
    after backward is what the replay leaves there (reset by zero_grad, or accumulated)."""
    from tinygrad_attn.optim import SGD

    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((2, 3)) for _ in range(4)]
    results = []
    for compiled in (False, True):
        w = Tensor(np.ones((3, 3)), requires_grad=True)
        seen = Tensor(np.zeros(3))
        opt = SGD([w], lr=0.0)  # (for its recorded zero_grad only)

        def step(x, w=w, seen=seen, opt=opt):
            h = x @ w
            h.clamp_(min=0.0)
            seen.add_(x.sum(0))  # a running sum outside: state
            loss = (h * h).mean()
            if zero:
                opt.zero_grad()
            loss.backward()
            with tga.no_grad():
                w -= 0.1 * w.grad  # written through the parameter's own array
            return loss * w.grad.sum()

        run = tga.compile(step) if compiled else step
        losses = [run(Tensor(x)).detach().numpy() for x in xs]
        results.append((losses, w.detach().numpy(), seen.detach().numpy(), w.grad.detach().numpy()))
        if compiled:
            assert len(run.programs) == 1 and "param[...] = " in run.program.code  # (a default argument: no name)
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-12)


# -- the passes ------------------------------------------------------------------------------
def test_common_subexpressions_are_not_merged_across_a_write():
    def fn(x):
        y = x * 2.0
        a = y.exp()
        y.add_(1.0)
        b = y.exp()  # the same op on the same buffer, but after a write: computed again
        return a + b

    prog = check_replay(fn, [((3,), False)])
    assert [op.op for op in prog.ops if op.kind == "call"].count("exp") == 2


def test_a_result_written_later_is_not_shared_with_an_equal_one():
    def fn(x):
        y = x * 2.0
        z = x * 2.0  # equal to y, but y is zeroed below: z keeps its own array
        y.zero_()
        return z + y

    prog = check_replay(fn, [((3,), False)])
    assert [op.op for op in prog.ops if op.kind == "call"].count("mul") == 2


def test_a_write_through_a_view_reaches_the_tensor_it_views(device):
    def fn(x):
        z = x * 2.0
        v = z[1:]  # a view: written after z's last direct use by name
        v.add_(10.0)
        return z.sum() + z[0] * 0.0

    check_replay(fn, [((4,), False)], device)


def test_constants_are_not_folded_once_written():
    base = Tensor(np.array([1.0, 2.0]))

    def fn(x):
        c = Tensor(np.array([1.0, 1.0]))
        d = c * 3.0  # before the write: c's values then
        c.add_(x)  # c now depends on x: nothing after may be folded
        return c * 2.0 + d + base

    check_replay(fn, [((2,), False)], replays=3)


def test_a_constant_result_changed_in_place_is_not_folded():
    c = Tensor(np.array([1.0, 2.0]))

    def fn(x):
        y = c * 2.0  # constants only: foldable, but changed below
        y.add_(x)
        return y * 1.0

    check_replay(fn, [((2,), False)], replays=3)


def test_a_view_of_an_input_written_changes_the_input(device):
    def fn(x, c):
        c[1:] += x[1:]  # through a view of the caller's tensor
        c[0] = 5.0
        v = c.reshape(-1)
        v.mul_(2.0)
        return x * c

    check_replay(fn, [((3,), False), ((3,), False)], device)


def test_memory_of_a_buffer_stays_while_a_view_of_it_lives():
    def fn(x):
        z = x * 2.0  # 800 bytes
        v = z[1:]  # a view: z's name goes after this line, its memory stays with v
        return (v * 3.0).sum()  # 792 bytes more while v (z's memory) lives

    prog = tga.jit.trace(fn, Tensor(np.ones(100)))
    assert prog.peak_bytes == 800 + 792  # (without the view: 800, z gone before v * 3.0)
    from tinygrad_attn.viz.program import memory_profile

    assert max(memory_profile(prog)) == prog.peak_bytes


def test_a_name_is_deleted_where_its_memory_goes_back():
    # z's name stays while its view v lives (deleting it earlier frees nothing); both go in
    # one del after v's last reader. The argument's and the weight's names hold memory the
    # program does not own: never deleted. Every del line gives memory back.
    w = Tensor(np.full(100, 3.0))

    def fn(x):
        z = x * 2.0
        v = z[1:]
        return ((v * w[1:]).sum() + 1.0,)

    prog = tga.jit.trace(fn, Tensor(np.ones(100)))
    lines = prog.code.splitlines()
    dels = [ln.strip()[4:].split(", ") for ln in lines if ln.strip().startswith("del ")]
    z, v = [op.outputs[0].name for op in prog.ops if op.kind == "call"][:2]
    mul_line = next(i for i, ln in enumerate(lines) if f"({v}, " in ln)
    assert any({z, v} <= set(d) for d in dels), prog.code
    assert all(ln.strip() != f"del {z}" for ln in lines[:mul_line]), prog.code
    loads = {op.outputs[0].name for op in prog.ops if op.kind == "load"}
    assert loads and not loads & {name for d in dels for name in d}, prog.code
    released = passes.memory_released(prog.ops, prog.dead_after)
    assert len(dels) == sum(1 for r in released if any(b.kind == "value" and b.nbytes for b in r))
    np.testing.assert_allclose(prog(Tensor(np.ones(100)))[0].detach().numpy(), 99 * 6.0 + 1.0)


def test_backward_reading_a_changed_value_raises_as_eager():
    def fn(x):
        y = x * 1.0
        z = y * y
        y.add_(1.0)  # mul's backward reads y
        return z.sum()

    x = Tensor(np.ones(3), requires_grad=True)
    with pytest.raises(RuntimeError, match="changed after the forward"):
        _eager(fn, [Tensor(np.ones(3), requires_grad=True)])
    with pytest.raises(RuntimeError, match="changed after the forward"):
        tga.jit.trace(fn, x)


# -- random programs with in-place ops (hypothesis) ---------------------------------------
def _set(t, key, v):
    t[key] = v
    return t


_INPLACE = [
    lambda t, y: t.add_(y),
    lambda t, y: t.mul_(0.5),
    lambda t, y: t.clamp_(-1.0, 1.0),
    lambda t, y: t.masked_fill_(t > 0.5, 0.25),
    lambda t, y: _set(t, (slice(None), slice(0, 2)) if t.ndim == 2 else 0, y[..., :1] if y.ndim == 2 else 0.5),
    lambda t, y: t.copy_(y),
    lambda t, y: t.sub_(y, alpha=2.0),
    lambda t, y: t.zero_(),
]


@settings(max_examples=examples(40), deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 12), st.integers(0, 12), st.integers(0, 7)),
        min_size=1,
        max_size=8,
    ),
    grad=st.booleans(),
)
def test_random_programs_with_inplace_ops_replay_as_eager(steps, grad):
    """Random op sequences with broadcasting, reuse, slices (views) and in-place ops on any
    earlier value, input or view: where eager raises (a leaf with grad changed, a value a
    backward reads changed, shapes that do not broadcast) the trace raises the same error;
    otherwise replays equal eager in results, gradients and the inputs' values."""
    specs = [((3, 4), grad), ((4,), grad), ((3, 1), False)]

    def fn(a, b, c):
        vals = [a, b, c]
        for kind, i, j, how in steps:
            x, y = vals[i % len(vals)], vals[j % len(vals)]
            if kind == 0:
                vals.append((x * y).tanh())
            elif kind == 1:
                vals.append(x[:, 1:] if x.ndim == 2 and how % 2 else x.reshape(x.shape))
            else:
                vals.append(_INPLACE[how](x, y))
        out = vals[3] if len(vals) > 3 else a
        for v in vals[4:]:
            out = out + v * 0.5
        return (out * out).sum() if out.requires_grad else out * 1.0

    try:
        _eager(fn, _args(specs, 1, "cpu"))
    except (RuntimeError, ValueError, TypeError) as e:
        with pytest.raises(type(e)):
            tga.jit.trace(fn, *_args(specs, 0, "cpu"))
        return
    check_replay(fn, specs, "cpu")


# -- pictures of graphs with in-place ops --------------------------------------------------
def test_draw_graph_draws_each_write_once_and_in_order():
    from tinygrad_attn.viz.graph import forward_graph

    w = Tensor(np.full((3, 3), 0.5), requires_grad=True, name="w")
    x = Tensor(np.ones((2, 3)), name="x")
    outputs = Tensor.zeros(4, 2, 3, dtype=np.float64)
    h = x
    peeks = []
    for t in range(4):
        h = (h @ w).tanh()
        outputs[t] = h
        peeks.append(outputs.sum())  # reads outputs between writes: the version after write t
    loss = (outputs * outputs).sum() + sum(peeks)
    g = forward_graph(loss)
    writes = [n for n in g.nodes if n.title == "setitem"]
    assert [n.lines[1] for n in writes] == ["[0]", "[1]", "[2]", "[3]"]  # each once, in order
    assert g.title.startswith(f"forward: {len([n for n in g.nodes if n.kind == 'op'])} ops")
    into = {e.dst: [] for e in g.edges}
    for e in g.edges:
        into[e.dst].append(e.src)
    for prev, nxt in zip(writes, writes[1:]):
        assert prev.id in into[nxt.id]  # each write changes the result of the one before
    sums = [n for n in g.nodes if n.title == "sum"][:4]
    assert [into[s.id] for s in sums] == [[wr.id] for wr in writes]  # each read sees the write before it
    from tinygrad_attn.viz.backward import backward_graph

    steps = [n.title for n in backward_graph(loss).nodes if n.title.startswith("setitem")]
    assert steps == [f"setitem #{i} backward" for i in range(1, 5)]  # the backward picture: each write once
    src = tga.viz.draw_graph(loss).source
    assert (
        src.count("setitem") == 2 * 4 and src.count("[0]") == 1 and src.count("[3]") == 1
    )  # (a title and a tooltip per write)


def test_fusion_does_not_join_ops_across_a_write_to_what_they_read():
    from tinygrad_attn.symbolic.fusion import elementwise_groups

    def fn(x, c):
        a = (c * 2.0).exp()  # reads c before the write
        c.add_(x)
        return (a + c).tanh()  # one kernel for all four would read c once, after the write

    prog = check_replay(fn, [((3, 4), False), ((3, 4), False)])
    for k in elementwise_groups(prog):
        ops = [op.op for op in k.records]
        assert not ("exp" in ops and "add" in ops[ops.index("exp") :][1:]), ops
    kernels = elementwise_groups(
        tga.jit.trace(lambda x, c: ((c * 2.0).exp() + c).tanh(), *_args([((3, 4), False)] * 2, 0, "cpu"))
    )
    assert [len(k.records) for k in kernels] == [4]  # without the write: one kernel


def test_compiled_decoder_step_writing_outputs_with_an_optimizer_equals_eager():
    """The seq2seq pattern in a whole compiled training step: ``outputs[t] = h`` into a
    tensor made each call, backward, AdamW's recorded step."""
    from tinygrad_attn.optim import AdamW

    rng = np.random.default_rng(0)
    xs = [Tensor(rng.standard_normal((2, 4)).astype(np.float32)) for _ in range(4)]
    results = []
    for compiled in (False, True):
        tga.manual_seed(0)
        cell = tga.nn.Linear(4, 4)
        opt = AdamW(cell.parameters(), lr=1e-2)

        def step(x, cell=cell, opt=opt):
            outputs = Tensor.zeros(3, 2, 4)
            h = x
            for t in range(3):
                h = cell(h).tanh()
                outputs[t] = h
            loss = (outputs**2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        run = tga.compile(step) if compiled else step
        results.append(([run(x).detach().numpy() for x in xs], [p.detach().numpy() for p in cell.parameters()]))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


# -- optimizer updates as ops of the program -------------------------------------------------
def _opt_run(make_opt, compiled, steps=6, eager_after=2, schedule=True):
    """Losses, parameters, gradients and optimizer state of ``steps`` compiled (or eager)
    steps with a learning rate changed between steps, then ``eager_after`` eager steps."""
    from tinygrad_attn.optim.lr_scheduler import StepLR

    tga.manual_seed(0)
    model = tga.nn.Linear(4, 3)
    opt = make_opt(model.parameters())
    sched = StepLR(opt, step_size=2, gamma=0.5) if schedule else None
    rng = np.random.default_rng(0)
    xs = [Tensor(rng.standard_normal((5, 4)).astype(np.float32)) for _ in range(steps + eager_after)]

    def step(x):
        opt.zero_grad()
        loss = (model(x).tanh() ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    run = tga.compile(step) if compiled else step
    losses = []
    for i, x in enumerate(xs):
        losses.append((run if i < steps else step)(x).detach().numpy())
        if sched is not None:
            sched.step()
    state = [v.detach().numpy() if isinstance(v, Tensor) else v for s in opt.state.values() for v in s.values()]
    return (
        losses,
        [p.detach().numpy() for p in model.parameters()],
        [p.grad.detach().numpy() for p in model.parameters()],
        state,
        run,
    )


_OPTS = {
    "sgd": lambda ps: tga.optim.SGD(ps, lr=0.1),
    "sgd_momentum_wd": lambda ps: tga.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
    "sgd_nesterov": lambda ps: tga.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    "sgd_dampening": lambda ps: tga.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.5),
    "adam_l2_amsgrad": lambda ps: tga.optim.Adam(ps, lr=1e-2, weight_decay=0.1, amsgrad=True),
    "adamw": lambda ps: tga.optim.AdamW(ps, lr=1e-2, weight_decay=0.1),
}


def _per_parameter(make_opt):
    """``make_opt`` with ``foreach=False`` in its group: the update per parameter."""

    def make(ps):
        opt = make_opt(ps)
        opt.param_groups[0]["foreach"] = False
        return opt

    return make


@pytest.mark.parametrize("foreach", [True, False])
@pytest.mark.parametrize("name", list(_OPTS))
def test_optimizer_update_is_ops_and_replays_as_eager_under_a_schedule(name, foreach):
    """The update is one flat line per param group (``foreach``), or ops per parameter
    writing into parameters and state (``foreach=False``); the learning rate a schedule
    sets and Adam's step count are read at each replay; eager steps after the replays
    continue from the same state."""
    make = _OPTS[name] if foreach else _per_parameter(_OPTS[name])
    eager = _opt_run(make, False)
    comp = _opt_run(make, True)
    for a, b in zip(eager[:4], comp[:4]):
        for x, y in zip(a, b):
            np.testing.assert_allclose(y, x, rtol=1e-6, atol=1e-7)
    run = comp[4]
    assert len(run.programs) == 1
    code = run.program.code
    update = code.split("    # update\n")[1].splitlines()[:-1]  # (up to the return)
    if foreach:
        assert [ln.split("  #")[0].strip() for ln in update if not ln.strip().startswith("del ")] == [
            f"{type(run.program.ops[-1].target).__name__.lower()}.foreach_update(0)"
        ]
    elif name == "sgd_dampening":  # a first step that differs from the later ones: one recorded update call
        assert ".foreach_update(0)  # param group 0: updates its 2 parameters in place\n" in code
        assert ".step()" not in code  # (step() would run its hooks again: they are the traced step's own)
    else:
        assert ".step()" not in code and "._advance()" in code and "weight[...] = " in code and "bias[...] = " in code


def test_eager_optimizer_step_is_unchanged_by_tracing_support():
    """Outside a trace step() runs the array update (not the tensor ops): no op is recorded."""
    calls = []
    w = tga.nn.Parameter(np.ones(3, dtype=np.float32))
    opt = tga.optim.AdamW([w], lr=0.1)
    w.grad = Tensor(np.ones(3, dtype=np.float32))
    orig = type(opt)._traced_update
    type(opt)._traced_update = lambda *a, **k: calls.append(1)
    try:
        opt.step()
    finally:
        type(opt)._traced_update = orig
    assert not calls and opt.state[w]["step"] == 1


def test_a_replayed_update_uses_state_loaded_after_the_trace():
    """The program reads each state tensor where the optimizer holds it at each replay: a
    state dict loaded after compiling (new tensors) is the one updated."""
    results = []
    for compiled in (False, True):
        tga.manual_seed(0)
        model = tga.nn.Linear(3, 2)
        opt = tga.optim.AdamW(model.parameters(), lr=1e-2)
        x = Tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))

        def step(x, model=model, opt=opt):
            opt.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            return loss

        run = tga.compile(step) if compiled else step
        losses = [run(x).detach().numpy() for _ in range(3)]
        saved = opt.state_dict()  # copies below: new tensors, as from a checkpoint
        opt.load_state_dict({"state": {i: {k: (Tensor(v.detach().numpy()) if isinstance(v, Tensor) else v)
                                            for k, v in s.items()} for i, s in saved["state"].items()},
                             "param_groups": saved["param_groups"]})  # fmt: skip
        losses += [run(x).detach().numpy() for _ in range(3)]
        state = [v.detach().numpy() if isinstance(v, Tensor) else v for s in opt.state.values() for v in s.values()]
        results.append((losses, [p.detach().numpy() for p in model.parameters()], state))
    for a, b in zip(*results):
        for x, y in zip(a, b):
            np.testing.assert_allclose(y, x, rtol=1e-6, atol=1e-7)


def test_clipping_inside_a_trace_replays_the_clipped_gradients():
    # clip_grad_norm_ is written in tensor ops (API.md, "compiled steps you can trust"), so it
    # traces; each replay clips with the norm of that replay's gradients, as eager does.
    from tinygrad_attn.optim import clip_grad_norm_

    def build():
        w = tga.nn.Parameter(np.ones(3))
        opt = tga.optim.SGD([w], lr=0.1)

        def step(x):
            opt.zero_grad()
            (w * x).sum().backward()
            total = clip_grad_norm_([w], 1.0)
            opt.step()
            return total

        return w, step

    w_e, eager = build()
    w_c, compiled = build()
    compiled = tga.compile(compiled)
    for i in range(4):
        x = np.full(3, 0.2 + i)  # under the limit at first, clipped later
        t_e, t_c = eager(Tensor(x)), compiled(Tensor(x))
        np.testing.assert_allclose(t_c.detach().numpy(), t_e.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(w_c.grad.detach().numpy(), w_e.grad.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(w_c.detach().numpy(), w_e.detach().numpy(), rtol=1e-12)
    assert len(compiled.programs) == 1


def test_clipping_with_error_if_nonfinite_inside_a_trace_raises():
    # error_if_nonfinite reads the norm in Python: a replay could not make that decision again.
    from tinygrad_attn.optim import clip_grad_norm_

    w = tga.nn.Parameter(np.ones(3))

    def step(x):
        (w * x).sum().backward()
        clip_grad_norm_([w], 1.0, error_if_nonfinite=True)

    with pytest.raises(tga.TraceError, match="clip_grad_norm_.*test_symbolic_inplace.py"):
        tga.compile(step)(Tensor(np.ones(3)))
    w.grad = None
    (w * Tensor(np.ones(3))).sum().backward()
    assert float(clip_grad_norm_([w], 1.0, error_if_nonfinite=True)) > 0  # outside a trace it clips


def test_two_param_groups_are_two_update_lines_and_replay_as_eager():
    """Each param group's update is one flat line of the program; 20 compiled steps give
    eager's parameters and state exactly (the line runs the eager flat update)."""

    def build():
        tga.manual_seed(0)
        model = tga.nn.Sequential(tga.nn.Linear(4, 8), tga.nn.Tanh(), tga.nn.Linear(8, 3))
        opt = tga.optim.AdamW([{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 3e-3}],
                              lr=1e-2, weight_decay=0.1)  # fmt: skip

        def step(x):
            opt.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            return loss

        return model, opt, step

    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((5, 4)).astype(np.float32) for _ in range(20)]
    (m_e, o_e, eager), (m_c, o_c, step) = build(), build()
    run = tga.compile(step)
    for x in xs:
        np.testing.assert_array_equal(run(Tensor(x)).detach().numpy(), eager(Tensor(x)).detach().numpy())
    for a, b in zip(m_e.parameters(), m_c.parameters()):
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())
        for k, v in o_e.state[a].items():
            w = o_c.state[b][k]
            np.testing.assert_array_equal(*(u.detach().numpy() if isinstance(u, Tensor) else u for u in (w, v)))
    assert len(run.programs) == 1
    lines = [ln.strip() for ln in run.program.code.splitlines() if "adamw." in ln]
    assert [ln.split("  #")[0] for ln in lines] == ["adamw.zero_grad()", "adamw.foreach_update(0)",
                                                   "adamw.foreach_update(1)"]  # fmt: skip
    assert "updates its 2 parameters" in lines[1]


@pytest.mark.parametrize("set_to_none", [True, False])
def test_a_grad_held_across_two_backwards_replays_their_sum(set_to_none):
    # The second backward adds into the first one's .grad in place (as PyTorch's
    # AccumulateGrad): a tensor holding that .grad reads the sum, in every replay.
    def build():
        w = tga.nn.Parameter(np.ones(3))
        opt = tga.optim.SGD([w], lr=0.1)

        def step(x1, x2):
            opt.zero_grad(set_to_none=set_to_none)
            (w * x1).sum().backward()
            g = w.grad
            first = g * 1.0
            (w * w * x2).sum().backward()
            both = g * 1.0
            opt.step()
            return first, both, w * 1.0

        return step

    eager, compiled = build(), tga.compile(build())
    for i in range(4):
        x1, x2 = Tensor(np.full(3, 0.5 + i)), Tensor(np.arange(3.0) + i)
        for a, b in zip(eager(x1, x2), compiled(x1, x2)):
            np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())
