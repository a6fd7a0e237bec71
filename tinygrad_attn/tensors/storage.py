"""A tensor's memory as PyTorch's storage objects: ``t.untyped_storage()`` (its bytes) and the
deprecated ``t.storage()`` (its elements in its dtype), both of the whole memory the tensor views, so
that a view and its base have the same storage (``x[1].untyped_storage().data_ptr() ==
x.untyped_storage().data_ptr()``), as programs that show what a view is check.

>>> import tinygrad_attn as tga
>>> x = tga.arange(6.0)
>>> x.untyped_storage().nbytes(), x[2:].untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
(24, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.declare import public
from ..engine.warn import warn as _user_warn
from ._tensor import Tensor
from .elementwise.tensor_torch import _address, memory_root

__all__ = ["TypedStorage", "UntypedStorage"]


class UntypedStorage:
    """The bytes of a tensor's memory (PyTorch's ``torch.UntypedStorage``)."""

    def __init__(self, memory: Any, device: Any) -> None:
        self._memory, self._device = memory, device

    def nbytes(self) -> int:
        return int(self._memory.nbytes)

    def size(self) -> int:
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return _address(self._memory)

    @property
    def device(self) -> Any:
        return self._device

    def _bytes(self) -> np.ndarray:
        host = self._memory if isinstance(self._memory, np.ndarray) else np.asarray(self._memory.get())
        return np.ascontiguousarray(host).reshape(-1).view(np.uint8)

    def tolist(self) -> list[int]:
        return self._bytes().tolist()

    def __getitem__(self, i: int) -> int:
        return int(self._bytes()[i])

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        return f"{body}\n[torch.storage.UntypedStorage(device={self._device}) of size {self.nbytes()}]"

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__


class TypedStorage:
    """A tensor's memory as elements of its dtype (PyTorch's deprecated ``torch.TypedStorage``)."""

    def __init__(self, untyped: UntypedStorage, dtype: Any) -> None:
        self._untyped, self.dtype = untyped, dtype

    def untyped(self) -> UntypedStorage:
        return self._untyped

    def element_size(self) -> int:
        return int(np.dtype(self.dtype).itemsize)

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def size(self) -> int:
        return self.nbytes() // self.element_size()

    def __len__(self) -> int:
        return self.size()

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    @property
    def device(self) -> Any:
        return self._untyped.device

    def tolist(self) -> list[Any]:
        return self._untyped._bytes().view(np.dtype(self.dtype)).tolist()

    def __getitem__(self, i: int) -> Any:
        return self.tolist()[i]

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        return f"{body}\n[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {self.size()}]"


@public(function=False, method=True)
def untyped_storage(self: Tensor) -> UntypedStorage:
    """The bytes of the memory this tensor views (all of it: a view's is its base's), as PyTorch's."""
    return UntypedStorage(memory_root(self), self.device)


_warned: list[bool] = []  # (PyTorch warns of TypedStorage once in a process)


@public(function=False, method=True)
def storage(self: Tensor) -> TypedStorage:
    """The memory this tensor views as elements of its dtype (PyTorch's deprecated TypedStorage, with its
    warning, given once in a process as PyTorch gives it)."""
    if not _warned:
        _warned.append(True)
        _user_warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage "
            "class. This should only matter to you if you are using storages directly.  To access UntypedStorage "
            "directly, use tensor.untyped_storage() instead of tensor.storage()",
            UserWarning,
        )
    return TypedStorage(untyped_storage(self), self.dtype)
