"""``torch.nn.functional``'s options in random combinations, drawn from a seed and run with
``torch`` bound to PyTorch and to tinygrad_attn (tests/differential.py): each program calls one
op with a draw of every option its PyTorch signature takes (convolutions and their transposes
with strides, paddings as ints, tuples, ``'same'`` and ``'valid'``, dilations, groups, output
paddings and no bias; the max, average and power pools with ``ceil_mode``, ``return_indices``,
``count_include_pad`` and ``divisor_override``; adaptive pools with ``None`` in the output size;
``max_unpool``; fractional pools with ``_random_samples``; ``interpolate`` in every mode, by size
or by scale, ``align_corners``, ``recompute_scale_factor``, ``antialias``; ``grid_sample`` and
``affine_grid``; ``pad`` in every mode with negative pads; ``fold``/``unfold``; pixel shuffles;
embeddings and bags; the normalisations with running statistics; ``one_hot``; distances; CTC and
the margin, ranking and likelihood losses) on small shapes (no batch axis, axes of size 1 and 0)
in float32 or float64. It records the value (dtype, shape, values) or the exception's class,
then the gradients of ``(out * w).sum()`` (``w`` fixed and random) with respect to every float
input.

Run as a script over many seeds (prints each differing program and the counts per kind)::

    PYTHONPATH=.:tests python tests/functional/test_functional_options_torch.py 0 2000
"""

from __future__ import annotations

import random
import sys
from typing import Any

from differential import (
    PRELUDE,
    ROUNDING,
    float32_difference,
    generated_failures,
    program_of,
    report,
    seed_tests,
)

#: ``T`` records a value or the exception; ``BW(out, *leaves)`` records ``out`` (each tensor of a
#: tuple) and the gradients of the leaves of ``(out * w).sum()`` over its float tensors, ``w`` a
#: fixed random weighting; ``leaf(*shape)`` is a random float input that requires its gradient.
HELPERS = (
    PRELUDE
    + """
def _w(t):
    return torch.tensor(np.random.default_rng(t.numel()).standard_normal(tuple(t.shape)), dtype=t.dtype)

def BW(out, *leaves):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    R(*outs)
    fl = [o for o in outs if o.dtype.is_floating_point and o.requires_grad]
    if fl:
        loss = sum((o * _w(o)).sum() for o in fl)
        gs = torch.autograd.grad(loss, leaves, allow_unused=True)
        R([None if g is None else g + 0 for g in gs])

def leaf(*shape, scale=1.0):
    return (torch.randn(shape, dtype=DT) * scale).requires_grad_()
"""
)


def _head(r: random.Random) -> str:
    return f"torch.manual_seed({r.randrange(1000)})\nDT = {r.choice(['torch.float32', 'torch.float64'])}\n"


def _tup(r: random.Random, d: int, lo: int, hi: int) -> str:
    """An int, or a tuple of ``d`` ints (sometimes a list), each in ``lo..hi``."""
    if r.random() < 0.5:
        return str(r.randint(lo, hi))
    vals = [r.randint(lo, hi) for _ in range(d)]
    return str(vals) if r.random() < 0.2 else str(tuple(vals))


def _opts(opts: dict[str, str]) -> str:
    return "".join(f", {k}={v}" for k, v in opts.items())


def _batch(r: random.Random, d: int) -> list[int]:
    """Leading axes: none (a batch-less input) or a batch of 0 to 3 (0 rarely)."""
    if r.random() < 0.2:
        return []
    return [0 if r.random() < 0.05 else r.randint(1, 3)]


def _spatial(r: random.Random, d: int, lo: int = 1, hi: int = 6) -> list[int]:
    return [0 if r.random() < 0.03 else r.randint(lo, hi) for _ in range(d)]


def _shape(dims: list[int]) -> str:
    return ", ".join(map(str, dims))


# -- convolutions ----------------------------------------------------------------------------------


def k_conv(r: random.Random) -> str:
    d = r.randint(1, 3)
    transposed = r.random() < 0.45
    g = r.choice([1, 1, 2, 3])
    cin, cout = g * r.randint(1, 2), g * r.randint(1, 2)
    ks = [r.randint(1, 3) for _ in range(d)]
    b = _batch(r, d)
    x = f"leaf({_shape([*b, cin, *_spatial(r, d, 1, 5)])})"
    w = f"leaf({_shape([cin, cout // g, *ks] if transposed else [cout, cin // g, *ks])})"
    bias = "None" if r.random() < 0.3 else f"leaf({cout})"
    opts: dict[str, str] = {}
    if r.random() < 0.7:
        opts["stride"] = _tup(r, d, 1, 3)
    if r.random() < 0.7:
        if not transposed and r.random() < 0.35:
            opts["padding"] = r.choice(["'same'", "'valid'"])
        else:
            opts["padding"] = _tup(r, d, 0, 2)
    if transposed and r.random() < 0.5:
        opts["output_padding"] = _tup(r, d, 0, 2)
    if r.random() < 0.5:
        opts["dilation"] = _tup(r, d, 1, 2)
    if g > 1 or r.random() < 0.1:
        opts["groups"] = str(g)
    fn = f"conv_transpose{d}d" if transposed else f"conv{d}d"
    return (
        _head(r)
        + f"x = {x}\nw = {w}\nb = {bias}\nT(lambda: BW(F.{fn}(x, w, b{_opts(opts)}), x, w, *([b] if b is not None else [])))\n"
    )


