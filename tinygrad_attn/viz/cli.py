"""``python -m tinygrad_attn graph BLOCK --out FILE``: draw a built-in block.

    python -m tinygrad_attn graph mha --out mha.svg
    python -m tinygrad_attn graph gpt --out gpt.png --depth 1 --backward
    python -m tinygrad_attn renderer          # which program draws: dot, graphviz-pure or none
    python -m tinygrad_attn explore mha --out mha.html   # an interactive page (tga.viz.explore)

Each block is small (a few tokens, a width of 16) so its picture is readable; models
are imported only when their block is asked for. Pictures are drawn by
``tga.viz.renderer()``; without one, the DOT source is written, the message says how to
get a renderer, and the exit status is still 0.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from .. import functional
from ..engine.switches import decompose
from ..random import manual_seed
from ..tensors._tensor import Tensor
from .render import FORMATS, RANKDIRS, GraphvizNotFoundError, render
from .renderer import renderer

D_MODEL, HEADS, D_FF, T, LAYERS = 16, 2, 32, 4, 2
Block = tuple[Tensor, dict]


def _x(name: str = "x", t: int = T) -> Tensor:
    return Tensor.randn(1, t, D_MODEL, requires_grad=True, name=name)  # (B, T, d_model)


def sdpa() -> Block:
    q, k, v = (Tensor.randn(1, HEADS, T, D_MODEL // HEADS, requires_grad=True, name=n) for n in "qkv")  # (B, H, T, d)
    return functional.scaled_dot_product_attention(q, k, v, is_causal=True), {}


def mha() -> Block:
    from ..models import BatchFirstAttention  # noqa: PLC0415 - models load only when drawn

    m = BatchFirstAttention(D_MODEL, HEADS)
    return m(_x()), dict(m.named_parameters())


def encoder() -> Block:
    from ..models import EncoderBlock  # noqa: PLC0415

    m = EncoderBlock(D_MODEL, HEADS, D_FF)
    return m(_x()), dict(m.named_parameters())


def decoder() -> Block:
    from ..models import DecoderBlock  # noqa: PLC0415

    m = DecoderBlock(D_MODEL, HEADS, D_FF)
    return m(_x(), _x("memory", T + 1), is_causal=True), dict(m.named_parameters())


def gpt() -> Block:
    from ..models import GPT  # noqa: PLC0415

    m = GPT(vocab_size=32, d_model=D_MODEL, n_heads=HEADS, n_layers=LAYERS, max_len=16)
    tokens = Tensor(np.array([[3, 1, 4, 1, 5, 9]], dtype=np.int64), name="tokens")
    return m(tokens), dict(m.named_parameters())


def vit() -> Block:
    from ..models import ViT  # noqa: PLC0415

    m = ViT(image_size=8, patch_size=4, channels=3, n_classes=10, d_model=D_MODEL, n_heads=HEADS, n_layers=LAYERS)
    images = Tensor.randn(1, 3, 8, 8, name="images")  # (B, C, H, W)
    return m(images), dict(m.named_parameters())


BLOCKS: dict[str, Callable[[], Block]] = {
    "sdpa": sdpa,
    "mha": mha,
    "encoder": encoder,
    "decoder": decoder,
    "gpt": gpt,
    "vit": vit,
}


def _depth(s: str) -> int:
    n = int(s)
    if n < 0:
        raise argparse.ArgumentTypeError(f"depth must be 0 or more, got {n}")
    return n


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tinygrad_attn", description="tinygrad_attn tools")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("graph", help="draw the forward or backward graph of a built-in block")
    g.add_argument("block", choices=list(BLOCKS), help="the block to draw")
    g.add_argument("--out", required=True, help=f"the file to write; its suffix is the format ({' '.join(FORMATS)})")
    g.add_argument("--backward", action="store_true", help="draw the gradient computation of out.sum()")
    g.add_argument("--depth", type=_depth, default=None, help="collapse modules nested deeper than N")
    g.add_argument("--values", action="store_true", help="print small tensors' numbers, larger ones' min/mean/max")
    g.add_argument("--grads", action="store_true", help="show gradient norms; edge width follows them")
    g.add_argument("--decompose", action="store_true", help="draw composites (softmax, attention, ...) as primitives")
    g.add_argument("--rankdir", choices=RANKDIRS, default="TB", help="layout direction")
    g.add_argument("--seed", type=int, default=0, help="random seed for weights and inputs")
    g.add_argument("--device", default=None, help="the device to run on (cpu, cuda, cuda:1, ...; default: "
                   "TINYGRAD_ATTN_DEVICE, else cpu)")  # fmt: skip
    sub.add_parser("renderer", help="say which program draws the pictures (dot, graphviz-pure or none)")
    e = sub.add_parser("explore", help="write an interactive HTML page exploring a built-in block's backward pass")
    e.add_argument("block", choices=list(BLOCKS), help="the block to explore")
    e.add_argument("--out", required=True, help="the .html file to write")
    e.add_argument("--tokens", default=None, help="token labels for the attention views, separated by spaces")
    e.add_argument("--full-values", action="store_true", help="keep every number (the page grows)")
    e.add_argument(
        "--decompose", action="store_true", help="explore composites (softmax, attention, ...) as primitives"
    )
    e.add_argument("--seed", type=int, default=0, help="random seed for weights and inputs")
    e.add_argument("--device", default=None, help="the device to run on (as for graph)")
    e.add_argument("--loss", choices=["mse", "sum"], default="mse",
                   help="mse (default): mean squared error against a fixed random target, whose gradient reaches "
                        "every tensor; sum: out.sum(), which after a LayerNorm sends ~0 to everything before it")  # fmt: skip
    return p


def graph(args: argparse.Namespace) -> int:
    manual_seed(args.seed)
    with decompose() if args.decompose else contextlib.nullcontext():
        out, params = BLOCKS[args.block]()
        out.name = "out"
        root = out
        if args.backward or args.grads:
            root = out.sum()
            root.name = "loss"
    try:
        path = render(root, args.out, backward=args.backward, depth=args.depth, show_values=args.values,
                      show_grads=args.grads, rankdir=args.rankdir, params=params)  # fmt: skip
    except GraphvizNotFoundError as e:  # the .dot source is written anyway: that much worked
        print(e, file=sys.stderr)
        print(f"wrote {Path(args.out).with_suffix('.dot')}")
        return 0
    print(f"wrote {path}")
    return 0


def _explorable(name: str) -> tuple[Callable[..., Tensor], tuple, dict]:
    """A built-in block as ``(fn, inputs, params)``: weights and inputs are drawn here, outside
    the function, so that the tracer records ``fn`` (a random draw inside would be frozen)."""
    from .. import models  # noqa: PLC0415 - models load only when explored

    if name == "sdpa":
        qkv = tuple(Tensor.randn(1, HEADS, T, D_MODEL // HEADS, requires_grad=True, name=n) for n in "qkv")
        return (lambda q, k, v: functional.scaled_dot_product_attention(q, k, v, is_causal=True)), qkv, {}
    if name == "gpt":
        m = models.GPT(vocab_size=32, d_model=D_MODEL, n_heads=HEADS, n_layers=LAYERS, max_len=16)
        tokens = Tensor(np.array([[3, 1, 4, 1, 5, 9]], dtype=np.int64), name="tokens")
        return (lambda: m(tokens)), (), dict(m.named_parameters())  # (tokens: a constant of the program)
    if name == "vit":
        m = models.ViT(image_size=8, patch_size=4, channels=3, n_classes=10, d_model=D_MODEL, n_heads=HEADS,
                       n_layers=LAYERS)  # fmt: skip
        return m, (Tensor.randn(1, 3, 8, 8, name="images"),), dict(m.named_parameters())
    if name == "decoder":
        m = models.DecoderBlock(D_MODEL, HEADS, D_FF)
        return (lambda x, mem: m(x, mem, is_causal=True)), (_x(), _x("memory", T + 1)), dict(m.named_parameters())
    m = models.BatchFirstAttention(D_MODEL, HEADS) if name == "mha" else models.EncoderBlock(D_MODEL, HEADS, D_FF)
    return m, (_x(),), dict(m.named_parameters())


def _tokens_of(block: str) -> int:
    """The length of a built-in block's (query) sequence: what ``--tokens`` labels."""
    return {"gpt": 6, "vit": (8 // 4) ** 2 + 1}.get(block, T)


def explore_block(args: argparse.Namespace) -> int:
    from .explore import explore  # noqa: PLC0415 - the explorer loads only when asked for

    manual_seed(args.seed)
    fn, inputs, params = _explorable(args.block)
    if hasattr(fn, "eval"):
        fn.eval()  # no dropout: the traced program is then the function itself

    if args.loss == "sum":

        def loss(*xs: Tensor) -> Tensor:
            return fn(*xs).sum()

    else:  # the target is drawn here, outside the function: a constant of the traced program
        target = Tensor.randn(*fn(*inputs).shape, name="target")

        def loss(*xs: Tensor) -> Tensor:
            return functional.mse_loss(fn(*xs), target)

    tokens = args.tokens.split() if args.tokens else None
    if tokens is None and args.block == "gpt":
        tokens = ["3", "1", "4", "1", "5", "9"]
    if tokens is not None and len(tokens) != _tokens_of(args.block):
        raise SystemExit(f"python -m tinygrad_attn explore: --tokens gives {len(tokens)} tokens ({' '.join(tokens)}) "
                         f"but {args.block}'s sequence has {_tokens_of(args.block)}: give one label per token")  # fmt: skip
    with decompose() if args.decompose else contextlib.nullcontext():
        page = explore(loss, *inputs, tokens=tokens, full_values=args.full_values, params=params,
                       title=f"tinygrad_attn explorer: {args.block}")  # fmt: skip
    path = page.save(args.out)
    print(f"wrote {path} ({len(page.html) // 1024} KiB): open it in a browser")
    return 0


@contextlib.contextmanager
def _on_device(name: str | None) -> Iterator[None]:
    """New tensors go to ``name`` (default: the current default device) while the command runs."""
    from ..runtime.backend import default_device, get_device, set_default_device  # noqa: PLC0415

    dev = get_device(name)  # (a RuntimeError saying what is missing, for main to print)
    before = default_device().name if name is not None else None
    if name is not None:
        set_default_device(dev.name)
    try:
        yield
    finally:
        if before is not None:
            set_default_device(before)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command in ("graph", "explore"):
        try:
            device = _on_device(args.device)
            device.__enter__()
        except RuntimeError as e:  # a device that cannot be used: the reason, without the traceback
            print(f"python -m tinygrad_attn {args.command}: error: {e}", file=sys.stderr)
            return 2
        try:
            return graph(args) if args.command == "graph" else explore_block(args)
        finally:
            device.__exit__(None, None, None)
    if args.command == "renderer":
        print(renderer())
        return 0
    return 2  # pragma: no cover - argparse allows only known commands
