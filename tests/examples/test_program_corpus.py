"""The corpus harness (benchmarks/program_corpus): only the imports of a program change, and
the printed numbers are compared as they should be. Its programs are public code never stored
here; these tests run a small program of our own through it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "program_corpus"
sys.path.insert(0, str(BENCH))
import run as corpus  # noqa: E402

IMPORTS = {
    "import torch": "import tinygrad_attn as torch",
    "import torch.nn as nn": "import tinygrad_attn.nn as nn",
    "import torch.nn.functional as F  # activations": "import tinygrad_attn.nn.functional as F  # activations",
    "import torch.optim as optim": "import tinygrad_attn.optim as optim",
    "import torch.autograd as autograd": "import tinygrad_attn.autograd as autograd",
    "from torch import nn, optim": "from tinygrad_attn import nn, optim",
    "from torch.utils.data import DataLoader, TensorDataset": "from tinygrad_attn.utils.data import DataLoader, TensorDataset",
    "from torch.optim.lr_scheduler import StepLR": "from tinygrad_attn.optim.lr_scheduler import StepLR",
    "import torch.nn": "import tinygrad_attn.nn, tinygrad_attn as torch",
    "import numpy as np, torch": "import numpy as np, tinygrad_attn as torch",
    "    import torch": "    import tinygrad_attn as torch",
}
KEPT = [
    "import torchvision",
    "import numpy as np",
    "x = torch.zeros(3)  # import torch",
    "from torchtext import data",
    "print('import torch')",
]


@pytest.mark.parametrize("line", sorted(IMPORTS))
def test_each_import_of_torch_becomes_one_of_tinygrad_attn(line):
    assert corpus.swap_imports(line + "\n") == IMPORTS[line] + "\n"


def test_nothing_but_the_imports_changes():
    text = "\n".join([*KEPT, "import torch", *KEPT]) + "\n"
    swapped = corpus.swap_imports(text)
    assert swapped.splitlines() == [*KEPT, "import tinygrad_attn as torch", *KEPT]
    crlf = "import torch\r\ny = 1\r\n"
    assert corpus.swap_imports(crlf) == "import tinygrad_attn as torch\r\ny = 1\r\n"


def test_the_swapped_imports_bind_the_librarys_modules():
    ns: dict = {}
    exec(corpus.swap_imports("\n".join(sorted(v.strip() for v in IMPORTS)) + "\n"), ns)  # noqa: S102
    import tinygrad_attn  # noqa: PLC0415

    assert ns["torch"] is tinygrad_attn
    assert ns["nn"] is tinygrad_attn.nn and ns["F"] is tinygrad_attn.nn.functional
    assert ns["DataLoader"] is tinygrad_attn.utils.data.DataLoader


@pytest.mark.parametrize(
    ("ours", "theirs", "equal"),
    [
        ("loss 0.500000\n", "loss 0.500000\n", True),
        ("loss 0.500001\n", "loss 0.500000\n", True),  # within rtol 1e-4
        ("loss 0.510000\n", "loss 0.500000\n", False),
        ("step 3 | 12.5ms | 1.0\n", "step 3 | 99.0ms | 1.0\n", True),  # a timing glued to its unit is not compared
        ("| 12.50 ms | 1.0 | 3.2 s\n", "| 99.00 ms | 1.0 | 7.0 s\n", True),  # nor one with its unit after a space
        ("3 steps 1.0\n", "4 steps 1.0\n", False),  # a count before a word is a number
        ("grad_fn=<AddmmBackward0>) 2.0\n", "grad_fn=<AddBackward0>) 2.0\n", True),
        ("1.0\n2.0\n", "1.0\n", False),  # PyTorch printed fewer numbers
        ("tensor([[0.7647, 0.0000],\n        [1.0000, 2.0000]])\n", "Tensor([[0.764706, 0.000012], [1., 2.]])\n", True),
        ("tensor([0.7647])\n", "Tensor([0.765006])\n", False),  # beyond the rounding of 4 digits
        ("loss: 0.132\n", "loss: 0.133\n", True),  # 0.13249 and 0.13251, each rounded to 3 digits
        ("nan 1\n", "nan 1\n", True),
        ("1 2\n", "1 2 3\n", False),
    ],
)
def test_printed_numbers_are_compared_with_a_tolerance(ours, theirs, equal):
    assert corpus.compare(ours, theirs, 1e-4, 1e-6)[1] is equal


PROGRAM = """\
import argparse
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from netdef import make_net