# -- pools -----------------------------------------------------------------------------------------


def k_max_pool(r: random.Random) -> str:
    d = r.randint(1, 3)
    b = _batch(r, d)
    x = f"leaf({_shape([*b, r.randint(1, 2), *_spatial(r, d, 1, 7)])})"
    opts = {"kernel_size": _tup(r, d, 1, 3)}
    if r.random() < 0.6:
        opts["stride"] = r.choice(["None", _tup(r, d, 1, 3)])
    if r.random() < 0.5:
        opts["padding"] = _tup(r, d, 0, 1)
    if r.random() < 0.5:
        opts["dilation"] = _tup(r, d, 1, 2)
    if r.random() < 0.5:
        opts["ceil_mode"] = r.choice(["True", "False"])
    if r.random() < 0.5:
        opts["return_indices"] = r.choice(["True", "False"])
    # (integer inputs draw ties, where the index kept is part of the answer)
    src = f"x = {x}\n"
    if r.random() < 0.25:
        src += "x = torch.randint(0, 3, x.shape).to(DT).requires_grad_()\n"
    return _head(r) + src + f"T(lambda: BW(F.max_pool{d}d(x{_opts(opts)}), x))\n"


def k_avg_pool(r: random.Random) -> str:
    d = r.randint(1, 3)
    b = _batch(r, d)
    x = f"leaf({_shape([*b, r.randint(1, 2), *_spatial(r, d, 1, 7)])})"
    opts = {"kernel_size": _tup(r, d, 1, 3)}
    if r.random() < 0.6:
        opts["stride"] = r.choice(["None", _tup(r, d, 1, 3)])
    if r.random() < 0.5:
        opts["padding"] = _tup(r, d, 0, 1)
    if r.random() < 0.5:
        opts["ceil_mode"] = r.choice(["True", "False"])
    if r.random() < 0.5:
        opts["count_include_pad"] = r.choice(["True", "False"])
    if d > 1 and r.random() < 0.4:
        opts["divisor_override"] = r.choice(["None", "1", "3", "0"])
    return _head(r) + f"x = {x}\nT(lambda: BW(F.avg_pool{d}d(x{_opts(opts)}), x))\n"


def k_lp_pool(r: random.Random) -> str:
    d = r.randint(1, 3)
    b = _batch(r, d)
    x = f"leaf({_shape([*b, r.randint(1, 2), *_spatial(r, d, 1, 6)])})"
    opts = {"norm_type": r.choice(["1", "2", "2.0", "3"]), "kernel_size": _tup(r, d, 1, 3)}
    if r.random() < 0.6:
        opts["stride"] = r.choice(["None", _tup(r, d, 1, 3)])
    if r.random() < 0.5:
        opts["ceil_mode"] = r.choice(["True", "False"])
    src = f"x = {x}\n" + ("x = (x.detach().abs() + 0.5).requires_grad_()\n" if r.random() < 0.7 else "")
    return _head(r) + src + f"T(lambda: BW(F.lp_pool{d}d(x{_opts(opts)}), x))\n"


def k_adaptive_pool(r: random.Random) -> str:
    d = r.randint(1, 3)
    b = _batch(r, d)
    x = f"leaf({_shape([*b, r.randint(1, 2), *_spatial(r, d, 1, 7)])})"
    sizes = [r.choice(["None", str(r.randint(1, 5))]) if d > 1 else str(r.randint(0 if r.random() < 0.05 else 1, 5))
             for _ in range(d)]  # fmt: skip
    out = sizes[0] if d == 1 and r.random() < 0.5 else f"({', '.join(sizes)}{',' if d == 1 else ''})"
    if r.random() < 0.5:
        opts = {"return_indices": r.choice(["True", "False"])} if r.random() < 0.6 else {}
        call = f"F.adaptive_max_pool{d}d(x, {out}{_opts(opts)})"
    else:
        call = f"F.adaptive_avg_pool{d}d(x, {out})"
    return _head(r) + f"x = {x}\nT(lambda: BW({call}, x))\n"


