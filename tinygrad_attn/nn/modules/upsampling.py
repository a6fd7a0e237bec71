"""``torch.nn.modules.upsampling``: PyTorch's path to its upsampling, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
