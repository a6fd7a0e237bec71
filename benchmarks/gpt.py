"""One training step of a small GPT: forward, cross-entropy, backward, AdamW.

2 layers, d_model 128, 4 heads, context 64, batch 16, vocabulary 64, float32. There is
no hand-written NumPy baseline for this workload yet: the figure is ours (median seconds
per step), and, when ``import torch`` works, the same architecture in PyTorch eager
(pre-norm encoder layers with GELU, causal, tied head, AdamW) with our model's weights
copied in (the first losses agree), all timed round robin with the same pauses as the
other benchmarks. The AdamW update alone is timed too (ours and PyTorch's). One thread
for both, as the targets are stated:

    python benchmarks/run.py --only gpt --threads 1

``python benchmarks/gpt.py --ops`` prints where one of our steps spends its time, by op
kind (see :func:`op_times`); ``--floor`` the least time the AdamW update can take from
memory (see :func:`memory_floor`); ``--loop`` times consecutive steps against PyTorch's (see
:func:`loop_ratio`).
"""

from __future__ import annotations

import numpy as np
from common import interleave, ms, torch_or_none

import tinygrad_attn as tga
from tinygrad_attn import Tensor

VOCAB, D_MODEL, HEADS, LAYERS, CONTEXT, BATCH = 64, 128, 4, 2, 64, 16


def parts():
    """``(GPT, AdamW)`` if both exist yet, else None."""
    from tinygrad_attn import models  # noqa: PLC0415

    gpt_cls = getattr(models, "GPT", None)
    try:
        from tinygrad_attn.optim import AdamW  # noqa: PLC0415
    except ImportError:
        return None
    return None if gpt_cls is None else (gpt_cls, AdamW)


def setup(with_model: bool = False):
    gpt_cls, adamw = parts()
    tga.manual_seed(0)
    model = gpt_cls(VOCAB, D_MODEL, HEADS, LAYERS, CONTEXT)
    opt = adamw(model.parameters(), lr=3e-4)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, VOCAB, (BATCH, CONTEXT + 1))
    x, y = Tensor(ids[:, :-1]), Tensor(ids[:, 1:])

    def step():
        logits = model(x)  # (B, T, vocab)
        loss = tga.functional.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))  # as PyTorch's step
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return (step, model, opt) if with_model else step


def torch_weights(model) -> dict[str, np.ndarray]:
    """Our GPT's weights under the PyTorch model's names: its attention keeps q, k and v
    as one ``in_proj`` matrix."""
    sd = {k: np.array(v.detach().numpy() if hasattr(v, "numpy") else v) for k, v in model.state_dict().items()}
    out = {}
    for k, v in sd.items():
        if ".self_attn.q_proj." in k:
            kind = k.rsplit(".", 1)[1]  # weight or bias
            parts_ = [sd[k.replace("q_proj", n)] for n in ("q_proj", "k_proj", "v_proj")]
            out[k.replace("q_proj." + kind, "in_proj_" + kind)] = np.concatenate(parts_)
        elif ".self_attn.k_proj." not in k and ".self_attn.v_proj." not in k:
            out[k] = v
    return out


def torch_setup(weights: dict[str, np.ndarray] | None = None, with_model: bool = False):
    """The same model and step in PyTorch eager, with ``weights`` (see :func:`torch_weights`)
    if given, else its own initialisation."""
    torch = torch_or_none()
    nn = torch.nn
    torch.manual_seed(0)

    class TorchGPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb, self.pos_emb = nn.Embedding(VOCAB, D_MODEL), nn.Embedding(CONTEXT, D_MODEL)
            self.blocks = nn.ModuleList(
                nn.TransformerEncoderLayer(
                    D_MODEL, HEADS, 4 * D_MODEL, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
                )  # fmt: skip
                for _ in range(LAYERS)
            )
            self.ln_f = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCAB, bias=False)
            self.head.weight = self.tok_emb.weight
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(CONTEXT))

        def forward(self, ids):
            h = self.tok_emb(ids) + self.pos_emb(torch.arange(ids.shape[1]))
            for blk in self.blocks:
                h = blk(h, src_mask=self.mask, is_causal=True)
            return self.head(self.ln_f(h))

    model = TorchGPT()
    if weights is not None:
        missing, unexpected = model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()}, strict=False)
        if unexpected or set(missing) - {"mask", "head.weight"}:
            raise AssertionError(f"gpt: the weights do not fit the PyTorch model: {missing} {unexpected}")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    rng = np.random.default_rng(0)
    ids = torch.tensor(rng.integers(0, VOCAB, (BATCH, CONTEXT + 1)))
    x, y = ids[:, :-1], ids[:, 1:]

    def step():
        loss = torch.nn.functional.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return (step, model, opt) if with_model else step