def k_max_unpool(r: random.Random) -> str:
    d = r.randint(1, 3)
    b = _batch(r, d)
    k = _tup(r, d, 1, 3)
    stride = r.choice(["None", _tup(r, d, 1, 3)])
    pad = r.choice(["0", _tup(r, d, 0, 1)])
    x = f"leaf({_shape([*b, r.randint(1, 2), *_spatial(r, d, 2, 6)])})"
    opts = {"kernel_size": k, "stride": stride, "padding": pad}
    src = f"x = {x}\np, i = F.max_pool{d}d(x, {k}, {stride}, {pad}, return_indices=True)\nR(p, i)\n"
    src += "v = p.detach().requires_grad_()\n"
    if r.random() < 0.3:
        extra = r.randint(0, 2)
        src += f"osz = [s + {extra} for s in x.shape[-{d}:]]\n"
        opts["output_size"] = "osz"
    return _head(r) + src + f"T(lambda: BW(F.max_unpool{d}d(v, i{_opts(opts)}), v))\n"


def k_fractional(r: random.Random) -> str:
    d = r.randint(2, 3)
    b = _batch(r, d)
    c = r.randint(1, 2)
    sp = _spatial(r, d, 3, 7)
    x = f"leaf({_shape([*b, c, *sp])})"
    k = _tup(r, d, 1, 2)
    opts: dict[str, str] = {}
    if r.random() < 0.5:
        opts["output_size"] = _tup(r, d, 1, 3)
    else:
        opts["output_ratio"] = r.choice(["0.5", "(0.5, 0.7)" if d == 2 else "(0.5, 0.6, 0.7)", "0.75"])
    if r.random() < 0.5:
        opts["return_indices"] = r.choice(["True", "False"])
    n = b[0] if b else 1
    samples = f"torch.rand({n}, {c}, {d}, dtype=DT)"
    return (
        _head(r)
        + f"x = {x}\ns = {samples}\nT(lambda: BW(F.fractional_max_pool{d}d(x, {k}{_opts(opts)}, _random_samples=s), x))\n"
    )


# -- resampling ------------------------------------------------------------------------------------

_MODES = {1: ["nearest", "nearest-exact", "linear", "area"], 2: ["nearest", "nearest-exact", "bilinear",
          "bicubic", "area"], 3: ["nearest", "nearest-exact", "trilinear", "area"]}  # fmt: skip


def k_interpolate(r: random.Random) -> str:
    d = r.randint(1, 3)
    mode = r.choice(_MODES[d] + (["bilinear"] if r.random() < 0.05 else []))
    b = [r.randint(1, 2)]
    x = f"leaf({_shape([*b, r.randint(1, 2), *_spatial(r, d, 1, 5)])})"
    opts: dict[str, str] = {}
    if r.random() < 0.5:
        opts["size"] = _tup(r, d, 1, 7) if r.random() < 0.9 else "None"
    else:
        s = [r.choice(["0.5", "1.5", "2", "2.0", "0.7", "3.3", "1"]) for _ in range(d)]
        opts["scale_factor"] = s[0] if r.random() < 0.5 else f"({', '.join(s)}{',' if d == 1 else ''})"
        if r.random() < 0.5:
            opts["recompute_scale_factor"] = r.choice(["True", "False", "None"])
    opts["mode"] = repr(mode)
    if r.random() < 0.5:
        opts["align_corners"] = r.choice(["True", "False", "None"])
    if r.random() < 0.3:
        opts["antialias"] = r.choice(["True", "False"])
    fn = "interpolate"
    if r.random() < 0.15:  # the older spellings
        fn = r.choice(["upsample", "upsample_nearest", "upsample_bilinear"])
        if fn != "upsample":
            opts.pop("mode")
            opts.pop("align_corners", None)
            opts.pop("antialias", None)
            opts.pop("recompute_scale_factor", None)
        else:
            opts.pop("antialias", None)
            opts.pop("recompute_scale_factor", None)
    return _head(r) + f"x = {x}\nT(lambda: BW(F.{fn}(x{_opts(opts)}), x))\n"


