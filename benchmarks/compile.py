"""What ``tga.compile`` costs and gains on training steps written as a user writes them.

Per scenario (a ViT, a Seq2Seq with teacher forcing, an LSTM language model, a
hand-written attention block, the library's GPT), with a new batch at every call:

- trace cost: the first compiled call (which runs the step eagerly while recording it,
  then builds the program) against one eager step (target: at most 3x);
- replay speed-up: eager step / replayed step, medians timed round robin;
- the printed program's length in lines (the optimizer's update is one line per param group);

and the GPT step eager, compiled and in PyTorch eager (the same architecture, from
``gpt.py``) on this machine.

    python benchmarks/run.py --only compile
    python benchmarks/compile.py --quick
    OMP_NUM_THREADS=1 python benchmarks/compile.py --cpu-time vit seq2seq lstm gpt
    OMP_NUM_THREADS=1 python benchmarks/compile.py --breakdown seq2seq

``--cpu-time`` times the trace cost in this process's CPU time (``time.process_time``), which
other work on a shared machine disturbs far less than wall-clock time, and takes the best of
7 rounds (each of trace and eager step) instead of the median of 3. ``--breakdown`` says where
a trace's time goes (see :func:`breakdown`).
"""

from __future__ import annotations

import math
import statistics
import sys
import time

import numpy as np
from common import interleave, ms, torch_or_none

import tinygrad_attn as tga
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn


def _batches(make, n=8):
    """A ring of ``n`` pre-made batches: each call takes the next (new tensors every call)."""
    data = [make(np.random.default_rng(i)) for i in range(n)]
    state = {"i": 0}

    def next_batch():
        state["i"] += 1
        return data[state["i"] % n]

    return next_batch


def _step(model, opt, loss_of):
    def step(*args):
        opt.zero_grad()
        loss = loss_of(*args)
        loss.backward()
        opt.step()
        return loss

    return step


def vit():
    from tinygrad_attn.models.vit import ViT  # noqa: PLC0415

    model = ViT(image_size=32, patch_size=4, channels=3, n_classes=10, d_model=64, n_heads=4, n_layers=2)
    opt = tga.optim.Adam(model.parameters(), lr=1e-3)
    step = _step(model, opt, lambda x, y: F.cross_entropy(model(x), y))
    return step, _batches(lambda r: (Tensor(r.standard_normal((16, 3, 32, 32)).astype(np.float32)),
                                     Tensor(r.integers(0, 10, (16,)))))  # fmt: skip


def seq2seq():
    from tinygrad_attn.models import Seq2Seq  # noqa: PLC0415

    model = Seq2Seq(src_vocab=32, tgt_vocab=32, emb_dim=32, hidden_size=64, attention="additive", pad_id=0)
    opt = tga.optim.Adam(model.parameters(), lr=1e-3)

    def loss_of(src, tgt):
        return F.cross_entropy(model(src, tgt[:, :-1]), tgt[:, 1:], ignore_index=0)

    return _step(model, opt, loss_of), _batches(
        lambda r: (Tensor(r.integers(1, 32, (16, 10))), Tensor(r.integers(1, 32, (16, 11))))
    )


def lstm():
    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.lstm, self.head = (
                nn.Embedding(64, 64),
                nn.LSTM(64, 128, batch_first=True),
                nn.Linear(128, 64),
            )

        def forward(self, ids):
            out, _ = self.lstm(self.emb(ids))
            return self.head(out)

    model = LM()
    opt = tga.optim.Adam(model.parameters(), lr=1e-3)
    step = _step(model, opt, lambda x, y: F.cross_entropy(model(x), y))
    return step, _batches(lambda r: (Tensor(r.integers(0, 64, (16, 32))), Tensor(r.integers(0, 64, (16, 32)))))


