"""PyTorch's checkpoint format, written and read without PyTorch.

A file of ``torch.save`` is a zip archive (stored, not compressed) under one folder::

    archive/data.pkl                 the object, pickled (protocol 2); each tensor is a call
                                     torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
                                     requires_grad, OrderedDict()), its storage a persistent id
                                     ('storage', torch.FloatStorage, '0', 'cpu', numel)
    archive/.format_version          b"1"
    archive/.storage_alignment       b"64": each storage's bytes start at a multiple of 64
    archive/byteorder                b"little"
    archive/data/0, data/1, ...      each storage's raw bytes
    archive/version                  b"3\\n"
    archive/.data/serialization_id   40 random digits

Tensors that share memory (views of one array) share one storage, with their own offset
and strides, as PyTorch's views do. The pickle is written by the standard library's
pickler, with the globals PyTorch expects written as names (:class:`_Global`): PyTorch is
never imported. Reading maps those names to this module's rebuild functions; which names
a file may use at all is the unpickler's business (``weights_only.py``).
"""

from __future__ import annotations

import io
import pickle
import secrets
import struct
import sys
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from ..engine.bfloat16 import BFLOAT16, INSTALL_HINT
from ..engine.warn import warn as _user_warn
from ..runtime.backend import Device, device, get_device
from ..tensors._tensor import Size, Tensor
from ..tensors.dtypes import torch_dtype
from ..tensors.elementwise.tensor_torch import strided

# -- dtypes -------------------------------------------------------------------------------
#: torch dtype name -> (legacy storage class name or None, NumPy dtype). bfloat16's NumPy dtype is
#: ml_dtypes' (engine/bfloat16.py); without it bfloat16 is read widened to float32 (exact), and never written.
DTYPES: dict[str, tuple[str | None, np.dtype | None]] = {
    "float32": ("FloatStorage", np.dtype(np.float32)), "float64": ("DoubleStorage", np.dtype(np.float64)),
    "float16": ("HalfStorage", np.dtype(np.float16)), "bfloat16": ("BFloat16Storage", BFLOAT16),
    "int64": ("LongStorage", np.dtype(np.int64)), "int32": ("IntStorage", np.dtype(np.int32)),
    "int16": ("ShortStorage", np.dtype(np.int16)), "int8": ("CharStorage", np.dtype(np.int8)),
    "uint8": ("ByteStorage", np.dtype(np.uint8)), "bool": ("BoolStorage", np.dtype(np.bool_)),
    "complex64": ("ComplexFloatStorage", np.dtype(np.complex64)),
    "complex128": ("ComplexDoubleStorage", np.dtype(np.complex128)),
    "uint16": (None, np.dtype(np.uint16)), "uint32": (None, np.dtype(np.uint32)), "uint64": (None, np.dtype(np.uint64)),
}  # fmt: skip
_TORCH_NAME = {np_dt: name for name, (_, np_dt) in DTYPES.items() if np_dt is not None}
_BF16 = "bfloat16"


class StorageKind:
    """What a storage's persistent id names (``torch.FloatStorage``, ``torch.storage.UntypedStorage``):
    the element type of its bytes, or ``None`` for untyped bytes (the tensor's rebuild names
    the dtype)."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype: str | None) -> None:
        self.name, self.dtype = name, dtype

    def __repr__(self) -> str:
        return f"StorageKind({self.name})"


STORAGE_KINDS = {f"torch.{cls}": StorageKind(cls, name) for name, (cls, _) in DTYPES.items() if cls}
STORAGE_KINDS["torch.storage.UntypedStorage"] = StorageKind("UntypedStorage", None)


def torch_dtype_name(dtype: Any) -> str | None:
    """PyTorch's name of a NumPy dtype (``float32``), or None where PyTorch has none."""
    try:
        return _TORCH_NAME.get(np.dtype(dtype).newbyteorder("="))
    except TypeError:
        return None


