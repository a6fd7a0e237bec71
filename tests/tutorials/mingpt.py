"""A GPT after karpathy/minGPT (``mingpt/model.py`` and ``trainer.py``), re-written.

What it exercises: the tanh ``NewGELU`` written with ``torch.pow``, a causal mask kept as a
``register_buffer("bias", torch.tril(...).view(1, 1, T, T))`` and applied by
``masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))``, an MLP held in an
``nn.ModuleDict`` and called through a lambda attribute, ``self.apply(self._init_weights)``,
``configure_optimizers`` sorting every parameter into decay / no-decay sets by module type
over ``named_modules()`` and ``named_parameters()``, AdamW with two groups,
``model.zero_grad(set_to_none=True)``, ``clip_grad_norm_``, and ``generate`` with
``torch.topk`` (greedy: ``do_sample=False``).
"""

from __future__ import annotations

import math
from types import SimpleNamespace


def data(rng):
    x = rng.integers(0, 10, size=(2, 6))
    return {"x": x, "y": (x * 3) % 10}


def tutorial(torch, nn, F):
    class NewGELU(nn.Module):
        def forward(self, x):
            return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

    class CausalSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            assert config.n_embd % config.n_head == 0
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
            self.c_proj = nn.Linear(config.n_embd, config.n_embd)
            self.attn_dropout = nn.Dropout(config.attn_pdrop)
            self.resid_dropout = nn.Dropout(config.resid_pdrop)
            bs = config.block_size
            self.register_buffer("bias", torch.tril(torch.ones(bs, bs)).view(1, 1, bs, bs))
            self.n_head = config.n_head
            self.n_embd = config.n_embd

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.ln_1 = nn.LayerNorm(config.n_embd)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = nn.LayerNorm(config.n_embd)
            self.mlp = nn.ModuleDict(
                dict(
                    c_fc=nn.Linear(config.n_embd, 4 * config.n_embd),
                    c_proj=nn.Linear(4 * config.n_embd, config.n_embd),
                    act=NewGELU(),
                    dropout=nn.Dropout(config.resid_pdrop),
                )
            )
            m = self.mlp
            self.mlpf = lambda x: m.dropout(m.c_proj(m.act(m.c_fc(x))))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlpf(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.block_size = config.block_size
            self.transformer = nn.ModuleDict(
                dict(
                    wte=nn.Embedding(config.vocab_size, config.n_embd),
                    wpe=nn.Embedding(config.block_size, config.n_embd),
                    drop=nn.Dropout(config.embd_pdrop),
                    h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                    ln_f=nn.LayerNorm(config.n_embd),
                )
            )
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith("c_proj.weight"):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))
            self.n_params = sum(p.numel() for p in self.transformer.parameters())

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            elif isinstance(module, nn.LayerNorm):
                torch.nn.init.zeros_(module.bias)
                torch.nn.init.ones_(module.weight)

        def configure_optimizers(self, train_config):
            decay, no_decay = set(), set()
            whitelist_weight_modules = (torch.nn.Linear,)
            blacklist_weight_modules = (torch.nn.LayerNorm, torch.nn.Embedding)
            for mn, m in self.named_modules():
                for pn, _p in m.named_parameters():
                    fpn = "%s.%s" % (mn, pn) if mn else pn  # noqa: UP031 - the original's formatting
                    if pn.endswith("bias"):
                        no_decay.add(fpn)
                    elif pn.endswith("weight") and isinstance(m, whitelist_weight_modules):
                        decay.add(fpn)
                    elif pn.endswith("weight") and isinstance(m, blacklist_weight_modules):
                        no_decay.add(fpn)
            param_dict = {pn: p for pn, p in self.named_parameters()}
            inter_params = decay & no_decay
            union_params = decay | no_decay
            assert len(inter_params) == 0, f"parameters {inter_params} are in both sets"
            assert len(param_dict.keys() - union_params) == 0, "some parameters are in neither set"
            optim_groups = [
                {"params": [param_dict[pn] for pn in sorted(decay)], "weight_decay": train_config.weight_decay},
                {"params": [param_dict[pn] for pn in sorted(no_decay)], "weight_decay": 0.0},
            ]
            return torch.optim.AdamW(optim_groups, lr=train_config.learning_rate, betas=train_config.betas)

        def forward(self, idx, targets=None):
            device = idx.device
            b, t = idx.size()
            assert t <= self.block_size, f"cannot forward a sequence of {t}, the block size is {self.block_size}"
            pos = torch.arange(0, t, dtype=torch.long, device=device).unsqueeze(0)  # (1, t)
            tok_emb = self.transformer.wte(idx)
            pos_emb = self.transformer.wpe(pos)
            x = self.transformer.drop(tok_emb + pos_emb)
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            logits = self.lm_head(x)
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            return logits, loss

        @torch.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
            for _ in range(max_new_tokens):
                idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size :]
                logits, _ = self(idx_cond)
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, top_k)
                    logits[logits < v[:, [-1]]] = -float("Inf")
                probs = F.softmax(logits, dim=-1)
                if do_sample:
                    idx_next = torch.multinomial(probs, num_samples=1)
                else:
                    _, idx_next = torch.topk(probs, k=1, dim=-1)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    config = SimpleNamespace(
        vocab_size=10, block_size=8, n_layer=2, n_head=2, n_embd=8, embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0
    )
    train_config = SimpleNamespace(learning_rate=5e-4, betas=(0.9, 0.95), weight_decay=0.1, grad_norm_clip=1.0)

    def model():
        return GPT(config)

    def optimizer(model):
        return model.configure_optimizers(train_config)

    def forward(model, batch):
        logits, loss = model(batch["x"], batch["y"])
        return {"logits": logits}, loss

    def update(model, opt):
        torch.nn.utils.clip_grad_norm_(model.parameters(), train_config.grad_norm_clip)
        opt.step()
        model.zero_grad(set_to_none=True)

    return SimpleNamespace(GPT=GPT, model=model, optimizer=optimizer, forward=forward, update=update)
