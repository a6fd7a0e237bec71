"""A nanoGPT-style GPT (after karpathy/nanoGPT ``model.py`` and ``train.py``), re-written.

What it exercises: a LayerNorm with an optional bias through ``F.layer_norm``, one fused
``c_attn`` projection split in three, ``F.scaled_dot_product_attention(..., is_causal=True)``,
``nn.ModuleDict`` of ``nn.ModuleList`` blocks, weight tying (``wte.weight = lm_head.weight``),
``self.apply(self._init_weights)`` with ``torch.nn.init.normal_/zeros_`` and a scaled init of
the residual projections, ``configure_optimizers`` with two AdamW parameter groups (``fused``
asked of ``inspect.signature``), a cosine learning-rate schedule written into
``param_groups``, ``clip_grad_norm_``, ``zero_grad(set_to_none=True)``, and ``generate``
under ``@torch.no_grad()`` with top-k filtering by ``logits[logits < v[:, [-1]]] = -inf``.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from types import SimpleNamespace


def data(rng):
    x = rng.integers(0, 13, size=(2, 8))
    return {"x": x, "y": (x + 1) % 13}


def tutorial(torch, nn, F):
    @dataclass
    class GPTConfig:
        block_size: int = 8
        vocab_size: int = 13
        n_layer: int = 2
        n_head: int = 2
        n_embd: int = 8
        dropout: float = 0.0
        bias: bool = True

    class LayerNorm(nn.Module):
        """A LayerNorm whose bias can be switched off."""

        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(ndim))
            self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

        def forward(self, input):
            return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            assert config.n_embd % config.n_head == 0
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
            self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
            self.attn_dropout = nn.Dropout(config.dropout)
            self.resid_dropout = nn.Dropout(config.dropout)
            self.n_head = config.n_head
            self.n_embd = config.n_embd
            self.dropout = config.dropout

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            y = F.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0, is_causal=True
            )
            y = y.transpose(1, 2).contiguous().view(B, T, C)  # heads side by side again
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
            self.dropout = nn.Dropout(config.dropout)

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
            self.mlp = MLP(config)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.transformer = nn.ModuleDict(
                dict(
                    wte=nn.Embedding(config.vocab_size, config.n_embd),
                    wpe=nn.Embedding(config.block_size, config.n_embd),
                    drop=nn.Dropout(config.dropout),
                    h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                    ln_f=LayerNorm(config.n_embd, bias=config.bias),
                )
            )
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # one matrix embeds and un-embeds
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():  # GPT-2's scaled init of the residual projections
                if pn.endswith("c_proj.weight"):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

        def get_num_params(self, non_embedding=True):
            n_params = sum(p.numel() for p in self.parameters())
            if non_embedding:
                n_params -= self.transformer.wpe.weight.numel()
            return n_params

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            device = idx.device
            b, t = idx.size()
            assert t <= self.config.block_size, f"sequence of {t} is longer than the block size"
            pos = torch.arange(0, t, dtype=torch.long, device=device)
            tok_emb = self.transformer.wte(idx)  # (b, t, n_embd)
            pos_emb = self.transformer.wpe(pos)  # (t, n_embd)
            x = self.transformer.drop(tok_emb + pos_emb)
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            if targets is not None:
                logits = self.lm_head(x)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            else:  # at generation only the last position is needed
                logits = self.lm_head(x[:, [-1], :])
                loss = None
            return logits, loss

        def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
            param_dict = {pn: p for pn, p in self.named_parameters()}
            param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
            decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]  # matrices and embeddings
            nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]  # biases and norms
            optim_groups = [
                {"params": decay_params, "weight_decay": weight_decay},
                {"params": nodecay_params, "weight_decay": 0.0},
            ]
            fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
            use_fused = fused_available and device_type == "cuda"
            extra_args = dict(fused=True) if use_fused else dict()
            return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)

        @torch.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
            for _ in range(max_new_tokens):
                idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size :]
                logits, _ = self(idx_cond)
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float("Inf")
                probs = F.softmax(logits, dim=-1)
                idx_next = torch.multinomial(probs, num_samples=1)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    learning_rate, min_lr, warmup_iters, lr_decay_iters, grad_clip = 6e-4, 6e-5, 2, 10, 1.0

    def get_lr(it):
        if it < warmup_iters:
            return learning_rate * (it + 1) / (warmup_iters + 1)
        if it > lr_decay_iters:
            return min_lr
        decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
        return min_lr + coeff * (learning_rate - min_lr)

    def model():
        return GPT(GPTConfig())

    def optimizer(model):
        device_type = "cuda" if "cuda" in str(next(model.parameters()).device) else "cpu"
        opt = model.configure_optimizers(0.1, learning_rate, (0.9, 0.95), device_type)
        return SimpleNamespace(opt=opt, iter_num=0)

    def forward(model, batch):
        logits, loss = model(batch["x"], batch["y"])
        return {"logits": logits}, loss

    def update(model, state):
        lr = get_lr(state.iter_num)
        for param_group in state.opt.param_groups:
            param_group["lr"] = lr
        if grad_clip != 0.0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        state.opt.step()
        state.opt.zero_grad(set_to_none=True)
        state.iter_num += 1

    return SimpleNamespace(
        GPT=GPT, GPTConfig=GPTConfig, model=model, optimizer=optimizer, forward=forward, update=update
    )
