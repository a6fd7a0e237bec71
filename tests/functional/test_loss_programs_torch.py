"""Losses and numerically delicate composites, drawn from a seed and run with ``torch`` bound to
PyTorch and to tinygrad_attn (tests/differential.py): one of ``torch.nn.functional``'s losses
or its module (``nn.XLoss``), with ``reduction`` none/mean/sum, in float32 or float64 (float16
where PyTorch's CPU kernel computes it), at extremes (logits of 1e4, probabilities 0 and 1, zero
vectors, infinite targets, empty batches) and with mistakes (shapes, dtypes, classes out of
range); then the value, its dtype and shape, the gradients of the input, of the target and of
the weights (or PyTorch's refusal of them), and for some a second order through
``create_graph=True``. Then softmax, log_softmax, softmin and logsumexp with ``dtype=`` and
rows of ``-inf``, and layer/group/batch norm (train and eval, ``momentum=None``,
``track_running_stats=False``, the running statistics updated in place) with constant rows.

Run as a script over many seeds (prints each differing program and the counts per kind)::

    PYTHONPATH=.:tests python tests/functional/test_loss_programs_torch.py 0 3000
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Any

from differential import (
    PRELUDE,
    ROUNDING,
    difference,
    float32_alike,
    generated_failures,
    program_of,
    report,
    seed_tests,
)

#: The helpers every program starts with: ``T`` (records a value or the exception), ``BW(out,
#: *leaves)`` (records ``out``, a loss weighted unequally so a misplaced gradient shows, and the
#: leaves' gradients), ``G2(out, *leaves)`` (a second order: the gradients with
#: ``create_graph=True``, then the gradient of their weighted squares) and ``leaf(*shape)``.
HELPERS = (
    PRELUDE
    + """
def BW(out, *leaves):
    R(out)
    w = torch.linspace(0.5, 2.0, out.numel(), dtype=out.dtype).reshape(out.shape)
    loss = (out * w).sum()
    loss.backward()
    R(*[t.grad for t in leaves])

def G2(out, *leaves):
    R(out)
    w = torch.linspace(0.5, 2.0, out.numel(), dtype=out.dtype).reshape(out.shape)
    gs = torch.autograd.grad((out * w).sum(), leaves, create_graph=True)
    R(*gs)
    pen = sum((g * g).sum() * (i + 1) for i, g in enumerate(gs))
    # (PyTorch may answer a zero second derivative with a ZeroTensor, which has no array: its sum with 0 has)
    R([None if h is None else h + 0 for h in torch.autograd.grad(pen, leaves, allow_unused=True)])

def leaf(*shape, scale=1.0):
    return (torch.randn(shape, dtype=DT) * scale).requires_grad_()
"""
)

REDUCTIONS = ["'none'", "'mean'", "'sum'"]


def _head(r: random.Random, half: bool = False) -> str:
    dts = ["torch.float32", "torch.float64"] + (["torch.float16"] if half else [])
    return f"torch.manual_seed({r.randrange(1000)})\nDT = {r.choice(dts)}\n"


def _call(r: random.Random, fn: str, module: str, args: str, opts: dict[str, str]) -> str:
    """The functional call ``F.fn(args, **opts)`` or the module's ``nn.Module(**opts)(args)``."""
    kw = ", ".join(f"{k}={v}" for k, v in opts.items())
    if r.random() < 0.5:
        return f"F.{fn}({args}{', ' + kw if kw else ''})"
    return f"nn.{module}({kw})({args})"


def _finish(r: random.Random, call: str, leaves: str) -> str:
    """Record the call's value and gradients (a second order for one program in six), or what it raises."""
    if r.random() < 1 / 6:
        return f"T(lambda: G2({call}, {leaves}))\n"
    return f"T(lambda: BW({call}, {leaves}))\n"


# -- classification --------------------------------------------------------------------------------


def _class_head(r: random.Random) -> tuple[str, str, str, str]:
    """Input shape, target shape, the class count and a target expression (class indices)."""
    N, C = r.choice([0, 1, 2, 3, 4]) if r.random() < 0.1 else r.randint(1, 4), r.randint(1, 5)
    kdim = r.random() < 0.25
    extra = f", {r.randint(1, 3)}, {r.randint(1, 2)}" if kdim else ""
    if r.random() < 0.1:  # one sample without its batch axis
        return f"({C},)", "()", str(C), f"torch.randint(0, {C}, ())"
    xs = f"({N}, {C}{extra})"
    ts = f"({N}{extra},)"
    return xs, ts, str(C), f"torch.randint(0, {C}, {ts})"


def k_cross_entropy(r: random.Random) -> str:
    head = _head(r, half=r.random() < 0.15)
    xs, ts, C, tgt = _class_head(r)
    scale = r.choice(["1.0", "1.0", "1.0", "1e4", "30.0"])
    probs = r.random() < 0.3
    opts: dict[str, str] = {}
    pre = ""
    if probs:
        tshape = xs
        how = r.choice(["softmax", "onehot", "raw"])
        if how == "softmax":
            pre = f"t = torch.randn{tshape}.to(DT).softmax({0 if ts == '()' else 1})\n"
        elif how == "onehot":
            pre = f"t = F.one_hot({tgt}, {C}).to(DT)\n" + ("t = t.movedim(-1, 1)\n" if ts.count(",") > 1 else "")
        else:
            pre = f"t = torch.rand{tshape}.to(DT)\n"
    else:
        pre = f"t = {tgt}\n"
        if r.random() < 0.35:
            ii = r.choice(["0", "1", "-100", "2"])
            opts["ignore_index"] = ii
            if r.random() < 0.3:
                pre += f"t = torch.full_like(t, {ii})\n"
    if r.random() < 0.35:
        pre += f"wt = torch.rand({C}, dtype=DT) + 0.1\n"
        if r.random() < 0.3:
            pre += "wt.requires_grad_()\n"
        opts["weight"] = "wt"
    if r.random() < 0.35:
        opts["label_smoothing"] = r.choice(["0.1", "0.5", "1.0", "0.0"])
    opts["reduction"] = r.choice(REDUCTIONS)
    call = _call(r, "cross_entropy", "CrossEntropyLoss", "x, t", opts)
    leaves = "x" + (", wt" if "weight" in opts and "requires_grad_" in pre else "")
    return head + f"x = leaf(*{xs}, scale={scale})\n" + pre + _finish(r, call, leaves)


