"""Sparse COO tensors, as PyTorch's ``torch.sparse_coo`` layout: a :class:`SparseTensor` holds an
int64 ``indices`` array ``(sparse_dim, nnz)`` and a ``values`` array ``(nnz, *dense_dims)`` on its
device, its size and whether it is coalesced (:class:`COO`); its memory grows with ``nnz``, not with
its size. What the programs that use them call is here (``sparse_coo_tensor to_sparse to_dense
coalesce indices values _nnz t``, ``+``, ``*`` by a number, ``to(dtype)``, ``tga.sparse.mm``/``spmm``/
``mm``/``@`` with a dense matrix, ``tga.sparse.sum``), each an op with its gradient: the gradient of a
sparse input is sparse, at its coalesced indices, as PyTorch's. Every other op refuses a sparse operand
with PyTorch's ``NotImplementedError`` (``Could not run 'aten::exp' ... 'SparseCPU' backend``), raised
where every op passes (``Function.apply``).

>>> import tinygrad_attn as tga
>>> s = tga.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
>>> (s @ tga.ones(3, 1)).tolist()
[[3.0], [9.0]]
"""

from __future__ import annotations

import math
import operator
import types
from typing import Any

import numpy as np

from ..engine.declare import public
from ..engine.function import Function, SparseData, grad_fn_name
from ..engine.switches import is_grad_enabled
from ..runtime.backend import Device, get_device
from ._tensor import Tensor
from .dtypes import get_default_dtype
from .elementwise import tensor_torch as _torch_face

#: PyTorch's sparse COO layout object (``torch.sparse_coo``)
sparse_coo = _torch_face.layout("sparse_coo")


