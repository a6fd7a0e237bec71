"""Already have PyTorch code? Change its imports, run it here, and look at its backward graph.

    python examples/pytorch_code.py [--quick] [--device cuda] [--out DIR]

The model below is written the way PyTorch tutorials write attention: `nn.Linear`,
`torch.bmm(q, k.transpose(1, 2))`, `nn.Softmax(dim=2)`, `.size(-1)`, `.mean(dim=1)`,
`torch.optim.Adam`, `F.cross_entropy`. Only the three import lines differ from PyTorch:

    import tinygrad_attn as torch
    from tinygrad_attn import nn
    import tinygrad_attn.nn.functional as F

The task needs attention: each sequence holds random tokens, and the label says whether
its first token appears again later on. The script trains the model for a few hundred
steps, prints the accuracy, and writes the forward and backward graphs of one step.
"""

import math
import os

from common import draw, parse_args  # examples/common.py: the flags every example takes

# isort: off
import tinygrad_attn as torch  # the three lines that differ from PyTorch code
from tinygrad_attn import nn
import tinygrad_attn.nn.functional as F

# isort: on

args = parse_args(__doc__, "a few seconds: fewer training steps")
VOCAB, LENGTH, D = 8, 6, 16


# -- the PyTorch code, unchanged -----------------------------------------------------
class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        self.W_value = nn.Linear(d_in, d_out, bias=False)
        self.softmax = nn.Softmax(dim=2)

    def forward(self, x):
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(keys.size(-1))
        return torch.bmm(self.softmax(scores), values)


class Classifier(nn.Module):
    def __init__(self, vocab, length, d):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.position = nn.Parameter(torch.randn(length, d) * 0.1)
        self.attention = SelfAttention(d, d)
        self.head = nn.Linear(d, 2)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position
        return self.head(self.attention(x).mean(dim=1))


def batch(n):
    tokens = torch.randint(0, VOCAB, (n, LENGTH))
    label = (tokens[:, 1:] == tokens[:, :1]).any(dim=1).long()
    return tokens, label


model = Classifier(VOCAB, LENGTH, D)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
steps = 150 if args.quick else 600
for step in range(steps):
    tokens, label = batch(64)
    loss = F.cross_entropy(model(tokens), label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % (steps // 5) == 0 or step == steps - 1:
        print(f"step {step:4d}  loss {loss.item():.3f}")

with torch.no_grad():
    tokens, label = batch(2000)
    accuracy = (model(tokens).argmax(dim=1) == label).float().mean().item()
base = max(label.float().mean().item(), 1 - label.float().mean().item())
print(f"accuracy {accuracy:.3f} (always guessing the commoner label: {base:.3f})")

# -- its graphs: the same drawing as for the library's own modules --------------------
tokens, label = batch(4)
loss = F.cross_entropy(model(tokens), label)
for backward, name in ((False, "pytorch_code_forward.svg"), (True, "pytorch_code_backward.svg")):
    print("wrote", draw(loss, os.path.join(args.out, name), backward=backward, params=dict(model.named_parameters())))
print(f"RESULT accuracy={accuracy:.3f} baseline={base:.3f}")