def k_nll(r: random.Random) -> str:
    head = _head(r, half=r.random() < 0.15)
    xs, ts, C, tgt = _class_head(r)
    opts: dict[str, str] = {}
    pre = f"t = {tgt}\n"
    if r.random() < 0.4:
        ii = r.choice(["0", "1", "-100", "-1"])
        opts["ignore_index"] = ii
        if r.random() < 0.3:
            pre += f"t = torch.full_like(t, {ii})\n"
    if r.random() < 0.4:
        pre += f"wt = torch.rand({C}, dtype=DT) + 0.1\n"
        if r.random() < 0.3:
            pre += "wt.requires_grad_()\n"
        opts["weight"] = "wt"
    opts["reduction"] = r.choice(REDUCTIONS)
    src = r.choice(["x", "F.log_softmax(x, dim={d})"])
    d = 0 if ts == "()" else 1
    call = _call(r, "nll_loss", "NLLLoss", f"{src.format(d=d)}, t", opts)
    leaves = "x" + (", wt" if "requires_grad_" in pre else "")
    return head + f"x = leaf(*{xs})\n" + pre + _finish(r, call, leaves)


def k_bce(r: random.Random) -> str:
    head = _head(r, half=r.random() < 0.15)
    shape = r.choice(["(3,)", "(2, 3)", "(2, 3, 2)", "(0, 3)", "()"])
    logits = r.random() < 0.55
    opts: dict[str, str] = {"reduction": r.choice(REDUCTIONS)}
    pre = ""
    ext = r.choice(["none", "none", "zero_one", "big"])
    if logits:
        x = f"leaf(*{shape}, scale={'1e4' if ext == 'big' else '3.0'})"
    else:
        x = f"torch.rand{shape if shape != '()' else '(())'}.to(DT)"
        if ext == "zero_one":
            x += ".round()"
        x += ".requires_grad_()"
    t = f"torch.rand{shape if shape != '()' else '(())'}.to(DT)"
    if ext == "zero_one" or r.random() < 0.3:
        t += ".round()"
    tg = r.random() < 0.25
    if tg:
        t += ".requires_grad_()"
    pre += f"x = {x}\nt = {t}\n"
    leaves = "x, t" if tg else "x"
    if r.random() < 0.35:
        ws = r.choice([shape, "(3,)", "(1,)", "()"])
        pre += f"wt = torch.rand{ws if ws != '()' else '(())'}.to(DT) + 0.1\n"
        if r.random() < 0.3:
            pre += "wt.requires_grad_()\n"
            leaves += ", wt"
        opts["weight"] = "wt"
    if logits and r.random() < 0.4:
        ps = r.choice(["(3,)", "(1,)", shape])
        pre += f"pw = torch.rand{ps if ps != '()' else '(())'}.to(DT) * 3\n"
        if r.random() < 0.3:
            pre += "pw.requires_grad_()\n"
            leaves += ", pw"
        opts["pos_weight"] = "pw"
    if logits:
        call = _call(r, "binary_cross_entropy_with_logits", "BCEWithLogitsLoss", "x, t", opts)
    else:
        call = _call(r, "binary_cross_entropy", "BCELoss", "x, t", opts)
    return head + pre + _finish(r, call, leaves)


def k_kl_div(r: random.Random) -> str:
    head = _head(r, half=r.random() < 0.15)
    shape = r.choice(["(3,)", "(2, 3)", "(2, 3, 2)", "(0, 3)"])
    lt = r.random() < 0.5
    red = r.choice(REDUCTIONS + ["'batchmean'"])
    ext = r.choice(["none", "zeros", "none"])
    x = f"leaf(*{shape}).log_softmax(-1).detach().requires_grad_()"
    if lt:
        t = f"torch.randn{shape}.to(DT).log_softmax(-1)"
        if ext == "zeros":
            t += ".masked_fill(torch.rand(" + shape[1:-1] + ") > 0.5, float('-inf'))"
    else:
        t = f"torch.randn{shape}.to(DT).softmax(-1)"
        if ext == "zeros":
            t += ".masked_fill(torch.rand(" + shape[1:-1] + ") > 0.5, 0.0)"
    tg = r.random() < 0.3
    opts = {"reduction": red, "log_target": str(lt)}
    call = _call(r, "kl_div", "KLDivLoss", "x, t", opts)
    return head + f"x = {x}\nt = {t}{'.requires_grad_()' if tg else ''}\n" + _finish(r, call, "x, t" if tg else "x")


def k_poisson(r: random.Random) -> str:
    head = _head(r, half=r.random() < 0.1)
    shape = r.choice(["(3,)", "(2, 3)", "(0, 2)"])
    li = r.random() < 0.5
    full = r.random() < 0.5
    x = f"leaf(*{shape})" if li else f"torch.rand{shape}.to(DT).mul(3).requires_grad_()"
    if not li and r.random() < 0.3:
        x = x.replace(".mul(3)", ".mul(3).round()")
    t = f"torch.randint(0, 5, {shape}).to(DT)"
    opts = {"log_input": str(li), "full": str(full), "reduction": r.choice(REDUCTIONS)}
    if r.random() < 0.3:
        opts["eps"] = r.choice(["1e-8", "0.1"])
    call = _call(r, "poisson_nll_loss", "PoissonNLLLoss", "x, t", opts)
    return head + f"x = {x}\nt = {t}\n" + _finish(r, call, "x")


