"""State dicts and nested state to and from safetensors files: atomic saves, and loads that never unpickle.

``tga.save``/``tga.load`` use this module for a path ending in ``.safetensors``.

>>> save_safetensors({"w": np.ones((2, 3), np.float32)}, "model.safetensors")  # doctest: +SKIP
>>> load_safetensors("model.safetensors")["w"].shape  # doctest: +SKIP
(2, 3)
>>> tga.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, "ckpt.safetensors")  # doctest: +SKIP
>>> tga.load("ckpt.safetensors")["epoch"]  # doctest: +SKIP
3

:func:`save` and :func:`load` store nested dicts, lists and tuples of tensors, NumPy
arrays, numbers, strings, booleans and ``None``: the arrays as the file's tensors (named
by their path, ``optim.state.0.exp_avg``), the structure and the numbers as JSON in the
file's metadata. Any safetensors reader opens the file; nothing in it is ever unpickled.

bfloat16 tensors (``BF16``) are read and written as bfloat16 where ml_dtypes gives NumPy that
dtype (``engine/bfloat16.py``); without it they load as float32, which holds every bfloat16
value exactly, with a warning naming them.

``safetensors`` is an optional dependency (``pip install "tinygrad_attn[io]"``), imported
only when a checkpoint is written or read.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import struct
import time
import zlib
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

import numpy as np

from ..engine.bfloat16 import BFLOAT16, INSTALL_HINT
from ..engine.warn import warn as _user_warn
from ..tensors._tensor import Tensor

_INSTALL_HINT = 'pip install "tinygrad_attn[io]"'


def _safetensors_numpy() -> Any:
    try:
        import safetensors.numpy  # noqa: PLC0415 - optional extra, loaded on demand
    except ImportError as e:
        raise ImportError(f"saving and loading checkpoints needs the safetensors package: {_INSTALL_HINT}") from e
    return safetensors.numpy


def _host_array(v: Any) -> np.ndarray:
    arr = v._read("save") if isinstance(v, Tensor) else np.asarray(v)  # (not numpy(): bfloat16 has none)
    return np.array(arr, order="C", copy=None)  # not ascontiguousarray: that makes 0-d arrays 1-d


def save_safetensors(state: Mapping[str, Any], path: str | os.PathLike, metadata: Mapping[str, str] | None = None
                     ) -> None:  # fmt: skip
    """Write ``state`` (name -> array or Tensor) to ``path`` as safetensors, atomically.

    The bytes go to a temporary file in the same directory, are flushed to disk, and
    the file is then renamed over ``path`` (``os.replace`` is atomic on one file
    system). An error mid-save leaves the previous checkpoint whole and removes the
    temporary file; the temporary file of a process killed mid-save is removed by the
    next save to the same path (see :func:`remove_stale_temporaries`).
    """
    st = _safetensors_numpy()
    path = os.fspath(path)
    arrays = {}
    for k, v in state.items():
        if not isinstance(k, str):
            raise TypeError(f"save_safetensors: keys must be strings, got {k!r} for {path}")
        arrays[k] = _host_array(v)
    blob = st.save(arrays, metadata=dict(metadata) if metadata else None)
    write_atomic(blob, path, "save_safetensors")


# A temporary file is named after its target, its writer's host and process id:
# ".model.safetensors.<host>-<pid>.<random>.tmp", so a later save can tell whether its
# writer is still alive.
_HOST = f"{zlib.crc32(socket.gethostname().encode()):08x}"


def _temporary_prefix(path: str) -> str:
    return f".{os.path.basename(path)}.{_HOST}-"


def _pid_alive(pid: int) -> bool:
    if os.name == "nt":  # there os.kill(pid, 0) sends CTRL_C_EVENT: never ask, assume alive
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # someone else's process, or no way to ask: assume alive
        return True
    return True


_LEGACY_AGE_S = 24 * 3600


def _is_hex12(s: str) -> bool:
    return len(s) == 12 and all(c in "0123456789abcdef" for c in s)


def remove_stale_temporaries(path: str | os.PathLike) -> list[str]:
    """Remove the temporary files that saves to ``path`` left behind when their process
    died mid-write (killed, out of memory); returns the paths removed.

    Only files of this host whose writing process no longer exists are touched, so a save
    still running in another process keeps its file. Every save calls this first. The
    temporaries of earlier versions (``.model.safetensors.<12 hex digits>.tmp``, which do
    not name their writer) go once they are a day old: no save takes that long.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    prefix = _temporary_prefix(path)
    legacy = f".{os.path.basename(path)}."
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for n in names:
        if not n.endswith(".tmp"):
            continue
        if n.startswith(prefix):
            pid = n[len(prefix) :].split(".", 1)[0]
            if not pid.isdigit() or int(pid) == os.getpid() or _pid_alive(int(pid)):
                continue  # this process's own saves clean up after themselves
        elif n.startswith(legacy) and _is_hex12(n[len(legacy) : -len(".tmp")]):
            try:
                if time.time() - os.path.getmtime(os.path.join(folder, n)) < _LEGACY_AGE_S:
                    continue
            except OSError:
                continue
        else:
            continue
        try:
            os.unlink(os.path.join(folder, n))
            removed.append(os.path.join(folder, n))
        except OSError:  # removed meanwhile by another save, or not ours to remove
            pass
    return removed