def k_grid_sample(r: random.Random) -> str:
    d = r.choice([2, 2, 3])
    n = r.randint(1, 2)
    ac = r.choice(["True", "False"])
    src = f"th = leaf({n}, {d}, {d + 1}, scale=0.6)\n"
    out = [r.randint(1, 3) for _ in range(d)]
    src += f"T(lambda: BW(F.affine_grid(th, ({n}, {r.randint(1, 2)}, {_shape(out)}), align_corners={ac}), th))\n"
    x = f"leaf({_shape([n, r.randint(1, 2), *_spatial(r, d, 1, 4)])})"
    mode = r.choice(["'bilinear'", "'nearest'"] + (["'bicubic'"] if d == 2 else []))
    pm = r.choice(["'zeros'", "'border'", "'reflection'"])
    src += f"x = {x}\n"
    if r.random() < 0.5:
        src += f"g = F.affine_grid(th.detach(), ({n}, 1, {_shape(out)}), align_corners={ac}).requires_grad_()\n"
    else:
        src += f"g = leaf({_shape([n, *out, d])}, scale=1.3)\n"
    return (
        _head(r)
        + src
        + f"T(lambda: BW(F.grid_sample(x, g, mode={mode}, padding_mode={pm}, align_corners={ac}), x, g))\n"
    )


def k_pad(r: random.Random) -> str:
    mode = r.choice(["constant", "reflect", "replicate", "circular"])
    nd = r.randint(1, 5)
    sp = [r.randint(1, 4) for _ in range(nd)]
    npads = r.randint(1, min(nd, 3))
    # (PyTorch's circular pad that crops one side reads memory it never wrote: no negative pads there)
    pads = [r.randint(0 if mode == "circular" else -1, 3) for _ in range(2 * npads)]
    opts = {"mode": repr(mode)} if mode != "constant" or r.random() < 0.5 else {}
    if mode == "constant" and r.random() < 0.5:
        opts["value"] = r.choice(["1.5", "0", "-2"])
    return _head(r) + f"x = leaf({_shape(sp)})\nT(lambda: BW(F.pad(x, {tuple(pads)}{_opts(opts)}), x))\n"


def k_fold(r: random.Random) -> str:
    k = _tup(r, 2, 1, 3)
    opts = {}
    for name, lo, hi in (("dilation", 1, 2), ("padding", 0, 1), ("stride", 1, 2)):
        if r.random() < 0.5:
            opts[name] = _tup(r, 2, lo, hi)
    b = _batch(r, 2)
    x = f"leaf({_shape([*b, r.randint(1, 2), *_spatial(r, 2, 1, 5)])})"
    src = f"x = {x}\nT(lambda: BW(F.unfold(x, {k}{_opts(opts)}), x))\n"
    if r.random() < 0.7:
        osz = _tup(r, 2, 2, 5)
        src += f"try:\n    u = F.unfold(x.detach(), {k}{_opts(opts)})\n    u = u.requires_grad_()\nexcept Exception:\n    u = leaf(2, 4, 3)\n"
        src += f"T(lambda: BW(F.fold(u, {osz}, {k}{_opts(opts)}), u))\n"
    return _head(r) + src


def k_pixel(r: random.Random) -> str:
    f = r.randint(1, 3)
    b = [] if r.random() < 0.2 else [r.randint(1, 2)] * r.randint(1, 2)
    if r.random() < 0.5:
        shape = [*b, r.randint(1, 2) * f * f * (1 if r.random() < 0.9 else 2) + (1 if r.random() < 0.1 else 0),
                 r.randint(1, 3), r.randint(1, 3)]  # fmt: skip
        call = f"F.pixel_shuffle(x, {f})"
    else:
        shape = [*b, r.randint(1, 2), r.randint(1, 2) * f + (1 if r.random() < 0.1 else 0), r.randint(1, 2) * f]
        call = f"F.pixel_unshuffle(x, {f})"
    return _head(r) + f"x = leaf({_shape(shape)})\nT(lambda: BW({call}, x))\n"


# -- embeddings ------------------------------------------------------------------------------------


def k_embedding(r: random.Random) -> str:
    n, dim = r.randint(2, 6), r.randint(1, 4)
    idx = f"torch.randint(0, {n}, ({_shape([r.randint(0 if r.random() < 0.1 else 1, 3) for _ in range(r.randint(1, 2))])},))"
    opts: dict[str, str] = {}
    if r.random() < 0.4:
        opts["padding_idx"] = str(r.choice([0, 1, -1, n - 1]))
    if r.random() < 0.4:
        opts["max_norm"] = r.choice(["0.5", "1.0", "2.0"])
        if r.random() < 0.5:
            opts["norm_type"] = r.choice(["1.0", "2.0", "3.0"])
    if r.random() < 0.3:
        opts["scale_grad_by_freq"] = r.choice(["True", "False"])
    if r.random() < 0.2:
        opts["sparse"] = "False"
    src = f"w = leaf({n}, {dim})\ni = {idx}\n"
    # (max_norm renormalises the weight's rows in place: the leaf is cloned first and the weight recorded)
    src += f"ww = w.clone() if {'max_norm' in opts} else w\nT(lambda: BW(F.embedding(i, ww{_opts(opts)}), w))\nR(ww.detach())\n"
    return _head(r) + src