def mha():
    class MHA(nn.Module):
        def __init__(self, d=128, h=4):
            super().__init__()
            self.h, self.qkv, self.out = h, nn.Linear(d, 3 * d), nn.Linear(d, d)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(x).reshape(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
            scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.h)
            return self.out((F.softmax(scores, -1) @ v).permute(0, 2, 1, 3).reshape(b, t, d))

    model = MHA()
    opt = tga.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step = _step(model, opt, lambda x: (model(x) ** 2).mean())
    return step, _batches(lambda r: (Tensor(r.standard_normal((16, 64, 128)).astype(np.float32)),))


def gpt():
    from tinygrad_attn.models import GPT  # noqa: PLC0415

    vocab, ctx = 64, 64
    model = GPT(vocab, 128, 4, 2, ctx)
    opt = tga.optim.AdamW(model.parameters(), lr=3e-4)
    step = _step(model, opt, lambda x, y: F.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1)))

    def batch(r):
        ids = r.integers(0, vocab, (16, ctx + 1))
        return Tensor(ids[:, :-1]), Tensor(ids[:, 1:])

    return step, _batches(batch)


SCENARIOS = {"vit": vit, "seq2seq": seq2seq, "lstm": lstm, "mha": mha, "gpt": gpt}


def _call(fn, batch):
    return lambda: fn(*batch())


_clock = time.perf_counter  # (time.process_time with --cpu-time)
_best = False  # (with --cpu-time: the best of 7 rounds, what other work on the machine disturbed least)


def trace_cost(build, rounds: int) -> tuple[float, float]:
    """Median, or best (``_best``), of (first compiled call, one eager step), each on a freshly built model."""
    traces, eagers = [], []
    for _ in range(rounds):
        tga.manual_seed(0)
        step, batch = build()
        step(*batch())  # (warm: lazily built constants, first-step optimizer state)
        t0 = _clock()
        step(*batch())
        eagers.append(_clock() - t0)
        run = tga.compile(step)
        t0 = _clock()
        run(*batch())
        traces.append(_clock() - t0)
    if _best:
        return min(traces), min(eagers)
    return statistics.median(traces), statistics.median(eagers)


def main(quick: bool = False, only: tuple[str, ...] = ()) -> dict[str, dict[str, float]]:
    table = {}
    print(
        f"  {'scenario':10s} {'eager step':>12s} {'trace':>12s} {'trace/eager':>12s} {'replay':>12s} {'speed-up':>9s}"
        f" {'lines':>6s}"
    )
    for name, build in SCENARIOS.items():
        if only and name not in only:
            continue
        trace, eager_once = trace_cost(build, 7 if _best else 2 if quick else 3)
        tga.manual_seed(0)
        step, batch = build()
        tga.manual_seed(0)
        step2, batch2 = build()
        run = tga.compile(step2)
        med = interleave({"eager": _call(step, batch), "replay": _call(run, batch2)},
                         rounds=3 if quick else 9, warm=2)  # fmt: skip
        if len(run.programs) != 1:
            raise AssertionError(f"compile benchmark: {name} traced {len(run.programs)} programs, expected 1")
        lines = len(run.program.code.splitlines())
        table[name] = {"eager": med["eager"], "trace": trace, "replay": med["replay"], "lines": lines}
        print(f"  {name:10s} {ms(med['eager'])} {ms(trace)} {trace / eager_once:11.2f}x {ms(med['replay'])} "
              f"{med['eager'] / med['replay']:8.2f}x {lines:6d}")  # fmt: skip
    if (not only or "gpt" in only) and torch_or_none() is not None:
        import gpt as gpt_bench  # noqa: PLC0415

        tga.manual_seed(0)
        step, batch = gpt()
        tga.manual_seed(0)
        step2, batch2 = gpt()
        run = tga.compile(step2)
        med = interleave({"eager": lambda: step(*batch()), "compiled": lambda: run(*batch2()),
                          "torch": gpt_bench.torch_setup()}, rounds=3 if quick else 9, warm=2)  # fmt: skip
        print(
            f"  GPT step (new batch each call): eager {ms(med['eager'])}, compiled {ms(med['compiled'])}, "
            f"PyTorch eager {ms(med['torch'])} (compiled / torch {med['compiled'] / med['torch']:.2f}x)"
        )
        table["gpt_vs_torch"] = med
    return table


