"""Pictures of computation: the forward graph, the backward graph, attention weights.

>>> import tinygrad_attn as tga
>>> from tinygrad_attn.viz import draw_graph, render
>>> q = tga.Tensor.randn(1, 2, 4, 8, requires_grad=True, name="q")
>>> out = tga.functional.scaled_dot_product_attention(q, q, q)
>>> draw_graph(out)                                     # doctest: +SKIP
>>> render(out.sum(), "sdpa_backward.svg", backward=True)  # doctest: +SKIP

See :func:`draw_graph` for the options; :func:`plot_attention` draws weights as heat maps.
"""

from .attention_plot import plot_attention
from .render import FORMATS, GraphvizNotFoundError, draw_graph, render

__all__ = ["draw_graph", "render", "plot_attention", "GraphvizNotFoundError", "FORMATS"]
