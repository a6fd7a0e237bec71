"""Loss modules (``tinygrad_attn.nn``): PyTorch's constructor arguments and defaults, its
state dicts, and its values and gradients for the same arguments."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from helpers import close

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn

NAMES = ["CrossEntropyLoss", "NLLLoss", "MSELoss", "BCELoss", "BCEWithLogitsLoss"]


@pytest.mark.parametrize("name", NAMES)
def test_constructor_and_forward_signatures_are_torchs(name):
    torch = pytest.importorskip("torch")

    def params(fn):
        return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]

    ours, theirs = getattr(nn, name), getattr(torch.nn, name)
    assert params(ours.__init__) == params(theirs.__init__)
    assert params(ours.forward) == params(theirs.forward)


def _inputs(name, rng, shape=(4, 3)):
    x = rng.standard_normal(shape)
    if name in ("CrossEntropyLoss", "NLLLoss"):
        t = rng.integers(0, shape[1], shape[:1] + shape[2:])
        t.reshape(-1)[0] = -100
        return (x if name == "CrossEntropyLoss" else x - np.log(np.exp(x).sum(1, keepdims=True))), t
    if name == "BCELoss":
        return 1 / (1 + np.exp(-x)), rng.uniform(0, 1, shape)
    return x, rng.uniform(0, 1, shape)


CONFIGS = [
    ("CrossEntropyLoss", {}),
    ("CrossEntropyLoss", {"weight": [0.5, 2.0, 1.0], "reduction": "sum"}),
    ("CrossEntropyLoss", {"ignore_index": 1, "label_smoothing": 0.2, "reduction": "none"}),
    ("CrossEntropyLoss", {"weight": [0.5, 2.0, 1.0], "label_smoothing": 0.1}),
    ("NLLLoss", {}),
    ("NLLLoss", {"weight": [0.5, 2.0, 1.0], "reduction": "none"}),
    ("NLLLoss", {"size_average": False}),
    ("MSELoss", {}),
    ("MSELoss", {"reduction": "sum"}),
    ("MSELoss", {"reduce": False}),
    ("BCELoss", {"weight": [1.0, 0.2, 3.0]}),
    ("BCELoss", {"reduction": "none"}),
    ("BCEWithLogitsLoss", {"pos_weight": [2.0, 0.5, 1.0]}),
    ("BCEWithLogitsLoss", {"weight": [1.0, 0.2, 3.0], "pos_weight": [2.0, 0.5, 1.0], "reduction": "sum"}),
]


@pytest.mark.filterwarnings("ignore:size_average and reduce args will be deprecated")  # PyTorch's own
@pytest.mark.parametrize("name,kw", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_modules_match_torch(name, kw, device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    shape = (2, 3, 2) if name in ("CrossEntropyLoss", "NLLLoss") else (4, 3)
    x, t = _inputs(name, rng, shape)
    if name == "CrossEntropyLoss" and kw.get("ignore_index") == 1:
        t.reshape(-1)[0] = 1
    tensors = {k: np.asarray(v, dtype=np.float64) for k, v in kw.items() if k in ("weight", "pos_weight")}
    ours = getattr(nn, name)(**{**kw, **{k: Tensor(v) for k, v in tensors.items()}}).to(device)
    theirs = getattr(torch.nn, name)(**{**kw, **{k: torch.tensor(v) for k, v in tensors.items()}})
    xt = torch.tensor(x, requires_grad=True)
    want = theirs(xt, torch.tensor(t))
    w = rng.standard_normal(tuple(want.shape))
    (want_g,) = torch.autograd.grad((want * torch.tensor(w)).sum(), xt)
    xs = Tensor(x, device=device, requires_grad=True)
    got = ours(xs, Tensor(t, device=device))
    close(got, want.detach().numpy(), atol=1e-12, rtol=1e-10)
    (g,) = tga.grad((got * Tensor(w, device=device)).sum(), xs)
    close(g, want_g.numpy(), atol=1e-12, rtol=1e-10)
    assert ours.reduction == theirs.reduction


def test_weights_are_buffers_as_in_torch():
    torch = pytest.importorskip("torch")
    for name, kw in [("CrossEntropyLoss", {"weight": [1.0, 2.0]}), ("NLLLoss", {}), ("MSELoss", {}),
                     ("BCEWithLogitsLoss", {"weight": [1.0, 3.0], "pos_weight": [2.0, 0.5]})]:  # fmt: skip
        theirs = getattr(torch.nn, name)(**{k: torch.tensor(v) for k, v in kw.items()})
        ours = getattr(nn, name)(**kw)
        sd = {k: v.numpy() for k, v in theirs.state_dict().items()}
        assert list(ours.state_dict()) == list(sd)
        ours.load_state_dict({k: v * 3 for k, v in sd.items()})
        for k, v in sd.items():
            close(getattr(ours, k), v * 3)
        assert list(ours.parameters()) == []


def test_weight_moves_with_the_module(device):
    loss = nn.CrossEntropyLoss(weight=np.array([1.0, 2.0, 3.0])).to(device)
    assert loss.weight.device == Tensor([0.0], device=device).device
    x = Tensor(np.zeros((2, 3)), device=device)
    close(loss(x, Tensor(np.array([0, 2]), device=device)), np.log(3.0), atol=1e-6)


def test_bad_reduction_is_refused_at_construction():
    with pytest.raises(ValueError, match="CrossEntropyLoss: reduction must be 'mean', 'sum' or 'none'"):
        nn.CrossEntropyLoss(reduction="avg")


def test_a_training_step_with_a_loss_module(rng):
    model = nn.Linear(3, 2)
    opt = tga.optim.SGD(model.parameters(), lr=0.5)
    x = Tensor(rng.standard_normal((16, 3)).astype(np.float32))
    y = (x.numpy()[:, 0] > 0).astype(np.int64)
    crit = nn.CrossEntropyLoss()
    first = None
    for _ in range(20):
        loss = crit(model(x), y)
        first = loss.item() if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.5 * first
