"""Read the backward pass of attention as code: trace it once, print it, replay it.

    python examples/backward_as_code.py [--quick] [--device cuda] [--out DIR]

``tga.jit.trace(fn, x)`` runs ``fn`` once and records every op it makes as a flat program over
named buffers. Since ``fn`` returns a scalar loss, the program also holds the backward
pass, built from each op's own gradient rule: ``grad_x``, ``grad_q_proj_weight``... are
lines of Python you can read. That text is not a description: it is what runs when the
program is called again on new inputs (no graph is built, no Tensor object is made
inside). We:

1. print the program of causal self-attention, decomposed into primitive ops
   (``tga.decompose()``), so the softmax's backward shows as the arithmetic it is;
2. replay it on a new input and check it against the eager forward + backward;
3. compile a whole training step (forward, backward, Adam's update) with ``tga.compile``
   and time eager against replay;
4. write ``program.svg`` (the program as a graph) and ``program_memory.png`` (the bytes
   its buffers hold line by line: what ``prog.peak_bytes`` reports).
"""

import os
import time

import numpy as np
from common import parse_args  # examples/common.py: the flags every example takes

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.models import BatchFirstAttention
from tinygrad_attn.ops import cpu_kernels
from tinygrad_attn.optim import Adam
from tinygrad_attn.viz import render
from tinygrad_attn.viz.program import plot_memory

args = parse_args(__doc__, "fewer timed steps")

B, T, D, H = 1, 4, 8, 2
mha = BatchFirstAttention(D, H).to(args.device)


def loss_of(x):
    return (mha(x, is_causal=True) ** 2).mean()


# 1. The program, forward then backward, one line per op (a replay runs chains of elementwise
# ops as one compiled loop each, a `fused:` line; switched off here so that every op shows).
x = Tensor.randn(B, T, D, requires_grad=True, device=args.device)  # (B, T, d_model)
cpu_kernels.ENABLED, fused = False, cpu_kernels.ENABLED
with tga.decompose():  # primitives only: softmax as exp, max, sum, div; attention as matmuls
    prog = tga.jit.trace(loss_of, x)
cpu_kernels.ENABLED = fused
print(prog)
backward = [ln for ln in prog.code.splitlines() if ln.lstrip().startswith("grad_")]
print(f"# {len(prog.ops)} ops; {len(backward)} lines of backward make a named gradient; "
      f"peak {prog.peak_bytes} bytes of buffers\n")  # fmt: skip

# 2. Replay on a new input: the same numbers as the eager forward + backward.
x2 = Tensor.randn(B, T, D, requires_grad=True, device=args.device)
loss = prog(x2)
got = {n: p.grad.detach().numpy() for n, p in mha.named_parameters()} | {"x": x2.grad.detach().numpy()}
mha.zero_grad()
x2.grad = None
eager = loss_of(x2)
eager.backward()
want = {n: p.grad.detach().numpy() for n, p in mha.named_parameters()} | {"x": x2.grad.detach().numpy()}
err = max(float(np.abs(got[k] - want[k]).max()) for k in want)
print(f"replay: loss {loss.item():.6f}, eager {eager.item():.6f}; largest gradient difference {err:.2e}")
assert err < 1e-5, "the replayed backward differs from eager"

# 3. A whole training step, compiled: the optimizer's update is a line of the program too (one per param group).
opt = Adam(mha.parameters(), lr=1e-2)
batch = Tensor.randn(8, 16, D, device=args.device)


def step(x):
    opt.zero_grad()
    loss = loss_of(x)
    loss.backward()
    opt.step()
    return loss


compiled = tga.compile(step)
n = 20 if args.quick else 200
timings = {}
for name, fn in (("eager", step), ("compiled", compiled)):
    fn(batch)  # (the compiled step traces here)
    t0 = time.perf_counter()
    for _ in range(n):
        fn(batch)
    timings[name] = (time.perf_counter() - t0) / n
print(f"training step: eager {timings['eager'] * 1e3:.3f} ms, compiled {timings['compiled'] * 1e3:.3f} ms "
      f"({timings['eager'] / timings['compiled']:.2f}x)")  # fmt: skip
print("the update lines of the step's program (Adam's update of the whole param group, flat, in one line):")
for ln in compiled.program.code.splitlines():
    if ".foreach_update(" in ln or ".zero_grad()" in ln:
        print(ln)

# 4. Pictures.
os.makedirs(args.out, exist_ok=True)
svg = render(prog.graph(), os.path.join(args.out, "program.svg"))
png = os.path.join(args.out, "program_memory.png")
plot_memory(prog, png)
print(f"wrote {svg} and {png}")
print(f"RESULT ops={len(prog.ops)} backward_lines={len(backward)} max_grad_diff={err:.3e} "
      f"speedup={timings['eager'] / timings['compiled']:.3f}")  # fmt: skip