def k_embedding_bag(r: random.Random) -> str:
    n, dim = r.randint(2, 6), r.randint(1, 4)
    mode = r.choice(["'sum'", "'mean'", "'max'"])
    opts: dict[str, str] = {"mode": mode}
    two_d = r.random() < 0.35
    if two_d:
        src = f"i = torch.randint(0, {n}, ({r.randint(1, 3)}, {r.randint(1, 3)}))\noff = None\n"
    else:
        m = r.randint(0, 6)
        cuts = sorted(r.randint(0, m) for _ in range(r.randint(1, 3)))
        cuts[0] = 0 if r.random() < 0.95 else cuts[0]
        if r.random() < 0.4:
            opts["include_last_offset"] = r.choice(["True", "False"])
            if len(cuts) < 2:  # (PyTorch's kernel divides by zero on no bags: SIGFPE)
                cuts.append(m)
        src = f"i = torch.randint(0, {n}, ({m},))\noff = torch.tensor({cuts})\n"
    if r.random() < 0.3:
        opts["padding_idx"] = str(r.choice([0, 1, -1]))
    if r.random() < 0.3:
        opts["max_norm"] = r.choice(["0.5", "1.5"])
        if r.random() < 0.5:
            opts["norm_type"] = r.choice(["1.0", "3.0"])
    if r.random() < 0.2:
        opts["scale_grad_by_freq"] = r.choice(["True", "False"])
        if opts.get("include_last_offset") == "True" and cuts[-1] != m:
            # (PyTorch's gradient then leaves the rows of the ids past the last offset unwritten)
            src = src.replace("])\n", f", {m}])\n")
    psw = r.random() < 0.35
    src += f"w = leaf({n}, {dim})\nww = w.clone() if {'max_norm' in opts} else w\n"
    src += "p = leaf(*i.shape)\n" if psw else "p = None\n"
    leaves = "w" + (", p" if psw else "")
    return (
        _head(r)
        + src
        + f"T(lambda: BW(F.embedding_bag(i, ww, off, per_sample_weights=p{_opts(opts)}), {leaves}))\nR(ww.detach())\n"
    )


def k_one_hot(r: random.Random) -> str:
    n = r.randint(1, 5)
    shape = [r.randint(0 if r.random() < 0.1 else 1, 3) for _ in range(r.randint(0, 2))]
    hi = n + (1 if r.random() < 0.1 else 0)
    lo = -1 if r.random() < 0.05 else 0
    nc = r.choice([str(n), "-1", str(n + 2)] + (["0"] if r.random() < 0.1 else []))
    return (
        _head(r)
        + f"i = torch.randint({lo}, {hi}, ({_shape(shape)}{',' if len(shape) == 1 else ''}))\nT(lambda: F.one_hot(i, {nc}))\n"
    )


# -- normalisations --------------------------------------------------------------------------------


def k_normalize(r: random.Random) -> str:
    nd = r.randint(1, 3)
    shape = [r.randint(1, 3) for _ in range(nd)]
    opts: dict[str, str] = {}
    if r.random() < 0.6:
        opts["p"] = r.choice(["1.0", "2.0", "3", "float('inf')", "0.5"])
    if r.random() < 0.6:
        opts["dim"] = str(r.randint(-nd, nd - 1))
    if r.random() < 0.4:
        opts["eps"] = r.choice(["1e-12", "0.1", "0.0"])
    src = f"x = leaf({_shape(shape)})\n"
    if r.random() < 0.15:
        src += "x = (x.detach() * 0).requires_grad_()\n"
    return _head(r) + src + f"T(lambda: BW(F.normalize(x{_opts(opts)}), x))\n"


def k_lrn(r: random.Random) -> str:
    nd = r.randint(3, 5)
    shape = [r.randint(1, 3), r.randint(1, 5), *[r.randint(1, 3) for _ in range(nd - 2)]]
    opts = {}
    if r.random() < 0.5:
        opts["alpha"] = r.choice(["1e-4", "0.5"])
    if r.random() < 0.5:
        opts["beta"] = r.choice(["0.75", "0.5", "1.5"])
    if r.random() < 0.5:
        opts["k"] = r.choice(["1.0", "2.0"])
    size = r.randint(1, 4)
    return _head(r) + f"x = leaf({_shape(shape)})\nT(lambda: BW(F.local_response_norm(x, {size}{_opts(opts)}), x))\n"


