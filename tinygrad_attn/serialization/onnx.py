"""``tga.onnx``: PyTorch's ONNX exporter, which this library does not have. Importing works;
``export`` raises a ``NotImplementedError`` naming it (save the weights with ``tga.save``)."""

from ..runtime._not_here import not_here

__all__ = ["export", "dynamo_export", "is_in_onnx_export"]

export = not_here("onnx.export", "save the weights with tga.save(model.state_dict(), f) and export from PyTorch")
dynamo_export = not_here("onnx.dynamo_export", "save the weights with tga.save(model.state_dict(), f)")


def is_in_onnx_export() -> bool:
    """False: no export ever runs here."""
    return False
