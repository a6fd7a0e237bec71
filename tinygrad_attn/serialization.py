"""State dicts to and from safetensors files: atomic saves, and loads that never unpickle.

>>> save_safetensors({"w": np.ones((2, 3), np.float32)}, "model.safetensors")  # doctest: +SKIP
>>> load_safetensors("model.safetensors")["w"].shape  # doctest: +SKIP
(2, 3)

``safetensors`` is an optional dependency (``pip install "tinygrad_attn[io]"``), imported
only when a checkpoint is written or read.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._tensor import Tensor

_INSTALL_HINT = 'pip install "tinygrad_attn[io]"'


def _safetensors_numpy() -> Any:
    try:
        import safetensors.numpy  # noqa: PLC0415 - optional extra, loaded on demand
    except ImportError as e:
        raise ImportError(f"saving and loading checkpoints needs the safetensors package: {_INSTALL_HINT}") from e
    return safetensors.numpy


def save_safetensors(state: Mapping[str, Any], path: str | os.PathLike) -> None:
    """Write ``state`` (name -> array or Tensor) to ``path`` as safetensors, atomically.

    The bytes go to a temporary file in the same directory, are flushed to disk, and
    the file is then renamed over ``path`` (``os.replace`` is atomic on one file
    system). A crash or an error mid-save leaves the previous checkpoint whole and
    removes the temporary file.
    """
    st = _safetensors_numpy()
    path = os.fspath(path)
    arrays = {}
    for k, v in state.items():
        if not isinstance(k, str):
            raise TypeError(f"save_safetensors: keys must be strings, got {k!r} for {path}")
        arr = v.numpy() if isinstance(v, Tensor) else np.asarray(v)
        arrays[k] = np.array(arr, order="C", copy=None)  # not ascontiguousarray: that makes 0-d arrays 1-d
    blob = st.save(arrays)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"save_safetensors: the folder '{folder}' for '{path}' does not exist")
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    # Mode 0o666 less the umask, as a plain open() would give (mkstemp's 0o600 would make
    # the checkpoint private); O_EXCL never reuses an existing file.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())  # the data is on disk before the rename makes it visible
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def load_safetensors(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """The arrays stored in a safetensors file, by name (NumPy arrays on the host).

    Only ``safetensors.numpy.load_file`` reads the file: no pickle, so a checkpoint
    from an untrusted source cannot run code. A missing or corrupt file raises an
    error naming it.
    """
    st = _safetensors_numpy()
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"load_safetensors: no checkpoint file at '{path}'")
    try:
        return st.load_file(path)
    except Exception as e:  # safetensors reports corruption with its own error types
        raise ValueError(f"load_safetensors: '{path}' is not a valid safetensors file ({e})") from e
