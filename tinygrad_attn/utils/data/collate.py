"""How a batch of samples becomes one value, as PyTorch's ``default_collate``: tensors are
stacked along a new first dimension; NumPy arrays and numbers become tensors (Python
floats float64, ints int64, bools bool); strings and bytes stay a list; dicts, namedtuples,
tuples and lists are collated field by field. ``default_convert`` (no batching) only turns
NumPy values into tensors.

>>> default_collate([{"x": tga.zeros(2), "y": 1}, {"x": tga.ones(2), "y": 0}])  # doctest: +SKIP
{'x': Tensor([[0., 0.], [1., 1.]]), 'y': Tensor([1, 0])}
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ...tensors import dtypes
from ...tensors._tensor import Tensor, stack
from ...tensors.factories import creation

#: NumPy dtype codes of bytes, strings and objects: nothing a tensor can hold
_NOT_NUMERIC = re.compile(r"[SaUO]")
_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_numpy_value(x: Any) -> bool:
    return type(x).__module__ == "numpy" and type(x).__name__ not in ("str_", "string_", "bytes_")


def default_convert(data: Any) -> Any:
    """``data`` with each NumPy array or scalar inside it turned into a tensor (containers
    kept, except that tuples become lists, as PyTorch's)."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy_value(data):
        if isinstance(data, np.ndarray) and _NOT_NUMERIC.search(data.dtype.str):
            return data
        return creation.as_tensor(np.asarray(data))  # (a NumPy scalar keeps its dtype through the array)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(like: Any, values: dict) -> Any:
    """A mapping of ``like``'s type holding ``values`` (a dict where the type cannot be built)."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            out = copy.copy(like)
            out.update(values)
            return out
        return type(like)(values)
    except TypeError:
        return values


def _rebuild_sequence(like: Any, values: list) -> Any:
    """A sequence of ``like``'s type holding ``values`` (a list where the type cannot be built)."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            out = copy.copy(like)
            for i, v in enumerate(values):
                out[i] = v
            return out
        return type(like)(values)
    except TypeError:
        return values


def collate(batch: list, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None = None) -> Any:
    """Collate ``batch`` by the type of its first element: the function ``collate_fn_map``
    holds for that type (exactly, else the first key it is an instance of), else
    containers field by field."""
    elem = batch[0]
    if collate_fn_map is not None:
        fn = collate_fn_map.get(type(elem))
        if fn is None:
            fn = next((f for key, f in collate_fn_map.items() if isinstance(elem, key)), None)
        if fn is not None:
            return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch, strict=False)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        # each field's samples stay the tuple zip makes: a field of strings collates to that tuple, as PyTorch's
        fields = [collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch, strict=False)]
        return fields if isinstance(elem, tuple) else _rebuild_sequence(elem, fields)
    raise TypeError(_ERROR.format(type(elem)))


def collate_tensor_fn(batch: list, *, collate_fn_map: Any = None) -> Tensor:
    """Tensors of one shape stacked along a new first dimension."""
    first = tuple(batch[0].shape)
    for i, t in enumerate(batch):
        if tuple(t.shape) != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and "
                f"{list(t.shape)} at entry {i}"
            )
    return stack(list(batch), 0)


def collate_numpy_array_fn(batch: list, *, collate_fn_map: Any = None) -> Any:
    if _NOT_NUMERIC.search(batch[0].dtype.str):
        raise TypeError(_ERROR.format(batch[0].dtype))
    return collate([creation.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: list, *, collate_fn_map: Any = None) -> Tensor:
    return creation.as_tensor(np.asarray(batch))


def collate_float_fn(batch: list, *, collate_fn_map: Any = None) -> Tensor:
    return creation.tensor(batch, dtype=dtypes.float64)


def collate_int_fn(batch: list, *, collate_fn_map: Any = None) -> Tensor:
    return creation.tensor(batch)


def collate_str_fn(batch: list, *, collate_fn_map: Any = None) -> list:
    return batch


#: the type -> collate function table ``default_collate`` reads (extend it for new types)
default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: list) -> Any:
    """One value from a list of samples (see the module's docstring).

    >>> default_collate([(np.zeros(2), 0), (np.ones(2), 1)])  # doctest: +SKIP
    [Tensor([[0., 0.], [1., 1.]], dtype=float64), Tensor([0, 1])]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