def k_gaussian(r: random.Random) -> str:
    head = _head(r)
    shape = r.choice([(3,), (2, 3), (2, 3, 2), (0, 3)])
    vs = r.choice([shape, shape[:-1] + (1,), shape[:-1], (1,) * len(shape), (2,) if shape == (2, 3) else shape])
    if r.random() < 0.1:
        vs = (4,)  # a mistake
    var = f"torch.rand{vs}.to(DT).add(0.05)"
    if r.random() < 0.2:
        var = f"torch.rand{vs}.to(DT).mul(torch.rand{vs} > 0.5)"  # zeros: clamped to eps
    if r.random() < 0.05:
        var = f"-torch.rand{vs}.to(DT)"  # negative: refused
    opts = {"full": str(r.random() < 0.5), "reduction": r.choice(REDUCTIONS)}
    if r.random() < 0.4:
        opts["eps"] = r.choice(["1e-6", "0.1", "1.0"])
    call = _call(r, "gaussian_nll_loss", "GaussianNLLLoss", "x, t, v", opts)
    return (
        head
        + f"x = leaf(*{shape})\nt = torch.randn{shape}.to(DT)\nv = {var}.requires_grad_()\n"
        + _finish(r, call, "x, v")
    )


def k_regression(r: random.Random) -> str:
    head = _head(r, half=r.random() < 0.2)
    shape = r.choice(["(3,)", "(2, 3)", "(2, 1, 3)", "(0, 3)", "()"])
    tshape = shape if r.random() < 0.85 else r.choice(["(1, 3)", "(3,)", "(2, 1)"])
    which = r.choice(["l1", "mse", "huber", "smooth_l1"])
    opts: dict[str, str] = {"reduction": r.choice(REDUCTIONS)}
    if which == "huber" and r.random() < 0.7:
        opts["delta"] = r.choice(["0.5", "1.0", "2.0", "1e-3"])
    if which == "smooth_l1" and r.random() < 0.7:
        opts["beta"] = r.choice(["0.0", "0.5", "1.0", "2.0"])
    ts = tshape if tshape != "()" else "(())"
    t = f"torch.randn{ts}.to(DT)"
    ext = r.choice(["none", "none", "inf", "equal"])
    if ext == "inf":
        t += ".masked_fill(torch.rand" + ts + " > 0.6, float('inf'))"
    tg = r.random() < 0.3
    pre = f"x = leaf(*{shape})\nt = {t}\n"
    if ext == "equal":
        pre += "t = x.detach().clone()\n"
    if tg:
        pre += "t.requires_grad_()\n"
    fn, mod = {"l1": ("l1_loss", "L1Loss"), "mse": ("mse_loss", "MSELoss"), "huber": ("huber_loss", "HuberLoss"),
               "smooth_l1": ("smooth_l1_loss", "SmoothL1Loss")}[which]  # fmt: skip
    call = _call(r, fn, mod, "x, t", opts)
    return head + pre + _finish(r, call, "x, t" if tg else "x")


# -- margins ----------------------------------------------------------------------------------------


def k_margin_pairs(r: random.Random) -> str:
    head = _head(r)
    n = r.choice([0, 1, 3, 4])
    which = r.choice(["ranking", "hinge", "soft"])
    red = r.choice(REDUCTIONS)
    if which == "ranking":
        opts = {"reduction": red}
        if r.random() < 0.6:
            opts["margin"] = r.choice(["0.0", "0.5", "-1.0", "2.0"])
        call = _call(r, "margin_ranking_loss", "MarginRankingLoss", "a, b, y", opts)
        return (
            head
            + f"a, b = leaf({n}), leaf({n})\ny = torch.randint(0, 2, ({n},)).to(DT) * 2 - 1\n"
            + _finish(r, call, "a, b")
        )
    if which == "hinge":
        opts = {"reduction": red}
        if r.random() < 0.6:
            opts["margin"] = r.choice(["0.0", "0.5", "1.0", "2.0"])
        shape = r.choice([f"({n},)", f"(2, {n})"])
        call = _call(r, "hinge_embedding_loss", "HingeEmbeddingLoss", "x, y", opts)
        return head + f"x = leaf(*{shape})\ny = torch.randint(0, 2, {shape}).to(DT) * 2 - 1\n" + _finish(r, call, "x")
    opts = {"reduction": red}
    call = _call(r, "soft_margin_loss", "SoftMarginLoss", "x, y", opts)
    sc = r.choice(["1.0", "1.0", "1e4"])
    return (
        head
        + f"x = leaf(2, {n}, scale={sc})\ny = torch.randint(0, 2, (2, {n})).to(DT) * 2 - 1\n"
        + _finish(r, call, "x")
    )