class MissingFolderError(FileNotFoundError, RuntimeError):
    """A file to write into a folder that does not exist: PyTorch's ``RuntimeError`` ("Parent
    directory ... does not exist"), and the ``FileNotFoundError`` the library has raised."""


def write_atomic(blob: bytes | memoryview | Callable[[BinaryIO], None], path: str, who: str) -> None:
    """Write ``blob`` (bytes, or a function that writes into the file it is given) to ``path``
    through a temporary file beside it, renamed over it once on disk."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise MissingFolderError(f"{who}: the folder '{folder}' for '{path}' does not exist")
    remove_stale_temporaries(path)
    tmp = os.path.join(folder, f"{_temporary_prefix(path)}{os.getpid()}.{secrets.token_hex(6)}.tmp")
    # Mode 0o666 less the umask, as a plain open() would give (mkstemp's 0o600 would make
    # the checkpoint private); O_EXCL never reuses an existing file.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            blob(f) if callable(blob) else f.write(blob)
            f.flush()
            os.fsync(f.fileno())  # the data is on disk before the rename makes it visible
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


# safetensors dtype names -> NumPy; BF16 is read by hand (safetensors' NumPy loader has no bfloat16).
_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32, "I16": np.int16,
    "I8": np.int8, "U64": np.uint64, "U32": np.uint32, "U16": np.uint16, "U8": np.uint8, "BOOL": np.bool_,
}  # fmt: skip


def _read_header(path: str, who: str) -> tuple[dict[str, Any], int]:
    """The JSON header of a safetensors file and where its data starts."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        raw = f.read(8)
        n = struct.unpack("<Q", raw)[0] if len(raw) == 8 else -1
        if not 0 < n <= size - 8:
            raise ValueError(f"{who}: '{path}' is not a valid safetensors file (its header length is wrong)")
        try:
            header = json.loads(f.read(n))
        except ValueError as e:
            raise ValueError(f"{who}: '{path}' is not a valid safetensors file (its header is not JSON: {e})") from e
    if not isinstance(header, dict):
        raise ValueError(f"{who}: '{path}' is not a valid safetensors file (its header is not a JSON object)")
    return header, 8 + n