parser = argparse.ArgumentParser()
parser.add_argument('--steps', type=int, default=100)
args = parser.parse_args()
x = torch.randn(16, 3)
y = x.sum(1, keepdim=True)
net = make_net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(args.steps):
    for xb, yb in DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True):
        loss = ((net(xb) - yb) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(step, '{:.6f}'.format(loss.item()))
torch.save(net.state_dict(), 'net.pt')
"""
MODULE = "import torch.nn as nn\n\n\ndef make_net():\n    return nn.Linear(3, 1)\n"  # the program's own module


def _commit(repo: Path, files: dict[str, str]) -> str:
    """A git repository at ``repo`` holding ``files``; its commit."""
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "demo"], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def test_a_program_runs_beside_pytorch_from_a_repositorys_commit(tmp_path):
    pytest.importorskip("torch")
    commit = _commit(tmp_path / "mirror" / "someone+demo", {"sub/train.py": PROGRAM, "sub/netdef.py": MODULE})
    entry = {
        "name": "demo",
        "repo": "someone/demo",
        "commit": commit,
        "path": "sub/train.py",
        "args": [["--steps", "3"]],
    }
    r = corpus.run_program(entry, tmp_path / "mirror", tmp_path / "scratch", 300, 1e-5, 1e-7)
    assert (r.torch, r.ours) == ("ok", "ok"), r
    assert r.match and r.numbers == 6, r
    assert (tmp_path / "scratch" / "demo" / "tinygrad_attn" / "sub" / "net.pt").exists()
    swapped = (tmp_path / "scratch" / "demo" / "tinygrad_attn" / "sub" / "train.py").read_text()
    assert swapped == corpus.swap_imports(PROGRAM) != PROGRAM
    module = (tmp_path / "scratch" / "demo" / "tinygrad_attn" / "sub" / "netdef.py").read_text()
    assert module == corpus.swap_imports(MODULE) != MODULE  # its modules import tinygrad_attn too


@pytest.mark.parametrize(
    ("ours", "theirs", "same"),
    [
        ("loss 0.5 | 12.5ms\n['dolor', 'ut']\n", "loss 0.7 | 99ms\n['dolor', 'ut']\n", True),
        ("['dolor', 'ut']\n", "['dolor', 'sit']\n", False),  # a predicted word differs
        ("Size([2, 3])\n", "torch.Size([2, 3])\n", False),
        ("a\n", "a\nb\n", False),
    ],
)
def test_the_printed_text_is_compared_apart_from_its_numbers(ours, theirs, same):
    assert (corpus.text_difference(ours, theirs) == "") is same


def test_a_failure_agrees_when_ours_is_an_instance_of_pytorchs_class(tmp_path):
    # PyTorch raises RuntimeError; ours is a RuntimeError and a ValueError (InvalidArgumentError)
    pytest.importorskip("torch")
    program = "import torch\nprint(1.5)\ntorch.ones(2, 2).dot(torch.ones(2, 2))\n"
    commit = _commit(tmp_path / "mirror" / "someone+fails", {"fails.py": program})
    entry = {"name": "fails", "repo": "someone/fails", "commit": commit, "path": "fails.py"}
    r = corpus.run_program(entry, tmp_path / "mirror", tmp_path / "scratch", 300, 1e-5, 1e-7)
    assert r.torch.startswith("RuntimeError") and "InvalidArgumentError" in r.ours, r
    assert r.match and r.numbers == 1, r
