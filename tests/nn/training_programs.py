"""A seed-driven builder of small, complete training programs written as a PyTorch user writes
them, and the comparison of what one observes with ``torch`` bound to PyTorch and to
tinygrad_attn (tests/differential.py runs each).

``build(seed)`` draws a model (stacks of Linear, Bilinear, convolutions, norms, embeddings,
recurrent layers, attention, transformer layers, weight tying, frozen and shared parameters,
parametrizations), a loss with its options, an optimizer with its flags and param groups, a
scheduler, and a loop of a few steps (clipping, micro-batches, ``retain_graph``, state dict
round trips, evaluation under ``no_grad``), and returns the program's text. ``compare(seed)``
runs it on both and says how they differ: ``None``, or ``(kind, message)`` with kind one of
``silent`` (a recorded value differs), ``crash`` (we raised, PyTorch ran), ``return`` (PyTorch
raised, we ran), ``exception`` (another class).

Run as a script to sweep seeds: ``python -m tests.nn.training_programs 0 2000``."""

from __future__ import annotations

import functools
import math
import random
import sys
from typing import Any

import numpy as np

from tests.differential import run

ACTIVATIONS = [
    "nn.ReLU()", "nn.GELU()", "nn.GELU(approximate='tanh')", "nn.Tanh()", "nn.Sigmoid()", "nn.SiLU()",
    "nn.Mish()", "nn.ELU(alpha=0.7)", "nn.CELU(alpha=1.3)", "nn.SELU()", "nn.LeakyReLU(0.05)",
    "nn.PReLU()", "nn.Softplus(beta=2.0, threshold=5.0)", "nn.Hardtanh(-0.5, 0.7)", "nn.ReLU6()",
    "nn.Hardswish()", "nn.Hardsigmoid()", "nn.LogSigmoid()", "nn.Softsign()", "nn.Tanhshrink()",
    "nn.Softshrink(0.1)", "nn.Hardshrink(0.1)", "nn.Threshold(0.1, -1.0)", "nn.RReLU(0.1, 0.3)",
    "nn.GLU(-1)", "nn.Identity()", "nn.Softmax(dim=-1)", "nn.LogSoftmax(dim=-1)", "nn.Softmin(dim=-1)",
]  # fmt: skip
# activations that halve the last axis
HALVES = {"nn.GLU(-1)"}


def _f(r: random.Random, *choices: Any) -> Any:
    return r.choice(choices)