class COO(SparseData):
    """The data of a sparse tensor: ``indices`` ``(sparse_dim, nnz)`` int64, ``values``
    ``(nnz, *dense_dims)``, the full ``shape`` and the ``coalesced`` flag. Gradients of sparse
    tensors travel through the backward pass as these: ``+`` of two concatenates them
    (uncoalesced, as PyTorch's), ``+`` with a dense array scatters into a copy of it."""

    __slots__ = ("indices", "values", "shape", "coalesced", "dev")
    __array_ufunc__ = None  # (``dense + coo``: NumPy defers to __radd__)

    def __init__(self, indices: Any, values: Any, shape: tuple, coalesced: bool, dev: Device) -> None:
        self.indices, self.values, self.shape, self.coalesced, self.dev = indices, values, tuple(shape), coalesced, dev

    @property
    def dtype(self) -> Any:
        return self.values.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:  # (what a freed-memory check weighs: the arrays held)
        return int(self.values.size) + int(self.indices.size)

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[1])

    @property
    def sparse_dim(self) -> int:
        return int(self.indices.shape[0])

    def with_values(self, values: Any, coalesced: bool | None = None) -> COO:
        return COO(self.indices, values, self.shape, self.coalesced if coalesced is None else coalesced, self.dev)

    def dense(self) -> Any:
        """The values scattered (summed) into zeros of ``shape``."""
        xp, k = self.dev.xp, self.sparse_dim
        rows = math.prod(self.shape[:k])
        flat = self.dev.index_add((rows, *self.shape[k:]), 0, _linear(xp, self.indices, self.shape[:k]), self.values)
        return xp.reshape(flat, self.shape)

    def coalesce(self) -> COO:
        """Duplicate indices summed, indices sorted (row-major), as PyTorch's ``coalesce``."""
        if self.coalesced:
            return self
        xp, k = self.dev.xp, self.sparse_dim
        lin = _linear(xp, self.indices, self.shape[:k])
        uniq, inverse = xp.unique(lin, return_inverse=True) if lin.size else (lin, lin)
        values = self.dev.index_add((int(uniq.shape[0]), *self.values.shape[1:]), 0, xp.reshape(inverse, (-1,)),
                                    self.values)  # fmt: skip
        return COO(_unlinear(xp, uniq, self.shape[:k]), values, self.shape, True, self.dev)

    def at(self, indices: Any) -> Any:
        """The values (duplicates summed) at each column of ``indices``; zeros where none is."""
        xp, k = self.dev.xp, self.sparse_dim
        c = self.coalesce()
        have, want = _linear(xp, c.indices, self.shape[:k]), _linear(xp, indices, self.shape[:k])
        out = xp.zeros((int(want.shape[0]), *c.values.shape[1:]), dtype=c.values.dtype)
        if have.size and want.size:
            pos = xp.minimum(xp.searchsorted(have, want), have.shape[0] - 1)
            found = have[pos] == want
            out[found] = c.values[pos[found]]
        return out

    def plus(self, other: COO, alpha: Any = 1) -> COO:
        """``self + alpha * other`` as PyTorch's CPU kernel adds two COO tensors: one walk over both
        index lists at once, an entry of each taken in turn, equal indices merged into one (so two
        tensors of the same indices keep their ``nnz``); coalesced when both are."""
        xp, k = self.dev.xp, self.sparse_dim
        host = self.dev.to_host
        ta, tb = host(_linear(xp, self.indices, self.shape[:k])), host(_linear(xp, other.indices, self.shape[:k]))
        src_a, src_b = [], []
        i = j = 0
        na, nb = len(ta), len(tb)
        while i < na or j < nb:
            cmp = -1 if i >= na else 1 if j >= nb else (1 if ta[i] < tb[j] else -1 if ta[i] > tb[j] else 0)
            src_a.append(i if cmp >= 0 else -1)
            src_b.append(j if cmp <= 0 else -1)
            i += cmp >= 0
            j += cmp <= 0
        sa, sb = np.asarray(src_a, dtype=np.int64), np.asarray(src_b, dtype=np.int64)
        lin = np.where(sa >= 0, ta[np.maximum(sa, 0)] if na else 0, tb[np.maximum(sb, 0)] if nb else 0)
        dt = self.values.dtype
        values = xp.zeros((len(sa), *self.values.shape[1:]), dtype=dt)
        has_a, has_b = xp.asarray(sa >= 0), xp.asarray(sb >= 0)
        if na:
            values[has_a] = self.values[xp.asarray(sa[sa >= 0])]
        if nb:
            values[has_b] = values[has_b] + (other.values[xp.asarray(sb[sb >= 0])] * alpha).astype(dt)
        indices = _unlinear(xp, self.dev.asarray(lin.astype(np.int64)), self.shape[:k])
        return COO(indices, values, self.shape, self.coalesced and other.coalesced, self.dev)

    def __add__(self, other: Any) -> Any:
        if other.__class__ is COO:
            return self.plus(other)
        return self.dense() + other

    __radd__ = __add__

    def __neg__(self) -> COO:
        return self.with_values(-self.values)

    def __mul__(self, c: Any) -> COO:
        return self.with_values(self.values * c)

    __rmul__ = __mul__

    def astype(self, dtype: Any) -> COO:
        return self.with_values(self.values.astype(dtype))


def _linear(xp: Any, indices: Any, sizes: tuple) -> Any:
    """Each column of ``indices`` as one row-major number over ``sizes``."""
    out = xp.zeros((int(indices.shape[1]),), dtype=xp.int64)
    for i, n in enumerate(sizes):
        out = out * n + indices[i]
    return out


def _unlinear(xp: Any, lin: Any, sizes: tuple) -> Any:
    rows = []
    for n in reversed(sizes):
        rows.append(lin % n if n else lin)
        lin = lin // n if n else lin
    return xp.stack(rows[::-1]) if rows else xp.zeros((0, int(lin.shape[0])), dtype=xp.int64)