def main(quick: bool = False) -> dict[str, float] | None:
    if parts() is None:
        print("  (GPT or AdamW does not exist yet in tinygrad_attn: skipped)")
        return None
    ours, model, opt = setup(with_model=True)
    contenders = {"ours": ours, "compiled": tga.compile(setup())}  # two models, same initialisation
    torch = torch_or_none()
    if torch is not None:
        tstep, tmodel, topt = torch_setup(torch_weights(model), with_model=True)
        first, tfirst = float(ours().item()), float(tstep().item())  # the same weights give the same loss
        if abs(first - tfirst) > 1e-4 * abs(tfirst):
            raise AssertionError(f"gpt: the first losses differ: ours {first}, PyTorch {tfirst}")
        contenders["torch"] = tstep
        contenders["torch AdamW"] = topt.step
    contenders["AdamW"] = opt.step  # (the gradients of the last step stay: each call updates again)
    med = interleave(contenders, rounds=5 if quick else 15, warm=2)
    threads = f", PyTorch threads {torch.get_num_threads()}" if torch is not None else ""
    print(f"  ours (no NumPy baseline yet): {ms(med['ours'])} per training step{threads}")
    print(f"  ours, tga.compile replay:     {ms(med['compiled'])} per training step "
          f"(eager / compiled {med['ours'] / med['compiled']:.2f}x; target: at least 1.5x)")  # fmt: skip
    if "torch" in med:
        print(f"  PyTorch eager, same weights:  {ms(med['torch'])} per training step "
              f"(ours / torch {med['ours'] / med['torch']:.2f}x; target: at most 1)")  # fmt: skip
    print(f"  ours, the AdamW update alone: {ms(med['AdamW'])} (target: at most 1 ms)")
    if "torch AdamW" in med:
        print(f"  PyTorch's AdamW update alone: {ms(med['torch AdamW'])}")
    return med


def op_times(steps: int = 10) -> dict[str, float]:
    """Where a training step's time goes, by op kind: milliseconds per step (process CPU
    time, median over ``steps`` steps after two warm-up steps) of each kind's forward (the
    time since the previous op, so Python between ops counts to the next op) and backward
    (each node's backward, exactly), and of the AdamW update (in the step, its arrays as the
    step's backward leaves them, and again at once). Observed with the engine's
    hook (``tinygrad_attn.engine.switches.observing``), which costs about a microsecond
    an op.

        PYTHONPATH=$PWD python benchmarks/gpt.py --ops
    """
    import time  # noqa: PLC0415
    from collections import defaultdict  # noqa: PLC0415

    from tinygrad_attn.engine.switches import Hook, observing  # noqa: PLC0415

    clock = time.process_time

    class Timer(Hook):
        def __init__(self) -> None:
            self.times: dict[str, float] = defaultdict(float)
            self.last = clock()

        def _kind(self, fn) -> str:
            return getattr(fn, "name", None) or type(fn).__name__

        def op(self, fn, inputs, out) -> None:
            now = clock()
            self.times[f"{self._kind(fn)} forward"] += now - self.last
            self.last = now
            super().op(fn, inputs, out)

        def before_step(self, t, g) -> None:
            self.last = clock()
            super().before_step(t, g)

        def after_step(self, fn, grads, ns) -> None:
            now = clock()
            self.times[f"{self._kind(fn)} backward"] += now - self.last
            self.last = now
            super().after_step(fn, grads, ns)

    step, model, opt = setup(with_model=True)
    step()
    step()
    per_step: dict[str, list[float]] = defaultdict(list)
    update = opt.step

    def timed_update() -> None:  # (the step's own call of opt.step(), timed where it runs)
        u0 = clock()
        update()
        timer.times["AdamW update (in the step)"] += clock() - u0

    opt.step = timed_update
    for _ in range(steps):
        timer = Timer()
        t0 = clock()
        with observing(timer):
            step()
        total = clock() - t0
        a0 = clock()
        update()  # (the same gradients again: the update's own time)
        timer.times["AdamW update (again, alone)"] = clock() - a0
        timer.times["whole step"] = total
        for k, v in timer.times.items():
            per_step[k].append(v)
    del opt.step
    med = {k: 1e3 * float(np.median(v)) for k, v in per_step.items()}
    print(f"  ms per step by op kind, median of {steps} (process CPU time):")
    for k, v in sorted(med.items(), key=lambda kv: -kv[1]):
        print(f"    {k:<40} {v:8.3f}")
    return med


