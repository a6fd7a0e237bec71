"""What an optimizer's step writes, and the version counters it moves, against PyTorch.

A step writes each parameter in its own memory, as PyTorch's does, with ``foreach`` (the
default: a param group's state in flat buckets, ``optim.optimizer._Bucket``) or without:
``detach()``, ``.data``, views and ``state_dict()`` entries show the new values, and the
step counts as PyTorch's in-place update of each parameter it changes (``p._version``), so
a graph that saved a parameter before the step raises in backward, as in PyTorch. Each
parameter counts its own in-place changes: writing one between a forward and its backward
raises only where the graph saved that parameter.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402
from tinygrad_attn import nn, optim  # noqa: E402

OPTIMIZERS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.1)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.1)),
    ("AdamW", dict(lr=0.1, weight_decay=0.0)),
]
_IDS = [f"{n}-" + ",".join(f"{k}={v}" for k, v in kw.items()) for n, kw in OPTIMIZERS]
FOREACH = [None, False]


class _Model:
    """Two linear layers and a bias vector, built the same way on either side."""

    def __init__(self, lib, mod):
        rng = np.random.default_rng(0)
        self.a = mod.Linear(4, 3).double()
        self.b = mod.Linear(3, 2).double()
        with lib.no_grad():
            for p in (*self.a.parameters(), *self.b.parameters()):
                p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
        self.c = mod.Parameter(lib.tensor(rng.standard_normal(2)))
        self.x = lib.tensor(rng.standard_normal((5, 4)))

    def parameters(self):
        return [*self.a.parameters(), *self.b.parameters(), self.c]

    def loss(self):
        return (self.b(self.a(self.x).tanh()) * self.c).sum()


def _side(side, name, kw, foreach):
    lib, mod = (tga, nn) if side == "ours" else (torch, torch.nn)
    m = _Model(lib, mod)
    opt = getattr(optim if side == "ours" else torch.optim, name)(m.parameters(), foreach=foreach, **kw)
    return lib, m, opt


def _numpy(t):
    return t.detach().numpy().copy()


@pytest.mark.parametrize("foreach", FOREACH)
@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=_IDS)
def test_writing_one_parameter_leaves_the_others_graph_alone(name, kw, foreach):
    # After a step the optimizer holds its state in flat buckets. The graph below saves the
    # weight of ``b`` (its input's gradient reads it) and ``c``, not the weight and bias of
    # ``a`` (its input needs no gradient): writing those in place before the backward is
    # allowed in PyTorch, and must be here.
    results = {}
    for side in ("ours", "theirs"):
        lib, m, opt = _side(side, name, kw, foreach)
        m.loss().backward()
        opt.step()
        opt.zero_grad()
        loss = m.loss()
        with lib.no_grad():
            m.a.bias.mul_(2.0)
            m.a.weight.add_(1.0)
        try:
            loss.backward()
        except RuntimeError as e:
            results[side] = ("raises", str(e))
            continue
        results[side] = ("ok", [_numpy(p.grad) for p in m.parameters()], [_numpy(p) for p in m.parameters()])
    assert results["ours"][0] == results["theirs"][0], results
    if results["ours"][0] == "ok":
        for got, want in zip(results["ours"][1] + results["ours"][2], results["theirs"][1] + results["theirs"][2]):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("foreach", FOREACH)
@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=_IDS)
def test_writing_a_saved_parameter_still_raises(name, kw, foreach):
    outcome = {}
    for side in ("ours", "theirs"):
        lib, m, opt = _side(side, name, kw, foreach)
        m.loss().backward()
        opt.step()
        loss = m.loss()
        with lib.no_grad():
            m.b.weight.mul_(2.0)  # the input gradient of b's product reads it
        try:
            loss.backward()
            outcome[side] = "ok"
        except RuntimeError:
            outcome[side] = "raises"
    assert outcome == {"ours": "raises", "theirs": "raises"}


@pytest.mark.parametrize("foreach", FOREACH)
@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=_IDS)
def test_step_counts_in_each_parameters_version_as_pytorchs(name, kw, foreach):
    versions = {}
    for side in ("ours", "theirs"):
        lib, m, opt = _side(side, name, kw, foreach)
        start = [p._version for p in m.parameters()]  # (initialisation changes them in place: differs)
        seen = []
        for step in range(3):
            opt.zero_grad()
            loss = m.loss() if step != 1 else m.b(m.a(m.x)).sum()  # step 1: c gets no gradient
            loss.backward()
            opt.step()
            seen.append([p._version - v for p, v in zip(m.parameters(), start)])
        with lib.no_grad():
            m.b.weight[0].mul_(3.0)  # through a view
        seen.append([p._version - v for p, v in zip(m.parameters(), start)])
        versions[side] = seen
    assert versions["ours"] == versions["theirs"]


@pytest.mark.parametrize("foreach", FOREACH)
def test_a_graph_made_before_the_step_raises_after_it(foreach):
    # PyTorch's step changes each parameter in place: a backward through a graph made before
    # it, which saved a parameter, raises.
    outcome = {}
    for side in ("ours", "theirs"):
        lib, m, opt = _side(side, "Adam", dict(lr=0.1), foreach)
        m.loss().backward()
        loss = m.loss()
        opt.step()
        try:
            loss.backward()
            outcome[side] = "ok"
        except RuntimeError:
            outcome[side] = "raises"
    assert outcome == {"ours": "raises", "theirs": "raises"}


@pytest.mark.parametrize("foreach", FOREACH)
@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=_IDS)
def test_step_writes_into_the_parameters_memory_as_pytorchs(name, kw, foreach):
    # Tensors that share a parameter's memory, taken before the first step (the one that
    # makes the optimizer's buckets) and after it, show each step's values, as in PyTorch.
    seen = {}
    for side in ("ours", "theirs"):
        lib, m, opt = _side(side, name, kw, foreach)
        first = [p.detach() for p in m.parameters()]
        sd = m.a.state_dict()
        row = m.b.weight.data[1]
        later = []
        got = []
        for step in range(3):
            opt.zero_grad()
            (m.loss() if step != 1 else m.b(m.a(m.x)).sum()).backward()  # step 1: c gets no gradient
            opt.step()
            later = later or [p.data for p in m.parameters()]
            got.append([_numpy(t) for t in (*first, sd["weight"], sd["bias"], row, *later, *m.parameters())])
        seen[side] = got
    for step, (ours, theirs) in enumerate(zip(seen["ours"], seen["theirs"])):
        for i, (a, b) in enumerate(zip(ours, theirs)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=f"step {step}, tensor {i}")


def test_views_of_a_stepped_parameter_share_its_version_and_no_other():
    m = _Model(tga, nn)
    opt = optim.AdamW(m.parameters(), lr=0.1)
    m.loss().backward()
    opt.step()
    w, other = m.b.weight, m.a.weight
    before_w, before_other = w._version, other._version
    row, wt = w[1], w.T
    with tga.no_grad():
        row.mul_(2.0)
    assert w._version == wt._version == row._version == before_w + 1
    assert other._version == before_other
    with tga.no_grad():
        wt.add_(1.0)
    assert w._version == row._version == before_w + 2
    assert other._version == before_other


def test_ordinary_views_still_share_their_bases_version():
    x = tga.tensor(np.arange(12.0).reshape(3, 4))
    v, u = x[1:], x.T
    v.mul_(2.0)
    assert x._version == v._version == u._version == 1
    u.add_(1.0)
    assert x._version == v._version == 2


def test_parameters_of_a_bucket_count_apart_on_every_device(device):
    rng = np.random.default_rng(3)
    a, b = nn.Linear(4, 3).double().to(device), nn.Linear(3, 2).double().to(device)
    x = tga.tensor(rng.standard_normal((5, 4)), device=device)
    ps = [*a.parameters(), *b.parameters()]
    opt = optim.AdamW(ps, lr=0.1)
    b(a(x).tanh()).sum().backward()
    opt.step()
    assert [p._version for p in ps] == [2, 2, 2, 2]
    opt.zero_grad()
    loss = b(a(x).tanh()).sum()
    with tga.no_grad():
        a.bias.mul_(2.0)  # not saved by the graph
    loss.backward()
    assert [p._version for p in ps] == [2, 3, 2, 2]
    loss = b(a(x).tanh()).sum()
    with tga.no_grad():
        b.weight[0].mul_(2.0)  # saved: the input gradient of b's product reads it
    with pytest.raises(RuntimeError, match="in-place"):
        loss.backward()