def k_multilabel(r: random.Random) -> str:
    head = _head(r)
    N, C = r.randint(0, 3) if r.random() < 0.15 else r.randint(1, 3), r.randint(1, 5)
    red = r.choice(REDUCTIONS)
    if r.random() < 0.5:
        # targets: class indices, the first -1 ends each row's list
        rows = []
        for _ in range(N):
            k = r.randint(0, C)
            row = r.sample(range(C), k) + [-1] * (C - k)
            if r.random() < 0.2 and C > 1:
                row[-1] = r.randrange(C)  # after the -1: ignored
            rows.append(row)
        if r.random() < 0.08 and rows:
            rows[0][0] = C  # out of range
        one = r.random() < 0.15 and N >= 1
        if N == 0 and not one:  # (PyTorch's reduced loss of an empty batch reads uninitialised memory: undefined)
            red = "'none'"
        xs, ts = (f"({C},)", f"{rows[0]}") if one else (f"({N}, {C})", f"{rows}")
        tcall = f"torch.tensor({ts}, dtype=torch.long)" + (f".reshape({N}, {C})" if not one and N == 0 else "")
        call = _call(r, "multilabel_margin_loss", "MultiLabelMarginLoss", "x, y", {"reduction": red})
        return head + f"x = leaf(*{xs})\ny = {tcall}\n" + _finish(r, call, "x")
    opts = {"reduction": red}
    pre = ""
    if r.random() < 0.4:
        pre = f"wt = torch.rand({C}, dtype=DT)\n"
        opts["weight"] = "wt"
    call = _call(r, "multilabel_soft_margin_loss", "MultiLabelSoftMarginLoss", "x, y", opts)
    sc = r.choice(["1.0", "1.0", "1e4"])
    return (
        head
        + f"x = leaf({N}, {C}, scale={sc})\ny = torch.randint(0, 2, ({N}, {C})).to(DT)\n"
        + pre
        + _finish(r, call, "x")
    )


def k_multi_margin(r: random.Random) -> str:
    head = _head(r)
    N, C = r.randint(0, 3) if r.random() < 0.1 else r.randint(1, 4), r.randint(1, 5)
    one = r.random() < 0.15
    xs, ts = (f"({C},)", "()") if one else (f"({N}, {C})", f"({N},)")
    hi = C + 1 if r.random() < 0.07 else C
    opts: dict[str, str] = {"reduction": r.choice(REDUCTIONS)}
    if N == 0 and not one:  # (PyTorch's reduced loss of an empty batch reads uninitialised memory: undefined)
        opts["reduction"] = "'none'"
    if r.random() < 0.5:
        opts["p"] = r.choice(["1", "2", "2", "3"])
    if r.random() < 0.5:
        opts["margin"] = r.choice(["0.0", "0.5", "1.0", "2.5"])
    pre = ""
    leaves = "x"
    if r.random() < 0.4:
        pre = f"wt = torch.rand({C}, dtype=DT) + 0.1\n"
        if r.random() < 0.3:
            pre += "wt.requires_grad_()\n"
            leaves += ", wt"
        opts["weight"] = "wt"
    call = _call(r, "multi_margin_loss", "MultiMarginLoss", "x, y", opts)
    return head + f"x = leaf(*{xs})\ny = torch.randint(0, {hi}, {ts})\n" + pre + _finish(r, call, leaves)


def k_cosine_embedding(r: random.Random) -> str:
    head = _head(r)
    N, D = r.randint(1, 4), r.randint(1, 4)
    one = r.random() < 0.15
    xs, ys = (f"({D},)", "()") if one else (f"({N}, {D})", f"({N},)")
    opts: dict[str, str] = {"reduction": r.choice(REDUCTIONS)}
    if r.random() < 0.5:
        opts["margin"] = r.choice(["0.0", "0.5", "-0.5", "1.0"])
    pre = f"a, b = leaf(*{xs}), leaf(*{xs})\ny = torch.randint(0, 2, {ys}) * 2 - 1\n"
    if r.random() < 0.3:
        pre += "with torch.no_grad():\n    a[..., :] = 0\n" if not one else "with torch.no_grad():\n    a.zero_()\n"
    if r.random() < 0.15:
        pre += "y = y.to(DT)\n"
    call = _call(r, "cosine_embedding_loss", "CosineEmbeddingLoss", "a, b, y", opts)
    return head + pre + _finish(r, call, "a, b")


def k_triplet(r: random.Random) -> str:
    head = _head(r)
    N, D = r.randint(1, 4), r.randint(1, 4)
    one = r.random() < 0.15
    xs = f"({D},)" if one else f"({N}, {D})"
    opts: dict[str, str] = {"reduction": r.choice(REDUCTIONS)}
    if r.random() < 0.5:
        opts["margin"] = r.choice(["0.0", "0.5", "1.0", "3.0"])
    if r.random() < 0.5:
        opts["swap"] = "True"
    pre = f"a, p, n = leaf(*{xs}), leaf(*{xs}), leaf(*{xs})\n"
    if r.random() < 0.25:
        pre += "with torch.no_grad():\n    p.copy_(a)\n"  # a zero distance
    if r.random() < 0.5:
        if r.random() < 0.5:
            opts["p"] = r.choice(["1", "1.5", "2", "3"])
        if r.random() < 0.4:
            opts["eps"] = r.choice(["1e-6", "0.0", "0.1"])
        call = _call(r, "triplet_margin_loss", "TripletMarginLoss", "a, p, n", opts)
    else:
        dist = r.choice(["None", "F.pairwise_distance", "lambda u, v: 1.0 - F.cosine_similarity(u, v)",
                         "nn.PairwiseDistance(p=1)", "lambda u, v: (u - v).abs().sum(-1)"])  # fmt: skip
        opts["distance_function"] = dist
        call = _call(r, "triplet_margin_with_distance_loss", "TripletMarginWithDistanceLoss", "a, p, n", opts)
    return head + pre + _finish(r, call, "a, p, n")