def loop_ratio(rounds: int = 25) -> dict[str, float] | None:
    """Ours against PyTorch as training runs: consecutive steps, no pauses, one step of
    each in turn per round (process CPU time), and the median over rounds of each
    round's ratio (a ratio taken within one round moves less with the load of a shared
    machine than two medians taken apart). Also our AdamW update as it runs in the loop,
    its arrays out of cache after a forward and backward.

        PYTHONPATH=$PWD OMP_NUM_THREADS=1 python benchmarks/gpt.py --loop
    """
    import statistics  # noqa: PLC0415
    import time  # noqa: PLC0415

    torch = torch_or_none()
    if torch is None or parts() is None:
        print("  (PyTorch or our GPT is missing: skipped)")
        return None
    torch.set_num_threads(1)
    ours, model, opt = setup(with_model=True)
    theirs = torch_setup(torch_weights(model))
    for _ in range(3):
        ours()
        theirs()
    clock = time.process_time
    t_ours, t_theirs, t_adamw, ratios = [], [], [], []
    for _ in range(rounds):
        t0 = clock()
        ours()
        t1 = clock()
        theirs()
        t2 = clock()
        opt.step()  # (after PyTorch's step: its arrays are out of cache, as in training)
        t3 = clock()
        t_ours.append(t1 - t0)
        t_theirs.append(t2 - t1)
        t_adamw.append(t3 - t2)
        ratios.append((t1 - t0) / (t2 - t1))
    med = {"ours": statistics.median(t_ours), "torch": statistics.median(t_theirs),
           "ratio": statistics.median(ratios), "AdamW": statistics.median(t_adamw)}  # fmt: skip
    print(f"  consecutive steps, {rounds} rounds: ours {ms(med['ours'])}, PyTorch {ms(med['torch'])}, "
          f"ours / torch {med['ratio']:.3f} (median of the rounds' ratios); our AdamW update {ms(med['AdamW'])}")  # fmt: skip
    return med


def memory_floor(rounds: int = 7) -> float:
    """The least time the AdamW update can take where its arrays come from memory: one pass
    reads the parameters, gradients and two moments and writes three of them (7 float32
    arrays of the model's size), at the rate one core streams here (``np.add`` over three
    64 MB arrays, best of ``rounds``). Returns the floor in seconds.

        PYTHONPATH=$PWD OMP_NUM_THREADS=1 python benchmarks/gpt.py --floor
    """
    import time  # noqa: PLC0415

    _, model, _ = setup(with_model=True)
    size = sum(p.numel() for p in model.parameters())
    n = 16 * 1024 * 1024
    a, b, c = np.ones(n, np.float32), np.ones(n, np.float32), np.empty(n, np.float32)
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        np.add(a, b, out=c)
        best = min(best, time.perf_counter() - t0)
    rate = 3 * 4 * n / best
    floor = 7 * 4 * size / rate
    print(f"  one core streams {rate / 1e9:.1f} GB/s (np.add over three 64 MB arrays, best of {rounds}); "
          f"one AdamW pass over {size} parameters (7 arrays, {7 * 4 * size / 1e6:.1f} MB) takes at least "
          f"{ms(floor)} from memory")  # fmt: skip
    return floor


if __name__ == "__main__":
    import sys

    if "--ops" in sys.argv:
        op_times()
    elif "--loop" in sys.argv:
        loop_ratio()
    elif "--floor" in sys.argv:
        memory_floor()
    else:
        main()
