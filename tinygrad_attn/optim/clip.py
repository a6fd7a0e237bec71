"""Gradient clipping by the global norm of all gradients.

One implementation, :func:`tinygrad_attn.nn.utils.clip_grad_norm_`; this name stays for
code that imports it from ``tinygrad_attn.optim``.
"""

from __future__ import annotations

from ..nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_

__all__ = ["clip_grad_norm_", "clip_grad_value_"]
