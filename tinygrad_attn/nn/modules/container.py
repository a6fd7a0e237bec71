"""``torch.nn.modules.container``: PyTorch's path to its containers of modules and parameters, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..module import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
