"""See backpropagation through multi-head attention: forward, backward, collapsed, second order.

    python examples/visualize_backprop.py [--quick] [--device cuda] [--out DIR]

Every tensor remembers the op that made it, so the whole computation can be drawn. We run
one multi-head attention layer on a tiny input and write five graphs (SVG, with Graphviz):

1. ``mha_forward.svg``: the forward graph at full detail. Inside ``tga.decompose()`` softmax
   and attention run as their primitive ops (exp, max, sum, matmul, ...), grouped in boxes by
   the module (``q_proj``, ``k_proj``, ...) and function that made them.
2. ``mha_backward.svg``: the backward graph: one gradient step per op, the arrays each saved
   in the forward pass, and where gradients of a reused tensor are added up.
3. ``mha_forward_collapsed.svg`` and ``mha_backward_collapsed.svg``: the same with
   ``depth=1``: every submodule drawn as one node, the shape of the computation at a glance.
4. ``mha_second_order.svg``: ``tga.grad(loss, x, create_graph=True)`` records the backward pass
   as a graph of its own; here the graph of ``|d loss / d x|^2``, a gradient penalty, whose own
   gradient (a second derivative) we then take.
"""

import os

from common import draw, parse_args  # examples/common.py: the flags every example takes
from tqdm import tqdm

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.models import BatchFirstAttention
from tinygrad_attn.viz import draw_graph

args = parse_args(__doc__, "the same (this example is quick anyway)")

B, T, D, H = 1, 4, 8, 2
mha = BatchFirstAttention(D, H).to(args.device)
x = Tensor.randn(B, T, D, requires_grad=True, name="x")  # (B, T, d_model)
target = Tensor.randn(B, T, D, name="target")

with tga.decompose():  # every composite as its primitives, so the graph shows them all
    out = mha(x, is_causal=True)  # (B, T, d_model): self-attention, each position sees those before it
    loss = ((out - target) ** 2).mean()
loss.name = "loss"


def size(dot):
    """Nodes and edges of a drawn graph (lines of its DOT source)."""
    lines = [ln.strip() for ln in dot.body]
    edges = sum("->" in ln for ln in lines)
    nodes = sum(("[" in ln and "->" not in ln and not ln.startswith(("graph", "node", "edge"))) for ln in lines)
    return nodes, edges


graphs = {
    "mha_forward.svg": dict(),
    "mha_backward.svg": dict(backward=True),
    "mha_forward_collapsed.svg": dict(depth=1),
    "mha_backward_collapsed.svg": dict(backward=True, depth=1),
}
sizes, written = {}, {}
for name, kw in tqdm(graphs.items(), desc="graphs"):
    sizes[name] = size(draw_graph(loss, **kw))
    written[name] = draw(loss, os.path.join(args.out, name), **kw)

# second order: the gradient as a differentiable function of x and the weights
(gx,) = tga.grad(loss, [x], create_graph=True)  # (B, T, d_model), itself a graph
penalty = (gx * gx).sum()
penalty.name = "|dloss/dx|^2"
sizes["mha_second_order.svg"] = size(draw_graph(penalty))
written["mha_second_order.svg"] = draw(penalty, os.path.join(args.out, "mha_second_order.svg"))
penalty.backward()  # d/dW of |d loss / d x|^2: a second derivative of the attention
w = mha.q_proj.weight
print(f"loss {loss.item():.4f}; |d loss/d x|^2 = {penalty.item():.3e}; "
      f"its gradient w.r.t. q_proj.weight has norm {float((w.grad * w.grad).sum().sqrt().item()):.3e}")  # fmt: skip

print(f"{'graph':<30} {'nodes':>6} {'edges':>6}")
for name, (n, e) in sizes.items():
    print(f"{name:<30} {n:>6} {e:>6}   -> {written[name]}")
print(f"RESULT forward_nodes={sizes['mha_forward.svg'][0]} backward_nodes={sizes['mha_backward.svg'][0]} "
      f"collapsed_nodes={sizes['mha_forward_collapsed.svg'][0]} second_order_nodes={sizes['mha_second_order.svg'][0]}")  # fmt: skip