def k_norm(r: random.Random) -> str:
    which = r.choice(["layer", "group", "instance", "batch"])
    n, c = r.randint(1, 3), r.choice([1, 2, 4, 6])
    sp = [r.randint(1, 3) for _ in range(r.randint(0, 2))]
    shape = [n, c, *sp]
    eps = r.choice(["1e-5", "0.1"])
    src = f"x = leaf({_shape(shape)})\n"
    if which == "layer":
        k = r.randint(1, len(shape))
        ns = tuple(shape[-k:])
        wt = f"leaf({_shape(list(ns))})" if r.random() < 0.6 else "None"
        bs = f"leaf({_shape(list(ns))})" if r.random() < 0.6 else "None"
        src += f"w = {wt}\nb = {bs}\n"
        call = f"F.layer_norm(x, {ns}, w, b, {eps})"
    elif which == "group":
        g = r.choice([dv for dv in range(1, c + 1) if c % dv == 0] + ([c + 1] if r.random() < 0.1 else []))
        w = r.random() < 0.6
        # (PyTorch's group_norm backward with a bias and no weight raises 'tensor does not have a device')
        src += f"w = {f'leaf({c})' if w else 'None'}\nb = {f'leaf({c})' if w and r.random() < 0.6 else 'None'}\n"
        call = f"F.group_norm(x, {g}, w, b, {eps})"
    else:
        run = r.random() < 0.6
        src += f"rm = {'torch.randn(' + str(c) + ', dtype=DT)' if run else 'None'}\n"
        src += f"rv = {'torch.rand(' + str(c) + ', dtype=DT) + 0.5' if run else 'None'}\n"
        src += (
            f"w = {f'leaf({c})' if r.random() < 0.6 else 'None'}\nb = {f'leaf({c})' if r.random() < 0.6 else 'None'}\n"
        )
        mom = r.choice(["0.1", "0.5", "None"]) if which == "batch" else r.choice(["0.1", "0.5"])
        if which == "batch":
            training = r.choice(["True", "False"])
            call = f"F.batch_norm(x, rm, rv, w, b, {training}, {mom}, {eps})"
        else:
            uis = r.choice(["True", "False"])
            call = f"F.instance_norm(x, rm, rv, w, b, {uis}, {mom}, {eps})"
    leaves = "x, *[t for t in (w, b) if t is not None]"
    src += f"T(lambda: BW({call}, {leaves}))\n"
    if which in ("batch", "instance"):
        src += "R(rm, rv)\n"
    return _head(r) + src


# -- distances -------------------------------------------------------------------------------------


def k_distance(r: random.Random) -> str:
    kind = r.choice(["cos", "pair", "pdist"])
    if kind == "pdist":
        n, m = r.randint(1, 5), r.randint(1, 4)  # (PyTorch's pdist backward of 0 rows divides by zero: SIGFPE)
        p = r.choice(["2", "1", "0", "3.5", "float('inf')", "0.5"])
        src = f"x = leaf({n}, {m})\n"
        if r.random() < 0.2:
            src += "x = torch.cat([x, x[:1]]).detach().requires_grad_() if len(x) else x\n"
        return _head(r) + src + f"T(lambda: BW(F.pdist(x, {p}), x))\n"
    nd = r.randint(1, 3)
    a = [r.randint(1, 3) for _ in range(nd)]
    bsh = [s if r.random() < 0.8 else 1 for s in a]
    if r.random() < 0.2 and nd > 1:
        bsh = bsh[1:]
    src = f"a = leaf({_shape(a)})\nb = leaf({_shape(bsh)})\n"
    if r.random() < 0.15:
        src += "b = (a.detach() + 0).requires_grad_()\n"
    if kind == "cos":
        opts = {}
        if r.random() < 0.6:
            opts["dim"] = str(r.randint(-nd, nd - 1))
        if r.random() < 0.4:
            opts["eps"] = r.choice(["1e-8", "0.5"])
        return _head(r) + src + f"T(lambda: BW(F.cosine_similarity(a, b{_opts(opts)}), a, b))\n"
    opts = {}
    if r.random() < 0.6:
        opts["p"] = r.choice(["2.0", "1.0", "0.0", "3.0", "float('inf')", "-1.0"])
    if r.random() < 0.4:
        opts["eps"] = r.choice(["1e-6", "0.5", "0.0"])
    if r.random() < 0.4:
        opts["keepdim"] = r.choice(["True", "False"])
    return _head(r) + src + f"T(lambda: BW(F.pairwise_distance(a, b{_opts(opts)}), a, b))\n"


# -- losses ----------------------------------------------------------------------------------------

_RED = ["'none'", "'mean'", "'sum'"]


