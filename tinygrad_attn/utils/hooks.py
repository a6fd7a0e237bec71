"""PyTorch's ``torch.utils.hooks``: :class:`RemovableHandle`, what every ``register_*_hook``
returns (its ``remove()`` takes the hook away; a ``with`` block removes it at its end).

>>> from tinygrad_attn.utils.hooks import RemovableHandle  # doctest: +SKIP
"""

from ..nn.module import RemovableHandle

__all__ = ["RemovableHandle"]