# -- storages as read ---------------------------------------------------------------------
class Storage:
    """One storage of a checkpoint being read: its bytes on the host and the device its
    tensors go to. A ``map_location`` callable receives one and returns one (``storage``
    itself, or ``storage.to("cuda:0")`` ...), as PyTorch's receives a storage."""

    __slots__ = ("raw", "kind", "target", "_typed", "deferred")

    def __init__(self, raw: np.ndarray, kind: StorageKind, target: Device) -> None:
        self.raw, self.kind, self.target = raw, kind, target  # raw: uint8 bytes, native order
        self._typed: dict[str, np.ndarray] = {}
        # Legacy files hold the bytes after the pickle: tensors are made on the host first,
        # listed here with their views, and moved to ``target`` once the bytes are read.
        self.deferred: list[tuple[Tensor, np.ndarray]] | None = None

    @property
    def device(self) -> device:
        return device(self.target.name)

    def nbytes(self) -> int:
        return int(self.raw.size)

    def to(self, where: Any) -> Storage:
        """This storage's bytes, bound for ``where`` (a device name or ``tga.device``)."""
        return Storage(self.raw, self.kind, get_device(where))

    def cpu(self) -> Storage:
        return self.to("cpu")

    def cuda(self, index: int | None = None) -> Storage:
        return self.to("cuda" if index is None else f"cuda:{index}")

    def elements(self, dtype: str, where: str) -> np.ndarray:
        """The bytes as a 1-d array of torch dtype ``dtype`` (bfloat16: widened to float32)."""
        out = self._typed.get(dtype)
        if out is None:
            if dtype == _BF16 and BFLOAT16 is None:
                if self.raw.size % 2:
                    raise RuntimeError(f"load: {where} has a bfloat16 storage of an odd number of bytes")
                out = (self.raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
                _user_warn(
                    f"load: {where} holds bfloat16 tensors, which NumPy has no dtype for; they load as float32 "
                    f"(every bfloat16 value is exact in float32); for bfloat16 tensors, {INSTALL_HINT}",
                    UserWarning,
                )
            else:
                np_dt = DTYPES[dtype][1]
                if self.raw.size % np_dt.itemsize:
                    raise RuntimeError(
                        f"load: {where} has a {dtype} storage of {self.raw.size} bytes, not whole elements"
                    )
                out = self.raw.view(np_dt)
            self._typed[dtype] = out
        return out


class DamagedArchive(RuntimeError):
    """A checkpoint whose parts do not fit together."""


# The file being read, for the rebuild functions' errors (pickle calls them with the file's
# arguments only); set by read_archive around its unpickling.
_READING: list[str] = []


def _where() -> str:
    return f"'{_READING[-1]}'" if _READING else "the checkpoint"


def _tensor_view(storage: Any, offset: int, size: Any, stride: Any, dtype: str) -> Tensor:
    if not isinstance(storage, Storage):
        raise DamagedArchive(f"load: {_where()} rebuilds a tensor from a {type(storage).__name__}, not a storage")
    try:
        size, stride, offset = tuple(int(s) for s in size), tuple(int(s) for s in stride), int(offset)
    except (TypeError, ValueError) as e:
        raise DamagedArchive(f"load: {_where()} holds a tensor with a malformed size or stride ({e})") from e
    flat = storage.elements(dtype, _where())
    numel = int(np.prod(size, dtype=np.int64))
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if numel else offset - 1
    if len(size) != len(stride) or min(size + stride + (offset,), default=0) < 0 or last >= flat.size:
        raise DamagedArchive(
            f"load: {_where()} holds a tensor of size {size}, stride {stride} and offset {offset} that does not fit "
            f"in its storage of {flat.size} elements; the file is damaged"
        )
    view = np.lib.stride_tricks.as_strided(flat[offset:], size, tuple(s * flat.itemsize for s in stride))
    dev = storage.target
    if storage.deferred is not None:
        t = Tensor._wrap(view, get_device("cpu"))
        storage.deferred.append((t, view))
        return t
    if dev.xp is np:  # a view of the storage: tensors that share it in the file share it here
        return Tensor._wrap(view, dev)
    return Tensor._wrap(dev.asarray(np.ascontiguousarray(view)), dev)


def _with_grad(t: Tensor, requires_grad: Any) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def rebuild_tensor(storage: Any, storage_offset: int, size: Any, stride: Any) -> Tensor:
    kind = storage.kind if isinstance(storage, Storage) else None
    return _tensor_view(storage, storage_offset, size, stride, kind.dtype if kind and kind.dtype else "uint8")


def rebuild_tensor_v2(storage: Any, storage_offset: int, size: Any, stride: Any, requires_grad: bool = False,
                      backward_hooks: Any = None, metadata: Any = None) -> Tensor:  # fmt: skip
    """PyTorch's ``torch._utils._rebuild_tensor_v2``: a view of a typed storage."""
    return _with_grad(rebuild_tensor(storage, storage_offset, size, stride), requires_grad)


def rebuild_tensor_v3(storage: Any, storage_offset: int, size: Any, stride: Any, requires_grad: bool,
                      backward_hooks: Any, dtype: Any, metadata: Any = None) -> Tensor:  # fmt: skip
    """``_rebuild_tensor_v3``: a view of untyped bytes, the dtype given (unsigned 16-64 bit)."""
    name = dtype if isinstance(dtype, str) and dtype in DTYPES else torch_dtype_name(dtype)
    if name is None:
        raise DamagedArchive(f"load: {_where()} holds a tensor of dtype {dtype!r}, which cannot be read here")
    return _with_grad(_tensor_view(storage, storage_offset, size, stride, name), requires_grad)


def _parameter_class() -> type:
    from ..nn.module import Parameter  # noqa: PLC0415 - nn builds on this module's Tensor

    return Parameter


def rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any = None) -> Tensor:
    """``_rebuild_parameter``: an ``nn.Parameter`` over ``data``'s memory."""
    return _parameter_class()(data, requires_grad=bool(requires_grad))


