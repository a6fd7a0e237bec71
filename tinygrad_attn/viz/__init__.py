"""Pictures of computation: the forward graph, the backward graph, attention weights.

>>> import tinygrad_attn as tga
>>> from tinygrad_attn.viz import draw_graph, render
>>> q = tga.Tensor.randn(1, 2, 4, 8, requires_grad=True, name="q")
>>> out = tga.functional.scaled_dot_product_attention(q, q, q)
>>> draw_graph(out)                                     # doctest: +SKIP
>>> render(out.sum(), "sdpa_backward.svg", backward=True)  # doctest: +SKIP

See :func:`draw_graph` for the options; :func:`plot_attention` draws weights as heat maps.

:func:`explore` writes one self-contained HTML page to explore a computation: its graphs,
values, gradients, backward pass step by step and attention weights.
:func:`renderer` says which program draws the pictures (Graphviz's ``dot``, the
pip-installed ``graphviz-pure``, or none).
"""

from .attention_plot import plot_attention
from .explore import Explorer, explore
from .render import FORMATS, draw_graph, render
from .renderer import GraphvizNotFoundError, Renderer, renderer

__all__ = ["draw_graph", "render", "renderer", "Renderer", "plot_attention", "GraphvizNotFoundError", "FORMATS"]
# the interactive explorer page
__all__ += ["explore", "Explorer"]
