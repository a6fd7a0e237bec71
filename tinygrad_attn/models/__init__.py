"""Layers, attention and whole models, built from the engine's ops."""

from ..functional import scaled_dot_product_attention
from .layers import Dropout, Embedding, LayerNorm, Linear
from .module import Module, ModuleList, Parameter, Sequential

__all__ = [
    "Module",
    "ModuleList",
    "Parameter",
    "Sequential",
    "Linear",
    "Embedding",
    "LayerNorm",
    "Dropout",
    "scaled_dot_product_attention",
]