def k_ctc(r: random.Random) -> str:
    head = _head(r)
    Tn, N, C = r.randint(1, 8), r.randint(1, 3), r.randint(2, 5)
    blank = r.choice([0, 0, C - 1])
    labels = [c for c in range(C) if c != blank]
    in_lens = [r.randint(0 if r.random() < 0.1 else 1, Tn) for _ in range(N)]
    tg_lens = [r.randint(0, min(Tn + 1, 4)) for _ in range(N)]
    seqs = [[r.choice(labels) for _ in range(k)] for k in tg_lens]
    if r.random() < 0.15:
        seqs = [[blank] * k for k in tg_lens]  # the blank inside a target
    layout = r.choice(["padded", "concat", "padded", "lists", "unbatched"])
    S = max(tg_lens) if tg_lens else 0
    if layout == "unbatched":
        zs = f"({Tn}, {C})"
        tg = f"torch.tensor({seqs[0]}, dtype=torch.long)"
        il, tl = f"torch.tensor({in_lens[0]})", f"torch.tensor({tg_lens[0]})"
    else:
        zs = f"({Tn}, {N}, {C})"
        if layout == "concat":
            tg = f"torch.tensor({sum(seqs, [])}, dtype=torch.long)"
        else:
            tg = f"torch.tensor({[s + [blank] * (S - len(s)) for s in seqs]}, dtype=torch.long).reshape({N}, {S})"
        il, tl = f"torch.tensor({in_lens})", f"torch.tensor({tg_lens})"
        if layout == "lists":
            il, tl = f"{in_lens}", f"{tg_lens}"
            if r.random() < 0.5:
                il, tl = f"tuple({in_lens})", f"tuple({tg_lens})"
    opts = {"blank": str(blank), "reduction": r.choice(REDUCTIONS), "zero_infinity": str(r.random() < 0.5)}
    if r.random() < 0.15:
        opts["blank"] = str(C)  # out of range
    call = _call(r, "ctc_loss", "CTCLoss", "lp, tg, il, tl", opts)
    return (
        head
        + f"z = leaf(*{zs})\nlp = z.log_softmax(-1)\n"
        + f"tg, il, tl = {tg}, {il}, {tl}\n"
        + f"T(lambda: BW({call}, z))\n"
    )


# -- mistakes ---------------------------------------------------------------------------------------