def rebuild_meta_tensor_no_storage(dtype: Any, size: Any, stride: Any, requires_grad: bool = False) -> Tensor:
    """``_rebuild_meta_tensor_no_storage``: a meta tensor (PyTorch saves no values for one)."""
    dev = get_device("meta")
    t = Tensor._wrap(dev.empty(tuple(size), dev.np_dtype(dtype), tuple(stride)), dev)
    return _with_grad(t, requires_grad)


def rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any) -> Tensor:
    return _set_state(rebuild_parameter(data, requires_grad), state)


def rebuild_from_type_v2(func: Callable, new_type: Any, args: Any, state: Any) -> Any:
    """``torch._tensor._rebuild_from_type_v2``: a tensor rebuilt, then given its class and attributes."""
    out = func(*args)
    if new_type is _parameter_class() and isinstance(out, Tensor) and type(out) is not new_type:
        out = rebuild_parameter(out, out.requires_grad)
    return _set_state(out, state)


def _set_state(t: Any, state: Any) -> Any:
    items = state.items() if isinstance(state, dict) else ()
    skipped = []
    for k, v in items:
        try:
            setattr(t, k, v)
        except (AttributeError, TypeError):
            skipped.append(k)
    if skipped:
        _user_warn(f"load: a tensor's attributes {skipped} in {_where()} cannot be kept here", UserWarning)
    return t