def k_ctc(r: random.Random) -> str:
    tl, n, c = r.randint(1, 6), r.randint(1, 3), r.randint(2, 5)
    blank = r.randint(0, c - 1)
    batchless = r.random() < 0.15
    if batchless:
        n = 1
    maxs = r.randint(0, 3)
    src = f"lp = leaf({tl}, {n}, {c}).log_softmax(2)\n" if not batchless else f"lp = leaf({tl}, {c}).log_softmax(1)\n"
    src = src.replace("lp = leaf", "x = leaf").replace(").log_softmax", ")\nlp = x.log_softmax")
    labels = [b for b in range(c) if b != blank]
    tg = [[r.choice(labels) for _ in range(maxs)] for _ in range(n)]
    ilen = [r.randint(max(1, tl - 2), tl) for _ in range(n)]
    tlen = [r.randint(0, maxs) for _ in range(n)]
    concat = r.random() < 0.3 and not batchless
    if batchless:
        src += f"t = torch.tensor({tg[0]}, dtype=torch.long)\nil = torch.tensor({ilen[0]})\ntlen = torch.tensor({tlen[0]})\n"
    elif concat:
        flat = [v for row, k in zip(tg, tlen) for v in row[:k]]
        src += f"t = torch.tensor({flat}, dtype=torch.long)\nil = {ilen}\ntlen = {tlen}\n"
    else:
        src += f"t = torch.tensor({tg}, dtype=torch.long).reshape({n}, {maxs})\nil = torch.tensor({ilen})\ntlen = torch.tensor({tlen})\n"
    opts = {"blank": str(blank), "reduction": r.choice(_RED)}
    if r.random() < 0.5:
        opts["zero_infinity"] = r.choice(["True", "False"])
    return _head(r) + src + f"T(lambda: BW(F.ctc_loss(lp, t, il, tlen{_opts(opts)}), x))\n"


def k_margin(r: random.Random) -> str:
    kind = r.choice(["multi_margin", "multilabel_margin", "triplet", "margin_ranking", "hinge"])
    red = r.choice(_RED)
    b = _batch(r, 1)
    if kind in ("multi_margin", "multilabel_margin") and b == [0]:
        b = [1]  # (PyTorch's loss of an empty batch there is memory it never wrote)
    if kind == "multi_margin":
        c = r.randint(1, 4)
        src = f"x = leaf({_shape([*b, c])})\nt = torch.randint(0, {c}, ({_shape(b)}{',' if b else ''}))\n"
        opts = {"reduction": red}
        if r.random() < 0.5:
            opts["p"] = r.choice(["1", "2"] + (["3"] if r.random() < 0.1 else []))
        if r.random() < 0.5:
            opts["margin"] = r.choice(["1.0", "0.5", "2"])
        leaves = "x"
        if r.random() < 0.4:
            src += f"wt = (torch.rand({c}, dtype=DT) + 0.5).requires_grad_()\n"
            opts["weight"] = "wt"
        return _head(r) + src + f"T(lambda: BW(F.multi_margin_loss(x, t{_opts(opts)}), {leaves}))\n"
    if kind == "multilabel_margin":
        c = r.randint(1, 4)
        tshape = [*b, c]
        src = f"x = leaf({_shape(tshape)})\nt = torch.randint(-1, {c}, ({_shape(tshape)},))\n"
        return _head(r) + src + f"T(lambda: BW(F.multilabel_margin_loss(x, t, reduction={red}), x))\n"
    if kind == "triplet":
        m = r.randint(1, 4)
        src = "".join(f"{v} = leaf({_shape([*b, m])})\n" for v in "apn")
        opts = {"reduction": red}
        for k, vals in (("margin", ["1.0", "0.5", "0.0"]), ("p", ["2", "1", "3.0"]), ("eps", ["1e-6", "0.5"]),
                        ("swap", ["True", "False"])):  # fmt: skip
            if r.random() < 0.5:
                opts[k] = r.choice(vals)
        return _head(r) + src + f"T(lambda: BW(F.triplet_margin_loss(a, p, n{_opts(opts)}), a, p, n))\n"
    if kind == "margin_ranking":
        shape = [r.randint(0 if r.random() < 0.1 else 1, 4) for _ in range(r.randint(0, 2))]
        s = _shape(shape) + ("," if len(shape) == 1 else "")
        src = f"a = leaf({_shape(shape)})\nb = leaf({_shape(shape)})\ny = torch.randint(0, 2, ({s})).to(DT) * 2 - 1\n"
        opts = {"reduction": red}
        if r.random() < 0.5:
            opts["margin"] = r.choice(["0.0", "0.5", "-0.3"])
        return _head(r) + src + f"T(lambda: BW(F.margin_ranking_loss(a, b, y{_opts(opts)}), a, b))\n"
    shape = [r.randint(0 if r.random() < 0.1 else 1, 4) for _ in range(r.randint(0, 2))]
    s = _shape(shape) + ("," if len(shape) == 1 else "")
    src = f"x = leaf({_shape(shape)})\ny = torch.randint(0, 2, ({s})).to(DT) * 2 - 1\n"
    opts = {"reduction": red}
    if r.random() < 0.5:
        opts["margin"] = r.choice(["1.0", "0.5", "0.0", "-1.0"])
    return _head(r) + src + f"T(lambda: BW(F.hinge_embedding_loss(x, y{_opts(opts)}), x))\n"