class _Builder:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        # (dropout's choices come from a stream of their own, so that the programs' other choices
        # stay what they were; where PyTorch's masks come from MKL's stream, no program drops)
        self.rd = random.Random(f"{seed}/dropout")
        self.seed = seed
        self.init: list[str] = []  # lines of Net.__init__
        self.fwd: list[str] = []  # lines of Net.forward, reading x (and maybe x2), ending with h (B, H)
        self.pre: list[str] = []  # program lines before the model (inputs)
        self.post_model: list[str] = []  # lines after the model is built (tying, freezing, parametrizations)
        self.B = self.r.randint(3, 5)  # (batch norm over two samples has no gradient but rounding noise)
        self.inputs = "x"
        self.eval_safe = True

    def _dropout(self, *ps: float) -> float:
        """A dropout probability for a layer: 0.0 half of the time, else one of ``ps``."""
        p = self.rd.choice(ps) if self.rd.random() < 0.5 else 0.0
        return p if _DROPOUT_AS_TORCH() else 0.0

    # ---- trunks: each leaves (B, H) in h and returns H
    def act(self, width: int) -> tuple[str, int]:
        a = self.r.choice(ACTIVATIONS)
        if a in HALVES:
            return a, width // 2 if width % 2 == 0 else -1
        return a, width

    def mlp(self) -> int:
        r = self.r
        F = r.randint(2, 6)
        self.pre.append(f"x = torch.randn({self.B}, {F})")
        layers, w = [], F
        for _ in range(r.randint(1, 3)):
            h = r.randint(2, 6) * 2
            bias = r.random() < 0.8
            layers.append(f"nn.Linear({w}, {h}" + ("" if bias else ", bias=False") + ")")
            w = h
            kind = r.random()
            if kind < 0.15:
                # (a bias before batch norm has no gradient but rounding noise, which sign-like
                # optimizers blow up: users leave it out)
                layers[-1] = f"nn.Linear({layers[-1].split('(')[1].split(',')[0]}, {w}, bias=False)"
                mom = _f(r, "0.1", "None", "0.5")
                aff = _f(r, "True", "False")
                trs = _f(r, "True", "True", "False")
                layers.append(f"nn.BatchNorm1d({w}, momentum={mom}, affine={aff}, track_running_stats={trs})")
            elif kind < 0.3:
                layers.append(
                    _f(
                        r,
                        f"nn.LayerNorm({w})",
                        f"nn.LayerNorm({w}, elementwise_affine=False)",
                        f"nn.LayerNorm({w}, bias=False, eps=1e-3)",
                        f"nn.RMSNorm({w})",
                        f"nn.RMSNorm([{w}], eps=1e-4, elementwise_affine=False)",
                        f"nn.GroupNorm(2, {w})" if w >= 6 else f"nn.GroupNorm(1, {w})",  # (norms of two are signs)
                        f"nn.GroupNorm(1, {w}, affine=False)",
                    )
                )
            a, nw = self.act(w)
            if nw > 0:
                layers.append(a)
                w = nw
            if r.random() < 0.2:
                layers.append(_f(r, "nn.Dropout(0.0)", "nn.Dropout(p=0)", "nn.AlphaDropout(0.0)", "nn.Dropout1d(0.0)"))
        style = r.random()
        if style < 0.5:
            self.init.append("self.body = nn.Sequential(" + ", ".join(layers) + ")")
            self.fwd.append("h = self.body(x)")
        elif style < 0.75:
            self.init.append("self.body = nn.ModuleList([" + ", ".join(layers) + "])")
            self.fwd += ["h = x", "for layer in self.body:", "    h = layer(h)"]
        else:
            items = ", ".join(f"'l{i}': {layer}" for i, layer in enumerate(layers))
            self.init.append("self.body = nn.ModuleDict({" + items + "})")
            self.fwd += ["h = x", "for key in self.body:", "    h = self.body[key](h)"]
        if r.random() < 0.15 and len(layers) >= 1:
            self.post_model.append("model.body[0].weight.requires_grad_(False)" if style < 0.75 else
                                   "model.body['l0'].weight.requires_grad_(False)")  # fmt: skip
        return w

    def bilinear(self) -> int:
        r = self.r
        F1, F2, H = r.randint(2, 4), r.randint(2, 4), r.randint(2, 5)
        self.pre += [f"x = torch.randn({self.B}, {F1})", f"x2 = torch.randn({self.B}, {F2})"]
        self.inputs = "x, x2"
        self.init.append(f"self.bil = nn.Bilinear({F1}, {F2}, {H}, bias={_f(r, 'True', 'False')})")
        self.fwd.append("h = self.bil(x, x2)")
        return H

    def conv(self) -> int:
        r = self.r
        d = _f(r, 1, 2)
        C = r.randint(1, 3)
        size = [r.randint(6, 9) for _ in range(d)]
        self.pre.append(f"x = torch.randn({self.B}, {C}, {', '.join(map(str, size))})")
        layers = []
        c = C
        for _ in range(r.randint(1, 2)):
            groups = _f(r, 1, 1, c) if c > 1 else 1
            c2 = groups * r.randint(1, 3)
            k = r.randint(1, 3)
            stride = _f(r, 1, 1, 2)
            dil = _f(r, 1, 1, 2)
            mode = _f(r, "'zeros'", "'zeros'", "'reflect'", "'replicate'", "'circular'")
            pad = _f(r, "0", "1", "'same'", "'valid'") if stride == 1 else _f(r, "0", "1")
            if mode == "'reflect'" and pad == "1" and k == 1:
                pad = "0"
            if (ACT := r.random()) < 0.25:
                op = _f(r, 0, 1) if stride > 1 and dil == 1 else 0
                layers.append(
                    f"nn.ConvTranspose{d}d({c}, {c2}, {k}, stride={stride}, padding=0, output_padding={op}, "
                    f"groups={groups}, dilation={dil}, bias={_f(r, 'True', 'False')})"
                )
            else:
                layers.append(
                    f"nn.Conv{d}d({c}, {c2}, {k}, stride={stride}, padding={pad}, dilation={dil}, groups={groups}, "
                    f"bias={_f(r, 'True', 'False')}, padding_mode={mode})"
                )
            c = c2
            del ACT
            n = r.random()
            if n < 0.45:  # (no bias before a norm that removes it: see mlp)
                layers[-1] = layers[-1].replace("bias=True", "bias=False")
            if n < 0.25:
                layers.append(
                    f"nn.BatchNorm{d}d({c}, momentum={_f(r, '0.1', 'None')}, affine={_f(r, 'True', 'False')})"
                )
            elif n < 0.35:
                layers.append(f"nn.InstanceNorm{d}d({c}, affine={_f(r, 'True', 'False')}, "
                              f"track_running_stats={_f(r, 'True', 'False')})")  # fmt: skip
            elif n < 0.45:
                layers.append(f"nn.GroupNorm(1, {c})")
            a, nw = self.act(c)
            if a not in HALVES and "dim=-1" not in a:
                layers.append(a)
            if r.random() < 0.2:
                layers.append(_f(r, f"nn.MaxPool{d}d(2, ceil_mode=True)", f"nn.AvgPool{d}d(2, ceil_mode=True)",
                                 f"nn.MaxPool{d}d(2, stride=1, padding=1)", f"nn.LPPool{d}d(2, 2, ceil_mode=True)"))  # fmt: skip
        pool = _f(r, f"nn.AdaptiveAvgPool{d}d(1)", f"nn.AdaptiveMaxPool{d}d(1)")
        layers += [pool, "nn.Flatten()"]
        self.init.append("self.body = nn.Sequential(" + ", ".join(layers) + ")")
        self.fwd.append("h = self.body(x)")
        return c

    def embedding(self) -> int:
        r = self.r
        V, E, T = r.randint(5, 9), r.randint(2, 5), r.randint(2, 5)
        self.pre.append(f"x = torch.randint(0, {V}, ({self.B}, {T}))")
        if r.random() < 0.6:
            opts = []
            if r.random() < 0.4:
                opts.append(f"padding_idx={r.randint(-V, V - 1)}")
            if r.random() < 0.3:
                opts.append(f"max_norm={_f(r, 0.5, 1.0, 2.0)}, norm_type={_f(r, 1.0, 2.0, 3.0)}")
            if r.random() < 0.2:
                opts.append("scale_grad_by_freq=True")
            self.init.append(f"self.emb = nn.Embedding({V}, {E}" + "".join(", " + o for o in opts) + ")")
            self.fwd.append(_f(r, "h = self.emb(x).mean(1)", "h = self.emb(x).sum(dim=1)", "h = self.emb(x)[:, 0]"))
            if r.random() < 0.2 and "max_norm" not in "".join(opts):
                self.init.append(f"self.out_proj = nn.Linear({E}, {V}, bias=False)")
                self.init.append("self.out_proj.weight = self.emb.weight")
                self.fwd.append("h = self.out_proj(h)")
                return V
            return E
        mode = _f(r, "'sum'", "'mean'", "'max'")
        opts = [f"mode={mode}"]
        if r.random() < 0.3:
            opts.append(f"padding_idx={r.randint(0, V - 1)}")
        if r.random() < 0.2:
            opts.append("max_norm=1.0")
        self.init.append(f"self.emb = nn.EmbeddingBag({V}, {E}, " + ", ".join(opts) + ")")
        if r.random() < 0.5:
            psw = r.random() < 0.5 and mode == "'sum'"
            if psw:
                self.pre.append(f"psw = torch.rand({self.B}, {T})")
            self.fwd.append("h = self.emb(x" + (", per_sample_weights=psw" if psw else "") + ")")
        else:
            n = self.B * T
            offs = sorted(r.sample(range(1, n), self.B - 1))
            last = r.random() < 0.3
            offs = [0, *offs] + ([n] if last else [])
            if last:
                self.init[-1] = self.init[-1][:-1] + ", include_last_offset=True)"
            self.pre.append(f"offsets = torch.tensor({offs})")
            self.fwd.append("h = self.emb(x.flatten(), offsets)")
        return E

    def recurrent(self) -> int:
        r = self.r
        kind = _f(r, "RNN", "GRU", "LSTM")
        F, H, T = r.randint(2, 4), r.randint(2, 5), r.randint(2, 5)
        L = _f(r, 1, 1, 2)
        bi = r.random() < 0.4
        bf = r.random() < 0.5
        opts = [f"num_layers={L}", f"bidirectional={bi}", f"batch_first={bf}"]
        if kind == "RNN" and r.random() < 0.4:
            opts.append("nonlinearity='relu'")
        proj = 0
        if kind == "LSTM" and r.random() < 0.3 and H > 2:
            proj = r.randint(1, H - 1)
            opts.append(f"proj_size={proj}")
        if r.random() < 0.2:
            opts.append("bias=False")
        if L > 1 and (p := self._dropout(0.2, 0.5)):
            opts.append(f"dropout={p}")
        self.init.append(f"self.rnn = nn.{kind}({F}, {H}, " + ", ".join(opts) + ")")
        shape = (self.B, T, F) if bf else (T, self.B, F)
        self.pre.append(f"x = torch.randn{shape}")
        out_w = (proj or H) * (2 if bi else 1)
        packed = r.random() < 0.35
        if packed:
            lengths = [r.randint(1, T) for _ in range(self.B)]
            sorted_ = r.random() < 0.5
            if sorted_:
                lengths.sort(reverse=True)
            lengths[0 if sorted_ else r.randrange(self.B)] = T
            self.pre.append(f"lengths = torch.tensor({lengths})")
            self.fwd.append(
                f"p = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first={bf}, enforce_sorted={sorted_})"
            )
            self.fwd.append("out, hid = self.rnn(p)")
            self.fwd.append(f"out, lens = nn.utils.rnn.pad_packed_sequence(out, batch_first={bf})")
        else:
            if r.random() < 0.3:
                nd = L * (2 if bi else 1)
                self.pre.append(f"h0 = torch.randn({nd}, {self.B}, {proj or H})")
                if kind == "LSTM":
                    self.pre.append(f"c0 = torch.randn({nd}, {self.B}, {H})")
                    self.fwd.append("out, hid = self.rnn(x, (h0, c0))")
                else:
                    self.fwd.append("out, hid = self.rnn(x, h0)")
            else:
                self.fwd.append("out, hid = self.rnn(x)")
        hn = "hid[0]" if kind == "LSTM" else "hid"
        how = r.random()
        if how < 0.4:
            self.fwd.append(f"h = {hn}[-1]")
            return proj or H
        if how < 0.7:
            self.fwd.append("h = out.sum(1)" if bf else "h = out.sum(0)")
        else:
            self.fwd.append(f"h = torch.cat([{hn}[i] for i in range({hn}.shape[0])], dim=1)")
            return (proj or H) * L * (2 if bi else 1)
        return out_w

    def attention(self) -> int:
        r = self.r
        heads = _f(r, 1, 2)
        E = heads * r.randint(1, 3) * 2
        T, S = r.randint(2, 4), r.randint(2, 4)
        bf = r.random() < 0.5
        opts = [f"batch_first={bf}"]
        kd = vd = E
        if r.random() < 0.3:
            kd, vd = r.randint(2, 5), r.randint(2, 5)
            opts.append(f"kdim={kd}, vdim={vd}")
        if r.random() < 0.2:
            opts.append("bias=False")
        if r.random() < 0.2:
            opts.append("add_bias_kv=True")
        if r.random() < 0.2:
            opts.append("add_zero_attn=True")
        self.init.append(f"self.mha = nn.MultiheadAttention({E}, {heads}, " + ", ".join(opts) + ")")
        q = (self.B, T, E) if bf else (T, self.B, E)
        k = (self.B, S, kd) if bf else (S, self.B, kd)
        v = (self.B, S, vd) if bf else (S, self.B, vd)
        self_attn = kd == vd == E and r.random() < 0.4
        if self_attn:
            S = T
            self.pre.append(f"x = torch.randn{q}")
            args = "x, x, x"
        else:
            self.pre += [f"x = torch.randn{q}", f"kk = torch.randn{k}", f"vv = torch.randn{v}"]
            self.pre[-2] = self.pre[-2].replace(str(k), str((self.B, S, kd) if bf else (S, self.B, kd)))
            self.pre[-1] = self.pre[-1].replace(str(v), str((self.B, S, vd) if bf else (S, self.B, vd)))
            args = "x, kk, vv"
        kw = []
        if r.random() < 0.4:
            lens = [r.randint(1, S) for _ in range(self.B)]
            if r.random() < 0.5:
                self.pre.append(f"kpm = torch.arange({S})[None, :] >= torch.tensor({lens})[:, None]")
            else:
                self.pre.append(
                    f"kpm = torch.zeros({self.B}, {S}).masked_fill(torch.arange({S})[None, :] >= "
                    f"torch.tensor({lens})[:, None], float('-inf'))"
                )
            kw.append("key_padding_mask=kpm")
        if r.random() < 0.4:
            m = r.random()
            if m < 0.4:
                self.pre.append(f"am = torch.rand({T}, {S}) < 0.3")
                self.pre.append("am[:, 0] = False")
            elif m < 0.7:
                self.pre.append(f"am = torch.randn({T}, {S})")
            else:
                self.pre.append(f"am = torch.randn({self.B * heads}, {T}, {S})")
            kw.append("attn_mask=am")
            if "kpm" in " ".join(self.pre) and (("rand(" in self.pre[-1] or "< 0.3" in " ".join(self.pre[-2:])) and
                                                "zeros" in " ".join(self.pre)):  # fmt: skip
                pass
        nw = r.random()
        if nw < 0.3:
            kw.append("need_weights=False")
        elif nw < 0.5:
            kw.append("average_attn_weights=False")
        self.fwd.append(f"h, attw = self.mha({args}" + "".join(", " + a for a in kw) + ")")
        if "need_weights=False" not in kw:
            self.fwd.append("self.last_weights = attw.detach()")
            self.records_attn = True
        self.fwd.append("h = h.mean(1)" if bf else "h = h.mean(0)")
        return E

    def transformer(self) -> int:
        r = self.r
        heads = _f(r, 1, 2)
        d = heads * r.randint(1, 2) * 2
        ff = r.randint(3, 8)
        T = r.randint(2, 4)
        bf = r.random() < 0.5
        act = _f(r, "'relu'", "'gelu'", "F.gelu", "F.relu", "nn.GELU()", "torch.tanh")
        opts = (f"dim_feedforward={ff}, dropout={self._dropout(0.1, 0.3)}, activation={act}, batch_first={bf}, "
                f"norm_first={_f(r, 'True', 'False')}")  # fmt: skip
        if r.random() < 0.2:
            opts += ", layer_norm_eps=1e-3"
        if r.random() < 0.15:
            opts += ", bias=False"
        dec = r.random() < 0.35
        shape = (self.B, T, d) if bf else (T, self.B, d)
        self.pre.append(f"x = torch.randn{shape}")
        kw = []
        if r.random() < 0.4:
            kw_name = "tgt_mask" if dec else "mask"
            if r.random() < 0.5:
                self.pre.append(f"sm = nn.Transformer.generate_square_subsequent_mask({T})")
                kw.append(f"{kw_name}=sm")
                if r.random() < 0.5:
                    kw.append("tgt_is_causal=True" if dec else "is_causal=True")
            else:
                self.pre.append(f"sm = torch.rand({T}, {T}) < 0.3")
                self.pre.append("sm.fill_diagonal_(False)")
                kw.append(f"{kw_name}=sm")
        if r.random() < 0.3:
            lens = [r.randint(1, T) for _ in range(self.B)]
            self.pre.append(f"kpm = torch.arange({T})[None, :] >= torch.tensor({lens})[:, None]")
            kw.append(("tgt_key_padding_mask" if dec else "src_key_padding_mask") + "=kpm")
        if dec:
            S = r.randint(2, 4)
            self.pre.append(f"mem = torch.randn{(self.B, S, d) if bf else (S, self.B, d)}")
            self.inputs = "x, mem"
            layer = f"nn.TransformerDecoderLayer({d}, {heads}, {opts})"
            if r.random() < 0.5:
                self.init.append(f"self.tf = {layer}")
            else:
                norm = _f(r, "None", f"nn.LayerNorm({d})")
                self.init.append(f"self.tf = nn.TransformerDecoder({layer}, num_layers={r.randint(1, 2)}, norm={norm})")
            self.fwd.append("h = self.tf(x, mem" + "".join(", " + a for a in kw) + ")")
        else:
            layer = f"nn.TransformerEncoderLayer({d}, {heads}, {opts})"
            if r.random() < 0.5:
                self.init.append(f"self.tf = {layer}")
                kw = [a.replace("mask=", "src_mask=") if a.startswith("mask=") else a for a in kw]
            else:
                norm = _f(r, "None", f"nn.LayerNorm({d})")
                self.init.append(
                    f"self.tf = nn.TransformerEncoder({layer}, num_layers={r.randint(1, 2)}, norm={norm}, "
                    "enable_nested_tensor=False)"
                )
            self.fwd.append("h = self.tf(x" + "".join(", " + a for a in kw) + ")")
        self.fwd.append("h = h.mean(1)" if bf else "h = h.mean(0)")
        self.eval_safe = False  # the fast path in eval differs in masked rows by design
        return d

    # ---- losses: given the head's width C, set up the head, target and loss lines
    def loss(self, H: int) -> None:
        r = self.r
        B = self.B
        C = r.randint(2, 5)
        red = _f(r, "'mean'", "'mean'", "'sum'", "'none'")
        kind = r.choice([
            "ce", "ce", "ce_prob", "nll", "bce_logits", "bce", "mse", "l1", "smooth_l1", "huber", "kldiv",
            "poisson", "gaussian", "multi_margin", "multilabel_margin", "multilabel_soft", "soft_margin",
            "hinge", "margin_ranking", "cosine", "triplet", "ctc",
        ])  # fmt: skip
        self.loss_kind = kind
        fn = r.random() < 0.4  # functional form instead of the module
        out_w = C
        if kind == "ctc":
            T2 = r.randint(3, 5)
            out_w = T2 * C
        elif kind in ("margin_ranking",):
            out_w = 2
        elif kind in ("cosine", "triplet"):
            out_w = 2 * C if kind == "cosine" else 3 * C
        self.init.append(f"self.head = nn.Linear({H}, {out_w})")
        self.fwd.append("return self.head(h)")
        P = self.pre
        L: list[str] = []  # lines computing `loss` from `out`
        if kind in ("ce", "nll"):
            P.append(f"y = torch.randint(0, {C}, ({B},))")
            opts = [f"reduction={red}"]
            if r.random() < 0.3:
                P.append(f"cw = torch.rand({C}) + 0.1")
                opts.append("weight=cw")
            if r.random() < 0.3:
                ig = _f(r, -100, 0, 1)
                P.append(f"y[0] = {ig}")
                opts.append(f"ignore_index={ig}")
            if kind == "ce" and r.random() < 0.3:
                opts.append(f"label_smoothing={_f(r, 0.1, 0.25)}")
            name = "cross_entropy" if kind == "ce" else "nll_loss"
            inp = "out" if kind == "ce" else "F.log_softmax(out, dim=1)"
            cls = "CrossEntropyLoss" if kind == "ce" else "NLLLoss"
            L.append(f"loss = F.{name}({inp}, y, {', '.join(opts)})" if fn else
                     f"loss = nn.{cls}({', '.join(opts)})({inp}, y)")  # fmt: skip
        elif kind == "ce_prob":
            P.append(f"y = torch.softmax(torch.randn({B}, {C}), dim=1)")
            opts = [f"reduction={red}"]
            if r.random() < 0.3:
                P.append(f"cw = torch.rand({C}) + 0.1")
                opts.append("weight=cw")
            if r.random() < 0.3:
                opts.append("label_smoothing=0.2")
            L.append(f"loss = nn.CrossEntropyLoss({', '.join(opts)})(out, y)")
        elif kind in ("bce_logits", "bce"):
            P.append(
                _f(r, f"y = torch.rand({B}, {C})", f"y = (torch.rand({B}, {C}) > 0.5).to(torch.get_default_dtype())")
            )
            opts = [f"reduction={red}"]
            if r.random() < 0.3:
                P.append(f"bw = torch.rand({C}) + 0.5")
                opts.append("weight=bw")
            if kind == "bce_logits":
                if r.random() < 0.4:
                    P.append(f"pw = torch.rand({C}) * 3")
                    opts.append("pos_weight=pw")
                L.append(f"loss = F.binary_cross_entropy_with_logits(out, y, {', '.join(opts)})" if fn else
                         f"loss = nn.BCEWithLogitsLoss({', '.join(opts)})(out, y)")  # fmt: skip
            else:
                L.append(f"loss = F.binary_cross_entropy(torch.sigmoid(out), y, {', '.join(opts)})" if fn else
                         f"loss = nn.BCELoss({', '.join(opts)})(torch.sigmoid(out), y)")  # fmt: skip
        elif kind in ("mse", "l1", "smooth_l1", "huber"):
            P.append(f"y = torch.randn({B}, {C})")
            extra = {"smooth_l1": f", beta={_f(r, 1.0, 0.5, 0.0)}", "huber": f", delta={_f(r, 1.0, 0.3)}"}.get(kind, "")
            cls = {"mse": "MSELoss", "l1": "L1Loss", "smooth_l1": "SmoothL1Loss", "huber": "HuberLoss"}[kind]
            name = {"mse": "mse_loss", "l1": "l1_loss", "smooth_l1": "smooth_l1_loss", "huber": "huber_loss"}[kind]
            L.append(f"loss = F.{name}(out, y, reduction={red}{extra})" if fn else
                     f"loss = nn.{cls}(reduction={red}{extra})(out, y)")  # fmt: skip
        elif kind == "kldiv":
            lt = r.random() < 0.4
            red2 = _f(r, "'batchmean'", "'sum'", "'mean'", "'none'")
            P.append(f"y = torch.{'log_softmax' if lt else 'softmax'}(torch.randn({B}, {C}), dim=1)")
            L.append(f"loss = nn.KLDivLoss(reduction={red2}, log_target={lt})(F.log_softmax(out, dim=1), y)")
        elif kind == "poisson":
            li = r.random() < 0.6
            full = r.random() < 0.4
            P.append(f"y = torch.randint(0, 5, ({B}, {C})).to(torch.get_default_dtype())")
            inp = "out" if li else "F.softplus(out)"
            L.append(f"loss = nn.PoissonNLLLoss(log_input={li}, full={full}, reduction={red})({inp}, y)")
        elif kind == "gaussian":
            P.append(f"y = torch.randn({B}, {C})")
            full = r.random() < 0.5
            var = _f(r, "F.softplus(out) + 0.1", f"torch.ones({B}, 1)", f"torch.full(({B}, {C}), 0.5)")
            L.append(f"loss = nn.GaussianNLLLoss(full={full}, reduction={red})(out, y, {var})")
        elif kind == "multi_margin":
            P.append(f"y = torch.randint(0, {C}, ({B},))")
            opts = [f"p={_f(r, 1, 2)}", f"margin={_f(r, 1.0, 0.5)}", f"reduction={red}"]
            if r.random() < 0.3:
                P.append(f"cw = torch.rand({C}) + 0.1")
                opts.append("weight=cw")
            L.append(f"loss = nn.MultiMarginLoss({', '.join(opts)})(out, y)")
        elif kind == "multilabel_margin":
            rows = []
            for _ in range(B):
                k = r.randint(0, C)
                labels = r.sample(range(C), k) + ([-1] if k < C else [])
                rows.append((labels + [r.randint(-1, C - 1) for _ in range(C)])[:C])
            P.append(f"y = torch.tensor({rows})")
            L.append(f"loss = nn.MultiLabelMarginLoss(reduction={red})(out, y)")
        elif kind == "multilabel_soft":
            P.append(f"y = (torch.rand({B}, {C}) > 0.5).long()")
            opts = f"reduction={red}"
            if r.random() < 0.3:
                P.append(f"cw = torch.rand({C})")
                opts += ", weight=cw"
            L.append(f"loss = nn.MultiLabelSoftMarginLoss({opts})(out, y)")
        elif kind in ("soft_margin", "hinge"):
            P.append(f"y = torch.randint(0, 2, ({B}, {C})) * 2 - 1")
            if kind == "soft_margin":
                L.append(f"loss = nn.SoftMarginLoss(reduction={red})(out, y.to(out.dtype))")
            else:
                L.append(f"loss = nn.HingeEmbeddingLoss(margin={_f(r, 1.0, 0.3)}, reduction={red})(out, y)")
        elif kind == "margin_ranking":
            P.append(f"y = torch.randint(0, 2, ({B},)) * 2 - 1")
            L.append(f"loss = nn.MarginRankingLoss(margin={_f(r, 0.0, 0.5)}, reduction={red})(out[:, 0], out[:, 1], y)")
        elif kind == "cosine":
            P.append(f"y = torch.randint(0, 2, ({B},)) * 2 - 1")
            L.append(f"loss = nn.CosineEmbeddingLoss(margin={_f(r, 0.0, 0.2)}, reduction={red})"
                     f"(out[:, :{C}], out[:, {C}:], y)")  # fmt: skip
        elif kind == "triplet":
            a, p, n = f"out[:, :{C}]", f"out[:, {C}:{2 * C}]", f"out[:, {2 * C}:]"
            if r.random() < 0.5:
                L.append(f"loss = nn.TripletMarginLoss(margin={_f(r, 1.0, 0.5)}, p={_f(r, 1, 2)}, "
                         f"swap={_f(r, 'True', 'False')}, reduction={red})({a}, {p}, {n})")  # fmt: skip
            else:
                dist = _f(r, "None", "nn.PairwiseDistance()", "lambda u, v: 1 - F.cosine_similarity(u, v)")
                L.append(f"loss = nn.TripletMarginWithDistanceLoss(distance_function={dist}, margin=0.5, "
                         f"reduction={red})({a}, {p}, {n})")  # fmt: skip
        elif kind == "ctc":
            T2 = out_w // C
            tl = [r.randint(1, max(1, (T2 - 1) // 2)) for _ in range(B)]
            il = [r.randint(max(2 * t + 1, 1), T2) for t in tl]
            il[0] = T2
            P.append(f"tgt = torch.randint(1, {C}, ({B}, {max(tl)}))")
            P.append(f"il = torch.tensor({il}); tl = torch.tensor({tl})")
            red2 = _f(r, "'mean'", "'sum'", "'none'")
            zi = _f(r, "False", "True")
            L.append(f"lp = out.view({B}, {T2}, {C}).transpose(0, 1).log_softmax(2)")
            L.append(f"loss = nn.CTCLoss(blank=0, reduction={red2}, zero_infinity={zi})(lp, tgt, il, tl)")
            red = red2
        if red == "'none'":
            L.append(_f(r, "loss = loss.sum()", "loss = loss.mean()"))
        self.loss_lines = L

    # ---- optimizer
    def optimizer(self) -> tuple[str, str]:
        r = self.r
        name = r.choice(["SGD", "SGD", "Adam", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Rprop",
                         "Adagrad", "Adadelta", "ASGD", "LBFGS", "Adafactor"])  # fmt: skip
        o: list[str] = []
        fe = _f(r, None, None, "True", "False")
        if name == "SGD":
            o.append(f"lr={_f(r, 0.1, 0.05, 0.01)}")
            mom = _f(r, 0, 0.9, 0.5)
            if mom:
                o.append(f"momentum={mom}")
                if r.random() < 0.4:
                    o.append("nesterov=True")
                elif r.random() < 0.3:
                    o.append("dampening=0.3")
            if r.random() < 0.3:
                o.append("fused=True") if fe is None else None
        elif name in ("Adam", "AdamW"):
            o.append(f"lr={_f(r, 0.01, 0.05)}")
            if r.random() < 0.3:
                o.append(f"betas=({_f(r, 0.8, 0.9)}, {_f(r, 0.99, 0.999)})")
            if r.random() < 0.3:
                o.append("amsgrad=True")
            if name == "Adam" and r.random() < 0.2:
                o.append("decoupled_weight_decay=True")
            if r.random() < 0.2 and fe is None:
                o.append("fused=True")
            if r.random() < 0.2:
                o.append("capturable=False, differentiable=False")
        elif name in ("Adamax",):
            o.append("lr=0.02")
        elif name == "NAdam":
            o.append("lr=0.01")
            if r.random() < 0.3:
                o.append("momentum_decay=0.01")
            if r.random() < 0.3:
                o.append("decoupled_weight_decay=True")
        elif name == "RAdam":
            o.append("lr=0.01")
            if r.random() < 0.3:
                o.append("decoupled_weight_decay=True")
        elif name == "RMSprop":
            o.append(f"lr=0.01, alpha={_f(r, 0.99, 0.9)}")
            if r.random() < 0.4:
                o.append("momentum=0.5")
            if r.random() < 0.4:
                o.append("centered=True")
        elif name == "Rprop":
            o.append("lr=0.01")
            if r.random() < 0.4:
                o.append("etas=(0.4, 1.3), step_sizes=(1e-5, 1.0)")
        elif name == "Adagrad":
            o.append("lr=0.1")
            if r.random() < 0.4:
                o.append("lr_decay=0.01")
            if r.random() < 0.4:
                o.append("initial_accumulator_value=0.1")
            if r.random() < 0.2 and fe is None:
                o.append("fused=True")
        elif name == "Adadelta":
            o.append(f"lr=1.0, rho={_f(r, 0.9, 0.5)}")
        elif name == "ASGD":
            o.append(f"lr=0.05, lambd={_f(r, 1e-4, 0.01)}, t0={_f(r, 1, 1e6)}")
        elif name == "LBFGS":
            o.append(f"lr={_f(r, 1, 0.5)}, max_iter={r.randint(2, 5)}, history_size={r.randint(2, 5)}")
            if r.random() < 0.5:
                o.append("line_search_fn='strong_wolfe'")
            fe = None
        elif name == "Adafactor":
            o.append("lr=0.01")
            if r.random() < 0.3:
                o.append("beta2_decay=-0.5, d=2.0")
        if name not in ("LBFGS", "Rprop") and r.random() < 0.3:
            o.append(f"weight_decay={_f(r, 0.01, 0.1)}")
        if name not in ("LBFGS", "Adafactor") and r.random() < 0.2:
            o.append("maximize=True")
        if fe is not None and name not in ("LBFGS",) and "fused=True" not in o:
            o.append(f"foreach={fe}")
        return name, ", ".join(o)

    def scheduler(self, name: str) -> list[str]:
        r = self.r
        S = "torch.optim.lr_scheduler"
        has_mom = name in ("Adam", "AdamW", "NAdam", "RAdam", "Adamax") or ("momentum" in self.opt_args)
        c = r.choice([
            "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR", "ConstantLR",
            "PolynomialLR", "LambdaLR", "MultiplicativeLR", "CyclicLR", "OneCycleLR",
            "CosineAnnealingWarmRestarts", "ReduceLROnPlateau", "SequentialLR", "ChainedScheduler",
        ])  # fmt: skip
        self.plateau = c == "ReduceLROnPlateau"
        mk = {
            "StepLR": f"{S}.StepLR(opt, step_size=2, gamma=0.5)",
            "MultiStepLR": f"{S}.MultiStepLR(opt, milestones=[1, 3], gamma=0.3)",
            "ExponentialLR": f"{S}.ExponentialLR(opt, gamma=0.8)",
            "CosineAnnealingLR": f"{S}.CosineAnnealingLR(opt, T_max=3, eta_min=0.001)",
            "LinearLR": f"{S}.LinearLR(opt, start_factor=0.2, total_iters=3)",
            "ConstantLR": f"{S}.ConstantLR(opt, factor=0.5, total_iters=2)",
            "PolynomialLR": f"{S}.PolynomialLR(opt, total_iters=4, power=2.0)",
            "LambdaLR": f"{S}.LambdaLR(opt, lambda e: 0.9 ** e)",
            "MultiplicativeLR": f"{S}.MultiplicativeLR(opt, lambda e: 0.95)",
            "CyclicLR": f"{S}.CyclicLR(opt, base_lr=0.001, max_lr=0.05, step_size_up=2, "
            f"mode={_f(r, repr('triangular'), repr('triangular2'), repr('exp_range'))}, gamma=0.9, "
            f"cycle_momentum={has_mom and name == 'SGD' or (has_mom and r.random() < 0.5)})",
            "OneCycleLR": f"{S}.OneCycleLR(opt, max_lr=0.05, total_steps=20, "
            f"anneal_strategy={_f(r, repr('cos'), repr('linear'))}, cycle_momentum={has_mom and name != 'Adamax'}, "
            f"three_phase={_f(r, 'True', 'False')})",
            "CosineAnnealingWarmRestarts": f"{S}.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult={_f(r, 1, 2)}, "
            "eta_min=0.001)",
            "ReduceLROnPlateau": f"{S}.ReduceLROnPlateau(opt, mode='min', factor=0.5, patience=0, "
            f"threshold={_f(r, 1e-4, 0.5)}, cooldown={_f(r, 0, 1)})",
            "SequentialLR": f"{S}.SequentialLR(opt, [{S}.LinearLR(opt, start_factor=0.5, total_iters=2), "
            f"{S}.ExponentialLR(opt, gamma=0.9)], milestones=[2])",
            "ChainedScheduler": f"{S}.ChainedScheduler([{S}.ConstantLR(opt, factor=0.5, total_iters=2), "
            f"{S}.ExponentialLR(opt, gamma=0.9)])",
        }
        self.sched_name = c
        self.sched_line = f"sched = {mk[c]}"
        return [self.sched_line]

    def build(self) -> str:
        r = self.r
        dtype = "float64" if r.random() < 0.8 else "float32"
        self.dtype = dtype
        self.records_attn = False
        trunk = r.choice(["mlp", "mlp", "bilinear", "conv", "embedding", "recurrent", "attention", "transformer"])
        H = getattr(self, trunk)()
        self.loss(H)
        lines = [f"torch.set_default_dtype(torch.{dtype})", f"torch.manual_seed({self.seed})"]
        lines += self.pre
        lines.append("class Net(nn.Module):")
        lines.append("    def __init__(self):")
        lines.append("        super().__init__()")
        lines += ["        " + s for s in self.init]
        if r.random() < 0.2:
            lines.append("        self.register_buffer('scale', torch.tensor(1.5))")
            self.fwd.insert(-1, "h = h * self.scale")
        lines.append(f"    def forward(self, {self.inputs.replace('x2', 'x2=None') if False else self.inputs}):")
        lines += ["        " + s for s in self.fwd]
        lines.append("model = Net()")
        lines += self.post_model
        # parametrizations on the head
        pz = r.random()
        if pz < 0.06:
            lines.append(
                "torch.nn.utils.parametrizations.weight_norm(model.head, dim=_DIM_)".replace(
                    "_DIM_", _f(r, "0", "1", "None")
                )
            )
        elif pz < 0.1:
            lines.append("torch.nn.utils.weight_norm(model.head)")
        elif pz < 0.14:
            lines.append(f"torch.nn.utils.parametrizations.spectral_norm(model.head, n_power_iterations={_f(r, 1, 2)})")
        elif pz < 0.16:
            lines.append("torch.nn.utils.spectral_norm(model.head)")
        elif pz < 0.18:
            lines.append("torch.nn.utils.parametrizations.orthogonal(model.head)")
        if r.random() < 0.1:
            lines.append("model.head.bias.requires_grad_(False)")
        name, args = self.optimizer()
        scale_free = "Norm" in "".join(self.init) or "_norm(" in "".join(lines)  # (norms, weight/spectral norm)
        margins = ("multi_margin", "multilabel_margin", "hinge", "margin_ranking", "cosine", "triplet", "soft_margin")
        while (name in ("Rprop", "Adagrad", "Adafactor", "LBFGS") and scale_free) or (
            name == "Rprop" and (self.loss_kind in margins or "MultiheadAttention" in "".join(self.init))
        ):  # fmt: skip
            # (a norm makes the weights before it scale-free: their gradient along the weight is
            # rounding noise, which these optimizers' steps, scaled by the gradient's own size, blow
            # up; Rprop's sign does the same to the exact zeros of a margin's gradient)
            name, args = self.optimizer()
        if name not in ("SGD", "ASGD", "Adadelta"):
            # (LBFGS divides by differences of gradients, the others by a gradient's running size:
            # float32's rounding noise in a gradient that should be zero grows to a step's size)
            lines[0] = "torch.set_default_dtype(torch.float64)"
        self.opt_args = args
        groups = r.random()
        params = "model.parameters()"
        late = None
        if groups < 0.2:
            params = "[{'params': model.head.parameters(), 'lr': 0.005}, {'params': [p for n, p in model.named_parameters() if not n.startswith('head.')]}]"
        elif groups < 0.3 and name != "LBFGS":
            params = "[p for n, p in model.named_parameters() if not n.startswith('head.')]"
            late = "opt.add_param_group({'params': model.head.parameters(), 'lr': 0.02})"
        elif groups < 0.4:
            params = "model.named_parameters()"
        if name == "LBFGS" and groups < 0.2:
            params = "model.parameters()"
        if name not in ("SGD", "ASGD", "LBFGS") and ("MultiheadAttention" in "".join(self.init) or
                                                          "Transformer" in "".join(self.init)):  # fmt: skip
            # (the keys' share of in_proj_bias has no gradient but rounding noise: softmax does not
            # see a shift common to all keys; optimizers that divide by a gradient's size blow it up)
            lines.append("for n, p in model.named_parameters():")
            lines.append("    if n.endswith('in_proj_bias'): p.requires_grad_(False)")
        lines.append(f"opt = torch.optim.{name}({params}, {args})")
        self.plateau = False
        sched = name != "LBFGS" and late is None and r.random() < 0.5
        if sched:
            lines += self.scheduler(name)
        steps = r.randint(2, 5)
        micro = r.random() < 0.15 and name != "LBFGS"
        retain = r.random() < 0.1 and name != "LBFGS"
        clip = ""
        if r.random() < 0.25:
            nt = _f(r, "2.0", "1", "float('inf')", "3.0", "'inf'")
            clip = (f"tn = nn.utils.clip_grad_norm_(model.parameters(), max_norm={_f(r, 0.5, 1.0)}, norm_type={nt}, "
                    f"error_if_nonfinite={_f(r, 'True', 'False')}, foreach={_f(r, 'None', 'True', 'False')}); R(tn)")  # fmt: skip
        elif r.random() < 0.1:
            clip = "nn.utils.clip_grad_value_(model.parameters(), clip_value=0.1)"
        stz = _f(r, "", "", "set_to_none=False")
        rt = r.random() < 0.15 and name != "LBFGS"
        fwd_call = f"model({self.inputs})"
        lines.append("def compute():")
        lines.append(f"    out = {fwd_call}")
        lines += ["    " + s for s in self.loss_lines]
        lines.append("    return loss")
        lines.append(f"for step in range({steps}):")
        if late:
            lines.append(f"    if step == 1: {late}")
        body: list[str] = []
        if name == "LBFGS":
            body += ["def closure():", "    opt.zero_grad()", "    loss = compute()", "    loss.backward()",
                     "    return loss", "loss = opt.step(closure)"]  # fmt: skip
        else:
            body.append(f"opt.zero_grad({stz})")
            if micro:
                body += ["for k in range(2):", "    loss = compute() / 2", "    loss.backward()"]
            elif retain:
                body += ["loss = compute()", "loss.backward(retain_graph=True)", "(loss * 0.5).backward()"]
            else:
                body += ["loss = compute()", "loss.backward()"]
            if clip:
                body.append(clip)
            body.append("opt.step()")
        body.append("R(loss.item())")
        if sched:
            body.append("sched.step(loss.item())" if self.sched_name == "ReduceLROnPlateau" else "sched.step()")
            body.append("R([g['lr'] for g in opt.param_groups])")
        if rt:  # a checkpoint mid-training: through copy.deepcopy, or torch.save/torch.load
            body.append("if step == 1:")
            if r.random() < 0.5:
                body.append("    sd = copy.deepcopy(opt.state_dict())")
                body.append("    msd = copy.deepcopy(model.state_dict())")
                if sched:
                    body.append("    ssd = copy.deepcopy(sched.state_dict())")
            else:
                keep = (
                    "{'model': model.state_dict(), 'opt': opt.state_dict()"
                    + (", 'sched': sched.state_dict()" if sched else "")
                    + "}"
                )
                body += ["    import io", "    f = io.BytesIO()", f"    torch.save({keep}, f)", "    f.seek(0)",
                         "    ck = torch.load(f)", "    sd, msd = ck['opt'], ck['model']"]  # fmt: skip
                if sched:
                    body.append("    ssd = ck['sched']")
            body.append("    model.load_state_dict(msd)")
            body.append(f"    opt = torch.optim.{name}({params}, {args})")
            body.append("    opt.load_state_dict(sd)")
            if sched:
                body.append("    " + self.sched_line)
                body.append("    sched.load_state_dict(ssd)")
        lines += ["    " + s for s in body]
        lines.append("R([(n, p) for n, p in model.named_parameters()])")
        lines.append("R([(n, p.grad) for n, p in model.named_parameters()])")
        lines.append("R([(n, b) for n, b in model.named_buffers()])")
        lines.append("R(opt.state_dict())")
        if self.records_attn:
            lines.append("R(model.last_weights)")
        if r.random() < 0.3 and self.eval_safe:
            lines.append("model.eval()")
            lines.append("with torch.no_grad():")
            lines.append(f"    R(model({self.inputs}))")
        if r.random() < 0.1:
            lines.append("v = nn.utils.parameters_to_vector(model.parameters()); R(v)")
            lines.append("nn.utils.vector_to_parameters(v * 0.5, model.parameters()); R(list(model.parameters()))")
        return "\n".join(lines) + "\n"


@functools.cache
def _DROPOUT_AS_TORCH() -> bool:  # noqa: N802 - (a constant of the machine, read when a program is built)
    from tests.torch_oracle import torch_bernoulli_is_ours  # noqa: PLC0415

    try:
        return torch_bernoulli_is_ours()
    except ImportError:  # (no PyTorch: the programs are only built, never compared)
        return False


def build(seed: int) -> str:
    """The text of training program number ``seed``."""
    return _Builder(seed).build()


def _close(a: Any, b: Any, rtol: float, atol: float) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind in "fc":
            return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_close(x, y, rtol, atol) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or math.isclose(a, b, rel_tol=rtol, abs_tol=atol) or (math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b


def compare(seed: int, program: str | None = None) -> tuple[str, str] | None:
    """How program ``seed`` differs between PyTorch and tinygrad_attn, or None."""
    import torch  # noqa: PLC0415

    import tinygrad_attn as tga  # noqa: PLC0415

    program = program or build(seed)
    rtol, atol = (1e-6, 1e-6) if "float64" in program.split("\n", 1)[0] else (2e-3, 2e-4)
    if "optim.LBFGS(" in program:  # (its curvature pairs divide by small differences of gradients)
        rtol = 1e-4
    try:
        want, want_raised, _ = run(program, torch)
        got, got_raised, _ = run(program, tga)
    finally:
        torch.set_default_dtype(torch.float32)
        tga.set_default_dtype(tga.float32)
    if want_raised is None and got_raised is not None:
        return "crash", f"tinygrad_attn raised {got_raised[0]}; PyTorch ran"
    if want_raised is not None and got_raised is None:
        return "return", f"PyTorch raised {want_raised[0]}; tinygrad_attn ran"
    if want_raised is not None and want_raised[0] not in got_raised:
        return "exception", f"PyTorch raised {want_raised[0]}, tinygrad_attn {got_raised[0]}"
    for i, (w, g) in enumerate(zip(want, got)):
        where = _first_difference(w, g, rtol, atol, f"record {i}")
        if where is not None:
            return "silent", where
    if len(want) != len(got):
        return "silent", f"PyTorch recorded {len(want)} values, tinygrad_attn {len(got)}"
    return None


def _first_difference(a: Any, b: Any, rtol: float, atol: float, path: str) -> str | None:
    """Where in two records the first difference lies, and the two values there."""
    if _close(a, b, rtol, atol):
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and type(a) is type(b) and len(a) == len(b):
        if len(a) == 2 and isinstance(a[0], (str, int)) and a[0] == b[0] and not isinstance(a[1], (str, int)):
            return _first_difference(a[1], b[1], rtol, atol, f"{path}.{a[0]}")
        for i, (x, y) in enumerate(zip(a, b)):
            d = _first_difference(x, y, rtol, atol, f"{path}[{i}]")
            if d is not None:
                return d
    return f"{path}: PyTorch {_short(a)}, tinygrad_attn {_short(b)}"


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) < 600 else s[:600] + "..."


def main(argv: list[str]) -> int:
    lo, hi = int(argv[0]), int(argv[1])
    bad = 0
    for seed in range(lo, hi):
        try:
            d = compare(seed)
        except Exception as e:  # noqa: BLE001 - a sweep reports every failure and goes on
            d = ("harness", f"{type(e).__name__}: {e}")
        if d is not None:
            bad += 1
            print(seed, d[0], d[1][:400].replace("\n", " "), flush=True)
    print(f"{bad} of {hi - lo} differ", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