def k_mistakes(r: random.Random) -> str:
    head = _head(r)
    calls = [
        "F.cross_entropy(torch.randn(3, 4, dtype=DT), torch.tensor([0, 1, 4]))",
        "F.cross_entropy(torch.randn(3, 4, dtype=DT), torch.tensor([0, 1, -2]))",
        "F.cross_entropy(torch.randn(3, 4, dtype=DT), torch.tensor([0, 1]))",
        "F.cross_entropy(torch.randn(3, 4, dtype=DT), torch.tensor([0., 1., 2.]))",
        "F.cross_entropy(torch.randn(3, 4, dtype=DT), torch.tensor([0, 1, 2], dtype=torch.int32))",
        "F.cross_entropy(torch.randn(3, 4, dtype=DT), torch.randn(3, 5, dtype=DT).softmax(1))",
        "F.cross_entropy(torch.randn(3, 4, dtype=DT), torch.tensor([0, 1, 2]), weight=torch.ones(3, dtype=DT))",
        "F.cross_entropy(torch.randn(3, 4, dtype=DT), torch.tensor([0, 1, 2]), label_smoothing=1.5)",
        "F.cross_entropy(torch.randn(3, 4, dtype=DT), torch.tensor([0, 1, 2]), reduction='avg')",
        "F.cross_entropy(torch.randn(2, 3, 4, dtype=DT), torch.tensor([0, 1]))",
        "F.cross_entropy(torch.randn(3, 4, dtype=DT), torch.tensor([[0], [1], [2]]))",
        "F.nll_loss(torch.randn(3, 4, dtype=DT), torch.tensor([0, 1, 5]))",
        "F.nll_loss(torch.randn(3, 4, dtype=DT), torch.tensor([0, 1, 2]), weight=torch.ones(4, 1, dtype=DT))",
        "F.nll_loss(torch.randn(3, 4, dtype=DT), torch.tensor([0., 1., 2.]))",
        "F.nll_loss(torch.randn(3, dtype=DT), torch.tensor([0, 1, 2]))",
        "F.nll_loss(torch.randn(3, 4, dtype=DT), torch.tensor([0, 1, 2], dtype=torch.uint8))",
        "F.binary_cross_entropy(torch.rand(3, dtype=DT), torch.rand(4, dtype=DT))",
        "F.binary_cross_entropy(torch.rand(3, dtype=DT) * 2, torch.rand(3, dtype=DT))",
        "F.binary_cross_entropy(torch.rand(3, dtype=DT), torch.rand(3, dtype=DT), weight=torch.rand(2, dtype=DT))",
        "F.binary_cross_entropy_with_logits(torch.randn(3, dtype=DT), torch.rand(4, dtype=DT))",
        "F.binary_cross_entropy_with_logits(torch.randn(2, 3, dtype=DT), torch.rand(2, 3, dtype=DT), pos_weight=torch.rand(2, dtype=DT))",
        "F.binary_cross_entropy_with_logits(torch.randn(3, dtype=DT), torch.tensor([0, 1, 1]))",
        "F.kl_div(torch.randn(3, dtype=DT), torch.rand(4, dtype=DT))",
        "F.mse_loss(torch.randn(3, dtype=DT), torch.randn(4, dtype=DT))",
        "F.mse_loss(torch.randn(3, dtype=DT), torch.tensor([1, 2, 3]))",
        "F.l1_loss(torch.randn(3, dtype=DT), torch.randn(3, dtype=torch.float16))",
        "F.l1_loss(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]))",
        "F.huber_loss(torch.randn(3, dtype=DT), torch.randn(3, dtype=DT), delta=0.0)",
        "F.huber_loss(torch.randn(3, dtype=DT), torch.randn(3, dtype=DT), delta=-1.0)",
        "F.smooth_l1_loss(torch.randn(3, dtype=DT), torch.randn(3, dtype=DT), beta=-1.0)",
        "F.gaussian_nll_loss(torch.randn(2, 3, dtype=DT), torch.randn(2, 3, dtype=DT), torch.rand(3, 3, dtype=DT))",
        "F.gaussian_nll_loss(torch.randn(2, 3, dtype=DT), torch.randn(2, 3, dtype=DT), -torch.rand(2, 3, dtype=DT))",
        "F.poisson_nll_loss(torch.randn(3, dtype=DT), torch.randn(4, dtype=DT))",
        "F.margin_ranking_loss(torch.randn(3, dtype=DT), torch.randn(4, dtype=DT), torch.ones(3, dtype=DT))",
        "F.margin_ranking_loss(torch.randn(3, dtype=DT), torch.randn(3, dtype=DT), torch.ones(3, dtype=torch.long))",
        "F.hinge_embedding_loss(torch.randn(3, dtype=DT), torch.ones(4, dtype=DT))",
        "F.soft_margin_loss(torch.randn(3, dtype=DT), torch.ones(4, dtype=DT))",
        "F.multilabel_margin_loss(torch.randn(2, 3, dtype=DT), torch.tensor([[0, 1, 3], [0, -1, 0]]))",
        "F.multilabel_margin_loss(torch.randn(2, 3, dtype=DT), torch.tensor([[0, 1], [0, -1]]))",
        "F.multilabel_soft_margin_loss(torch.randn(2, 3, dtype=DT), torch.ones(2, 4, dtype=DT))",
        "F.multi_margin_loss(torch.randn(2, 3, dtype=DT), torch.tensor([0, 3]))",
        "F.multi_margin_loss(torch.randn(2, 3, dtype=DT), torch.tensor([0, 1]), p=3)",
        "F.multi_margin_loss(torch.randn(2, 3, dtype=DT), torch.tensor([0, 1]), weight=torch.ones(2, dtype=DT))",
        "F.multi_margin_loss(torch.randn(2, 3, dtype=DT), torch.tensor([0, 1, 2]))",
        "F.cosine_embedding_loss(torch.randn(2, 3, dtype=DT), torch.randn(2, 4, dtype=DT), torch.ones(2))",
        "F.cosine_embedding_loss(torch.randn(2, 3, dtype=DT), torch.randn(2, 3, dtype=DT), torch.ones(3))",
        "F.cosine_embedding_loss(torch.randn(2, 3, 4, dtype=DT), torch.randn(2, 3, 4, dtype=DT), torch.ones(2, 3))",
        "F.triplet_margin_loss(torch.randn(2, 3, dtype=DT), torch.randn(2, 3, dtype=DT), torch.randn(2, 4, dtype=DT))",
        "F.triplet_margin_loss(torch.randn(2, 3, dtype=DT), torch.randn(2, 3, dtype=DT), torch.randn(3, dtype=DT))",
        "F.triplet_margin_loss(torch.randn(2, 3, dtype=DT), torch.randn(2, 3, dtype=DT), torch.randn(2, 3, dtype=DT), margin=0.0, p=0)",
        "F.triplet_margin_with_distance_loss(torch.randn(2, 3, dtype=DT), torch.randn(2, 3, dtype=DT), torch.randn(2, 3, dtype=DT), margin=-1.0)",
        "F.ctc_loss(torch.randn(4, 2, 3, dtype=DT).log_softmax(-1), torch.tensor([[1, 2], [1, 1]]), torch.tensor([4, 5]), torch.tensor([2, 2]))",
        "F.ctc_loss(torch.randn(4, 2, 3, dtype=DT).log_softmax(-1), torch.tensor([[1, 2], [1, 1]]), torch.tensor([4, 4]), torch.tensor([2, 3]))",
        "F.ctc_loss(torch.randn(4, 2, 3, dtype=DT).log_softmax(-1), torch.tensor([[1, 2], [1, 1]]), torch.tensor([4]), torch.tensor([2, 2]))",
        "F.ctc_loss(torch.randn(4, 2, 3, dtype=DT).log_softmax(-1), torch.tensor([[1, 2], [1, 1]]).float(), torch.tensor([4, 4]), torch.tensor([2, 2]))",
        "F.ctc_loss(torch.randn(4, 2, 3, dtype=DT).log_softmax(-1), torch.tensor([[1, 2], [1, 1]]), torch.tensor([4, 4]), torch.tensor([2, 2]), blank=3)",
        "F.ctc_loss(torch.randn(4, 2, 3, dtype=DT).log_softmax(-1), torch.tensor([[1, 2], [1, 1]]), torch.tensor([4, 4]), torch.tensor([2, 2]), reduction='avg')",
        "F.softmax(torch.randn(2, 3, dtype=DT), dim=2)",
        "F.log_softmax(torch.randn(2, 3, dtype=DT), dim=1, dtype=torch.long)",
        "torch.logsumexp(torch.randn(2, 3, dtype=DT), dim=3)",
        "F.layer_norm(torch.randn(2, 3, dtype=DT), (2,))",
        "F.layer_norm(torch.randn(2, 3, dtype=DT), (3,), weight=torch.ones(2, dtype=DT))",
        "F.group_norm(torch.randn(2, 6, dtype=DT), 4)",
        "F.group_norm(torch.randn(2, 6, dtype=DT), 3, weight=torch.ones(3, dtype=DT))",
        "F.batch_norm(torch.randn(1, 3, dtype=DT), None, None, training=True)",
        "F.batch_norm(torch.randn(2, 3, dtype=DT), torch.zeros(2, dtype=DT), torch.ones(2, dtype=DT))",
        "F.batch_norm(torch.randn(2, 3, dtype=DT), None, None, training=False)",
        "nn.BatchNorm1d(3, dtype=DT)(torch.randn(2, 4, dtype=DT))",
        "nn.BatchNorm2d(3, dtype=DT)(torch.randn(2, 3, dtype=DT))",
    ]  # fmt: skip
    picks = r.sample(calls, 3)
    return head + "".join(f"T(lambda: {c})\n" for c in picks)


