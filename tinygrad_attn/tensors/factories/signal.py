"""``tga.signal`` (``torch.signal``): its one part, :mod:`windows` (``tga.signal.windows.hann``, ...)."""

from . import windows

__all__ = ["windows"]