def breakdown(only: tuple[str, ...] = (), rounds: int = 7) -> dict[str, dict[str, float]]:
    """Where the first compiled call's time goes, per scenario (CPU time, the round with the
    best total of ``rounds``): the step run while recording (its forward, its ``backward()``,
    the rest: optimizer, guards), and the program built from the records (``passes`` (all of
    them), ``codegen`` (the source text), ``compile`` (Python compiling that text)), against
    one eager step's forward and backward."""
    import importlib  # noqa: PLC0415

    program = importlib.import_module("tinygrad_attn.symbolic.program")
    spent: dict[str, float] = {}

    def timed(owner, attr, key):
        f = getattr(owner, attr)

        def run(*a, **k):
            t0 = time.process_time()
            try:
                return f(*a, **k)
            finally:
                spent[key] = spent.get(key, 0.0) + time.process_time() - t0

        setattr(owner, attr, run)
        return f

    saved = [(Tensor, "backward", timed(Tensor, "backward", "backward")),
             (program.passes, "optimize", timed(program.passes, "optimize", "passes")),
             (program.passes, "liveness", timed(program.passes, "liveness", "passes")),
             (program.codegen, "generate", timed(program.codegen, "generate", "codegen"))]  # fmt: skip
    program.compile = lambda *a, _c=compile, **k: _timed_compile(_c, spent, *a, **k)  # (the module's global)
    table = {}
    try:
        for name, build in SCENARIOS.items():
            if only and name not in only:
                continue
            best: dict[str, float] | None = None
            for _ in range(rounds):
                tga.manual_seed(0)
                step, batch = build()
                step(*batch())
                spent.clear()
                t0 = time.process_time()
                step(*batch())
                eager = {"eager": time.process_time() - t0, "eager backward": spent.get("backward", 0.0)}
                run = tga.compile(step)
                b = batch()
                spent.clear()
                t0 = time.process_time()
                run(*b)
                row = {**eager, "trace": time.process_time() - t0, **spent}
                if best is None or row["trace"] < best["trace"]:
                    best = row
            table[name] = best
            build_ms = best.get("passes", 0) + best.get("codegen", 0) + best.get("compile", 0)
            recorded = best["trace"] - build_ms
            print(
                f"  {name}: trace {ms(best['trace'])} = {best['trace'] / best['eager']:.2f}x eager {ms(best['eager'])}"
            )
            print(f"    step while recording {ms(recorded)} (eager {ms(best['eager'])}): backward "
                  f"{ms(best.get('backward', 0))} (eager {ms(best['eager backward'])}), forward and the rest "
                  f"{ms(recorded - best.get('backward', 0))} (eager {ms(best['eager'] - best['eager backward'])})")  # fmt: skip
            print(f"    program build {ms(build_ms)}: passes {ms(best.get('passes', 0))}, codegen "
                  f"{ms(best.get('codegen', 0))}, compile() {ms(best.get('compile', 0))}")  # fmt: skip
    finally:
        for owner, attr, f in saved:
            setattr(owner, attr, f)
        del program.compile
    return table


def _timed_compile(builtin, spent, *a, **k):
    t0 = time.process_time()
    try:
        return builtin(*a, **k)
    finally:
        spent["compile"] = spent.get("compile", 0.0) + time.process_time() - t0


if __name__ == "__main__":
    if "--cpu-time" in sys.argv:
        _clock, _best = time.process_time, True
    names = tuple(a for a in sys.argv[1:] if not a.startswith("-"))
    if "--breakdown" in sys.argv:
        breakdown(only=names)
    else:
        main(quick="--quick" in sys.argv, only=names)