#: the PyTorch names a checkpoint's pickle uses, and what they mean here
TORCH_GLOBALS: dict[str, Any] = {
    "torch._utils._rebuild_tensor": rebuild_tensor,
    "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
    "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
    "torch._utils._rebuild_parameter": rebuild_parameter,
    "torch._utils._rebuild_meta_tensor_no_storage": rebuild_meta_tensor_no_storage,
    "torch._utils._rebuild_parameter_with_state": rebuild_parameter_with_state,
    "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
    "torch.Tensor": Tensor,
    "torch.Size": Size,  # a shape saved as a value (``x.size()`` in a checkpoint), PyTorch's name both ways
    "torch.device": device,
    **STORAGE_KINDS,
    **{f"torch.{name}": torch_dtype(np_dt) for name, (_, np_dt) in DTYPES.items() if np_dt is not None},
}
if BFLOAT16 is None:
    TORCH_GLOBALS[f"torch.{_BF16}"] = _BF16  # a dtype value only: tensors of it load widened to float32


def lazy_globals() -> dict[str, Any]:
    """The names that need the nn package or the sparse tensors (imported on first load, not at import)."""
    return {"torch.nn.parameter.Parameter": _parameter_class(), "torch._utils._rebuild_sparse_tensor":
            rebuild_sparse_tensor, "torch.serialization._get_layout": _get_layout}  # fmt: skip


def _get_layout(name: str) -> Any:
    """PyTorch's ``torch.serialization._get_layout``: a layout by its printed name."""
    from ..tensors import sparse  # noqa: PLC0415

    known = {"torch.sparse_coo": sparse.sparse_coo, "torch.strided": strided}
    if name not in known:
        raise NotImplementedError(f"load: the layout {name} is not supported here")
    return known[name]


def rebuild_sparse_tensor(layout: Any, data: tuple) -> Any:
    """PyTorch's ``torch._utils._rebuild_sparse_tensor``: a COO tensor from its indices, values, size
    (and coalesced flag)."""
    from ..tensors import sparse  # noqa: PLC0415

    if layout is not sparse.sparse_coo:
        raise NotImplementedError(f"load: a sparse tensor of layout {layout} is not supported here (only sparse_coo)")
    indices, values, size, *flag = data
    return sparse.sparse_coo_tensor(indices, values, size, is_coalesced=bool(flag and flag[0]))


# -- writing ------------------------------------------------------------------------------
class _Global:
    """A global the pickle names (``torch._utils._rebuild_tensor_v2``), written as its name:
    the pickler never imports it."""

    __slots__ = ("module", "name")
    _made: dict[tuple[str, str], _Global] = {}

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:  # (the pickler asks that a reduce's function be callable)
        raise TypeError(f"{self.module}.{self.name} is a name written into a checkpoint, not callable here")

    @classmethod
    def of(cls, module: str, name: str) -> _Global:
        g = cls._made.get((module, name))
        if g is None:
            g = cls._made[(module, name)] = cls(module, name)
        return g


class _StorageRef:
    __slots__ = ("pid",)

    def __init__(self, pid: tuple) -> None:
        self.pid = pid


