"""Attention written from primitives as blog posts and papers write it, drawn from a seed and run
with ``torch`` bound to PyTorch and to tinygrad_attn (tests/differential.py): the same weights and
inputs (one seed, PyTorch's generator), a forward pass, a weighted loss and its backward, in
float32 or float64; values, gradients, dtypes, shapes and the class of any exception must agree.

The kinds (``KINDS``): masks (``tril`` + ``masked_fill(-inf)``, ``triu(1).bool()``, additive
float masks, key padding from lengths, fully masked rows, ``-1e9`` and ``finfo.min`` fills,
``F.scaled_dot_product_attention`` with bool/float masks, ``is_causal``, ``scale=``,
``enable_gqa=``, ``nn.MultiheadAttention`` with every option); positions (sinusoidal tables
written by slice assignment, learned, rotary in its real form with ``rotate_half``, ALiBi,
relative bias through ``gather`` of clamped distances, T5 buckets); heads (``view`` +
``transpose``, ``einsum``, fused qkv ``split``/``chunk``, GQA and multi-query through
``repeat_interleave``/``expand``, a KV cache by ``cat`` against the full forward, sliding
windows, ``unfold`` local attention, linear attention, cosine attention, chunked softmax through
``logsumexp``, ``baddbmm``, float16 inputs softmaxed in float32, top-k sparse attention, memory
tokens); and blocks (pre/post norm, hand-written RMSNorm, SwiGLU/GEGLU, weight tying, ``nn.init``,
``clip_grad_norm_`` and an optimizer step).

Run as a script over many seeds (prints each differing program and the counts per kind)::

    PYTHONPATH=.:tests python tests/nn/test_attention_programs_torch.py 0 3000
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Any

from differential import PRELUDE, ROUNDING, float32_difference, generated_failures, program_of, report, seed_tests

#: The helpers every program starts with: ``T`` (records a value or the exception), ``BW(out,
#: *leaves)`` (records ``out``, a loss weighted unequally so a misplaced gradient shows, and the
#: leaves' gradients) and ``leaf(*shape)`` (a standard normal leaf of the program's dtype).
HELPERS = (
    PRELUDE
    + """
def BW(out, *leaves):
    w = torch.linspace(0.5, 2.0, out.numel(), dtype=out.dtype).reshape(out.shape)
    loss = (out * w).sum()
    R(out, loss)
    loss.backward()
    R(*[t.grad for t in leaves])

def leaf(*shape):
    return torch.randn(*shape, dtype=DT).requires_grad_()
"""
)


def _head(r: random.Random, seed: int) -> tuple[str, dict[str, Any]]:
    """The program's first lines (seed, dtype) and its sizes."""
    dt = r.choice(["torch.float32", "torch.float64"])
    s = {"B": r.randint(1, 3), "T": r.randint(1, 6), "H": r.choice([1, 2, 4]), "D": r.choice([2, 4, 6])}
    s["C"] = s["H"] * s["D"]
    return f"torch.manual_seed({seed % 1000})\nDT = {dt}\n", s


def _mask_fill(r: random.Random, dt: bool = True) -> str:
    return r.choice(["float('-inf')", "-1e9", "torch.finfo(DT).min" if dt else "-1e4", "-10000.0", "float('-inf')"])


# -- masks -----------------------------------------------------------------------------------------


