"""PyTorch's ``torch.nn.parallel``: ``DataParallel`` and ``data_parallel``, single-process
data parallelism over the GPUs of one machine.

On a machine without a GPU PyTorch's ``DataParallel`` keeps the module and calls it as it is
(``device_ids == []``), and so does this one; its ``state_dict`` keys start with ``module.``,
as checkpoints saved from a wrapped model do. With one GPU the module is moved there and its
inputs follow it. Splitting a batch over several GPUs is not implemented (a ``NotImplementedError``
names it): this library drives one device per process.

>>> model = nn.DataParallel(nn.Linear(2, 3))  # doctest: +SKIP
>>> list(model.state_dict())  # doctest: +SKIP
['module.weight', 'module.bias']
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

from ..runtime import cuda
from ..tensors._tensor import Tensor
from .module import Module

__all__ = ["DataParallel", "data_parallel"]


def _index(d: Any) -> int:
    if isinstance(d, int):
        return d
    index = getattr(d, "index", None)
    if index is None and isinstance(d, str) and ":" in d:
        index = int(d.split(":")[1])
    return 0 if index is None else int(index)


def _on(device: str, value: Any) -> Any:
    """``value`` (tensors, nested in tuples, lists and dicts) on ``device``: the scatter onto one GPU."""
    if isinstance(value, Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_on(device, v) for v in value)
    if isinstance(value, dict):
        return {k: _on(device, v) for k, v in value.items()}
    return value


def _check_placed(module: Module, device: str) -> None:
    for t in chain(module.parameters(), module.buffers()):
        if str(t.device) != device:
            raise RuntimeError(
                f"module must have its parameters and buffers on device {device} (device_ids[0]) but found "
                f"one of them on device: {t.device}"
            )


def _one_device(device_ids: Sequence[int], what: str) -> None:
    if len(device_ids) > 1:
        raise NotImplementedError(
            f"{what}: splitting a batch over {len(device_ids)} GPUs ({list(device_ids)}) is not part of "
            "tinygrad_attn; pass device_ids=[0] (one GPU) or call the module itself"
        )


class DataParallel(Module):
    """PyTorch's ``nn.DataParallel(module, device_ids=None, output_device=None, dim=0)``: the module
    as it is without a GPU (``device_ids == []``), on ``device_ids[0]`` with one (see the module)."""

    def __init__(self, module: Module, device_ids: Sequence[int | Any] | None = None,
                 output_device: int | Any | None = None, dim: int = 0) -> None:  # fmt: skip
        super().__init__()
        if not cuda.is_available():
            self.module = module
            self.device_ids: list[int] = []
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        self.dim = dim
        self.module = module
        self.device_ids = [_index(d) for d in device_ids]
        self.output_device = _index(device_ids[0] if output_device is None else output_device)
        self.src_device_obj = f"cuda:{self.device_ids[0]}"
        _one_device(self.device_ids, "DataParallel")
        self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_placed(self.module, self.src_device_obj)
        out = self.module(*_on(self.src_device_obj, inputs), **_on(self.src_device_obj, kwargs))
        return _on(f"cuda:{self.output_device}", out)


def data_parallel(module: Module, inputs: Any, device_ids: Sequence[int | Any] | None = None,
                  output_device: int | Any | None = None, dim: int = 0,
                  module_kwargs: dict[str, Any] | None = None) -> Any:  # fmt: skip
    """PyTorch's functional ``data_parallel``: ``module(*inputs, **module_kwargs)`` on ``device_ids[0]``.
    Without a GPU it raises PyTorch's RuntimeError ("device type could not be determined")."""
    inputs = inputs if isinstance(inputs, tuple) else ((inputs,) if inputs is not None else ())
    if not cuda.is_available():
        raise RuntimeError("device type could not be determined")
    ids = [_index(d) for d in (range(cuda.device_count()) if device_ids is None else device_ids)]
    _one_device(ids, "data_parallel")
    device = f"cuda:{ids[0]}"
    _check_placed(module, device)
    out = module(*_on(device, inputs), **_on(device, module_kwargs or {}))
    return _on(f"cuda:{_index(ids[0] if output_device is None else output_device)}", out)