def _load_by_hand(path: str, header: dict[str, Any], start: int) -> dict[str, np.ndarray]:
    """Every tensor of the file, bfloat16 ones as ml_dtypes' bfloat16 or, without it, widened to
    float32 (the dtype safetensors' NumPy loader refuses)."""
    out = {}
    size = os.path.getsize(path) - start
    with open(path, "rb") as f:
        for name, info in header.items():
            if name == "__metadata__":
                continue
            try:
                dt, shape, (lo, hi) = info["dtype"], tuple(int(s) for s in info["shape"]), info["data_offsets"]
            except (KeyError, TypeError, ValueError) as e:
                raise ValueError(f"load_safetensors: '{path}' is not a valid safetensors file (entry '{name}')") from e
            if dt != "BF16" and dt not in _DTYPES:
                raise ValueError(
                    f"load_safetensors: tensor '{name}' in '{path}' has dtype {dt}, which NumPy cannot hold; "
                    f"convert it to float32 where it was saved"
                )
            itemsize = 2 if dt == "BF16" else np.dtype(_DTYPES[dt]).itemsize
            if not (0 <= lo <= hi <= size and hi - lo == itemsize * int(np.prod(shape, dtype=np.int64))):
                raise ValueError(f"load_safetensors: '{path}' is not a valid safetensors file (entry '{name}')")
            f.seek(start + lo)
            raw = f.read(hi - lo)
            if dt == "BF16" and BFLOAT16 is not None:
                out[name] = np.frombuffer(raw, dtype="<u2").reshape(shape).view(BFLOAT16).copy()
            elif dt == "BF16":  # the top 16 bits of a float32: shift them back into place
                bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
                out[name] = bits.view(np.float32).reshape(shape)
            else:
                out[name] = np.frombuffer(raw, dtype=np.dtype(_DTYPES[dt]).newbyteorder("<")).reshape(shape).copy()
    return out


def load_safetensors(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """The arrays stored in a safetensors file, by name (NumPy arrays on the host).

    No pickle, so a checkpoint from an untrusted source cannot run code. A missing or
    corrupt file raises an error naming it. bfloat16 tensors (NumPy has no bfloat16) load
    as float32, which holds each of their values exactly, with a ``UserWarning`` naming them.
    """
    st = _safetensors_numpy()
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"load_safetensors: no checkpoint file at '{path}'")
    header, start = _read_header(path, "load_safetensors")
    wide = [k for k, v in header.items() if k != "__metadata__" and isinstance(v, dict) and v.get("dtype") == "BF16"]
    if wide and BFLOAT16 is not None:
        return _load_by_hand(path, header, start)
    if wide:
        _user_warn(
            f"load_safetensors: {len(wide)} tensor(s) in '{path}' are bfloat16, which NumPy has no dtype for; "
            f"they load as float32 (every bfloat16 value is exact in float32): {', '.join(wide[:5])}"
            + (", ..." if len(wide) > 5 else "")
            + f"; for bfloat16 tensors, {INSTALL_HINT}",
            UserWarning,
        )
        return _load_by_hand(path, header, start)
    try:
        return st.load_file(path)
    except Exception as e:  # safetensors reports corruption with its own error types
        raise ValueError(f"load_safetensors: '{path}' is not a valid safetensors file ({e})") from e


# -- nested state: tga.save / tga.load ------------------------------------------------------
_FORMAT_KEY = "tinygrad_attn.structure"


