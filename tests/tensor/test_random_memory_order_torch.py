"""Random fills walk a tensor's memory as PyTorch's CPU kernels do: ``x.t().uniform_()``,
``rand_like(x.t())``, ``dropout(x.t())`` and every other draw into a strided tensor put the
same numbers in the same elements as PyTorch after the same seed (and leave the generator
where PyTorch's is). Layouts are generated (every permutation of small shapes, with steps,
size-1 dims and batched transposes); so are the user programs where a layout meets a draw:
dropout after multi-head attention, whose batch-first output is a transposed view in
PyTorch, as here."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch_oracle import torch_bernoulli_is_ours  # noqa: E402

import tinygrad_attn as tga  # noqa: E402


#: a layout: (base shape, permutation, per-dim step), the tensor is ``ones(base)[steps].permute(perm)``
def _layouts(n: int, seed: int) -> list[tuple[tuple, tuple, tuple]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        nd = rng.randint(2, 4)
        base = tuple(rng.choice([1, 2, 3, 4, 6]) for _ in range(nd))
        perm = tuple(rng.sample(range(nd), nd))
        steps = tuple(rng.choice([1, 1, 1, 2]) for _ in range(nd))
        out.append((base, perm, steps))
    # the common ones, always: a transposed matrix, a batched mT, a (B, H, T, D) head split
    out += [((4, 3), (1, 0), (1, 1)), ((2, 3, 4), (0, 2, 1), (1, 1, 1)), ((2, 5, 3, 4), (0, 2, 1, 3), (1, 1, 1, 1))]
    return out


LAYOUTS = _layouts(40, seed=7)


def _make(lib, layout, dtype):
    base, perm, steps = layout
    x = lib.ones(base, dtype=getattr(lib, dtype))
    x = x[tuple(slice(None, None, s) for s in steps)]
    return x.permute(perm)


#: draws into (or like) the tensor ``X`` (a fresh one for each library), and whether they read
#: PyTorch's bernoulli stream, which MKL replaces on Intel CPUs
CALLS = {
    "uniform_": ("X.uniform_(-2, 3)", False),
    "normal_": ("X.normal_(1.0, 2.0)", False),
    "exponential_": ("X.exponential_(1.5)", False),
    "geometric_": ("X.geometric_(0.3)", False),
    "cauchy_": ("X.cauchy_()", False),
    "log_normal_": ("X.log_normal_()", False),
    "random_": ("X.random_(0, 10)", False),
    "random_ bounds": ("X.random_()", False),
    "bernoulli_": ("X.bernoulli_(0.4)", True),
    "rand_like": ("torch.rand_like(X)", False),
    "randn_like": ("torch.randn_like(X)", False),
    "randint_like": ("torch.randint_like(X, 3, 9)", False),
    "dropout": ("F.dropout(X, 0.4)", True),
    "dropout in place": ("F.dropout(X, 0.4, inplace=True)", True),
    "Dropout": ("nn.Dropout(0.25)(X)", True),
    "alpha_dropout": ("F.alpha_dropout(X, 0.3, True)", True),
    "init.uniform_": ("nn.init.uniform_(X, -1, 2)", False),
    "init.normal_": ("nn.init.normal_(X, 0.5, 3)", False),
    "init.trunc_normal_": ("nn.init.trunc_normal_(X, std=2.0)", False),
    "init.trunc_normal_ narrow": ("nn.init.trunc_normal_(X, 3.0, 1.0, -1.0, 0.5)", False),
    "init.xavier_uniform_": ("nn.init.xavier_uniform_(X)", False),
    "init.kaiming_normal_": ("nn.init.kaiming_normal_(X)", False),
}
#: the fills a complex tensor takes (each part drawn as a real tensor's, PyTorch's view_as_real)
COMPLEX = ["uniform_", "normal_", "rand_like", "randn_like", "init.uniform_", "init.normal_"]


def _run(lib, call: str, layout, dtype):
    x = _make(lib, layout, dtype)
    env = {"torch": lib, "F": lib.nn.functional, "nn": lib.nn, "X": x}
    lib.manual_seed(11)
    out = eval(call, env)
    return out.numpy().copy(), tuple(out.shape), lib.rand(3, dtype=lib.float64).numpy()


@pytest.mark.parametrize(
    "name, dtype",
    [(n, d) for n in sorted(CALLS) for d in ("float32", "float64")] + [(n, d) for n in COMPLEX for d in ("complex64",)],
)
def test_draws_fill_memory_order_as_pytorch(name, dtype):
    call, bernoulli = CALLS[name]
    if bernoulli and not torch_bernoulli_is_ours():
        pytest.skip("PyTorch draws bernoulli_(p) from MKL's stream on this CPU")
    bad = []
    for layout in LAYOUTS:
        a, b = _run(torch, call, layout, dtype), _run(tga, call, layout, dtype)
        tol = dict(rtol=1e-12, atol=0) if dtype == "float64" else dict(rtol=2e-6, atol=1e-6)
        ok = a[1] == b[1] and np.allclose(a[0], b[0], equal_nan=True, **tol) and np.array_equal(a[2], b[2])
        if not ok:
            bad.append(layout)
    assert not bad, f"{name} ({dtype}) differs from PyTorch for the layouts (base, perm, steps) {bad}"


@pytest.mark.parametrize(
    "call", ["exponential_()", "cauchy_()", "log_normal_()", "geometric_(0.5)", "random_(3)", "random_()",
             "bernoulli_(0.5)", "bernoulli_(torch.full((2, 3), 0.5))"],
)  # fmt: skip
def test_fills_without_a_complex_kernel_raise_as_pytorch(call):
    classes = []
    for lib in (torch, tga):
        x = lib.zeros(2, 3, dtype=lib.complex64)
        with pytest.raises(Exception) as info:
            eval("x." + call, {"x": x, "torch": lib})
        classes.append(info.type)
    assert issubclass(classes[1], classes[0]), classes


@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial_reads_the_weights_memory_order(replacement):
    """Without replacement PyTorch's keys are ``probs / empty_like(probs).exponential_()``."""
    w = np.random.default_rng(1).random((5, 4)) + 0.1
    out = []
    for lib in (torch, tga):
        probs = lib.tensor(w.T.copy()).t()  # (5, 4) in column order
        lib.manual_seed(2)
        out.append(lib.multinomial(probs, 3, replacement=replacement).numpy())
    np.testing.assert_array_equal(out[1], out[0])


