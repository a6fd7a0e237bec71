"""Twelve training loops written as a user writes them, compiled with ``tga.compile`` and
compared with eager over 20 steps: the losses at every step and the parameters at the end
(float32: rtol 1e-5)."""

from __future__ import annotations

import math

import numpy as np

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn
from tinygrad_attn.optim import SGD, Adam, AdamW
from tinygrad_attn.optim.lr_scheduler import OneCycleLR, StepLR

STEPS = 20


def _run_both(build, batch, steps=STEPS, between=None, max_programs=1):
    """``build()`` -> ``(step, model, extra)``; ``batch(i)`` -> the step's arguments;
    ``between(i, model, extra)`` runs before step ``i`` (outside the step)."""
    results = []
    for compiled in (False, True):
        tga.manual_seed(0)
        step, model, extra = build()
        run = tga.compile(step) if compiled else step
        losses = []
        for i in range(steps):
            if between is not None:
                between(i, model, extra)
            out = run(*batch(i))
            losses.append(np.asarray(out.detach().numpy() if isinstance(out, Tensor) else out, dtype=np.float64))
        results.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
        if compiled:
            assert 1 <= len(run.programs) <= max_programs, len(run.programs)
    (l0, p0), (l1, p1) = results
    for i, (a, b) in enumerate(zip(l0, l1)):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6, err_msg=f"loss at step {i}")
    for a, b in zip(p0, p1):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def _ids(i, shape, vocab, low=0):
    return Tensor(np.random.default_rng(100 + i).integers(low, vocab, shape))


def _floats(i, *shape):
    return Tensor(np.random.default_rng(200 + i).standard_normal(shape).astype(np.float32))


def _train_step(model, opt, loss_of):
    def step(*args):
        opt.zero_grad()
        loss = loss_of(*args)
        loss.backward()
        opt.step()
        return loss

    return step


def test_library_gpt():
    from tinygrad_attn.models import GPT

    def build():
        model = GPT(vocab_size=11, d_model=16, n_heads=2, n_layers=2, max_len=8, dropout=0.1)
        opt = AdamW(model.parameters(), lr=1e-2)
        return _train_step(model, opt, lambda x, y: F.cross_entropy(model(x), y)), model, opt

    def batch(i):
        ids = np.random.default_rng(i).integers(0, 11, (2, 7))
        return Tensor(ids[:, :6]), Tensor(ids[:, 1:])

    _run_both(build, batch)


def test_vit():
    from tinygrad_attn.models.vit import ViT

    def build():
        model = ViT(image_size=8, patch_size=4, channels=1, n_classes=3, d_model=16, n_heads=2, n_layers=1)
        opt = Adam(model.parameters(), lr=1e-3)
        return _train_step(model, opt, lambda x, y: F.cross_entropy(model(x), y)), model, opt

    _run_both(build, lambda i: (_floats(i, 2, 1, 8, 8), _ids(i, (2,), 3)))


def test_seq2seq_teacher_forcing():
    from tinygrad_attn.models import Seq2Seq

    def build():
        model = Seq2Seq(src_vocab=6, tgt_vocab=6, emb_dim=4, hidden_size=8, attention="additive", pad_id=0)
        opt = SGD(model.parameters(), lr=0.1)

        def loss_of(src, tgt):
            logits = model(src, tgt[:, :-1])  # teacher forcing: the true previous tokens in
            return F.cross_entropy(logits, tgt[:, 1:], ignore_index=0)

        return _train_step(model, opt, loss_of), model, opt

    def batch(i):
        src = np.random.default_rng(i).integers(1, 6, (2, 4))
        src[0, -1] = 0  # padding: a mask computed from the ids at each replay
        return Tensor(src), _ids(i, (2, 4), 6, low=1)

    _run_both(build, batch)


def test_lstm_language_model():
    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.lstm, self.head = nn.Embedding(9, 6), nn.LSTM(6, 8, batch_first=True), nn.Linear(8, 9)

        def forward(self, ids):
            out, _ = self.lstm(self.emb(ids))
            return self.head(out)

    def build():
        model = LM()
        opt = Adam(model.parameters(), lr=1e-2)
        return _train_step(model, opt, lambda x, y: F.cross_entropy(model(x), y)), model, opt

    def batch(i):
        ids = np.random.default_rng(i).integers(0, 9, (2, 6))
        return Tensor(ids[:, :5]), Tensor(ids[:, 1:])

    _run_both(build, batch)