class SparseTensor(Tensor):
    """A tensor of PyTorch's ``sparse_coo`` layout: its ``_data`` is a :class:`COO`."""

    __slots__ = ()
    _refuses_ops = True
    _subclass_results = False

    @property
    def layout(self) -> Any:
        return sparse_coo

    @property
    def is_sparse(self) -> bool:
        return True

    def __repr__(self) -> str:
        from .printing import host_tensor_repr  # noqa: PLC0415 - the dense printer, for the parts

        c: COO = self._data
        ind = "tensor" + host_tensor_repr(self._dev.to_host(c.indices), [])[len("tensor") :]
        vals = Tensor._wrap(c.values, self._dev)
        vr = repr(vals.detach())
        if c.nnz == 0 and "size=" not in vr:
            vr = vr[:-1] + f", size={tuple(c.values.shape)})"
        vr = vr.replace(f", dtype=torch.{self.dtype.name}", "")
        if c.indices.shape[1] == 0:
            ind = f"tensor([], size={tuple(c.indices.shape)})"
        pad = " " * len("tensor(indices=")
        ind = ind.replace("\n", "\n" + pad)
        vr = vr.replace("\n", "\n" + " " * len("       values="))
        tail = [f"size={tuple(self.shape)}", f"nnz={c.nnz}"]
        if self.dtype != get_default_dtype():
            tail.append(f"dtype=torch.{self.dtype.name}")
        tail.append("layout=torch.sparse_coo")
        if self._ctx is not None:
            extra = f",\n       grad_fn=<{grad_fn_name(self._ctx)}>"
        elif self.requires_grad:
            extra = ",\n       requires_grad=True"
        else:
            extra = ""
        return f"tensor(indices={ind},\n       values={vr},\n       {', '.join(tail)}{extra})"

    __str__ = __repr__

    def numpy(self, *, force: bool = False) -> Any:
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def tolist(self) -> Any:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def item(self) -> Any:
        if math.prod(self.shape) != 1:
            raise RuntimeError(f"a Tensor with {math.prod(self.shape)} elements cannot be converted to Scalar")
        return self.to_dense().item()

    def is_coalesced(self) -> bool:
        return self._data.coalesced

    def sparse_dim(self) -> int:
        return self._data.sparse_dim

    def dense_dim(self) -> int:
        return self._data.ndim - self._data.sparse_dim

    def _nnz(self) -> int:
        return self._data.nnz

    def indices(self) -> Tensor:
        if not self._data.coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._indices()

    def values(self) -> Tensor:
        if not self._data.coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._values()

    def _indices(self) -> Tensor:
        return Tensor._wrap(self._data.indices, self._dev)

    def _values(self) -> Tensor:
        """The values, as PyTorch's ``_values()``: a view whose gradient reaches this tensor."""
        return _Values.apply(self) if self.requires_grad else Tensor._wrap(self._data.values, self._dev)

    def coalesce(self) -> SparseTensor:
        return self if self._data.coalesced else _sparse(_Coalesce.apply(self))

    def to_dense(self, dtype: Any = None, *, masked_grad: bool | None = None) -> Tensor:
        out = _ToDense.apply(self)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, *args: Any, **kwargs: Any) -> SparseTensor:
        return self

    def t(self) -> SparseTensor:
        if self.ndim != 2 or self.dense_dim():
            raise RuntimeError(
                f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but self is {self.ndim}D"
            )
        return _sparse(_Transpose.apply(self))

    def to(self, *args: Any, **kwargs: Any) -> SparseTensor:
        """Another dtype (an op, with its gradient) or device (the indices and values copied there)."""
        dtype, where = kwargs.get("dtype"), kwargs.get("device")
        for a in args:
            if isinstance(a, (type, np.dtype)) or a.__class__.__name__ == "dtype":
                dtype = a
            elif isinstance(a, str) or a.__class__.__name__ == "device":
                where = a
        out = self
        if where is not None and (dev := get_device(where)) is not self._dev:
            c, host = self._data, self._dev.to_host
            moved = COO(dev.asarray(host(c.indices)), dev.asarray(host(c.values)), c.shape, c.coalesced, dev)
            out = SparseTensor._wrap(moved, dev)
        if dtype is None or np.dtype(dtype) == out._data.dtype:
            return out
        return _sparse(_Cast.apply(out, args=out._dev.dtype(dtype)))

    def cpu(self, *args: Any, **kwargs: Any) -> SparseTensor:
        return self.to("cpu")

    def cuda(self, device: Any = None, *args: Any, **kwargs: Any) -> SparseTensor:
        return self.to("cuda" if device is None else device if isinstance(device, str) else f"cuda:{device}")

    def double(self) -> SparseTensor:
        return self.to(np.float64)

    def float(self) -> SparseTensor:
        return self.to(np.float32)

    def detach(self) -> SparseTensor:
        return SparseTensor._wrap(self._data, self._dev)

    def clone(self, *args: Any, **kwargs: Any) -> SparseTensor:
        c = self._data
        return _sparse(_Build.apply(Tensor._wrap(self._dev.copy(c.values), self._dev),
                                    args=(self._dev.copy(c.indices), c.shape, c.coalesced)))  # fmt: skip

    def dim(self) -> int:
        return self._data.ndim

    def __add__(self, other: Any) -> Any:
        return _add(self, other)

    def __radd__(self, other: Any) -> Any:
        if isinstance(other, Tensor):  # (dense + sparse: dense, as PyTorch's)
            return other + self.to_dense()
        return NotImplemented

    def __sub__(self, other: Any) -> Any:
        return _add(self, other * -1 if isinstance(other, SparseTensor) else -other)

    def __mul__(self, other: Any) -> Any:
        if isinstance(other, Tensor):
            if other.ndim == 0 and not isinstance(other, SparseTensor):
                other = other.item()
            else:
                raise NotImplementedError(f"mul: a sparse tensor of shape {tuple(self.shape)} times a tensor of "
                                          f"shape {tuple(other.shape)} is not supported here")  # fmt: skip
        return _sparse(_Scale.apply(self, args=other))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        return self * (1.0 / other)

    def __neg__(self) -> Any:
        return self * -1

    def __matmul__(self, other: Any) -> Tensor:
        return sparse_mm(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        _refuse_dense_sparse("aten::mm", self)

    def mm(self, other: Any) -> Tensor:
        return sparse_mm(self, other)

    matmul = mm

    def sum(self, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return sparse_sum(self, *args, **kwargs)
        return sparse_sum(self)

    def mean(self, *args: Any, **kwargs: Any) -> Any:
        _refuse_dense_sparse("aten::mean.dim", self)

    def reshape(self, *shape: Any) -> Any:
        raise RuntimeError("reshape is not implemented for sparse tensors")

    def __bool__(self) -> bool:
        return bool(self.item())

    def __reduce_ex__(self, protocol: Any) -> Any:
        c = self._data
        dev = self._dev
        return (_rebuild, (dev.to_host(c.indices), dev.to_host(c.values), c.shape, c.coalesced))


def _rebuild(indices: Any, values: Any, shape: tuple, coalesced: bool) -> SparseTensor:
    return _sparse(_Build.apply(Tensor(values), args=(np.asarray(indices, dtype=np.int64), shape, coalesced)))


COO.tensor_class = SparseTensor


def _sparse(t: Tensor) -> SparseTensor:
    """The result of an op whose data is a :class:`COO`, as a SparseTensor."""
    t.__class__ = SparseTensor
    return t


def _refuse_dense_sparse(name: str, t: Tensor) -> Any:
    raise NotImplementedError(f"Could not run '{name}' with arguments from the 'Sparse{_backend(t)}' backend. This "
                              "could be because the operator doesn't exist for this backend (a sparse tensor of "
                              f"shape {tuple(t.shape)})")  # fmt: skip


def _backend(t: Tensor) -> str:
    return "CUDA" if t._dev.public.type == "cuda" else "CPU"


# -- the ops -----------------------------------------------------------------------------------------
class _SparseOp(Function):
    takes_sparse = True
    computes_in_float32 = False  # (a COO holds its values in their dtype: a bfloat16 one is not widened whole)


class _Build(_SparseOp):
    """``values`` placed at ``indices``: ``args = (indices, shape, coalesced)``."""

    torch_grad_fn_name = "SparseCooTensorWithDimsAndTensorsBackward0"

    def forward(self, ns: Any, values: Any) -> COO:
        indices, shape, coalesced = self.args
        return COO(indices, values, shape, coalesced, ns.device)

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        indices, shape, _ = self.args
        if g.__class__ is COO:  # (the gradient of ``_values()``: one value per entry, as they are)
            return (g.values if g.indices is indices else g.at(indices),)
        k = indices.shape[0]
        return (g[tuple(indices[i] for i in range(k))],)


class _Values(_SparseOp):
    """``s._values()`` of a sparse tensor that requires grad."""

    torch_grad_fn_name = "ValuesBackward0"

    def forward(self, ns: Any, c: COO) -> Any:
        return c.values

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return (self.saved[0].with_values(g),)


class _ToDense(_SparseOp):
    torch_grad_fn_name = "ToDenseBackward0"

    def forward(self, ns: Any, c: COO) -> Any:
        return c.dense()

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        c = self.saved[0].coalesce()
        k = c.sparse_dim
        return (COO(c.indices, g[tuple(c.indices[i] for i in range(k))], c.shape, False, ns.device),)


class _ToSparse(_SparseOp):
    torch_grad_fn_name = "ToSparseBackward0"

    def forward(self, ns: Any, x: Any) -> COO:
        xp, k = ns.device.xp, self.args
        k = x.ndim if k is None else k
        lead = xp.reshape(x, (math.prod(x.shape[:k]), *x.shape[k:]))
        nonzero = lead != 0
        if lead.ndim > 1:
            nonzero = xp.any(xp.reshape(nonzero, (lead.shape[0], -1)), axis=1)
        lin = xp.nonzero(nonzero)[0].astype(xp.int64)
        return COO(_unlinear(xp, lin, x.shape[:k]), lead[lin], x.shape, True, ns.device)

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return (g.dense() if g.__class__ is COO else g,)


class _Coalesce(_SparseOp):
    torch_grad_fn_name = "CoalesceBackward0"

    def forward(self, ns: Any, c: COO) -> COO:
        return c.coalesce()

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return (g,)


class _Transpose(_SparseOp):
    torch_grad_fn_name = "TBackward0"

    def forward(self, ns: Any, c: COO) -> COO:
        return COO(c.indices[::-1], c.values, c.shape[::-1], c.nnz <= 1 and c.coalesced, ns.device)

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        if g.__class__ is COO:
            return (COO(g.indices[::-1], g.values, g.shape[::-1], False, ns.device),)
        return (ns.device.xp.transpose(g),)


class _Scale(_SparseOp):
    torch_grad_fn_name = "MulBackward0"

    def forward(self, ns: Any, c: COO) -> COO:
        v = c.values * self.args
        return c.with_values(v.astype(c.values.dtype) if isinstance(self.args, float) else v)

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return (g * self.args,)


class _Cast(_SparseOp):
    torch_grad_fn_name = "ToCopyBackward0"

    def forward(self, ns: Any, c: COO) -> COO:
        return c.astype(self.args)

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return (g.astype(self.saved[0].dtype),)


class _AddSparse(_SparseOp):
    torch_grad_fn_name = "AddBackward0"

    def forward(self, ns: Any, a: COO, b: COO) -> COO:
        return a.plus(b, self.args)

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        return g, g * self.args


class _SpMM(_SparseOp):
    """``s @ d``: a sparse matrix ``(n, k)`` times a dense ``(k, m)``: each stored value times its
    column's row of ``d``, summed into its row of the result."""

    torch_grad_fn_name = "SparseAddmmBackward0"

    def forward(self, ns: Any, c: COO, d: Any) -> Any:
        rows, cols = c.indices[0], c.indices[1]
        return ns.device.index_add((c.shape[0], *d.shape[1:]), 0, rows, c.values[:, None] * d[cols])

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        c, d = self.saved
        gd = ns.device.index_add(tuple(d.shape), 0, c.indices[1], c.values[:, None] * g[c.indices[0]])
        cc = c.coalesce()
        gv = ns.device.xp.sum(g[cc.indices[0]] * d[cc.indices[1]], axis=1)
        return COO(cc.indices, gv, c.shape, False, ns.device), gd


class _SparseSum(_SparseOp):
    """The sum over the sparse dims ``args`` (all: a dense scalar, or the dense dims)."""

    torch_grad_fn_name = "SumBackward0"

    def forward(self, ns: Any, c: COO) -> Any:
        xp, dims = ns.device.xp, self.args
        if len(dims) == c.sparse_dim:
            return xp.sum(c.values, axis=0)
        keep = [i for i in range(c.sparse_dim) if i not in dims]
        shape = tuple(c.shape[i] for i in keep) + c.shape[c.sparse_dim :]
        return COO(c.indices[keep], c.values, shape, False, ns.device).coalesce()

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        c = self.saved[0].coalesce()  # (a gradient is the dense one at each distinct index)
        xp, dims = ns.device.xp, self.args
        if len(dims) == c.sparse_dim:
            return (c.with_values(xp.broadcast_to(g, c.values.shape) + xp.zeros_like(c.values), False),)
        keep = [i for i in range(c.sparse_dim) if i not in dims]
        if g.__class__ is not COO:
            return (c.with_values(g[tuple(c.indices[i] for i in keep)], False),)
        return (c.with_values(g.at(c.indices[keep]), False),)


# -- the public functions -----------------------------------------------------------------------------
_SIZE_ONLY: Any = type("_SizeOnly", (), {"__repr__": lambda self: "<size only>"})()


def _size_argument(size: Any) -> tuple:
    """A size as PyTorch's ``sparse_coo_tensor`` takes it: a sequence of ints (its TypeError else)."""
    if isinstance(size, Tensor) or not isinstance(size, (tuple, list)):
        raise TypeError(f"sparse_coo_tensor(): size must be a tuple of ints, not {type(size).__name__}")
    try:
        return tuple(operator.index(n) for n in size)
    except TypeError:
        raise TypeError(f"sparse_coo_tensor(): size must be a tuple of ints, got {tuple(size)!r}") from None


def _index_array(indices: Any, dev: Device) -> Any:
    if isinstance(indices, Tensor):
        if indices.dtype.kind not in "iu":
            raise RuntimeError(f"sparse_coo_tensor: indices must be an int64 tensor, got {indices.dtype}")
        arr = indices._data
        if indices._dev is not dev:
            arr = dev.asarray(indices._dev.to_host(arr))
    else:
        arr = dev.asarray(np.asarray(indices, dtype=np.int64))
    return arr.astype(dev.xp.int64)


@public(function=True, method=False)
def sparse_coo_tensor(indices: Any, values: Any = _SIZE_ONLY, size: Any = None, *, dtype: Any = None, device: Any = None,
                      pin_memory: bool = False, requires_grad: bool = False, check_invariants: bool | None = None,
                      is_coalesced: bool | None = None) -> SparseTensor:  # fmt: skip
    """A sparse COO tensor with ``values`` ``(nnz, *dense)`` at ``indices`` ``(sparse_dim, nnz)``, as
    PyTorch's: ``size`` defaults to the smallest that holds the indices; duplicate indices stay (uncoalesced)
    until ``coalesce()``. Values that require grad pass their gradient on (at the indices)."""
    if values is None:
        raise RuntimeError("Could not infer dtype of NoneType (sparse_coo_tensor's values)")
    if values is _SIZE_ONLY:  # (``sparse_coo_tensor(size)``: an empty one of that size)
        sizes = _size_argument((indices,) if isinstance(indices, int) else indices)
        dt = get_default_dtype() if dtype is None else dtype
        return sparse_coo_tensor(
            np.zeros((len(sizes), 0), np.int64), Tensor(np.zeros(0, np.dtype(dt))), sizes, device=device,
            requires_grad=requires_grad,
        )  # fmt: skip
    if size is not None:
        size = _size_argument(size)
    if not isinstance(values, Tensor):
        from .factories.creation import tensor  # noqa: PLC0415 - (creation imports Tensor's modules)

        values = tensor(values, dtype=dtype, device=device)
    if dtype is not None and values.dtype != np.dtype(dtype):
        values = values.to(dtype)
    dev = values._dev if device is None else get_device(device)
    if values._dev is not dev:
        values = values.to(dev.public)
    idx = _index_array(indices, dev)
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if idx.shape[1] != (values.shape[0] if values.ndim else 1):
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {idx.shape[1]}, nnz "
                           f"from values: {values.shape[0] if values.ndim else 1}")  # fmt: skip
    k = int(idx.shape[0])
    host = dev.to_host(idx)
    if size is None:
        sizes = tuple(int(host[i].max()) + 1 if host.shape[1] else 0 for i in range(k)) + tuple(values.shape[1:])
    else:
        sizes = tuple(map(operator.index, size))
        if len(sizes) != k + values.ndim - 1:
            raise RuntimeError(f"number of dimensions must be sparse_dim ({k}) + dense_dim ({values.ndim - 1}), but "
                               f"got {len(sizes)}")  # fmt: skip
        for i in range(k):
            if host.shape[1] and (host[i].min() < 0 or host[i].max() >= sizes[i]):
                bad = int(host[i].max()) if host[i].max() >= sizes[i] else int(host[i].min())
                raise RuntimeError(f"size is inconsistent with indices: for dim {i}, size is {sizes[i]} but found "
                                   f"index {bad}")  # fmt: skip
    out = _sparse(_Build.apply(values, args=(idx, sizes, bool(is_coalesced) or host.shape[1] <= 1)))
    if requires_grad:
        out = out.detach().requires_grad_(True)
    return out


@public(function=False, method=True, name="to_sparse")
def _to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout: Any = None, blocksize: Any = None,
               dense_dim: Any = None) -> SparseTensor:  # fmt: skip
    """This dense tensor as a coalesced sparse COO tensor (its nonzeros; over the first ``sparse_dim``
    dims, rows of the rest)."""
    if layout is not None and layout is not sparse_coo:
        raise NotImplementedError(f"to_sparse: layout {layout} is not supported here (only torch.sparse_coo)")
    if self.requires_grad and self.is_complex() and is_grad_enabled():
        # (PyTorch has no complex gradient for this conversion and says so rather than drop the graph)
        raise RuntimeError("_to_sparse does not support automatic differentiation for outputs with complex dtype.")
    return _sparse(_ToSparse.apply(self, args=sparse_dim))