def test_memory_order_is_tensor_iterators():
    """The order itself against PyTorch's, for every permutation of shapes with ties and size-1 dims:
    ``arange``'s numbers written by ``copy_`` from a contiguous source land where a fill would put them
    in PyTorch only if its walk is ours; here the rank of each element's draw is compared instead."""
    bad = []
    for base in [(2, 3, 4), (3, 3, 1), (2, 2, 2), (1, 4, 4), (4, 1, 3, 2)]:
        for perm in itertools.permutations(range(len(base))):
            ranks = []
            for lib in (torch, tga):
                x = lib.zeros(base, dtype=lib.float64).permute(perm)
                lib.manual_seed(0)
                x.uniform_()
                ranks.append(np.argsort(np.argsort(x.numpy().ravel())))
            if not np.array_equal(*ranks):
                bad.append((base, perm))
    assert not bad, bad


ATTENTION_PROGRAMS = {
    "MultiheadAttention then Dropout": """
mha = nn.MultiheadAttention(8, 2, dropout=0.0, batch_first=BF)
drop = nn.Dropout(0.3)
x = torch.randn(*SHAPE)
out = drop(mha(x, x, x)[0])
""",
    "residual block": """
mha = nn.MultiheadAttention(8, 2, dropout=0.1, batch_first=BF)
ln = nn.LayerNorm(8)
x = torch.randn(*SHAPE, requires_grad=True)
h = ln(x + F.dropout(mha(x, x, x, need_weights=False)[0], 0.2))
h.sum().backward()
out = (h, x.grad)
""",
    "TransformerEncoderLayer": """
layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.2, batch_first=BF)
x = torch.randn(*SHAPE)
out = layer(x)
""",
    "TransformerDecoderLayer norm_first": """
layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.2, batch_first=BF, norm_first=True)
x = torch.randn(*SHAPE)
out = layer(x, x)
""",
    "functional multi_head_attention_forward": """
mha = nn.MultiheadAttention(8, 2)
x = torch.randn(5, 3, 8)
o, _ = F.multi_head_attention_forward(x, x, x, 8, 2, mha.in_proj_weight, mha.in_proj_bias, None, None, False,
                                      0.0, mha.out_proj.weight, mha.out_proj.bias)
out = F.dropout(o.transpose(0, 1), 0.5)
""",
}


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("name", sorted(ATTENTION_PROGRAMS))
def test_dropout_after_attention_as_pytorch(name, batch_first):
    if not torch_bernoulli_is_ours():
        pytest.skip("PyTorch draws bernoulli_(p) from MKL's stream on this CPU")
    results = []
    for lib in (torch, tga):
        env = {"torch": lib, "nn": lib.nn, "F": lib.nn.functional, "BF": batch_first,
               "SHAPE": (3, 5, 8) if batch_first else (5, 3, 8)}  # fmt: skip
        lib.manual_seed(5)
        exec(ATTENTION_PROGRAMS[name], env)
        out = env["out"] if isinstance(env["out"], tuple) else (env["out"],)
        results.append([t.detach().numpy() for t in out] + [lib.rand(2).numpy()])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("mode", ["train", "eval", "eval no_grad", "eval no_grad no weights", "unbatched"])
def test_attention_output_layout_as_pytorch(mode, batch_first):
    """The layout a draw after attention reads: sequence-first memory (a transposed view when
    batch-first), and batch-first memory on PyTorch's inference path."""
    strides = []
    for lib in (torch, tga):
        lib.manual_seed(0)
        m = lib.nn.MultiheadAttention(8, 2, batch_first=batch_first)
        if mode != "train":
            m.eval()
        x = lib.randn(5, 8) if mode == "unbatched" else lib.randn(3, 5, 8)
        with lib.no_grad() if "no_grad" in mode else lib.enable_grad():
            out, _ = m(x, x, x, need_weights="no weights" not in mode)
        strides.append(out.stride())
    assert strides[1] == strides[0]