# -- normalisations ------------------------------------------------------------------------------


def k_softmax(r: random.Random) -> str:
    head = _head(r, half=r.random() < 0.2)
    shape = r.choice([(3,), (2, 4), (2, 3, 2), (0, 3), ()])
    dims = [d for d in range(-len(shape), len(shape))] or [0, -1]
    dim = r.choice(dims)
    fn = r.choice(["F.softmax", "F.log_softmax", "F.softmin", "torch.softmax", "torch.log_softmax",
                   "x_softmax", "torch.logsumexp", "torch.special.logsumexp", "x_logsumexp",
                   "nn.Softmax", "nn.LogSoftmax", "nn.Softmin"])  # fmt: skip
    ext = r.choice(["none", "inf_row", "inf_some", "big", "posinf", "nan"])
    pre = f"x = torch.randn{shape if shape else '(())'}.to(DT)\n"
    if ext == "inf_row" and shape:
        pre += f"x = x.index_fill({dim}, torch.tensor([0]), float('-inf'))\n"
    elif ext == "inf_some":
        pre += "x = x.masked_fill(torch.rand(x.shape) > 0.5, float('-inf'))\n"
    elif ext == "big":
        pre += "x = x * 1e4\n"
    elif ext == "posinf":
        pre += "x = x.masked_fill(torch.rand(x.shape) > 0.7, float('inf'))\n"
    elif ext == "nan":
        pre += "x = x.masked_fill(torch.rand(x.shape) > 0.8, float('nan'))\n"
    pre += "x.requires_grad_()\n"
    dt = r.choice(["", "", ", dtype=torch.float64", ", dtype=torch.float32", ", dtype=torch.float16"])
    if "logsumexp" in fn:
        kd = r.choice(["", ", keepdim=True"])
        d = r.choice([str(dim), f"({dim},)", "()" if shape else str(dim), "[0, -1]" if len(shape) > 1 else str(dim)])
        call = f"x.logsumexp({d}{kd})" if fn == "x_logsumexp" else f"{fn}(x, {d}{kd})"
    elif fn == "x_softmax":
        call = f"x.softmax({dim}{dt})"
    elif fn.startswith("nn."):
        call = f"{fn}(dim={dim})(x)"
    else:
        call = f"{fn}(x, dim={dim}{dt})"
    return head + pre + _finish(r, call, "x")


def k_norm(r: random.Random) -> str:
    head = _head(r)
    which = r.choice(["layer", "group", "batch", "batch", "module_batch", "instance"])
    N, C = r.randint(1, 3), r.choice([2, 4, 6])
    L = r.randint(1, 3)
    const = r.random() < 0.35
    pre = f"x = leaf({N}, {C}, {L})\n"
    if const:
        pre += (
            "with torch.no_grad():\n    x[0] = 1.5\n"
            if r.random() < 0.5
            else "x = (x.detach() * 0 + 2.0).requires_grad_()\n"
        )
    if which == "layer":
        ns = r.choice([f"({L},)", f"({C}, {L})", f"[{L}]"])
        aff = r.random() < 0.6
        eps = r.choice(["", ", eps=1e-5", ", eps=0.0", ", eps=1.0"])
        if aff:
            pre += f"w, b = leaf(*{ns}), leaf(*{ns})\n"
            call = f"F.layer_norm(x, {ns}, w, b{eps})" if r.random() < 0.5 else None
            if call is None:
                return (
                    head + pre + f"m = nn.LayerNorm({ns}, dtype=DT{eps})\n" + _finish(r, "m(x)", "x, m.weight, m.bias")
                )
            return head + pre + _finish(r, call, "x, w, b")
        return head + pre + _finish(r, f"F.layer_norm(x, {ns}{eps})", "x")
    if which == "group":
        g = r.choice([d for d in (1, 2, 3, 6) if C % d == 0])
        eps = r.choice(["", ", eps=1e-5", ", eps=0.0"])
        if r.random() < 0.5:
            pre += f"w, b = leaf({C}), leaf({C})\n"
            if r.random() < 0.5:
                return head + pre + _finish(r, f"F.group_norm(x, {g}, w, b{eps})", "x, w, b")
            return (
                head + pre + f"m = nn.GroupNorm({g}, {C}, dtype=DT{eps})\n" + _finish(r, "m(x)", "x, m.weight, m.bias")
            )
        return head + pre + _finish(r, f"F.group_norm(x, {g}{eps})", "x")
    if which == "instance":
        mod = f"nn.InstanceNorm1d({C}, affine={r.random() < 0.5}, track_running_stats={r.random() < 0.5}, dtype=DT)"
        train = r.random() < 0.6
        return (
            head
            + pre
            + f"m = {mod}\n{'' if train else 'm.eval()'}\nT(lambda: BW(m(x), x))\nR(m.running_mean, m.running_var)\n"
        )
    if which == "batch":
        training = r.random() < 0.6
        mom = r.choice(["0.1", "None", "0.5", "0.0", "1.0"])
        stats = r.random() < 0.75
        pre += (
            f"rm, rv = torch.randn({C}, dtype=DT), torch.rand({C}, dtype=DT) + 0.5\n" if stats else "rm = rv = None\n"
        )
        aff = r.random() < 0.5
        if aff:
            pre += f"w, b = leaf({C}), leaf({C})\n"
        args = "x, rm, rv" + (", w, b" if aff else "")
        call = f"F.batch_norm({args}, training={training}, momentum={mom}, eps={r.choice(['1e-5', '0.0', '0.1'])})"
        return head + pre + _finish(r, call, "x, w, b" if aff else "x") + "R(rm, rv)\n"
    dims = r.choice([1, 2])
    xs = f"({N}, {C}, {L})" if dims == 1 else f"({N}, {C}, {L}, 2)"
    if dims == 1 and r.random() < 0.3:
        xs = f"({N}, {C})"
    opts = [f"{C}", "dtype=DT"]
    if r.random() < 0.4:
        opts.append(f"momentum={r.choice(['None', '0.3', '1.0'])}")
    if r.random() < 0.35:
        opts.append("track_running_stats=False")
    if r.random() < 0.3:
        opts.append("affine=False")
    mode = r.choice(["train", "train", "eval", "train_then_eval"])
    body = f"m = nn.BatchNorm{dims}d({', '.join(opts)})\nx = leaf(*{xs})\n"
    if const:
        body += "with torch.no_grad():\n    x[:, 0] = 3.0\n"
    if mode == "eval":
        body += "m.eval()\n"
    if mode == "train_then_eval":
        body += "with torch.no_grad():\n    m(x * 2 + 1)\n    m(x)\nm.eval()\n"
    body += "T(lambda: BW(m(x), x))\nT(lambda: BW(m(x.detach().requires_grad_()), m.weight) if m.weight is not None else None)\n"
    body += "R(m.running_mean, m.running_var, m.num_batches_tracked)\n"
    return head + body


