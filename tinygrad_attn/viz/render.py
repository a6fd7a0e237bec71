"""Draw a graph (:func:`draw_graph`) and write it to a file (:func:`render`).

>>> import tinygrad_attn as tga
>>> from tinygrad_attn.viz import draw_graph, render
>>> x = tga.Tensor([[1.0, 2.0]], requires_grad=True, name="x")
>>> loss = x.softmax(-1).sum()
>>> dot = draw_graph(loss)  # a graphviz.Digraph: shows inline in Jupyter
>>> render(loss, "loss.svg", backward=True)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import graphviz

from ..tensors._tensor import Tensor
from .backward import backward_graph
from .dot import MAX_NODES, to_digraph
from .graph import forward_graph
from .renderer import Digraph, GraphvizNotFoundError, renderer

FORMATS = (".svg", ".png", ".pdf", ".dot")
RANKDIRS = ("TB", "LR", "BT", "RL")


def draw_graph(
    roots: Tensor | Iterable[Tensor],
    *,
    backward: bool = False,
    show_values: bool = False,
    show_grads: bool = False,
    group_modules: bool = True,
    depth: int | None = None,
    rankdir: str = "TB",
    params: Mapping[str, Tensor] | Iterable[tuple[str, Tensor]] | None = None,
    legend: bool = True,
    max_nodes: int | None = MAX_NODES,
) -> graphviz.Digraph:
    """The graph that computed ``roots`` (one tensor or several), as a ``graphviz.Digraph``
    that draws (also inline in Jupyter) with :func:`~tinygrad_attn.viz.renderer`.

    - ``backward=True``: the gradient computation instead: one step per op, the arrays
      it saved, accumulations, the ``.grad`` of each leaf.
    - ``show_values``: numbers of small tensors, min / mean / max of larger ones.
    - ``show_grads``: the norm of each tensor's gradient, and edges as wide as the log of
      it (vanishing gradients show as hairlines). Computed fresh (d sum(roots) / d t)
      while the graph holds its saved arrays, else read from ``.grad``.
    - ``group_modules``: clusters per module call; ``depth=N`` draws every module nested
      deeper than N (the model itself is depth 1) as one node.
    - ``max_nodes``: with no ``depth``, a graph larger than this has its deepest modules
      collapsed until it fits, and its title says so; ``max_nodes=None`` draws every node.
    - ``params``: names for parameters, e.g. ``dict(model.named_parameters())``; modules
      that made the graph name theirs without it.

    >>> draw_graph(loss, depth=1, rankdir="LR")  # doctest: +SKIP
    """
    if rankdir not in RANKDIRS:
        raise ValueError(f"draw_graph: rankdir must be one of {', '.join(RANKDIRS)}, got {rankdir!r}")
    if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth < 0):
        raise ValueError(f"draw_graph: depth must be None or an integer >= 0, got {depth!r}")
    build = backward_graph if backward else forward_graph
    graph = build(roots, show_values=show_values, show_grads=show_grads, params=params)
    g = to_digraph(graph, depth=depth, group_modules=group_modules, rankdir=rankdir, show_legend=legend,
                   name="backward" if backward else "forward", max_nodes=max_nodes)  # fmt: skip
    return Digraph.of(g)


def render(roots: Tensor | Iterable[Tensor] | graphviz.Digraph, path: str | Path, **kw: Any) -> Path:
    """Draw ``roots`` (or take a drawn ``Digraph``) and write ``path``; the suffix picks the format.

    ``.dot`` is the DOT source and needs nothing else; ``.svg``, ``.png`` and ``.pdf`` run
    the program :func:`~tinygrad_attn.viz.renderer` names: Graphviz's ``dot``, or else the
    pip-installed ``graphviz-pure`` (SVG and PNG). Without one that can make the format, a
    :class:`GraphvizNotFoundError` says how to get it, and the ``.dot`` source is written
    beside ``path`` anyway. ``kw`` go to :func:`draw_graph`. Returns ``path``.

    >>> render(loss, "attention.svg", backward=True, depth=1)  # doctest: +SKIP
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"render: cannot tell the format of {str(path)!r}; use a suffix of {', '.join(FORMATS)}")
    dot = roots if isinstance(roots, graphviz.Digraph) else draw_graph(roots, **kw)
    if suffix == ".dot":
        path.write_text(dot.source, encoding="utf-8")
        return path
    try:
        picture = renderer().run(dot.source, suffix[1:], target=repr(str(path)))
    except GraphvizNotFoundError as e:
        src = path.with_suffix(".dot")
        src.write_text(dot.source, encoding="utf-8")
        raise GraphvizNotFoundError(
            f"{e} The DOT source was written to {str(src)!r}: draw it later with `dot -T{suffix[1:]} {src} -o {path}`."
        ) from None
    path.write_bytes(picture)
    return path