class _PlainTensor:
    """A Parameter's data, pickled as a plain tensor inside ``_rebuild_parameter``."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor


def _root(arr: np.ndarray) -> np.ndarray:
    """The outermost NumPy array whose memory ``arr`` views (itself if none)."""
    root, cur = arr, arr
    while (b := getattr(cur, "base", None)) is not None:
        if isinstance(b, np.ndarray):
            root = b
        cur = b
    return root


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


class _Storages:
    """The storages of the tensors being saved: one per memory, as PyTorch's views share one."""

    def __init__(self) -> None:
        self.blobs: list[tuple[str, np.ndarray]] = []  # key -> its bytes, 1-d uint8
        self._by_root: dict[int, tuple[_StorageRef, np.ndarray]] = {}

    def _add(self, flat: np.ndarray, location: str) -> _StorageRef:
        key = str(len(self.blobs))
        name = torch_dtype_name(flat.dtype)
        cls = DTYPES[name][0]
        kind = _Global.of("torch", cls) if cls else _Global.of("torch.storage", "UntypedStorage")
        numel = flat.size if cls else flat.nbytes
        self.blobs.append((key, flat.view(np.uint8)))
        return _StorageRef(("storage", kind, key, location, int(numel)))

    def place(self, t: Tensor) -> tuple[_StorageRef, int, tuple, tuple, str]:
        """The storage a tensor's values go to, its offset and strides there (in elements), its dtype."""
        arr, dev = t._data, t._dev
        name = torch_dtype_name(dev.np_dtype(arr.dtype))
        if name is None:
            raise TypeError(f"save: a tensor of dtype {dev.np_dtype(arr.dtype)} has no PyTorch dtype; convert it first")
        location = dev.name if dev.name.startswith("cuda") else "cpu"
        if dev.xp is np and isinstance(arr, np.ndarray) and arr.dtype.isnative and arr.size:
            root = _root(arr)
            item = arr.itemsize
            shared = root.dtype == arr.dtype and (root.flags.c_contiguous or root.flags.f_contiguous)
            start = _address(arr) - _address(root) if shared else -1
            if shared and start >= 0 and start % item == 0 and all(s >= 0 and s % item == 0 for s in arr.strides):
                entry = self._by_root.get(id(root))
                if entry is None:
                    entry = (self._add(root.reshape(-1, order="A"), location), root)
                    self._by_root[id(root)] = entry  # (root kept alive with it: ids stay unique)
                return entry[0], start // item, arr.shape, tuple(s // item for s in arr.strides), name
        host = np.array(dev.to_host(arr), dtype=dev.np_dtype(arr.dtype).newbyteorder("="), order="C")
        strides = tuple(int(np.prod(arr.shape[i + 1 :], dtype=np.int64)) for i in range(arr.ndim))
        return self._add(host.reshape(-1), location), 0, arr.shape, strides, name


class _ArchivePickler(pickle._Pickler):  # the Python pickler: its save() can be extended per object
    def __init__(self, file: BinaryIO, protocol: int, storages: _Storages) -> None:
        super().__init__(file, protocol)
        self.storages = storages

    def persistent_id(self, obj: Any) -> Any:
        return obj.pid if type(obj) is _StorageRef else None

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        if (isinstance(obj, np.dtype) or type(obj).__name__ == "dtype") and (
            name := torch_dtype_name(np.dtype(obj))
        ):  # a dtype as a value: torch.float32
            obj = _Global.of("torch", name)
        if type(obj) is _Global:
            memo = self.memo.get(id(obj))
            if memo is not None:
                self.write(self.get(memo[0]))
                return
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
            self.memoize(obj)
            return
        super().save(obj, save_persistent_id)

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            if obj.layout is not strided:  # (a sparse COO tensor, as PyTorch pickles it)
                c = obj._data
                parts = (Tensor._wrap(c.indices, obj._dev), Tensor._wrap(c.values, obj._dev))
                return (_Global.of("torch._utils", "_rebuild_sparse_tensor"),
                        (obj.layout, (*parts, Size(c.shape), bool(c.coalesced))))  # fmt: skip
            if isinstance(obj, _parameter_class()):
                return (_Global.of("torch._utils", "_rebuild_parameter"),
                        (_PlainTensor(obj), bool(obj.requires_grad), OrderedDict()))  # fmt: skip
            return self._plain(obj)
        if type(obj) is _PlainTensor:
            return self._plain(obj.tensor)
        if isinstance(obj, device):
            return (_Global.of("torch", "device"), (str(obj),))
        if isinstance(obj, type(strided)):  # (a layout, by its name, as PyTorch pickles it)
            return (_Global.of("torch.serialization", "_get_layout"), (repr(obj),))
        if type(obj) is Size:  # under PyTorch's name: allowed by weights_only loads, PyTorch's included
            return (_Global.of("torch", "Size"), (tuple(obj),))
        return NotImplemented

    def _plain(self, t: Tensor) -> tuple:
        if t._dev.meta:  # (no values: its dtype, size and strides, as PyTorch writes one)
            name = torch_dtype_name(t._dev.np_dtype(t._data.dtype))
            return (_Global.of("torch._utils", "_rebuild_meta_tensor_no_storage"),
                    (_Global.of("torch", name), tuple(t.shape), tuple(t.stride()), bool(t.requires_grad)))  # fmt: skip
        ref, offset, shape, strides, name = self.storages.place(t)
        grad = bool(t.requires_grad)
        if DTYPES[name][0]:
            return (_Global.of("torch._utils", "_rebuild_tensor_v2"),
                    (ref, offset, tuple(shape), strides, grad, OrderedDict()))  # fmt: skip
        return (_Global.of("torch._utils", "_rebuild_tensor_v3"),
                (ref, offset, tuple(shape), strides, grad, OrderedDict(), _Global.of("torch", name)))  # fmt: skip