def _add(a: SparseTensor, b: Any, alpha: float = 1) -> Any:
    """``sparse + sparse`` (indices concatenated, uncoalesced, as PyTorch's); ``sparse + dense`` is
    PyTorch's RuntimeError."""
    if isinstance(b, SparseTensor):
        if a.shape != b.shape:
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                               f"{list(a.shape)} while other has size {list(b.shape)}")  # fmt: skip
        if b.dtype != a.dtype:
            from .dtypes import result_type  # noqa: PLC0415

            t = result_type(a, b)
            a, b = a.to(t), b.to(t)
        return _sparse(_AddSparse.apply(a, b, args=alpha))
    if isinstance(b, Tensor):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    return NotImplemented


def sparse_mm(s: Any, d: Any) -> Tensor:
    """``s @ d`` of a sparse COO matrix ``(n, k)`` and a dense ``(k, m)``: a dense ``(n, m)``."""
    if not isinstance(s, SparseTensor):
        if isinstance(d, SparseTensor):
            _refuse_dense_sparse("aten::mm", d)
        return s @ d
    if isinstance(d, SparseTensor):
        d = d.to_dense()
    if s.ndim != 2 or s.dense_dim() or d.ndim != 2:
        raise RuntimeError(f"mm: a 2-D sparse matrix and a 2-D dense one are expected, got shapes "
                           f"{tuple(s.shape)} and {tuple(d.shape)}")  # fmt: skip
    if s.shape[1] != d.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s.shape[0]}x{s.shape[1]} and "
                           f"{d.shape[0]}x{d.shape[1]})")  # fmt: skip
    if s.dtype != d.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(d.dtype)} but found {_scalar_name(s.dtype)}")
    return _SpMM.apply(s, d)


