"""``tga.compile`` replays only when eager would do exactly the same: one test per way a
replay could go stale (issue 20), each comparing the compiled step with eager."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn
from tinygrad_attn.optim import SGD, Adam
from tinygrad_attn.optim.lr_scheduler import OneCycleLR


def _linear(n_in=4, n_out=3, dtype=np.float64):
    tga.manual_seed(0)
    lin = nn.Linear(n_in, n_out)
    for p in lin.parameters():  # float64: compiled and eager agree to the last bit or 1e-10
        p._data = p._data.astype(dtype)
    return lin


def _x(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


def _both(make, calls, check_programs=None):
    """Run ``make()``'s step eagerly, then compiled from the same start, on ``calls``
    (functions of the step); return both lists of results as NumPy."""
    out = []
    for compiled in (False, True):
        tga.manual_seed(0)
        step, *state = make()
        run = tga.compile(step) if compiled else step
        got = [np.asarray(h) for c in calls for h in _flat(_host(c(run, *state)))]
        got += [np.asarray(_host(s)) for s in _state_arrays(state)]
        out.append(got)
        if compiled and check_programs is not None:
            assert len(run.programs) == check_programs, run.programs
    return out


def _host(v):
    if isinstance(v, Tensor):
        return v.detach().numpy()
    if isinstance(v, (list, tuple)):
        return [_host(x) for x in v]
    return v


def _flat(v):
    return [x for item in v for x in _flat(item)] if isinstance(v, list) else [v]


def _state_arrays(state):
    arrays = []
    for s in state:
        if isinstance(s, nn.Module):
            for p in s.parameters():
                arrays.append(p)
                arrays.append(p.grad if p.grad is not None else np.zeros(0))
    return arrays


def _assert_same(pair, rtol=1e-10):
    eager, compiled = pair
    assert len(eager) == len(compiled)
    for a, b in zip(eager, compiled):
        np.testing.assert_allclose(np.asarray(b, dtype=float), np.asarray(a, dtype=float), rtol=rtol, atol=1e-12)


# -- 1. integer index tensors are inputs ---------------------------------------------------
def test_an_index_tensor_is_read_at_each_replay():
    w = Tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)

    def step(i):
        w.grad = None
        loss = (w[i] * w[i]).sum()
        loss.backward()
        return loss

    run = tga.compile(step)
    for ids in ([0, 1], [2, 3], [3, 3], [-1, 0]):
        got, want = run(Tensor(np.array(ids))).item(), float((w.detach().numpy()[ids] ** 2).sum())
        assert got == want
        expect = np.zeros((4, 3))
        np.add.at(expect, np.array(ids), 2 * w.detach().numpy()[ids])
        np.testing.assert_array_equal(w.grad.detach().numpy(), expect)
    assert len(run.programs) == 1
    assert "take" in run.program.code  # a gather reading the index buffer, not a constant


def test_logits_at_arange_y_reads_y_live():
    logits = Tensor(_x(0, 3, 5), requires_grad=True)

    def step(y):
        logits.grad = None
        loss = logits[Tensor.arange(3, dtype=np.int64), y].sum()
        loss.backward()
        return loss

    run = tga.compile(step)
    for y in ([0, 1, 2], [4, 4, 4], [1, 0, 3]):
        assert run(Tensor(np.array(y))).item() == logits.detach().numpy()[np.arange(3), y].sum()
        np.testing.assert_array_equal(logits.grad.detach().numpy().argmax(1), y)
    assert len(run.programs) == 1


# -- 2. train()/eval() and Python state are guards --------------------------------------------
def test_train_eval_switch_retraces():
    def make():
        lin, drop = _linear(), nn.Dropout(0.5)
        model = nn.Sequential(lin, drop)
        return (lambda x: model(x).sum()), model

    def call(mode):
        def c(run, model):
            getattr(model, mode)()
            with tga.no_grad():
                return run(Tensor(_x(1, 2, 4)))

        return c

    pair = _both(make, [call("eval"), call("eval"), call("train"), call("train"), call("eval")], check_programs=2)
    _assert_same(pair, rtol=0)
    assert not np.array_equal(pair[0][2], pair[0][3])  # fresh masks in train mode


def test_python_numbers_and_module_attributes_are_guards():
    lin = _linear()
    scale = [2.0]

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.factor = lin, 3.0

        def forward(self, x):
            return self.lin(x) * self.factor

    model = Scaled()
    run = tga.compile(lambda x: model(x).sum() * scale[0])
    x = Tensor(_x(2, 2, 4))
    with tga.no_grad():
        assert run(x).item() == pytest.approx(model(x).sum().item() * 2.0, rel=1e-12)
        model.factor = 5.0  # a module attribute the trace read
        assert run(x).item() == pytest.approx(model(x).sum().item() * 2.0, rel=1e-12)
    k = 1.5

    def f(x):
        return x * k

    run2 = tga.compile(f)
    assert run2(x).detach().numpy()[0, 0] == x.detach().numpy()[0, 0] * 1.5
    k = 4.0  # a global number changed after tracing: retraced, not baked
    assert run2(x).detach().numpy()[0, 0] == x.detach().numpy()[0, 0] * 4.0
    assert len(run2.programs) == 2


# -- 3. dict, list and tuple arguments -----------------------------------------------------------
def test_nested_arguments_are_keyed_by_structure_and_read_live():
    run = tga.compile(lambda batch: batch["x"] * 2 + batch["pair"][1].sum())
    batch = {"x": Tensor(np.ones(2)), "pair": (Tensor(np.zeros(1)), Tensor(np.ones(3)))}
    outs = []
    for v in (1.0, 2.0, 3.0):  # the same dict object each time, new tensors inside
        batch["x"] = Tensor(np.full(2, v))
        batch["pair"] = (Tensor(np.zeros(1)), Tensor(np.full(3, v)))
        outs.append(run(batch).detach().numpy().tolist())
    assert outs == [[5.0, 5.0], [10.0, 10.0], [15.0, 15.0]]
    assert len(run.programs) == 1
    run({"x": Tensor(np.ones(2)), "pair": [Tensor(np.zeros(1)), Tensor(np.ones(3))]})  # a list: new structure
    assert len(run.programs) == 2


def test_numpy_arguments_are_inputs_keyed_by_shape_not_contents():
    run = tga.compile(lambda a: (Tensor(np.ones(3)) * a).sum())
    for v in range(6):
        assert run(np.full(3, float(v))).item() == 3.0 * v
    assert len(run.programs) == 1


# -- 4. optimizer hyperparameters a schedule changes are read live ---------------------------------
@pytest.mark.parametrize("opt_name", ["adam", "sgd"])
@pytest.mark.parametrize("inside", [False, True])
def test_onecycle_betas_and_momentum_are_read_live(opt_name, inside):
    def make():
        lin = _linear()
        opt = Adam(lin.parameters(), lr=0.01) if opt_name == "adam" else SGD(lin.parameters(), lr=0.1, momentum=0.9)
        sched = OneCycleLR(opt, max_lr=0.1, total_steps=30)

        def step(x):
            opt.zero_grad()
            loss = (lin(x) ** 2).mean()
            loss.backward()
            opt.step()
            if inside:  # 5. a scheduler's step inside the compiled step is a line of the program
                sched.step()
            return loss

        return step, lin, sched

    def call(i):
        def c(run, lin, sched):
            loss = run(Tensor(_x(i, 2, 4)))
            if not inside:
                sched.step()
            return loss

        return c

    _assert_same(_both(make, [call(i) for i in range(20)], check_programs=1), rtol=0)


def test_weight_decay_switched_on_later_retraces():
    def make():
        lin = _linear()
        opt = SGD(lin.parameters(), lr=0.1, momentum=0.5)

        def step(x):
            opt.zero_grad()
            (lin(x) ** 2).mean().backward()
            opt.step()

        return step, lin, opt

    def call(i):
        def c(run, lin, opt):
            if i == 3:
                opt.param_groups[0]["weight_decay"] = 0.1
            if i == 6:
                opt.param_groups[0]["lr"] = 0.05  # read live: no new program
            run(Tensor(_x(i, 2, 4)))
            return lin.weight

        return c

    _assert_same(_both(make, [call(i) for i in range(8)], check_programs=2), rtol=0)


# -- 5. Python side effects inside the step ----------------------------------------------------
def test_grad_set_to_none_inside_the_step_is_replayed():
    def make():
        lin = _linear()

        def step(x):
            for p in lin.parameters():
                p.grad = None
            loss = (lin(x) ** 2).sum()
            loss.backward()
            with tga.no_grad():
                for p in lin.parameters():
                    p -= 0.01 * p.grad
            return loss

        return step, lin

    _assert_same(_both(make, [lambda run, lin, i=i: run(Tensor(_x(i, 2, 4))) for i in range(5)], check_programs=1))


# -- 6. changes to what trains ---------------------------------------------------------------------
def test_requires_grad_add_param_group_and_load_state_dict():
    def make():
        tga.manual_seed(0)
        a, b = _linear(4, 4), _linear(4, 3)
        opt = SGD(a.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            (b(a(x)) ** 2).mean().backward()
            opt.step()

        return step, a, b, opt

    def call(i):
        def c(run, a, b, opt):
            if i == 2:
                for p in a.parameters():
                    p.requires_grad = False
            if i == 4:
                for p in a.parameters():
                    p.requires_grad = True
            if i == 5:
                opt.add_param_group({"params": list(b.parameters()), "lr": 0.05})
            if i == 7:
                b.load_state_dict({k: np.full(v.shape, 10.0) for k, v in b.state_dict().items()})
            run(Tensor(_x(i, 2, 4)))
            return [a.weight, b.weight, b.bias]

        return c

    _assert_same(_both(make, [call(i) for i in range(10)]))


def test_replacing_a_parameter_object_retraces():
    lin = _linear()
    run = tga.compile(lambda x: lin(x).sum())
    x = Tensor(_x(3, 2, 4))
    with tga.no_grad():
        run(x)
        lin.weight = nn.Parameter(np.ones((3, 4)))
        assert run(x).item() == pytest.approx(lin(x).sum().item(), rel=1e-12)


# -- 7. tensors in closures and globals ------------------------------------------------------------
def test_a_closure_tensor_without_grad_is_read_live_forward_and_backward():
    w = Tensor(np.ones(3))
    x = Tensor(np.ones(3), requires_grad=True)

    def step():
        x.grad = None
        loss = (w * x).sum()
        loss.backward()
        return loss

    run = tga.compile(step)
    run()
    w.fill_(5.0)
    assert run().item() == 15.0
    np.testing.assert_array_equal(x.grad.detach().numpy(), [5.0, 5.0, 5.0])


# -- 8. .grad assigned inside the step ------------------------------------------------------------
def test_grad_scaled_inside_the_step_leaves_grad_as_eager():
    def make():
        lin = _linear()
        opt = SGD(lin.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            (lin(x) ** 2).sum().backward()
            for p in lin.parameters():
                p.grad = p.grad * 0.5
            opt.step()

        return step, lin

    _assert_same(_both(make, [lambda run, lin, i=i: run(Tensor(_x(i, 2, 4))) for i in range(4)], check_programs=1))


def test_a_replayed_grad_is_writable():
    a = Tensor(np.ones(3), requires_grad=True)

    def step():
        a.grad = None
        (a * 2.0).sum().backward()

    run = tga.compile(step)
    for _ in range(3):
        run()
        a.grad.mul_(10)  # a user's in-place change: never into a constant of the program
        np.testing.assert_array_equal(a.grad.detach().numpy(), [20.0, 20.0, 20.0])


# -- loud failures that now work -------------------------------------------------------------------
def test_token_ids_and_class_targets_are_tensor_arguments():
    def make():
        emb = nn.Embedding(10, 4, padding_idx=0)
        for p in emb.parameters():
            p._data = p._data.astype(np.float64)
        lin = _linear(4, 5)
        model = nn.Sequential(emb, lin)
        opt = SGD(model.parameters(), lr=0.1)

        def step(ids, y):
            opt.zero_grad()
            logits = model(ids)  # (B, T, 5)
            loss = F.cross_entropy(logits, y) + F.nll_loss(F.log_softmax(logits, -1), y)
            loss = loss + (F.one_hot(y.clamp(0, 4), 5).astype(np.float64) * logits).sum() * 1e-3
            loss = loss + F.embedding(ids, emb.weight).sum() * 1e-3
            out = Tensor.zeros(2, 10, dtype=np.float64)
            out[Tensor.arange(2, dtype=np.int64).unsqueeze(1), ids] = 1.0
            loss = loss + (out * 0.5).sum()
            loss.backward()
            opt.step()
            return loss

        return step, model

    rng = np.random.default_rng(0)
    batches = [(rng.integers(0, 10, (2, 3)), rng.integers(0, 5, (2, 3))) for _ in range(6)]
    batches[2][1][0, 0] = -100  # an ignored target
    calls = [lambda run, m, b=b: run(Tensor(b[0]), Tensor(b[1])) for b in batches]
    _assert_same(_both(make, calls, check_programs=1))


def test_random_draws_replay_the_eager_stream():
    def make():
        drop = nn.Dropout(0.3)
        return (lambda x: drop(x) + Tensor.rand(3) + Tensor.randn(3)), drop

    calls = [lambda run, d: run(Tensor(np.ones(3))) for _ in range(5)]
    pair = _both(make, calls, check_programs=1)
    _assert_same(pair, rtol=0)


def test_backward_on_a_compiled_result_outside_works_every_time():
    w = Tensor(np.ones(3), requires_grad=True)
    loss = tga.compile(lambda x: (w * x).sum())
    for _ in range(3):
        loss(Tensor(np.arange(3.0))).backward()
    np.testing.assert_array_equal(w.grad.detach().numpy(), [0.0, 3.0, 6.0])


def test_a_compiled_function_may_call_another():
    inner = tga.compile(lambda x: x * 2)
    outer = tga.compile(lambda x: inner(x) + 1)
    for v in (1.0, 2.0):
        assert outer(Tensor(np.full(2, v))).detach().numpy().tolist() == [2 * v + 1] * 2
    assert len(outer.programs) == 1


def test_np_asarray_of_a_traced_tensor_raises_trace_error():
    x = Tensor(np.ones(3), requires_grad=True)
    with pytest.raises(tga.TraceError, match=r"np.asarray\(t\).*test_compile_guards.py"):
        tga.jit.trace(lambda x: Tensor(np.asarray(x * 2)).sum(), x)


def test_the_cache_is_bounded_then_runs_eagerly():
    run = tga.compile(lambda x: x * 2.0, cache_limit=3)
    for i in range(3):
        run(Tensor(np.ones(i + 1)))
    with pytest.warns(RuntimeWarning, match="cache_limit.*shapes"):
        out = run(Tensor(np.ones(7)))
    assert out.detach().numpy().tolist() == [2.0] * 7 and len(run.programs) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run(Tensor(np.ones(9))).detach().numpy().tolist() == [2.0] * 9  # eager from now on, warned once


def test_a_changing_global_number_is_named_in_the_warning():
    global _SCALE
    run = tga.compile(_scaled, cache_limit=2)
    for s in (1.0, 2.0, 3.0):
        _SCALE = s
        if s == 3.0:
            with pytest.warns(RuntimeWarning, match="_SCALE"):
                assert run(Tensor(np.ones(2))).detach().numpy().tolist() == [3.0, 3.0]
        else:
            assert run(Tensor(np.ones(2))).detach().numpy().tolist() == [s, s]


_SCALE = 1.0


def _scaled(x):
    return x * _SCALE


def test_a_compiled_method_guards_its_objects_state():
    class Trainer:
        def __init__(self):
            self.model = nn.Sequential(_linear(), nn.Dropout(0.5))
            self.scale = 2.0

        @tga.compile
        def step(self, x):
            with tga.no_grad():
                return self.model(x) * self.scale

    t = Trainer()
    x = Tensor(_x(4, 2, 4))
    t.model.eval()
    np.testing.assert_array_equal(t.step(x).detach().numpy(), (t.model(x) * 2.0).detach().numpy())
    t.scale = 3.0  # an attribute of the method's object
    np.testing.assert_array_equal(t.step(x).detach().numpy(), (t.model(x) * 3.0).detach().numpy())
    t.model.train()  # a module reached through the object
    tga.manual_seed(5)
    got = t.step(x).detach().numpy()
    tga.manual_seed(5)
    with tga.no_grad():
        np.testing.assert_array_equal(got, (t.model(x) * 3.0).detach().numpy())


def test_a_list_append_inside_the_step_runs_eagerly_with_a_warning():
    losses = []
    w = Tensor(np.ones(2), requires_grad=True)

    def step(x):
        w.grad = None
        loss = (w * x).sum()
        loss.backward()
        losses.append(loss.detach())
        return loss

    run = tga.compile(step)
    with pytest.warns(RuntimeWarning, match="state 'losses'"):
        run(Tensor(np.ones(2)))
    for v in (2.0, 3.0):
        run(Tensor(np.full(2, v)))
    assert [t.item() for t in losses] == [2.0, 4.0, 6.0]  # every call appended, as eager


def test_a_step_that_sets_python_state_runs_eagerly_with_a_warning():
    model = nn.Sequential(_linear(), nn.Dropout(0.5))

    def step(x):
        model.train()  # state the replay would not set again
        with tga.no_grad():
            return model(x)

    run = tga.compile(step)
    model.eval()
    with pytest.warns(RuntimeWarning, match="training"):
        run(Tensor(_x(5, 2, 4)))
    model.eval()
    run(Tensor(_x(5, 2, 4)))
    assert model.training  # as eager leaves it