_ALIGN = 64


def _put(zf: zipfile.ZipFile, name: str, data: Any) -> None:
    """One stored entry, its bytes starting at a multiple of 64 (padded through the local
    header's extra field, as PyTorch pads), so that a reader may map them in place."""
    info = zipfile.ZipInfo(f"archive/{name}", date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    n = memoryview(data).nbytes
    info.file_size = n
    zip64 = n * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own rule for adding its 20-byte zip64 field
    try:
        at = zf.fp.tell()
        used = at + 30 + len(info.filename.encode()) + 4 + (20 if zip64 else 0)
        info.extra = struct.pack("<HH", 0x4246, -used % _ALIGN) + b"Z" * (-used % _ALIGN)
    except (AttributeError, OSError):  # a stream without positions: unaligned, still valid
        pass
    with zf.open(info, "w", force_zip64=zip64) as w:
        w.write(data)


def pickle_archive(obj: Any, protocol: int = 2) -> Callable[[BinaryIO], None]:
    """``obj`` pickled (the storages only found, not copied), and the function that writes the
    whole archive to a binary stream: an object that cannot be pickled raises before a
    byte is written anywhere."""
    storages = _Storages()
    buf = io.BytesIO()
    _ArchivePickler(buf, protocol, storages).dump(obj)
    return lambda out: _write_zip(out, buf.getbuffer(), storages)


def _write_zip(out: BinaryIO, pkl: memoryview, storages: _Storages) -> None:
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        _put(zf, "data.pkl", pkl)
        _put(zf, ".format_version", b"1")
        _put(zf, ".storage_alignment", str(_ALIGN).encode())
        _put(zf, "byteorder", sys.byteorder.encode())
        for key, blob in storages.blobs:
            _put(zf, f"data/{key}", blob)
        _put(zf, "version", b"3\n")
        _put(zf, ".data/serialization_id", "".join(str(secrets.randbelow(10)) for _ in range(40)).encode())


# -- reading ------------------------------------------------------------------------------
ZIP_MAGIC = b"PK\x03\x04"


def _stored_offset(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    """Where an entry's bytes start in the archive file (after its local header)."""
    zf.fp.seek(info.header_offset)
    head = zf.fp.read(30)
    if len(head) != 30 or head[:4] != ZIP_MAGIC:
        raise zipfile.BadZipFile(f"bad local header of {info.filename}")
    n, m = struct.unpack("<HH", head[26:30])
    return info.header_offset + 30 + n + m


class _Reader:
    def __init__(self, zf: zipfile.ZipFile, prefix: str, name: str, restore: Callable, mmap_path: str | None) -> None:
        self.zf, self.prefix, self.name, self.restore, self.mmap_path = zf, prefix, name, restore, mmap_path
        self.storages: dict[str, Storage] = {}
        order = zf.read(prefix + "byteorder").decode() if prefix + "byteorder" in zf.NameToInfo else "little"
        self.swap = order.strip() != sys.byteorder

    def storage(self, pid: Any) -> Storage:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], StorageKind)):
            raise pickle.UnpicklingError(f"load: '{self.name}' names a storage as {pid!r}, which is not one")
        _, kind, key, location, numel = pid
        key = str(key)
        got = self.storages.get(key)
        if got is not None:
            return got
        entry = f"{self.prefix}data/{key}"
        try:
            info = self.zf.getinfo(entry)
        except KeyError:
            raise DamagedArchive(
                f"load: '{self.name}' lacks the storage '{entry}' that its tensors use; the file is damaged"
            ) from None
        item = 2 if kind.dtype == _BF16 else (DTYPES[kind.dtype][1].itemsize if kind.dtype else 1)
        if info.file_size != int(numel) * item:
            raise DamagedArchive(
                f"load: the storage '{entry}' of '{self.name}' holds {info.file_size} bytes, but its tensors expect "
                f"{numel} elements of {item} byte(s); the file is damaged"
            )
        raw = self._read(info)
        if self.swap and item > 1:
            raw = raw.view(f"u{item}").byteswap().view(np.uint8)
        got = self.restore(Storage(raw, kind, get_device("cpu")), str(location))
        self.storages[key] = got
        return got

    def _read(self, info: zipfile.ZipInfo) -> np.ndarray:
        if self.mmap_path and info.compress_type == zipfile.ZIP_STORED and info.file_size:
            return np.memmap(self.mmap_path, np.uint8, "c", _stored_offset(self.zf, info), (info.file_size,))
        raw = np.empty(info.file_size, np.uint8)
        with self.zf.open(info) as r:
            view, got = memoryview(raw), 0
            while got < info.file_size:
                n = r.readinto(view[got:])
                if not n:
                    raise DamagedArchive(f"load: the storage '{info.filename}' of '{self.name}' ends early")
                got += n
            r.read(1)  # the end of the entry: zipfile checks its CRC there
        return raw