def _scalar_name(dt: Any) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}.get(
        np.dtype(dt).name if not hasattr(dt, "name") else dt.name, str(dt)
    )


def sparse_sum(s: Any, dim: Any = None, dtype: Any = None) -> Any:
    """``torch.sparse.sum``: of every value (a dense 0-d tensor), or over the sparse dims ``dim`` (a
    sparse tensor of the rest; a dense one where only dense dims remain)."""
    if not isinstance(s, SparseTensor):
        return s.sum() if dim is None else s.sum(dim)
    if dtype is not None:
        s = s.to(dtype)
    k = s.sparse_dim()
    if dim is None:
        return _SparseSum.apply(s, args=tuple(range(k)))
    dims = sorted({d % s.ndim for d in ((dim,) if isinstance(dim, int) else dim)})
    if any(d >= k for d in dims):
        raise NotImplementedError("sparse.sum: summing over dense dims of a sparse tensor is not supported here")
    out = _SparseSum.apply(s, args=tuple(dims))
    return _sparse(out) if out._data.__class__ is COO else out


@public
def spmm(input: Any, mat2: Any) -> Tensor:  # noqa: A002 - PyTorch's names
    """``torch.spmm``: a sparse COO matrix times a dense one (:func:`mm`)."""
    return sparse_mm(input, mat2)


