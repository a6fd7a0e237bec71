"""``tga.backends``: PyTorch's ``torch.backends`` flags a script sets at its top
(``tga.backends.cudnn.benchmark = True``, ``tga.backends.cuda.matmul.allow_tf32 = True``,
``tga.backends.mps.is_available()``). cuDNN, TF32 and Metal are not used here, so the flags
change nothing; they keep what is set and read it back, as PyTorch's do.
"""

from . import cpu, cuda, cudnn, mps

__all__ = ["cpu", "cuda", "cudnn", "mps"]