def _unpickle(u: pickle.Unpickler, name: str) -> Any:
    """``u.load()``, a pickle whose calls fail (wrong arguments, wrong types) named as such."""
    try:
        return u.load()
    except (TypeError, ValueError, IndexError, KeyError, AttributeError) as e:
        if isinstance(e, pickle.UnpicklingError):
            raise
        raise pickle.UnpicklingError(
            f"load: the pickle in '{name}' failed to rebuild an object ({type(e).__name__}: {e}); "
            "the file is damaged or was not written by torch.save"
        ) from e


def read_archive(src: BinaryIO, name: str, unpickler: Callable[..., pickle.Unpickler], restore: Callable,
                 mmap_path: str | None = None, **pickle_args: Any) -> Any:  # fmt: skip
    """The object stored in a PyTorch zip checkpoint. ``unpickler(file, persistent_load,
    **pickle_args)`` makes the unpickler (which decides the globals allowed);
    ``restore(storage, location)`` gives each storage its device."""
    try:
        zf = zipfile.ZipFile(src)
        pkl = [n for n in zf.namelist() if n.endswith("data.pkl") and n.count("/") <= 1]
        if not pkl:
            raise DamagedArchive(f"load: '{name}' is a zip archive without data.pkl: not a PyTorch checkpoint")
        prefix = pkl[0][: -len("data.pkl")]
        reader = _Reader(zf, prefix, name, restore, mmap_path)
        data = zf.read(pkl[0])
        _READING.append(name)
        try:
            return _unpickle(unpickler(io.BytesIO(data), reader.storage, **pickle_args), name)
        finally:
            _READING.pop()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, struct.error, OSError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise DamagedArchive(f"load: '{name}' is damaged or truncated: its zip archive cannot be read ({e})") from e


# -- PyTorch's legacy format (before 1.6) -------------------------------------------------
# Four pickles one after the other (a magic number, the protocol version 1001, facts about
# the writer, the object), then the sorted list of storage keys, then each storage as an
# 8-byte element count and its raw bytes. The object's storages are persistent ids
# ('storage', torch.FloatStorage, key, location, numel, view): view None, or (key, offset,
# numel) of a part of a storage.
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_VERSION = 1001


