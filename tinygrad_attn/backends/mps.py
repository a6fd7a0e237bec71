"""``tga.backends.mps``: Apple's Metal devices, which this library does not use."""


def is_available() -> bool:
    """False: no Metal device is used here."""
    return False


def is_built() -> bool:
    """False: this library has no Metal backend."""
    return False