def k_causal(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, D = s["B"], s["T"], s["D"]
    way = r.choice(["tril", "triu", "ones_bool", "arange"])
    fill = _mask_fill(r)
    if way == "tril":
        mk = f"mask = torch.tril(torch.ones({T}, {T}))\nscores = scores.masked_fill(mask == 0, {fill})"
    elif way == "triu":
        mk = f"mask = torch.triu(torch.ones({T}, {T}), diagonal=1).bool()\nscores = scores.masked_fill(mask, {fill})"
    elif way == "ones_bool":
        mk = (
            f"mask = torch.ones({T}, {T}, dtype=torch.bool).tril(diagonal=0)\n"
            f"scores = scores.masked_fill(~mask, {fill})"
        )
    else:
        mk = (
            f"i = torch.arange({T})\nmask = i[:, None] >= i[None, :]\n"
            f"scores = torch.where(mask, scores, torch.tensor({fill}, dtype=scores.dtype))"
        )
    sm = r.choice(["F.softmax(scores, dim=-1)", "scores.softmax(-1)", "torch.softmax(scores, dim=-1)",
                   "torch.exp(scores - scores.amax(-1, keepdim=True)) / torch.exp(scores - scores.amax(-1, keepdim=True)).sum(-1, keepdim=True)",
                   "F.log_softmax(scores, -1).exp()"])  # fmt: skip
    scale = r.choice(["(k.size(-1) ** -0.5)", "1 / math.sqrt(k.shape[-1])", "math.sqrt(1.0 / k.size(-1))"])
    return (
        head
        + f"""
q, k, v = leaf({B}, {T}, {D}), leaf({B}, {T}, {D}), leaf({B}, {T}, {D})
scores = q @ k.transpose(-2, -1) * {scale}
{mk}
att = {sm}
R(att)
BW(att @ v, q, k, v)
"""
    )


def k_padding(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, H, D = s["B"], s["T"], s["H"], s["D"]
    lengths = [r.randint(0 if r.random() < 0.3 else 1, T) for _ in range(B)]
    fill = _mask_fill(r)
    way = r.choice(["ge", "lt", "float_add"])
    if way == "ge":
        mk = f"pad = torch.arange({T})[None] >= lengths[:, None]\nscores = scores.masked_fill(pad[:, None, None, :], {fill})"
    elif way == "lt":
        mk = (
            f"keep = torch.arange({T}).unsqueeze(0) < lengths.unsqueeze(1)\n"
            f"scores = scores.masked_fill(keep.view({B}, 1, 1, {T}) == False, {fill})"
        )
    else:
        mk = (
            f"pad = (torch.arange({T})[None] >= lengths[:, None]).to(DT)\n"
            f"scores = scores + pad[:, None, None, :] * {r.choice(['-1e9', '-10000.0', 'torch.finfo(DT).min'])}"
        )
    tail = r.choice(
        [
            "out = att @ v",
            "out = torch.nan_to_num(att) @ v",
            "out = att.masked_fill(torch.isnan(att), 0.0) @ v",
        ]
    )
    return (
        head
        + f"""
lengths = torch.tensor({lengths})
q, k, v = leaf({B}, {H}, {T}, {D}), leaf({B}, {H}, {T}, {D}), leaf({B}, {H}, {T}, {D})
scores = torch.matmul(q, k.transpose(-1, -2)) / {D} ** 0.5
{mk}
att = F.softmax(scores, dim=-1)
{tail}
BW(out, q, k, v)
"""
    )


def k_sdpa(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, H, D = s["B"], s["T"], s["H"], s["D"]
    S = T if r.random() < 0.6 else r.randint(1, 6)
    Hk = H
    gqa = ""
    if H > 1 and r.random() < 0.3:
        Hk = r.choice([h for h in (1, 2) if H % h == 0])
        gqa = ", enable_gqa=True"
    opts = []
    mask_kind = r.choice(["none", "bool", "float", "causal", "bool_full", "bool_row_empty", "float_inf", "both"])
    pre = ""
    if mask_kind in ("bool", "both"):
        pre = f"m = torch.rand({T}, {S}) > 0.3\n"
        opts.append("attn_mask=m")
    elif mask_kind == "bool_full":
        pre = f"m = torch.ones({B}, 1, {T}, {S}, dtype=torch.bool).tril()\n"
        opts.append("attn_mask=m")
    elif mask_kind == "bool_row_empty":
        pre = f"m = torch.ones({T}, {S}, dtype=torch.bool)\nm[0] = False\n"
        opts.append("attn_mask=m")
    elif mask_kind == "float":
        pre = f"m = torch.randn({T}, {S}, dtype=DT)\n"
        opts.append("attn_mask=m")
    elif mask_kind == "float_inf":
        pre = f"m = torch.zeros({T}, {S}, dtype=DT).masked_fill(torch.rand({T}, {S}) > 0.6, float('-inf'))\n"
        opts.append("attn_mask=m")
    if mask_kind in ("causal", "both"):
        opts.append("is_causal=True")
    if r.random() < 0.4:
        opts.append(f"scale={r.choice(['0.5', '1.0', '0.125', '1 / D'])}")
    if r.random() < 0.3:
        opts.append("dropout_p=0.0")
    args = ", ".join(["q", "k", "v"] + opts) + gqa
    return (
        head
        + f"""
D = {D}
q, k, v = leaf({B}, {H}, {T}, D), leaf({B}, {Hk}, {S}, D), leaf({B}, {Hk}, {S}, D)
{pre}T(lambda: BW(F.scaled_dot_product_attention({args}), q, k, v))
"""
    )


def k_mha(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, H = s["B"], s["T"], r.choice([1, 2])
    E = H * r.choice([2, 4])
    S = T if r.random() < 0.5 else r.randint(1, 5)
    bf = r.random() < 0.5
    kd = r.random() < 0.3
    kdim, vdim = (r.randint(2, 5), r.randint(2, 5)) if kd else (E, E)
    ctor = f"nn.MultiheadAttention({E}, {H}, batch_first={bf}, bias={r.random() < 0.8}"
    if kd:
        ctor += f", kdim={kdim}, vdim={vdim}"
    if r.random() < 0.2:
        ctor += ", add_bias_kv=True"
    if r.random() < 0.2:
        ctor += ", add_zero_attn=True"
    ctor += ", dtype=DT)"
    qs = f"({B}, {T}, {E})" if bf else f"({T}, {B}, {E})"
    ks = f"({B}, {S}, {kdim})" if bf else f"({S}, {B}, {kdim})"
    vs = f"({B}, {S}, {vdim})" if bf else f"({S}, {B}, {vdim})"
    self_att = not kd and S == T and r.random() < 0.5
    opts = []
    pre = ""
    mk = r.choice(["none", "bool", "float", "kpm_bool", "kpm_float", "both", "causal"])
    if mk in ("bool", "both"):
        pre += f"am = torch.triu(torch.ones({T}, {S}), diagonal=1).bool()\n"
        opts.append("attn_mask=am")
    if mk == "float":
        pre += f"am = torch.zeros({T}, {S}, dtype=DT).masked_fill(torch.rand({T}, {S}) > 0.7, float('-inf'))\n"
        opts.append("attn_mask=am")
    if mk in ("kpm_bool", "both"):
        pre += f"kpm = torch.arange({S})[None] >= torch.randint(1, {S} + 1, ({B},))[:, None]\n"
        opts.append("key_padding_mask=kpm")
    if mk == "kpm_float":
        pre += f"kpm = torch.zeros({B}, {S}, dtype=DT).masked_fill(torch.rand({B}, {S}) > 0.7, float('-inf'))\n"
        opts.append("key_padding_mask=kpm")
    if mk == "causal" and S == T:
        pre += f"am = nn.Transformer.generate_square_subsequent_mask({T}, dtype=DT)\n"
        opts.append("attn_mask=am")
        if r.random() < 0.5:
            opts.append("is_causal=True")
    nw = r.choice(["True", "False"])
    opts.append(f"need_weights={nw}")
    if nw == "True" and r.random() < 0.5:
        opts.append(f"average_attn_weights={r.choice(['True', 'False'])}")
    ev = "mha.eval()\n" if r.random() < 0.4 else ""
    inputs = "x, x, x" if self_att else "q, k, v"
    leaves = "x" if self_att else "q, k, v"
    make = f"x = leaf{qs}" if self_att else f"q, k, v = leaf{qs}, leaf{ks}, leaf{vs}"
    return (
        head
        + f"""
mha = {ctor}
{ev}{make}
{pre}def go():
    out, w = mha({inputs}, {", ".join(opts)})
    R(w)
    BW(out, {leaves}, *[p for p in mha.parameters()])
T(go)
"""
    )


# -- positions -------------------------------------------------------------------------------------


def k_sinusoidal(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T = s["B"], s["T"]
    d = r.choice([4, 6, 8])
    way = r.choice(["slice", "stack", "learned", "buffer"])
    if way == "slice":
        pe = f"""
pe = torch.zeros({T} + 2, {d})
position = torch.arange(0, {T} + 2, dtype=torch.float).unsqueeze(1)
div_term = torch.exp(torch.arange(0, {d}, 2).float() * (-math.log(10000.0) / {d}))
pe[:, 0::2] = torch.sin(position * div_term)
pe[:, 1::2] = torch.cos(position * div_term)
pe = pe.unsqueeze(0).to(DT)
"""
        add = f"x + pe[:, :{T}]"
    elif way == "stack":
        pe = f"""
inv = 1.0 / (10000 ** (torch.arange(0, {d}, 2, dtype=DT) / {d}))
pos = torch.arange({T}, dtype=DT)
ang = torch.outer(pos, inv)
pe = torch.stack([ang.sin(), ang.cos()], dim=-1).flatten(-2)
"""
        add = "x + pe"
    elif way == "learned":
        pe = f"""
pos_emb = nn.Embedding({T} + 1, {d}, dtype=DT)
nn.init.normal_(pos_emb.weight, std=0.02)
pe = pos_emb(torch.arange({T}, dtype=torch.long))
"""
        add = "x + pe"
    else:
        pe = f"""
pe = nn.Parameter(torch.zeros(1, {T}, {d}, dtype=DT))
nn.init.trunc_normal_(pe, std=0.02) if {r.random() < 0.5} else nn.init.zeros_(pe)
"""
        add = "x + pe"
    return (
        head
        + pe
        + f"""
x = leaf({B}, {T}, {d})
h = {add}
R(h)
BW(F.layer_norm(h, ({d},)) * {r.choice(["1.0", "math.sqrt(" + str(d) + ")"])}, x)
"""
    )


def k_rotary(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, H = s["B"], s["T"], s["H"]
    D = r.choice([2, 4, 8])
    cache = r.choice(["einsum", "outer", "mul"])
    freqs = {
        "einsum": "freqs = torch.einsum('i,j->ij', t, inv_freq)",
        "outer": "freqs = torch.outer(t, inv_freq)",
        "mul": "freqs = t[:, None] * inv_freq[None, :]",
    }[cache]
    rh = r.choice(
        [
            "x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]\n    return torch.cat((-x2, x1), dim=-1)",
            "x1, x2 = x.chunk(2, dim=-1)\n    return torch.cat((-x2, x1), dim=x1.ndim - 1)",
            "x1 = x[..., ::2]\n    x2 = x[..., 1::2]\n    return torch.stack((-x2, x1), dim=-1).flatten(-2)",
        ]
    )
    interleaved = "::2" in rh
    emb = "freqs.repeat_interleave(2, dim=-1)" if interleaved else "torch.cat((freqs, freqs), dim=-1)"
    off = r.choice([0, 0, 2])
    return (
        head
        + f"""
def rotate_half(x):
    {rh}
inv_freq = 1.0 / (10000 ** (torch.arange(0, {D}, 2).float() / {D}))
t = torch.arange({T} + {off}, dtype=inv_freq.dtype)
{freqs}
emb = {emb}
cos, sin = emb.cos()[None, None, {off}:, :].to(DT), emb.sin()[None, None, {off}:, :].to(DT)
q, k = leaf({B}, {H}, {T}, {D}), leaf({B}, {H}, {T}, {D})
qr = q * cos + rotate_half(q) * sin
kr = (k * cos) + (rotate_half(k) * sin)
R(qr.norm(dim=-1) - q.norm(dim=-1))
BW(torch.einsum('bhqd,bhkd->bhqk', qr, kr).softmax(-1), q, k)
"""
    )


def k_alibi(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, D = s["B"], s["T"], s["D"]
    H = r.choice([1, 2, 4, 8])
    slopes = r.choice(
        [
            f"torch.tensor([2 ** (-8 / {H} * (i + 1)) for i in range({H})], dtype=DT)",
            f"2.0 ** (-8.0 * torch.arange(1, {H} + 1, dtype=DT) / {H})",
            f"torch.pow(2.0, -torch.arange(1, {H} + 1).to(DT) * 8 / {H})",
        ]
    )
    rel = r.choice(
        [
            f"rel = torch.arange({T})[None, :] - torch.arange({T})[:, None]",
            f"ctx = torch.arange({T}).view(-1, 1)\nmem = torch.arange({T}).view(1, -1)\nrel = (mem - ctx).abs().neg()",
        ]
    )
    causal = r.random() < 0.5
    cm = f"\nscores = scores.masked_fill(torch.ones({T}, {T}).triu(1).bool(), float('-inf'))" if causal else ""
    return (
        head
        + f"""
slopes = {slopes}
{rel}
bias = slopes[:, None, None] * rel[None].to(DT)
q, k, v = leaf({B}, {H}, {T}, {D}), leaf({B}, {H}, {T}, {D}), leaf({B}, {H}, {T}, {D})
scores = q @ k.transpose(-2, -1) / math.sqrt({D}) + bias.unsqueeze(0){cm}
R(bias)
BW(scores.softmax(dim=-1) @ v, q, k, v)
"""
    )


def k_relbias(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, H, D = s["B"], s["T"], s["H"], s["D"]
    M = r.randint(1, 4)
    way = r.choice(["index", "gather", "embedding", "index_select"])
    lookup = {
        "index": "bias = table[idx]",
        "gather": f"bias = torch.gather(table.unsqueeze(0).expand({T}, -1, -1), 1, idx.unsqueeze(-1).expand(-1, -1, {H}))",
        "embedding": "bias = F.embedding(idx, table)",
        "index_select": f"bias = table.index_select(0, idx.reshape(-1)).view({T}, {T}, {H})",
    }[way]  # fmt: skip
    clamp = r.choice([f"rel.clamp(-{M}, {M})", f"torch.clamp(rel, min=-{M}, max={M})", f"rel.clip(-{M}, {M})"])
    return (
        head
        + f"""
table = torch.randn(2 * {M} + 1, {H}, dtype=DT).requires_grad_()
pos = torch.arange({T})
rel = pos[None, :] - pos[:, None]
idx = {clamp} + {M}
{lookup}
q, k = leaf({B}, {H}, {T}, {D}), leaf({B}, {H}, {T}, {D})
scores = torch.einsum('bhqd,bhkd->bhqk', q, k) + bias.permute(2, 0, 1).unsqueeze(0)
BW(scores.softmax(-1), q, k, table)
"""
    )


def k_t5_bucket(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, H = s["B"], r.randint(1, 12), s["H"]
    nb = r.choice([4, 8, 16])
    md = r.choice([8, 16, 32, 128])
    bid = r.random() < 0.6
    return (
        head
        + f"""
def bucket(relative_position, bidirectional={bid}, num_buckets={nb}, max_distance={md}):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (
        torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, large)
    return relative_buckets
ctx = torch.arange({T}, dtype=torch.long)[:, None]
mem = torch.arange({T}, dtype=torch.long)[None, :]
b = bucket(mem - ctx)
R(b)
emb = nn.Embedding({nb}, {H}, dtype=DT)
vals = emb(b).permute([2, 0, 1]).unsqueeze(0)
x = leaf({B}, {H}, {T}, {T})
BW((x + vals).softmax(-1), x, emb.weight)
"""
    )


# -- heads -----------------------------------------------------------------------------------------


def k_fused_qkv(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, H, C = s["B"], s["T"], s["H"], s["C"]
    split = r.choice(
        [
            "q, k, v = qkv.split(C, dim=2)",
            "q, k, v = qkv.chunk(3, dim=-1)",
            "q, k, v = torch.split(qkv, [C, C, C], -1)",
            "q, k, v = qkv.view(B, T, 3, C).unbind(2)",
        ]
    )
    heads = r.choice(
        [
            "q = q.view(B, T, H, C // H).transpose(1, 2)\n"
            "k = k.view(B, T, H, C // H).transpose(1, 2)\nv = v.view(B, T, H, C // H).transpose(1, 2)",
            "q, k, v = [t.reshape(B, T, H, -1).permute(0, 2, 1, 3) for t in (q, k, v)]",
            "q, k, v = map(lambda t: t.unflatten(-1, (H, -1)).transpose(1, 2), (q, k, v))",
        ]
    )
    att = r.choice(
        [
            "att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))",
            "att = torch.einsum('bhqd,bhkd->bhqk', q, k) / math.sqrt(C // H)",
            "att = torch.matmul(q, k.mT) * (C // H) ** -0.5",
        ]
    )
    merge = r.choice(
        [
            "y = y.transpose(1, 2).contiguous().view(B, T, C)",
            "y = y.permute(0, 2, 1, 3).reshape(B, T, C)",
            "y = torch.einsum('bhqd->bqhd', y).flatten(2)",
        ]
    )
    return (
        head
        + f"""
B, T, H, C = {B}, {T}, {H}, {C}
c_attn = nn.Linear(C, 3 * C, dtype=DT)
c_proj = nn.Linear(C, C, bias={r.random() < 0.5}, dtype=DT)
x = leaf(B, T, C)
qkv = c_attn(x)
{split}
{heads}
{att}
att = att.masked_fill(torch.tril(torch.ones(T, T)).view(1, 1, T, T) == 0, float('-inf'))
att = F.softmax(att, dim=-1)
y = att @ v
{merge}
BW(c_proj(y), x, c_attn.weight, c_proj.weight)
"""
    )


def k_gqa(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, D = s["B"], s["T"], s["D"]
    H = r.choice([2, 4])
    Hk = r.choice([h for h in (1, 2) if H % h == 0])
    rep = r.choice(
        [
            "k = k.repeat_interleave(n_rep, dim=1)\nv = v.repeat_interleave(n_rep, dim=1)",
            f"k = k[:, :, None].expand({B}, {Hk}, n_rep, {T}, {D}).reshape({B}, {H}, {T}, {D})\n"
            f"v = v[:, :, None].expand({B}, {Hk}, n_rep, {T}, {D}).reshape({B}, {H}, {T}, {D})",
            "k = torch.repeat_interleave(k, repeats=n_rep, dim=1)\nv = v.repeat(1, n_rep, 1, 1)",
        ]
    )
    return (
        head
        + f"""
n_rep = {H} // {Hk}
q, k0, v0 = leaf({B}, {H}, {T}, {D}), leaf({B}, {Hk}, {T}, {D}), leaf({B}, {Hk}, {T}, {D})
k, v = k0, v0
{rep}
scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt({D})
att = F.softmax(scores.float(), dim=-1).type_as(q)
BW(torch.matmul(att, v), q, k0, v0)
"""
    )


def k_kv_cache(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, H, C = s["B"], max(2, s["T"]), s["H"], s["C"]
    return (
        head
        + f"""
B, T, H, C = {B}, {T}, {H}, {C}
wq, wk, wv = (nn.Linear(C, C, bias=False, dtype=DT) for _ in range(3))
x = torch.randn(B, T, C, dtype=DT)
def heads(t):
    return t.view(t.shape[0], t.shape[1], H, C // H).transpose(1, 2)
def attend(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(C // H)
    if mask is not None:
        s = s.masked_fill(mask, float('-inf'))
    return (s.softmax(-1) @ v).transpose(1, 2).reshape(q.shape[0], -1, C)
full = attend(heads(wq(x)), heads(wk(x)), heads(wv(x)), torch.ones(T, T, dtype=torch.bool).triu(1))
k_cache = v_cache = None
steps = []
with torch.no_grad():
    for t in range(T):
        xt = x[:, t : t + 1]
        kt, vt = heads(wk(xt)), heads(wv(xt))
        k_cache = kt if k_cache is None else torch.cat([k_cache, kt], dim=2)
        v_cache = vt if v_cache is None else torch.cat((v_cache, vt), dim=-2)
        steps.append(attend(heads(wq(xt)), k_cache, v_cache))
inc = torch.cat(steps, dim=1)
R(inc, (inc - full).abs().max() < 1e-5, inc.requires_grad)
BW(full, wq.weight, wk.weight, wv.weight)
"""
    )


def k_local(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, D = s["B"], r.randint(2, 8), s["D"]
    W = r.randint(1, 3)
    way = r.choice(["band", "unfold"])
    if way == "band":
        body = f"""
i = torch.arange({T})
band = (i[:, None] - i[None, :]).abs() > {W}
if {r.random() < 0.5}:
    band = band | (i[None, :] > i[:, None])
scores = (q @ k.transpose(-1, -2)) / math.sqrt({D})
scores = scores.masked_fill(band, {_mask_fill(r)})
out = scores.softmax(-1) @ v
"""
    else:
        body = f"""
kp = F.pad(k, (0, 0, {W}, {W}))
vp = F.pad(v, (0, 0, {W}, {W}))
kw = kp.unfold(1, 2 * {W} + 1, 1)
vw = vp.unfold(1, 2 * {W} + 1, 1)
scores = torch.einsum('btd,btdw->btw', q, kw) / math.sqrt({D})
valid = F.pad(torch.ones({T}), ({W}, {W})).unfold(0, 2 * {W} + 1, 1)
scores = scores.masked_fill(valid[None] == 0, float('-inf'))
out = torch.einsum('btw,btdw->btd', scores.softmax(-1), vw)
"""
    return (
        head
        + f"""
q, k, v = leaf({B}, {T}, {D}), leaf({B}, {T}, {D}), leaf({B}, {T}, {D})
{body}
BW(out, q, k, v)
"""
    )


def k_linear_attn(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, H, D = s["B"], s["T"], s["H"], s["D"]
    feat = r.choice(["F.elu(t) + 1", "F.elu(t, alpha=1.0) + 1.0", "torch.nn.functional.relu(t) + 1e-3", "t.exp()"])
    causal = r.random() < 0.5
    if causal:
        body = """
kv = torch.einsum('bhtd,bhte->bhtde', kf, v).cumsum(dim=2)
z = kf.cumsum(2)
num = torch.einsum('bhtd,bhtde->bhte', qf, kv)
den = torch.einsum('bhtd,bhtd->bht', qf, z).unsqueeze(-1)
"""
    else:
        body = """
kv = torch.einsum('bhsd,bhse->bhde', kf, v)
num = torch.einsum('bhtd,bhde->bhte', qf, kv)
den = qf @ kf.sum(dim=2, keepdim=True).transpose(-2, -1)
"""
    return (
        head
        + f"""
def phi(t):
    return {feat}
q, k, v = leaf({B}, {H}, {T}, {D}), leaf({B}, {H}, {T}, {D}), leaf({B}, {H}, {T}, {D})
qf, kf = phi(q), phi(k)
{body}
BW(num / (den + 1e-6), q, k, v)
"""
    )


def k_cosine(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, H, D = s["B"], s["T"], s["H"], s["D"]
    temp = r.choice(
        [
            "tau = torch.tensor(10.0, dtype=DT, requires_grad=True)\nlead = [tau]",
            "logit_scale = torch.tensor(math.log(1 / 0.07), dtype=DT).requires_grad_()\n"
            "tau = torch.clamp(logit_scale, max=math.log(100.)).exp()\nlead = [logit_scale]",
            f"tau = {r.choice(['1.0', '0.5', '20.0'])}\nlead = []",
        ]
    )
    norm = r.choice(
        [
            "qn, kn = F.normalize(q, dim=-1), F.normalize(k, dim=-1)",
            "qn = q / q.norm(dim=-1, keepdim=True)\nkn = k / k.norm(p=2, dim=-1, keepdim=True).clamp_min(1e-6)",
            "qn, kn = F.normalize(q, p=2.0, dim=-1, eps=1e-6), k * torch.rsqrt((k * k).sum(-1, keepdim=True) + 1e-8)",
        ]
    )
    zero = "\nwith torch.no_grad():\n    q[0, 0, 0] = 0.0" if r.random() < 0.3 else ""
    return (
        head
        + f"""
{temp}
q, k, v = leaf({B}, {H}, {T}, {D}), leaf({B}, {H}, {T}, {D}), leaf({B}, {H}, {T}, {D}){zero}
{norm}
att = (qn @ kn.transpose(-2, -1) * tau).softmax(-1)
BW(att @ v, q, k, v, *lead)
"""
    )


def k_chunked(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, D = s["B"], r.randint(2, 8), s["D"]
    ch = r.randint(1, 3)
    causal = r.random() < 0.5
    cm = (
        "\n        ki = torch.arange(start, end)\n        s = s.masked_fill(ki[None, :] > qi[:, None], float('-inf'))"
        if causal
        else ""
    )
    return (
        head
        + f"""
q, k, v = leaf({B}, {T}, {D}), leaf({B}, {T}, {D}), leaf({B}, {T}, {D})
scale = {D} ** -0.5
qi = torch.arange({T})
def chunked(q, k, v):
    outs, lses = [], []
    for start in range(0, {T}, {ch}):
        end = min(start + {ch}, {T})
        s = torch.baddbmm(torch.zeros({B}, {T}, end - start, dtype=DT), q, k[:, start:end].transpose(1, 2), alpha=scale){cm}
        lse = torch.logsumexp(s, dim=-1, keepdim=True)
        outs.append(torch.exp(s - lse) @ v[:, start:end])
        lses.append(lse)
    lse_all = torch.logsumexp(torch.cat(lses, -1), dim=-1, keepdim=True)
    return sum(o * torch.exp(l - lse_all) for o, l in zip(outs, lses))
ref = torch.bmm(torch.softmax(torch.bmm(q, k.transpose(1, 2)) * scale{" + torch.full((" + str(T) + ", " + str(T) + "), float('-inf'), dtype=DT).triu(1)" if causal else ""}, -1), v)
out = chunked(q, k, v)
R((out - ref).abs().max() < 1e-4)
BW(out, q, k, v)
"""
    )


def k_half(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, D = s["B"], s["T"], s["D"]
    low = "torch.float16"  # (bfloat16's attention: tests/tensor/test_bfloat16_torch.py)
    up = r.choice(["scores.float()", "scores.to(torch.float32)", "scores.double()"])
    back = r.choice(["att.type_as(q)", "att.to(q.dtype)", "att.half()"])
    return (
        head
        + f"""
q = torch.randn({B}, {T}, {D}).to({low}).requires_grad_()
k = torch.randn({B}, {T}, {D}).to({low}).requires_grad_()
v = torch.randn({B}, {T}, {D}).to({low}).requires_grad_()
scores = torch.matmul(q, k.transpose(1, 2))
att = F.softmax({up}, dim=-1)
att = {back}
out = att @ v
R(out.dtype, att.dtype)
out.float().sum().backward()
R(q.grad.dtype, k.grad.dtype, v.grad.shape)
R(q.grad.float().abs().sum().item() > 0)
"""
    )


def k_topk(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, D = s["B"], r.randint(2, 6), s["D"]
    kk = r.randint(1, T)
    way = r.choice(["scatter", "scatter_", "kth"])
    if way == "scatter":
        sp = "mask = torch.full_like(scores, float('-inf')).scatter(-1, idx, 0.0)\nsparse = scores + mask"
    elif way == "scatter_":
        sp = "sparse = torch.full_like(scores, float('-inf'))\nsparse.scatter_(-1, idx, vals)"
    else:
        sp = "sparse = scores.masked_fill(scores < vals[..., -1:], float('-inf'))"
    return (
        head
        + f"""
q, k, v = leaf({B}, {T}, {D}), leaf({B}, {T}, {D}), leaf({B}, {T}, {D})
scores = q @ k.transpose(-2, -1) / math.sqrt({D})
vals, idx = scores.topk({kk}, dim=-1)
R(idx)
{sp}
BW(F.softmax(sparse, dim=-1) @ v, q, k, v)
"""
    )


def k_memory(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, D = s["B"], s["T"], s["D"]
    M = r.randint(1, 3)
    way = r.choice(["expand", "repeat", "broadcast_to"])
    ex = {
        "expand": f"mem.expand({B}, -1, -1)",
        "repeat": f"mem.repeat({B}, 1, 1)",
        "broadcast_to": f"torch.broadcast_to(mem, ({B}, {M}, {D}))",
    }[way]
    return (
        head
        + f"""
mem = nn.Parameter(torch.randn(1, {M}, {D}, dtype=DT) * 0.02)
x = leaf({B}, {T}, {D})
h = torch.cat([{ex}, x], dim=1)
scores = torch.bmm(h, h.transpose(1, 2)) / {D} ** 0.5
att = scores.softmax(-1)
out = (att @ h)[:, {M}:]
BW(out, x, mem)
"""
    )


def k_block(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    # (C >= 4: a norm over two features gives +-1, whose weights' gradient is rounding noise an Adam step amplifies)
    B, T, H, C = s["B"], s["T"], s["H"], s["H"] * max(s["D"], 4)
    norm = r.choice(["ln", "rms_hand", "rms_mod"])
    normdef = {
        "ln": "self.n1, self.n2 = nn.LayerNorm(C, dtype=DT), nn.LayerNorm(C, eps=1e-6, dtype=DT)",
        "rms_hand": "self.n1, self.n2 = RMS(C), RMS(C)",
        "rms_mod": "self.n1, self.n2 = nn.RMSNorm(C, eps=1e-6, dtype=DT), nn.RMSNorm(C, dtype=DT)",
    }[norm]
    ff = r.choice(["swiglu", "geglu", "gelu"])
    ffdef = {
        "swiglu": "self.w12 = nn.Linear(C, 4 * C, bias=False, dtype=DT)\n        self.w3 = nn.Linear(2 * C, C, dtype=DT)",
        "geglu": "self.w12 = nn.Linear(C, 4 * C, dtype=DT)\n        self.w3 = nn.Linear(2 * C, C, dtype=DT)",
        "gelu": "self.w12 = nn.Linear(C, 4 * C, dtype=DT)\n        self.w3 = nn.Linear(4 * C, C, dtype=DT)",
    }[ff]  # fmt: skip
    ffrun = {
        "swiglu": "a, b = self.w12(h).chunk(2, dim=-1)\n        return self.w3(F.silu(a) * b)",
        "geglu": "a, gate = self.w12(h).chunk(2, -1)\n        return self.w3(a * F.gelu(gate))",
        "gelu": "return self.w3(F.gelu(self.w12(h), approximate='tanh'))",
    }[ff]
    pre = r.random() < 0.6
    fwd = (
        "x = x + self.drop(self.attn(self.n1(x)))\n        x = x + self.drop(self.ff(self.n2(x)))"
        if pre
        else "x = self.n1(x + self.drop(self.attn(x)))\n        x = self.n2(x + self.ff(x))"
    )
    init = r.choice(
        [
            "for mod in self.modules():\n            if isinstance(mod, nn.Linear):\n"
            "                nn.init.normal_(mod.weight, mean=0.0, std=0.02)\n"
            "                if mod.bias is not None:\n                    nn.init.zeros_(mod.bias)",
            "for p in self.parameters():\n            if p.dim() > 1:\n                nn.init.xavier_uniform_(p)",
            "pass",
        ]
    )
    opt = r.choice(
        [
            "torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)",
            "torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)",
            "torch.optim.Adam(m.parameters(), lr=3e-3, betas=(0.9, 0.95))",
        ]
    )
    tie = r.random() < 0.5
    clip = r.choice(["1.0", "0.1", "float('inf')"])
    return (
        head
        + f"""
B, T, H, C, V = {B}, {T}, {H}, {C}, 7
class RMS(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d, dtype=DT))
    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        # (no bias: the keys' bias has a zero gradient, a softmax's shift, whose rounding noise
        # an Adam step turns into a full step of either sign)
        self.qkv = nn.Linear(C, 3 * C, bias=False, dtype=DT)
        self.proj = nn.Linear(C, C, dtype=DT)
    def forward(self, x):
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
class FF(nn.Module):
    def __init__(self):
        super().__init__()
        {ffdef}
    def forward(self, h):
        {ffrun}
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        {normdef}
        self.attn, self.ff, self.drop = Attn(), FF(), nn.Dropout(0.1)
    def forward(self, x):
        {fwd}
        return x
class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, C, dtype=DT)
        self.block = Block()
        self.head = nn.Linear(C, V, bias=False, dtype=DT)
        if {tie}:
            self.head.weight = self.emb.weight
        {init}
    def forward(self, idx):
        return self.head(self.block(self.emb(idx)))
m = LM()
m.eval()
opt = {opt}
idx = torch.randint(0, V, (B, T))
for step in range(2):
    logits = m(idx)
    loss = F.cross_entropy(logits.view(-1, V), idx.roll(-1, 1).view(-1), label_smoothing={r.choice([0.0, 0.1])})
    opt.zero_grad()
    loss.backward()
    total = torch.nn.utils.clip_grad_norm_(m.parameters(), {clip})
    R(loss, total)
    opt.step()
R(*[p for p in m.parameters()])
"""
    )


# -- edges: ranks, empty rows, dtypes, fast paths, higher derivatives -------------------------------


def k_sdpa_edges(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    T, S, D = s["T"], r.randint(1, 5), s["D"]
    lead = r.choice([(), (2,), (2, 3), (1, 2, 2)])
    shp = ", ".join(str(n) for n in lead)
    qs, ks = f"({shp}{', ' if lead else ''}{T}, {D})", f"({shp}{', ' if lead else ''}{S}, {D})"
    mk = r.choice(["none", "empty_bool", "empty_float", "float32", "causal", "lower"])
    pre, opts = "", []
    if mk == "empty_bool":
        pre = f"m = torch.rand({T}, {S}) > 0.5\nm[{r.randrange(T)}] = False\n"
        opts.append("attn_mask=m")
    elif mk == "empty_float":
        pre = f"m = torch.zeros({T}, {S}, dtype=DT)\nm[{r.randrange(T)}] = float('-inf')\n"
        opts.append("attn_mask=m")
    elif mk == "float32":
        pre = f"m = torch.randn({T}, {S})\n"
        opts.append("attn_mask=m")
    elif mk == "causal":
        opts.append("is_causal=True")
    elif mk == "lower":
        pre = f"m = torch.ones({T}, {S}, dtype=torch.bool).tril(diagonal={r.randint(-1, 1)})\n"
        opts.append("attn_mask=m")
    call = f"F.scaled_dot_product_attention(q, k, v{''.join(', ' + o for o in opts)})"
    tail = r.choice(
        [
            f"T(lambda: BW({call}, q, k, v))",
            f"out = {call}\ng = torch.autograd.grad(out.pow(2).sum(), (q, v), create_graph=True)\nR(*g)\n"
            "T(lambda: BW(g[0] * g[1].sum(), q, k, v))",
            f"T(lambda: BW(F.scaled_dot_product_attention(q.double(), k, v{''.join(', ' + o for o in opts)}), q, k, v))",
        ]
    )
    return (
        head
        + f"""
q, k, v = leaf{qs}, leaf{ks}, leaf{ks}
{pre}{tail}
"""
    )


def k_mha_edges(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T = s["B"], s["T"]
    H = r.choice([1, 2])
    E = H * r.choice([2, 4])
    bf = r.random() < 0.6
    x = f"leaf({B}, {T}, {E})" if bf else f"leaf({T}, {B}, {E})"
    if r.random() < 0.2:
        x = f"leaf({T}, {E})"
    mk = r.choice(["kpm_empty", "am3d", "mixed", "fn", "none", "kpm_tail"])
    pre, opts = "", []
    if mk == "kpm_empty":
        pre = f"kpm = torch.zeros({B}, {T}, dtype=torch.bool)\nkpm[{r.randrange(B)}] = True\n"
        opts.append("key_padding_mask=kpm if x.dim() == 3 else kpm[0]")
    elif mk == "kpm_tail":
        pre = f"kpm = torch.arange({T})[None] >= torch.tensor({[r.randint(0, T) for _ in range(B)]})[:, None]\n"
        opts.append("key_padding_mask=kpm if x.dim() == 3 else kpm[0]")
    elif mk == "am3d":
        pre = f"am = torch.rand({B * H}, {T}, {T}) > 0.4\n"
        opts.append("attn_mask=am if x.dim() == 3 else am[:" + str(H) + "]")
    elif mk == "mixed":
        pre = (
            f"am = torch.ones({T}, {T}, dtype=torch.bool).triu(1)\n"
            f"kpm = torch.zeros({B}, {T}, dtype=DT).masked_fill(torch.rand({B}, {T}) > 0.7, float('-inf'))\n"
        )
        opts += ["attn_mask=am", "key_padding_mask=kpm if x.dim() == 3 else kpm[0]"]
    nw = r.choice(["True", "False"])
    opts.append(f"need_weights={nw}")
    if r.random() < 0.3:
        opts.append("average_attn_weights=False")
    mode = r.choice(["train", "eval", "eval_nograd", "dropout"])
    drop = ", dropout=0.5" if mode == "dropout" else ""
    call = f"mha(x, x, x, {', '.join(opts)})"
    if mode == "eval_nograd":
        body = f"mha.eval()\nwith torch.no_grad():\n    out, w = {call}\nR(out, w)"
    else:
        body = ("mha.eval()\n" if mode == "eval" else "") + f"out, w = {call}\nR(w)\nBW(out, x, mha.in_proj_weight)"
    return (
        head
        + f"""
mha = nn.MultiheadAttention({E}, {H}, batch_first={bf}{drop}, dtype=DT)
x = {x}
{pre}def go():
    {body.replace(chr(10), chr(10) + "    ")}
T(go)
"""
    )


def k_transformer(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, S = s["B"], s["T"], r.randint(1, 5)
    H = r.choice([1, 2])
    E = H * 4
    bf = r.random() < 0.5
    nf = r.random() < 0.5
    act = r.choice(["'relu'", "'gelu'", "F.silu"])
    xs = f"({B}, {T}, {E})" if bf else f"({T}, {B}, {E})"
    ms = f"({B}, {S}, {E})" if bf else f"({S}, {B}, {E})"
    kpm = f"torch.arange({T})[None] >= torch.tensor({[r.randint(1, T) for _ in range(B)]})[:, None]"
    dec = r.random() < 0.5
    if dec:
        layer = f"nn.TransformerDecoderLayer({E}, {H}, 8, dropout=0.0, activation={act}, batch_first={bf}, norm_first={nf}, dtype=DT)"
        call = (
            f"layer(x, mem, tgt_mask=nn.Transformer.generate_square_subsequent_mask({T}, dtype=DT), "
            f"tgt_is_causal={r.random() < 0.5}, tgt_key_padding_mask={kpm if r.random() < 0.5 else None})"
        )
        leaves = "x, mem"
    else:
        layer = f"nn.TransformerEncoderLayer({E}, {H}, 8, dropout=0.0, activation={act}, batch_first={bf}, norm_first={nf}, dtype=DT)"
        mask = r.choice(["None", f"nn.Transformer.generate_square_subsequent_mask({T}, dtype=DT)",
                         f"torch.ones({T}, {T}).triu(1).bool()"])  # fmt: skip
        call = f"layer(x, src_mask={mask}, src_key_padding_mask={kpm if r.random() < 0.5 else None})"
        leaves = "x"
    return (
        head
        + f"""
layer = {layer}
x, mem = leaf{xs}, leaf{ms}
T(lambda: BW({call}, {leaves}))
"""
    )


def k_grad_penalty(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T, D = s["B"], s["T"], s["D"]
    fill = _mask_fill(r)
    return (
        head
        + f"""
q, k, v = leaf({B}, {T}, {D}), leaf({B}, {T}, {D}), leaf({B}, {T}, {D})
s = (q @ k.transpose(-2, -1)) / math.sqrt({D})
s = s.masked_fill(torch.ones({T}, {T}).triu(1).bool(), {fill})
out = torch.softmax(s, dim=-1) @ v
gq, gv = torch.autograd.grad(out.square().sum(), [q, v], create_graph=True)
penalty = gq.pow(2).sum() + (gv.norm() - 1) ** 2
R(gq, gv, penalty)
penalty.backward()
R(q.grad, k.grad, v.grad)
"""
    )


def k_encoder_inference(r: random.Random) -> str:
    head, s = _head(r, r.randrange(10**6))
    B, T = r.randint(1, 3), r.randint(1, 5)
    H = r.choice([1, 2])
    E = H * 4
    bf, nf = r.random() < 0.7, r.random() < 0.3
    act = r.choice(["'relu'", "'gelu'", "F.silu", "nn.GELU()"])
    lengths = [r.randint(0, T) for _ in range(B)]
    kpm = r.choice(
        [
            f"torch.arange({T})[None] >= torch.tensor({lengths})[:, None]",
            f"torch.rand({B}, {T}) > 0.6",
            f"torch.zeros({B}, {T}).masked_fill(torch.arange({T})[None] >= torch.tensor({lengths})[:, None], float('-inf'))",
            "None",
        ]
    )
    mask = r.choice(["None", "None", f"torch.ones({T}, {T}).triu(1).bool()"])
    xs = f"({B}, {T}, {E})" if bf else f"({T}, {B}, {E})"
    if not bf and kpm != "None":
        kpm = f"({kpm})"
    grad = r.random() < 0.3
    run = "out = enc(x, mask=mask, src_key_padding_mask=kpm)"
    body = f"x.requires_grad_()\n{run}" if grad else f"with torch.no_grad():\n    {run}"
    return (
        head
        + f"""
layer = nn.TransformerEncoderLayer({E}, {H}, 8, activation={act}, batch_first={bf}, norm_first={nf}, dtype=DT)
enc = nn.TransformerEncoder(layer, {r.randint(1, 2)}, norm={r.choice(["None", "nn.LayerNorm(" + str(E) + ", dtype=DT)"])}, enable_nested_tensor={r.random() < 0.8})
enc.eval()
x = torch.randn{xs}.to(DT)
mask, kpm = {mask}, {kpm}
def go():
    {body.replace(chr(10), chr(10) + "    ")}
    R(out)
T(go)
"""
    )


KINDS: dict[str, Callable[[random.Random], str]] = {
    "causal": k_causal, "padding": k_padding, "sdpa": k_sdpa, "mha": k_mha, "sinusoidal": k_sinusoidal,
    "rotary": k_rotary, "alibi": k_alibi, "relbias": k_relbias, "t5_bucket": k_t5_bucket,
    "fused_qkv": k_fused_qkv, "gqa": k_gqa, "kv_cache": k_kv_cache, "local": k_local,
    "linear_attn": k_linear_attn, "cosine": k_cosine, "chunked": k_chunked, "half": k_half, "topk": k_topk,
    "memory": k_memory, "block": k_block, "sdpa_edges": k_sdpa_edges, "mha_edges": k_mha_edges,
    "transformer": k_transformer, "grad_penalty": k_grad_penalty, "encoder_inference": k_encoder_inference,
}  # fmt: skip


def program(seed: int) -> str:
    return program_of(KINDS, seed)


def _difference(src: str, torch: Any) -> tuple[str, str] | None:
    return float32_difference(src, torch)


def failures(seeds: range, torch: Any) -> list[tuple]:
    return generated_failures(KINDS, seeds, torch, _difference, HELPERS)


# -- the tests ------------------------------------------------------------------------------------

FAST_SEEDS = range(0, 400)
SLOW_SEEDS = range(400, 4000)

#: Differences known and not yet fixed, by seed: each must still differ (a fixed one is taken off).
KNOWN: dict[int, str] = {
    663: ROUNDING
    + "float32 rounding: linear attention over one token, whose q and k gradients are differences of equal "
    "terms (1e-6 against outputs of 1); the program in float64 agrees to the last bit",
}


test_attention_programs_run_as_in_torch, test_more_attention_programs_run_as_in_torch = seed_tests(
    failures, KNOWN, FAST_SEEDS, SLOW_SEEDS, 100, 400
)


def test_programs_differ_with_the_seed() -> None:
    assert len({program(s) for s in range(60)}) == 60


if __name__ == "__main__":
    report(failures, KINDS, sys.argv)