def test_hand_written_attention():
    class MHA(nn.Module):
        def __init__(self, d=8, h=2):
            super().__init__()
            self.h, self.qkv, self.out = h, nn.Linear(d, 3 * d), nn.Linear(d, d)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(x).reshape(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)  # (B, H, T, dh)
            scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.h)
            return self.out((F.softmax(scores, -1) @ v).permute(0, 2, 1, 3).reshape(b, t, d))

    def build():
        model = MHA()
        opt = SGD(model.parameters(), lr=0.05, momentum=0.9)
        return _train_step(model, opt, lambda x: (model(x) ** 2).mean()), model, opt

    _run_both(build, lambda i: (_floats(i, 2, 3, 8),))


def _mlp(dropout=0.0):
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(dropout), nn.Linear(8, 3))


def test_dropout_in_training():
    def build():
        model = _mlp(0.5)
        opt = SGD(model.parameters(), lr=0.1)
        return _train_step(model, opt, lambda x, y: F.cross_entropy(model(x), y)), model, opt

    _run_both(build, lambda i: (_floats(i, 5, 4), _ids(i, (5,), 3)))


def test_gradient_accumulation():
    def build():
        model = _mlp()
        opt = Adam(model.parameters(), lr=1e-2)

        def step(x1, y1, x2, y2):
            opt.zero_grad()
            for x, y in ((x1, y1), (x2, y2)):
                (F.cross_entropy(model(x), y) / 2).backward()
            opt.step()
            return model[0].weight.grad.sum()

        return step, model, opt

    _run_both(build, lambda i: (_floats(i, 3, 4), _ids(i, (3,), 3), _floats(i + 50, 3, 4), _ids(i + 50, (3,), 3)))


def test_schedules_between_replays():
    def build():
        model = _mlp()
        opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
        scheds = [StepLR(opt, step_size=3, gamma=0.5)]
        return _train_step(model, opt, lambda x, y: F.cross_entropy(model(x), y)), model, scheds

    def between(i, model, scheds):
        if i:
            scheds[0].step()

    _run_both(build, lambda i: (_floats(i, 5, 4), _ids(i, (5,), 3)), between=between)


def test_one_cycle_between_replays():
    def build():
        model = _mlp()
        opt = Adam(model.parameters(), lr=1e-2)
        return (
            _train_step(model, opt, lambda x, y: F.cross_entropy(model(x), y)),
            model,
            OneCycleLR(opt, max_lr=0.05, total_steps=STEPS + 1),
        )

    _run_both(build, lambda i: (_floats(i, 5, 4), _ids(i, (5,), 3)), between=lambda i, m, s: i and s.step())


def test_clipping_inside_the_step():
    # Needs clip_grad_norm_ written in tensor ops (returning the norm as a tensor).
    def build():
        model = _mlp()
        opt = SGD(model.parameters(), lr=0.5)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y) * 10
            loss.backward()
            tga.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            return loss

        return step, model, opt

    _run_both(build, lambda i: (_floats(i, 5, 4), _ids(i, (5,), 3)))


def test_frozen_and_unfrozen_layers():
    def build():
        model = _mlp()
        opt = SGD(model.parameters(), lr=0.1)
        return _train_step(model, opt, lambda x, y: F.cross_entropy(model(x), y)), model, opt

    def between(i, model, opt):
        if i in (5, 12):
            for p in model[0].parameters():
                p.requires_grad = i == 12
                p.grad = None

    _run_both(build, lambda i: (_floats(i, 5, 4), _ids(i, (5,), 3)), between=between, max_programs=2)


def test_train_eval_switching():
    def build():
        model = _mlp(0.3)
        opt = SGD(model.parameters(), lr=0.1)
        train = _train_step(model, opt, lambda x, y: F.cross_entropy(model(x), y))

        def step(x, y):  # a training step in train mode, an evaluation in eval mode
            if model.training:
                return train(x, y)
            with tga.no_grad():
                return F.cross_entropy(model(x), y)

        return step, model, opt

    def between(i, model, opt):
        model.train(i % 4 != 3)

    _run_both(build, lambda i: (_floats(i, 5, 4), _ids(i, (5,), 3)), between=between, max_programs=2)


def test_changing_batch_sizes():
    def build():
        model = _mlp()
        opt = Adam(model.parameters(), lr=1e-2)
        return _train_step(model, opt, lambda x, y: F.cross_entropy(model(x), y)), model, opt

    sizes = [2, 3, 4]
    _run_both(
        build,
        lambda i: (_floats(i, sizes[i % 3], 4), _ids(i, (sizes[i % 3],), 3)),
        max_programs=3,
    )