def _no_storage(pid: Any) -> Any:
    raise pickle.UnpicklingError(f"load: {_where()} names a storage ({pid!r}) outside its object")


def _item_size(kind: StorageKind) -> int:
    if kind.dtype == _BF16:
        return 2
    return DTYPES[kind.dtype][1].itemsize if kind.dtype else 1


def read_legacy(src: BinaryIO, name: str, unpickler: Callable[..., pickle.Unpickler], restore: Callable,
                **pickle_args: Any) -> Any:  # fmt: skip
    """The object stored in PyTorch's legacy (non-zip) format; see :func:`read_archive`."""
    start = src.tell()
    file_bytes = src.seek(0, io.SEEK_END) - start
    src.seek(start)
    roots: dict[str, tuple[Storage, int]] = {}  # key -> the storage, its element size
    parts: dict[str, Storage] = {}

    def storage(pid: Any) -> Storage:
        ok = isinstance(pid, tuple) and len(pid) == 6 and pid[0] == "storage" and isinstance(pid[1], StorageKind)
        if not ok:
            raise pickle.UnpicklingError(f"load: '{name}' names a storage as {pid!r}, which is not one")
        _, kind, key, location, numel, view = pid
        if key not in roots:
            item = _item_size(kind)
            if not 0 <= int(numel) * item <= file_bytes:  # (before allocating what a damaged count asks)
                raise DamagedArchive(f"load: '{name}' has a storage of {numel} elements, more than the file holds")
            st = Storage(np.zeros(int(numel) * item, np.uint8), kind, get_device("cpu"))
            st.target = restore(Storage(st.raw, kind, st.target), str(location)).target
            roots[key] = (st, item)
        st, item = roots[key]
        st.deferred = [] if st.deferred is None else st.deferred
        if view is None:
            return st
        view_key, offset, size = view
        if view_key not in parts:
            part = Storage(st.raw[int(offset) * item : (int(offset) + int(size)) * item], kind, st.target)
            part.deferred = st.deferred
            parts[view_key] = part
        return parts[view_key]

    _READING.append(name)
    try:
        head = [unpickler(src, _no_storage, **pickle_args).load() for _ in range(3)]
        if head[0] != LEGACY_MAGIC or head[1] != _LEGACY_VERSION or not isinstance(head[2], dict):
            raise DamagedArchive(f"load: '{name}' is a pickle, but not a PyTorch checkpoint (no legacy header)")
        obj = _unpickle(unpickler(src, storage, **pickle_args), name)
        keys = unpickler(src, _no_storage, **pickle_args).load()
    except EOFError as e:
        raise DamagedArchive(f"load: '{name}' is truncated: it ends inside its pickles") from e
    finally:
        _READING.pop()
    swap = not head[2].get("little_endian", True)
    for key in keys:
        if key not in roots:
            raise DamagedArchive(f"load: '{name}' lists a storage '{key}' that none of its tensors uses")
        st, item = roots[key]
        count = src.read(8)
        if len(count) != 8 or struct.unpack("<q", count)[0] * item != st.raw.size:
            raise DamagedArchive(f"load: the storage '{key}' of '{name}' is truncated or of the wrong size")
        if src.readinto(memoryview(st.raw)) != st.raw.size:
            raise DamagedArchive(f"load: the storage '{key}' of '{name}' is truncated")
        if swap and item > 1:
            st.raw[:] = st.raw.view(f"u{item}").byteswap().view(np.uint8)
    missing = set(roots) - set(keys)
    if missing:
        raise DamagedArchive(f"load: '{name}' lacks the storages {sorted(missing)} that its tensors use")
    for st, _ in roots.values():
        for t, view in st.deferred or ():
            if st.target.xp is not np:
                t._data, t._dev = st.target.asarray(np.ascontiguousarray(view)), st.target
    return obj
