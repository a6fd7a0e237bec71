"""Grad mode, decompose, detect_anomaly and the module scope are per thread, and their
context managers are re-entrant: leaving restores what was in force on entering."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest
from helpers import close

import tinygrad_attn as tga
import tinygrad_attn.engine as engine
from tinygrad_attn import Tensor


def _run_threads(target, n: int) -> list:
    """Run ``target(i)`` in ``n`` threads; re-raise the first error any of them hit."""
    errors: list = []

    def wrap(i: int) -> None:
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return errors


@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_threads_doing_forward_and_backward_each_get_their_gradients():
    results: dict = {}
    stepper = tga.no_grad()  # one instance shared by every thread, as an optimizer's would be

    def work(i: int) -> None:
        rng = np.random.default_rng(i)
        w = Tensor(rng.standard_normal((8, 8)), requires_grad=True)
        x = Tensor(rng.standard_normal((4, 8)))
        for _ in range(200):
            w.grad = None
            ((x @ w).tanh() * (i + 1)).sum().backward()
            expect = (i + 1) * x.detach().numpy().T @ (1 - np.tanh(x.detach().numpy() @ w.detach().numpy()) ** 2)
            close(w.grad, expect, atol=1e-10)
            with stepper:  # threads switch grad mode off and on all the time
                w.data = w.data - 1e-3 * w.grad.data
        results[i] = True

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        _run_threads(work, 4)
    finally:
        sys.setswitchinterval(old)
    assert sorted(results) == [0, 1, 2, 3]
    assert tga.is_grad_enabled()


def _while_another_thread_is_inside(manager, check) -> None:
    inside, done = threading.Event(), threading.Event()

    def other(_: int) -> None:
        with manager:
            inside.set()
            assert done.wait(10)

    t = threading.Thread(target=other, args=(0,))
    t.start()
    try:
        assert inside.wait(10)
        check()
    finally:
        done.set()
        t.join()


def test_no_grad_in_one_thread_does_not_stop_recording_in_another():
    x = Tensor([1.0, 2.0], requires_grad=True)

    def check() -> None:
        assert tga.is_grad_enabled()
        y = x * 2
        assert y.requires_grad and y.grad_fn is not None

    _while_another_thread_is_inside(tga.no_grad(), check)


def test_decompose_and_anomaly_in_one_thread_stay_in_that_thread():
    _while_another_thread_is_inside(tga.decompose(), lambda: assert_not(engine.switches._State.decompose))
    _while_another_thread_is_inside(tga.detect_anomaly(), lambda: assert_not(engine.switches._State.anomaly))


def assert_not(flag: bool) -> None:
    assert not flag


def test_every_thread_starts_with_grad_enabled_and_its_own_switches():
    seen = {}

    def probe(_: int) -> None:
        seen["grad"] = tga.is_grad_enabled()
        seen["decompose"] = engine.switches._State.decompose
        seen["anomaly"] = engine.switches._State.anomaly
        seen["scope"] = engine.switches.current_scope()

    with tga.no_grad(), tga.decompose(), tga.detect_anomaly(), engine.switches.scope("outer"):
        _run_threads(probe, 1)
    assert seen == {"grad": True, "decompose": False, "anomaly": False, "scope": None}


def test_module_scope_is_per_thread():
    x = Tensor([1.0, 2.0], requires_grad=True)
    made = {}

    def check() -> None:
        made["y"] = x * 2

    with engine.switches.scope("layer", kind="module"):
        _run_threads(lambda i: check(), 1)
        z = x * 3
    assert made["y"].grad_fn.scope is None
    assert z.grad_fn.scope.name == "layer"


@pytest.mark.parametrize("manager", [tga.no_grad, tga.decompose, tga.detect_anomaly, tga.enable_grad])
def test_one_manager_instance_entered_recursively_restores_the_outer_state(manager):
    attr = {tga.no_grad: "grad_enabled", tga.enable_grad: "grad_enabled",
            tga.decompose: "decompose", tga.detect_anomaly: "anomaly"}[manager]  # fmt: skip
    before = getattr(engine.switches._State, attr)
    m = manager()

    @m
    def recurse(n: int) -> None:
        if n:
            recurse(n - 1)

    with tga.no_grad() if manager is tga.enable_grad else tga.enable_grad():
        outer = getattr(engine.switches._State, attr)
        recurse(3)
        assert getattr(engine.switches._State, attr) == outer
        with m:
            with m:
                pass
            assert getattr(engine.switches._State, attr) == m.value
        assert getattr(engine.switches._State, attr) == outer
    assert getattr(engine.switches._State, attr) == before


def test_one_no_grad_instance_interleaved_by_two_threads():
    # A enters, B enters, A leaves, B leaves: each thread ends with grad on again.
    m = tga.no_grad()
    step = [threading.Event() for _ in range(4)]
    after = {}

    def a(_: int) -> None:
        m.__enter__()
        step[0].set()
        assert step[1].wait(10)
        m.__exit__(None, None, None)
        after["a"] = tga.is_grad_enabled()
        step[2].set()

    def b(_: int) -> None:
        assert step[0].wait(10)
        m.__enter__()
        step[1].set()
        assert step[2].wait(10)
        m.__exit__(None, None, None)
        after["b"] = tga.is_grad_enabled()

    ta, tb = threading.Thread(target=a, args=(0,)), threading.Thread(target=b, args=(0,))
    ta.start(), tb.start()
    ta.join(), tb.join()
    assert after == {"a": True, "b": True}
    assert tga.is_grad_enabled()


def test_two_threads_stepping_optimizers_leave_grad_mode_on():
    from tinygrad_attn.optim import SGD

    def train(i: int) -> None:
        w = Tensor(np.ones(4), requires_grad=True)
        opt = SGD([w], lr=0.1)
        for _ in range(100):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        assert tga.is_grad_enabled()

    _run_threads(train, 2)
    assert tga.is_grad_enabled()


def test_setting_the_switch_directly_still_stops_recording():
    x = Tensor([1.0, 2.0], requires_grad=True)
    engine.switches._State.grad_enabled = False
    try:
        assert not (x * 2).requires_grad
        assert not tga.is_grad_enabled()
    finally:
        engine.switches._State.grad_enabled = True
    assert (x * 2).requires_grad


def test_a_thread_that_ends_with_grad_off_leaves_the_others_recording():
    def leave_off(_: int) -> None:
        engine.switches._State.grad_enabled = False  # never turned back on: the thread just ends

    _run_threads(leave_off, 1)
    x = Tensor([1.0], requires_grad=True)
    assert tga.is_grad_enabled() and (x * 2).requires_grad
    with tga.no_grad():
        assert not (x * 2).requires_grad