KINDS: dict[str, Callable[[random.Random], str]] = {
    "cross_entropy": k_cross_entropy, "nll": k_nll, "bce": k_bce, "kl_div": k_kl_div, "poisson": k_poisson,
    "gaussian": k_gaussian, "regression": k_regression, "margin_pairs": k_margin_pairs, "multilabel": k_multilabel,
    "multi_margin": k_multi_margin, "cosine_embedding": k_cosine_embedding, "triplet": k_triplet, "ctc": k_ctc,
    "mistakes": k_mistakes, "softmax": k_softmax, "norm": k_norm, "cross_entropy2": k_cross_entropy,
}  # fmt: skip


def program(seed: int) -> str:
    return program_of(KINDS, seed)


def _difference(src: str, torch: Any) -> tuple[str, str] | None:
    return difference(src, torch, float32_alike)


def failures(seeds: range, torch: Any) -> list[tuple]:
    return generated_failures(KINDS, seeds, torch, _difference, HELPERS)


# -- the tests ------------------------------------------------------------------------------------

FAST_SEEDS = range(0, 150)
SLOW_SEEDS = range(150, 3150)

# (the reasons of the known differences, each shared by the seeds it explains)
_SM16 = (
    ROUNDING + "float16 rounding: the second derivative of a softmax-like op with dtype=torch.float16 on a float64 "
    "input (create_graph=True); PyTorch's double backward computes in float16 operations, each rounded, "
    "and differs by one unit in float16's last place (no float16 tolerance for a float64 record)"
)
_MM2 = (
    "PyTorch has no second derivative of multi_margin_loss (differentiating its gradient raises); this "
    "library's is the true one, kept on purpose (tests/functional/test_nn_losses_extra.py checks it "
    "against finite differences)"
)
_ML2 = (
    "PyTorch has no second derivative of multilabel_margin_loss (differentiating its gradient raises); "
    "this library's is the true one, kept on purpose (tests/functional/test_nn_losses_extra.py checks it "
    "against finite differences)"
)
_COS = (
    ROUNDING + "float64 rounding: cosine_embedding_loss's second derivative at a zero vector is a difference of "
    "terms near 1e11 (the first derivative there divides by sqrt(eps)); both libraries' values carry "
    "about 1e-4 of rounding"
)
_NOISE = (
    ROUNDING + "float32 rounding: a norm over groups or rows of one element, whose gradient is 0; PyTorch's fused "
    "kernel leaves up to 3e-5 of noise there"
)
_GN0 = (
    "group_norm with eps=0 over a constant group (1 / std infinite): PyTorch's fused weight gradient is "
    "+-inf for some channels; ours NaN for all (0 * inf summed in another order)"
)

#: Differences known and not yet fixed, by seed: each must still differ (a fixed one is taken off).
KNOWN: dict[int, str] = {
    **dict.fromkeys([1136, 3074], _SM16),
    **dict.fromkeys([
        77, 94, 230, 332, 366, 434, 451, 468, 570, 655, 842, 876, 1284, 1335, 1386, 1709, 1879, 2185, 2253, 2321,
        2423, 2525, 2797, 2865, 2950, 3052, 3120, 3137
    ], _MM2),
    **dict.fromkeys([93, 127, 535, 569, 875, 1113, 1453, 1538, 1606, 1827, 1895, 2507, 3136], _ML2),
    **dict.fromkeys([469, 1098, 1149, 1421, 1540, 2628, 2696, 2917, 3036], _COS),
    **dict.fromkeys([542, 1681, 2667], _NOISE),
    **dict.fromkeys([814], _GN0),
}  # fmt: skip


test_loss_programs_run_as_in_torch, test_more_loss_programs_run_as_in_torch = seed_tests(
    failures, KNOWN, FAST_SEEDS, SLOW_SEEDS, 50, 250
)


def test_programs_differ_with_the_seed() -> None:
    assert len({program(s) for s in range(60)}) == 60


if __name__ == "__main__":
    report(failures, KINDS, sys.argv)
