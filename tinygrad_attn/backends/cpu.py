"""``tga.backends.cpu``: what the CPU offers (NumPy picks its own vector instructions)."""


def get_cpu_capability() -> str:
    """PyTorch's name of the vector instructions its kernels use; NumPy chooses its own here."""
    return "DEFAULT"
