"""What every example shares: its command-line flags, the setup they ask for, and how
they write their graph pictures."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

import tinygrad_attn as tga
from tinygrad_attn.viz import GraphvizNotFoundError, render

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")


def parse_args(
    doc: str,
    quick: str,
    *,
    device: str | None = "cpu",
    device_help: str | None = None,
    add: Callable[[argparse.ArgumentParser], None] | None = None,
) -> argparse.Namespace:
    """``--quick`` (``quick`` says what it shortens), ``--device``, ``--out`` and ``--seed``,
    plus whatever ``add`` adds. Seeds every random draw, sets the default device (unless
    ``device`` is None) and makes the output folder."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help=quick)
    if add is not None:
        add(parser)
    parser.add_argument("--device", default=device, help=device_help)
    parser.add_argument("--out", default=OUT, help="where the pictures go")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tga.manual_seed(args.seed)
    if args.device is not None:
        tga.set_default_device(args.device)
    return args


_told = False  # the advice on getting a renderer is printed once, not for every picture


def draw(roots: Any, path: str, **kw: Any) -> str:
    """Write ``roots``' graph to ``path`` (``tga.viz.render``) and return the file written.
    Without a program that draws (``tga.viz.renderer()``), the DOT source is written instead,
    how to get one is printed once, and the example goes on: its numbers need no pictures."""
    global _told
    try:
        written = str(render(roots, path, **kw))
    except GraphvizNotFoundError as e:
        written = os.path.splitext(path)[0] + ".dot"
        if not _told:
            print(e)
            _told = True
    return written