def legacy_sparse_constructor(dtype: Any) -> Any:
    """``torch.sparse.FloatTensor(indices, values, size)``: PyTorch's deprecated constructor."""

    def make(indices: Any, values: Any, size: Any = None) -> SparseTensor:
        return sparse_coo_tensor(indices, values, size, dtype=dtype)

    return make


def embedding_grad(weight: Tensor, ids: Any, padding_idx: int | None) -> Tensor:
    """The rows of ``weight`` at ``ids``, whose gradient is sparse: one row per id (duplicates twice,
    uncoalesced), the ``padding_idx`` rows left out, as PyTorch's ``embedding(sparse=True)``."""
    return _EmbeddingSparse.apply(weight, args=(ids, padding_idx))


class _EmbeddingSparse(_SparseOp):
    torch_grad_fn_name = "EmbeddingBackward0"

    def forward(self, ns: Any, w: Any) -> Any:
        ids = self.args[0]
        return w[ids]

    def backward(self, g: Any, ns: Any, inputs: Any, out: Any) -> Any:
        ids, pad = self.args
        xp, w = ns.device.xp, self.saved[0]
        flat = xp.reshape(ids, (-1,)).astype(xp.int64)
        vals = xp.reshape(g, (-1, w.shape[1]))
        if pad is not None:
            keep = flat != pad % w.shape[0]
            flat, vals = flat[keep], vals[keep]
        return (COO(flat[None, :], vals, tuple(w.shape), False, ns.device),)


#: ``tga.sparse``: PyTorch's ``torch.sparse`` functions
sparse = types.ModuleType("tinygrad_attn.sparse", "torch.sparse's COO functions: mm, sum, FloatTensor, ...")
sparse.mm = sparse_mm
sparse.spmm = sparse_mm
sparse.sum = sparse_sum
sparse.FloatTensor = legacy_sparse_constructor(np.float32)
sparse.DoubleTensor = legacy_sparse_constructor(np.float64)
sparse.LongTensor = legacy_sparse_constructor(np.int64)