def k_likelihood(r: random.Random) -> str:
    kind = r.choice(["poisson", "gaussian", "kl"])
    red = r.choice(_RED + (["'batchmean'"] if kind == "kl" else []))
    shape = [r.randint(0 if r.random() < 0.05 else 1, 3) for _ in range(r.randint(0, 3))]
    if kind == "poisson":
        log_input = r.choice(["True", "False"])
        src = f"x = leaf({_shape(shape)})\nx = (x.detach().abs() + 0.1).requires_grad_() if not {log_input} else x\n"
        src += f"t = leaf({_shape(shape)})\nt = (t.detach().abs() * 3).requires_grad_()\n"
        opts = {"log_input": log_input, "reduction": red}
        if r.random() < 0.5:
            opts["full"] = r.choice(["True", "False"])
        if r.random() < 0.4:
            opts["eps"] = r.choice(["1e-8", "0.5"])
        return _head(r) + src + f"T(lambda: BW(F.poisson_nll_loss(x, t{_opts(opts)}), x, t))\n"
    if kind == "gaussian":
        vshape = list(shape)
        if shape and r.random() < 0.3:
            vshape = [*shape[:-1], 1] if r.random() < 0.5 else shape[:-1]
        src = f"x = leaf({_shape(shape)})\nt = leaf({_shape(shape)})\nv = leaf({_shape(vshape)})\n"
        src += "v = (v.detach().abs() + 0.05).requires_grad_()\n"
        opts = {"reduction": red}
        if r.random() < 0.5:
            opts["full"] = r.choice(["True", "False"])
        if r.random() < 0.4:
            opts["eps"] = r.choice(["1e-6", "0.5"])
        return _head(r) + src + f"T(lambda: BW(F.gaussian_nll_loss(x, t, v{_opts(opts)}), x, t, v))\n"
    log_target = r.choice(["True", "False"])
    src = f"x = leaf({_shape(shape)})\nt = leaf({_shape(shape)})\n"
    src += f"t = (t.detach() if {log_target} else t.detach().abs()).requires_grad_()\n"
    return _head(r) + src + f"T(lambda: BW(F.kl_div(x, t, reduction={red}, log_target={log_target}), x, t))\n"


KINDS = {
    "conv": k_conv, "max_pool": k_max_pool, "avg_pool": k_avg_pool, "lp_pool": k_lp_pool,
    "adaptive_pool": k_adaptive_pool, "max_unpool": k_max_unpool, "fractional": k_fractional,
    "interpolate": k_interpolate, "grid_sample": k_grid_sample, "pad": k_pad, "fold": k_fold, "pixel": k_pixel,
    "embedding": k_embedding, "embedding_bag": k_embedding_bag, "one_hot": k_one_hot, "normalize": k_normalize,
    "lrn": k_lrn, "norm": k_norm, "distance": k_distance, "ctc": k_ctc, "margin": k_margin,
    "likelihood": k_likelihood, "conv2": k_conv, "interpolate2": k_interpolate,
}  # fmt: skip


def program(seed: int) -> str:
    return program_of(KINDS, seed)


def failures(seeds: range, torch: Any) -> list[tuple]:
    return generated_failures(KINDS, seeds, torch, float32_difference, HELPERS)


# -- the tests ------------------------------------------------------------------------------------

FAST_SEEDS = range(0, 150)
SLOW_SEEDS = range(150, 2150)

_GN1 = (
    ROUNDING + "float32 rounding: group_norm over groups of one element, whose input gradient is 0; PyTorch's fused "
    "kernel leaves about 2e-6 of noise there"
)

_ONEDNN = (
    "a float32 conv_transpose with a batch of more than one sample and an output of size 0: PyTorch's oneDNN "
    "kernel returns the empty result, its reference kernel (float64, one sample) raises 'Output size is too "
    "small'; ours follows the reference kernel, whatever the dtype and batch"
)

#: Differences known and not yet fixed, by seed: each must still differ (a fixed one is taken off).
KNOWN: dict[int, str] = {382: _ONEDNN, 526: _ONEDNN, 929: _GN1}

test_functional_options_run_as_in_torch, test_more_functional_options_run_as_in_torch = seed_tests(
    failures, KNOWN, FAST_SEEDS, SLOW_SEEDS, 50, 250
)


def test_programs_differ_with_the_seed() -> None:
    assert len({program(s) for s in range(60)}) == 60


if __name__ == "__main__":
    report(failures, KINDS, sys.argv)
