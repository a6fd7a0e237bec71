"""``torch.nn.modules.transformer``: PyTorch's path to its transformer layers, here the classes of
:mod:`tinygrad_attn.nn` (the same objects)."""

from ..torch_transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
]