class _Encoder:
    """Walks a nested object: arrays go to ``arrays`` under their path, the rest to JSON."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.names: dict[int, str] = {}  # id of a tensor/array -> its name (stored once)

    def name_for(self, obj: Any, path: str) -> str:
        name = self.names.get(id(obj))
        if name is None:
            name = path or "_"
            while name in self.arrays:
                name += "_"
            self.names[id(obj)] = name
            self.arrays[name] = _host_array(obj)
        return name

    def encode(self, obj: Any, path: str) -> Any:
        sub = lambda k: f"{path}.{k}" if path else str(k)  # noqa: E731
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        if isinstance(obj, Tensor):
            return {"tensor": self.name_for(obj, path), "requires_grad": bool(obj.requires_grad)}
        if isinstance(obj, (np.ndarray, np.generic)):
            return {"array": self.name_for(obj, path), "scalar": isinstance(obj, np.generic)}
        if isinstance(obj, Mapping):
            items = []
            for k, v in obj.items():
                if k is not None and not isinstance(k, (str, int, float, bool)):
                    raise TypeError(
                        f"save: the key {k!r} at '{path or '(top)'}' is a {type(k).__name__}; keys must be "
                        "strings, numbers, booleans or None"
                    )
                items.append([k, self.encode(v, sub(k))])
            return {"dict": items}
        if isinstance(obj, (list, tuple)):
            return {"list" if isinstance(obj, list) else "tuple": [self.encode(v, sub(i)) for i, v in enumerate(obj)]}
        raise TypeError(
            f"save: cannot store a {type(obj).__name__} at '{path or '(top)'}': store tensors, NumPy arrays, "
            "numbers, strings, booleans, None and dicts/lists/tuples of them (a module: its state_dict())"
        )


def save(obj: Any, path: str | os.PathLike) -> None:
    """Store ``obj`` (nested dicts, lists, tuples of tensors, NumPy arrays, numbers, strings,
    booleans, ``None``) in one safetensors file, atomically and without pickle.

    >>> tga.save({"model": model.state_dict(), "optim": opt.state_dict()}, "ckpt.safetensors")  # doctest: +SKIP
    """
    path = os.fspath(path)
    enc = _Encoder()
    tree = enc.encode(obj, "")
    st = _safetensors_numpy()
    blob = st.save(enc.arrays, metadata={_FORMAT_KEY: json.dumps(tree, allow_nan=True)})
    write_atomic(blob, path, "save")


def _decode(node: Any, arrays: Mapping[str, np.ndarray], device: Any, made: dict[str, Any], path: str) -> Any:
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):  # a JSON list never stands for itself: lists are {"list": [...]}
        raise ValueError(f"load: the structure at '{path}' is damaged")
    if "tensor" in node or "array" in node:
        name = node.get("tensor", node.get("array"))
        if name not in arrays:
            raise ValueError(f"load: the structure names the array '{name}', which the file does not hold")
        key = ("t:" if "tensor" in node else "a:") + name
        if key not in made:  # one object for an array stored once, as it was when saved
            arr = arrays[name]
            if "tensor" in node:
                made[key] = Tensor(arr, device=device, requires_grad=bool(node.get("requires_grad")))
            else:
                made[key] = arr[()] if node.get("scalar") else arr
        return made[key]
    if "dict" in node:
        return {k: _decode(v, arrays, device, made, f"{path}.{k}") for k, v in node["dict"]}
    if "list" in node:
        return [_decode(v, arrays, device, made, f"{path}.{i}") for i, v in enumerate(node["list"])]
    if "tuple" in node:
        return tuple(_decode(v, arrays, device, made, f"{path}.{i}") for i, v in enumerate(node["tuple"]))
    raise ValueError(f"load: the structure at '{path}' is damaged")


def load(path: str | os.PathLike, device: Any = None) -> Any:
    """What :func:`save` stored, rebuilt: tensors as :class:`Tensor` on ``device`` (default:
    the default device), arrays as NumPy arrays. Never unpickles.

    A safetensors file written by another program loads as a dict of name -> Tensor.
    """
    path = os.fspath(path)
    arrays = load_safetensors(path)
    header, _ = _read_header(path, "load")
    meta = header.get("__metadata__") or {}
    if _FORMAT_KEY not in meta:
        return {k: Tensor(v, device=device) for k, v in arrays.items()}
    try:
        tree = json.loads(meta[_FORMAT_KEY])
    except ValueError as e:
        raise ValueError(f"load: the structure stored in '{path}' is not valid JSON ({e})") from e
    return _decode(tree, arrays, device, {}, "(top)")
