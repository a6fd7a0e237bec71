"""``tga.save`` / ``tga.load`` and the other names of ``torch.serialization``.

>>> tga.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, "ckpt.pt")  # doctest: +SKIP
>>> ckpt = tga.load("ckpt.pt", map_location="cpu")  # doctest: +SKIP

Files are in PyTorch's own format (``torch_archive.py``): ``torch.load`` reads what
:func:`save` writes, and :func:`load` reads what ``torch.save`` writes. Loading with
``weights_only=True`` (the default, as in PyTorch) never runs code from the file
(``weights_only.py``: PyTorch's allow-list, :func:`add_safe_globals`, :func:`safe_globals`).
A path ending in ``.safetensors`` is written and read as safetensors (``safetensors_file.py``),
and files this package wrote before in that form still load from any path.

A save to a path is atomic: the bytes go to a temporary file beside it, renamed over the
path once complete, so a failed save leaves the old file whole.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import struct
import zipfile
from collections.abc import Mapping
from typing import IO, Any

from ..engine.spellings import keeps_old_spellings
from ..runtime.backend import Device, device, get_device
from . import safetensors_file, torch_archive
from .safetensors_file import (  # noqa: F401 - the names this module has always had
    load_safetensors,
    remove_stale_temporaries,
    save_safetensors,
)
from .torch_archive import Storage
from .weights_only import (  # noqa: F401 - torch.serialization's names
    FullUnpickler,
    WeightsUnpickler,
    add_safe_globals,
    allowed_globals,
    clear_safe_globals,
    get_safe_globals,
    globals_named,
    safe_globals,
)

DEFAULT_PROTOCOL = 2
FILE_LIKE = str | os.PathLike | IO[bytes]


def _path_of(f: Any) -> str | None:
    return os.fspath(f) if isinstance(f, (str, os.PathLike)) else None


def _is_safetensors_path(path: str | None) -> bool:
    return path is not None and path.lower().endswith(".safetensors")


def save(obj: Any, f: FILE_LIKE, pickle_module: Any = None, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:  # fmt: skip
    """Store ``obj`` in ``f`` (a path or a writable binary file object) in PyTorch's format,
    as ``torch.save``: tensors (views sharing memory share a storage), state dicts,
    optimizer states, nested containers of them and plain values; any other picklable
    object too (a whole module), which then loads only with ``weights_only=False``.

    A path ending in ``.safetensors`` gets a safetensors file instead (no pickle at all).
    """
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("save: PyTorch's legacy (pre-1.6) format is not written; use the default zip format")
    path = _path_of(f)
    if _is_safetensors_path(path):
        safetensors_file.save(obj, path)
        return
    if path is None:
        if not hasattr(f, "write"):
            raise TypeError(f"save: f must be a path or a binary file object with write(), got {type(f).__name__}")
        torch_archive.pickle_archive(obj, pickle_protocol)(f)
        return
    write = torch_archive.pickle_archive(obj, pickle_protocol)  # first: an object that cannot be saved leaves no file
    safetensors_file.write_atomic(write, path, "save")


def default_restore_location(storage: Storage, location: str) -> Storage:
    """Where a storage saved at ``location`` ('cpu', 'cuda:0') goes when nothing else is asked:
    there, as PyTorch restores it (a CUDA location needs a usable GPU)."""
    if location.startswith("cuda"):
        try:
            return storage.to(location)
        except RuntimeError as e:
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but no CUDA device can be used here "
                f"({e}). If you are running on a CPU-only machine, please use tga.load with "
                "map_location=tga.device('cpu') to map your storages to the CPU."
            ) from e
    if location.startswith("cpu"):
        return storage.cpu()
    raise RuntimeError(f"don't know how to restore data location {location!r}")


def _restorer(map_location: Any) -> Any:
    """``(storage, location) -> storage`` for a ``map_location`` as PyTorch reads it."""
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, (str, device, Device)) or (
        isinstance(map_location, int) and not isinstance(map_location, bool)
    ):
        target = get_device(map_location)
        return lambda storage, location: storage.to(target)
    if isinstance(map_location, Mapping):
        table = {str(k): v for k, v in map_location.items()}
        return lambda storage, location: default_restore_location(storage, str(table.get(location, location)))
    if callable(map_location):

        def call(storage: Storage, location: str) -> Storage:
            out = map_location(storage, location)
            if out is None:
                return default_restore_location(storage, location)
            if not isinstance(out, Storage):
                raise TypeError(f"load: map_location returned a {type(out).__name__}; it must return a storage or None")
            return out

        return call
    raise TypeError(
        f"load: map_location must be None, a device, a dict or a callable, got {type(map_location).__name__}"
    )


def _looks_like_safetensors(head: bytes) -> bool:
    if len(head) < 9:
        return False
    return struct.unpack("<Q", head[:8])[0] > 0 and head[8:9] == b"{"


@keeps_old_spellings
def load(f: FILE_LIKE, map_location: Any = None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:  # fmt: skip
    """What :func:`save` (or ``torch.save``) stored in ``f`` (a path or a readable binary
    file object), as ``torch.load``: tensors become this package's, on the device they were
    saved from or as ``map_location`` says (a device, a ``{saved: wanted}`` dict, or a
    callable ``(storage, location) -> storage``).

    ``weights_only=True`` (the default) unpickles only tensors, containers, plain values and
    the globals allowed with :func:`add_safe_globals`; anything else raises
    ``pickle.UnpicklingError`` naming the global. Use ``weights_only=False`` only for files
    from a trusted source: it runs whatever the file names. ``mmap=True`` (a path only) maps
    the storages from the file instead of reading them.
    """
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("load: cannot safely load weights when an explicit pickle_module is given")
    path = _path_of(f)
    if _is_safetensors_path(path):
        return safetensors_file.load(path, device=_safetensors_device(map_location))
    if mmap and path is None:
        raise ValueError("load: f must be a file path in order to use the mmap argument")
    name = path if path is not None else getattr(f, "name", None) or f"a {type(f).__name__}"
    make = WeightsUnpickler if weights_only else FullUnpickler
    restore = _restorer(map_location)

    def unpickler(file: Any, persistent_load: Any, **kw: Any) -> pickle.Unpickler:
        return make(file, persistent_load, source=f"'{name}'", **kw)

    if path is not None:
        with open(path, "rb") as src:
            head = src.read(9)
            src.seek(0)
            if _looks_like_safetensors(head):
                return safetensors_file.load(path, device=_safetensors_device(map_location))
            if _check_zip(head, name):
                return torch_archive.read_archive(
                    src, name, unpickler, restore, path if mmap else None, **pickle_load_args
                )
            if mmap:
                raise RuntimeError(
                    f"load: mmap can only be used with files saved in the zip format; '{name}' is in PyTorch's legacy "
                    "format (torch.save(..., _use_new_zipfile_serialization=False))"
                )
            return torch_archive.read_legacy(src, name, unpickler, restore, **pickle_load_args)
    if not hasattr(f, "read"):
        raise TypeError(f"load: f must be a path or a binary file object with read(), got {type(f).__name__}")
    if not (hasattr(f, "seek") and f.seekable()):
        f = io.BytesIO(f.read())
    start = f.tell()
    head = f.read(9)
    f.seek(start)
    if _check_zip(head, name):
        return torch_archive.read_archive(f, name, unpickler, restore, None, **pickle_load_args)
    return torch_archive.read_legacy(f, name, unpickler, restore, **pickle_load_args)


def get_unsafe_globals_in_checkpoint(f: FILE_LIKE) -> list[str]:
    """The globals ``f``'s pickle names that a ``weights_only=True`` load would refuse (the
    default allow-list and :func:`add_safe_globals`'), found without unpickling anything: what
    to allow, after checking each, to load a file from a source one trusts.

    >>> tga.serialization.get_unsafe_globals_in_checkpoint("run.pt")  # doctest: +SKIP
    ['__main__.Config']
    """
    path = _path_of(f)
    with open(path, "rb") if path is not None else contextlib.nullcontext(f) as src:
        if not src.seekable():
            src = io.BytesIO(src.read())
        name = path if path is not None else f"a {type(f).__name__}"
        start = src.tell()
        head = src.read(9)
        src.seek(start)
        if _check_zip(head, name):
            with zipfile.ZipFile(src) as zf:
                pkl = next((n for n in zf.namelist() if n.endswith("data.pkl") and n.count("/") <= 1), None)
                if pkl is None:
                    raise torch_archive.DamagedArchive(f"load: '{name}' is a zip archive without data.pkl")
                names = globals_named(io.BytesIO(zf.read(pkl)))
        else:  # the legacy format: its object is the fourth of its pickles
            names = [g for _ in range(4) for g in globals_named(src)]
    allowed = allowed_globals()
    return sorted({g for g in names if g not in allowed})


def _check_zip(head: bytes, name: str) -> bool:
    """True for a zip archive, False for a pickle (PyTorch's legacy format); else an error."""
    if head[:4] == torch_archive.ZIP_MAGIC:
        return True
    if not head:
        raise torch_archive.DamagedArchive(f"load: '{name}' is empty: not a checkpoint")
    if head[:1] == b"\x80":
        return False
    raise torch_archive.DamagedArchive(
        f"load: '{name}' is not a PyTorch checkpoint (it starts with {head[:4]!r}, not a zip archive's {torch_archive.ZIP_MAGIC!r})"
    )


def _safetensors_device(map_location: Any) -> Any:
    if map_location is None or isinstance(map_location, (str, device, Device)):
        return map_location
    raise TypeError("load: a safetensors file takes map_location as a device only (not a dict or a callable)")


__all__ = [
    "add_safe_globals",
    "clear_safe_globals",
    "default_restore_location",
    "get_safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "load",
    "safe_globals",
    "save",
]
