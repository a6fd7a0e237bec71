"""Graphs and the cyclic garbage collector: graph nodes form no reference cycles (so
reference counting frees a graph and the collector never has to), and while a long graph
lives, full collections are deferred, then the user's thresholds come back."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import tinygrad_attn as tga
import tinygrad_attn.engine as engine
from tinygrad_attn import Tensor
from tinygrad_attn.models import Linear, Parameter
from tinygrad_attn.optim import AdamW

# Each test walks the collector over whole graphs (about 1-2 s): the full suite runs them, the
# fast loop (-m "not slow") leaves them out.
pytestmark = pytest.mark.slow


@pytest.fixture
def no_collector():
    """The collector off and empty, as the test found it afterwards."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _rand(*shape, requires_grad=True):
    return Tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=requires_grad)


def _chain():
    h = _rand(4, 3)
    for _ in range(5):
        h = ((h * 0.9 + 0.1).tanh()).exp()
    h.sum().backward()


def _views_and_reductions():
    x = _rand(2, 3, 4)
    w = _rand(4, 5)
    y = (x @ w).transpose(0, 2).reshape(5, 6)[1:, ::2]
    (y.max(axis=0) + y.mean() + x[0, :, 1].sum()).sum().backward()


def _composites():
    x = _rand(3, 5)
    t = Tensor(np.array([0, 2, 4]))
    loss = (
        tga.functional.cross_entropy(x, t)
        + x.softmax(-1).sum()
        + tga.functional.layer_norm(x, (5,), _rand(5), _rand(5)).sum()
    )
    loss.backward()
    with tga.decompose():
        (tga.functional.cross_entropy(x, t) + x.softmax(-1).sum()).backward()


def _in_place():
    x = _rand(3, 4)
    h = x * 2.0
    h[1] = 0.0
    h.add_(1.0)
    h.sum().backward()


def _second_order():
    x = _rand(3)
    (g,) = tga.grad((x * x * x).sum(), x, create_graph=True)
    g.sum().backward()


def _retained_and_kept_gradient():
    x = _rand(3)
    h = x.tanh()
    h.retain_grad()
    y = (h * h).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert h.grad is not None


BUILDERS = [_chain, _views_and_reductions, _composites, _in_place, _second_order, _retained_and_kept_gradient]


@pytest.mark.parametrize("build", BUILDERS, ids=lambda f: f.__name__.strip("_"))
def test_a_dropped_graph_leaves_nothing_for_the_collector(no_collector, build):
    build()  # first run: lazily made caches and constants stay, and are not garbage
    gc.collect()
    build()
    assert gc.collect() == 0


def test_a_training_step_leaves_nothing_for_the_collector(no_collector):
    lin = Linear(3, 2).double()
    opt = AdamW(lin.parameters(), lr=0.1)
    x = _rand(4, 3, requires_grad=False)

    def step():
        loss = lin(x).tanh().sum()
        opt.zero_grad()
        loss.backward()
        opt.step()

    step()
    gc.collect()
    step()
    step()
    assert gc.collect() == 0


# -- full collections deferred while a long graph lives ------------------------------------
def _long_chain(n=3 * engine.function.GC_LONG_GRAPH):
    h = Parameter(np.ones(2))
    for _ in range(n // 2):
        h = h * 1.0 + 0.0
    return h


@pytest.fixture
def thresholds():
    before = gc.get_threshold()
    yield before
    gc.set_threshold(*before)


def test_full_collections_wait_while_a_long_graph_lives(thresholds):
    gc.set_threshold(600, 9, 11)
    h = _long_chain()
    assert gc.get_threshold() == (600, 9, engine.function.GC_DEFERRED_FULL)
    del h  # the graph goes, and the user's thresholds come back
    assert gc.get_threshold() == (600, 9, 11)


def test_short_graphs_change_nothing(thresholds):
    gc.set_threshold(600, 9, 11)
    for _ in range(3 * engine.function.GC_LONG_GRAPH // 50):
        _long_chain(50)
        assert gc.get_threshold() == (600, 9, 11)


def test_thresholds_the_user_sets_meanwhile_are_kept(thresholds):
    gc.set_threshold(600, 9, 11)
    h = _long_chain()
    gc.set_threshold(100, 2, 3)
    del h
    assert gc.get_threshold() == (100, 2, 3)


def test_a_disabled_collector_is_left_alone(thresholds, no_collector):
    gc.set_threshold(600, 9, 11)
    h = _long_chain()
    assert gc.get_threshold() == (600, 9, 11) and not gc.isenabled()
    del h
    assert gc.get_threshold() == (600, 9, 11) and not gc.isenabled()


def test_long_graphs_in_two_threads(thresholds):
    gc.set_threshold(600, 9, 11)
    barrier = threading.Barrier(2)
    errors = []

    def work():
        try:
            h = _long_chain()
            barrier.wait()
            h.sum().backward()
            barrier.wait()
        except BaseException as e:  # reported below: an assertion in a thread does not fail the test
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert gc.get_threshold() == (600, 9, 11)
