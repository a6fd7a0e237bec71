"""The random generators behind every draw, with PyTorch's CPU generator's numbers.

A :class:`Generator` is a Mersenne Twister (mt19937) seeded as PyTorch's CPU generator is
(``init_genrand`` of the seed's low 32 bits), so ``tga.manual_seed(s)`` followed by
``tga.randn(...)``, ``nn.Linear(...)`` or ``tga.randperm(n)`` gives the numbers
``torch.manual_seed(s)`` gives; the transforms from raw 32/64-bit draws to values are in
:mod:`tinygrad_attn.random.transforms`. Draws are made on the host (NumPy's ``MT19937``
bit generator makes the raw words, vectorised) and then moved to the tensor's device, so a
seed gives the same numbers on the CPU and on every GPU.

Draws a traced program must make again at each replay (dropout masks, ``rand``,
``randn``) are an op, :class:`Draw`: its forward draws from the generator when it runs,
so a replay draws fresh numbers, the same stream as eager.

>>> g = Generator().manual_seed(0); state = g.get_state(); a = g.initial_seed()
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..engine.function import Function, InvalidArgumentError
from ..engine.switches import active_tracer
from .transforms import in_order
from .transforms import memory_order as memory_order  # (for the callers that lay draws out)

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
           "fork_rng"]  # fmt: skip

_N = 624  # words of mt19937's state
#: the seed of a new generator, PyTorch's (``torch.Generator().initial_seed()``)
DEFAULT_SEED = 67280421310721
#: the bytes of a state (PyTorch's ``CPUGeneratorImplState``: its legacy part, then the float normal cache)
_STATE = struct.Struct(f"<QiiQ{_N}Qdddi4xf?3x")
assert _STATE.size == 5056


def _init_genrand(seed: int) -> np.ndarray:
    """mt19937's state after ``init_genrand(seed & 0xffffffff)`` (a recurrence: one word after another)."""
    key = [seed & 0xFFFFFFFF]
    for j in range(1, _N):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFFFFFF)
    return np.array(key, dtype=np.uint32)


class SeedTypeError(TypeError, RuntimeError):
    """A seed that is no int given to ``Generator.manual_seed``: PyTorch's ``RuntimeError``
    ("manual_seed expected a long"), and the ``TypeError`` it is."""


class Generator:
    """PyTorch's ``torch.Generator``: a seeded stream of random numbers, passed as
    ``generator=`` to a factory, an in-place fill or an ``nn.init`` function. Every device's
    draws come from it (made on the host), so ``device`` only records what was asked.

    >>> g = Generator().manual_seed(42); tga.rand(2, generator=g)  # doctest: +SKIP
    """

    def __init__(self, device: Any = "cpu") -> None:
        from ..runtime.backend import device as _device  # noqa: PLC0415 - the backend imports the engine, which imports this

        self.device = _device(device)
        self._bits = np.random.MT19937(0)
        self.manual_seed(DEFAULT_SEED)

    # -- seeding and state ------------------------------------------------------------------
    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed`` (its low 64 bits, as PyTorch's); returns the generator."""
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):  # (``torch.manual_seed`` takes int(seed))
            raise SeedTypeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -(2**63) <= seed < 2**64:  # (PyTorch's "Overflow when unpacking long long")
            raise InvalidArgumentError(f"manual_seed: seed must be within [-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff], "
                               f"got {seed}")  # fmt: skip
        if (tracer := active_tracer()) is not None:
            tracer.python_effect(f"manual_seed({seed})")
        self._seed = seed & (2**64 - 1)
        self._set_words(_init_genrand(self._seed), _N)
        self._fresh = True  # (PyTorch's "next" word index reads 0 until the first draw)
        self._normal_double: float | None = None  # the second sample of the last scalar Box-Muller pair
        self._normal_float: float | None = None
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the seed."""
        s = int.from_bytes(os.urandom(8), "little") >> 1  # (63 bits: a seed every API takes back)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed the stream started from."""
        return self._seed

    def get_state(self) -> Any:
        """The state as a uint8 tensor of 5056 bytes, laid out as PyTorch's: a state saved here
        restores in ``torch.Generator.set_state`` and the other way round."""
        from ..tensors._tensor import Tensor  # noqa: PLC0415 - imported when first asked, as the device

        return Tensor(np.frombuffer(self._state_bytes(), dtype=np.uint8).copy())

    def set_state(self, new_state: Any) -> Generator:
        """Restore a state from :meth:`get_state` (or PyTorch's ``get_state``)."""
        arr = new_state.detach().numpy() if hasattr(new_state, "numpy") else np.asarray(new_state)
        if arr.dtype != np.uint8:
            raise TypeError(f"set_state: expected a torch.ByteTensor (uint8), got dtype {arr.dtype}")
        if arr.size != _STATE.size:
            raise RuntimeError(f"set_state: expected a state of {_STATE.size} bytes, got {arr.size}")
        fields = _STATE.unpack(arr.tobytes())
        if (tracer := active_tracer()) is not None:
            tracer.python_effect("set_state")
        seed, left, _seeded, nxt = fields[:4]
        words = np.array(fields[4 : 4 + _N], dtype=np.uint64)
        normal_y, _rho, normal_valid, next_float, float_valid = fields[4 + _N + 1 :]
        if not 1 <= left <= _N or nxt > _N:
            raise RuntimeError(f"set_state: the state is corrupt (left={left}, next={nxt})")
        self._seed = seed
        self._set_words(words.astype(np.uint32), _N + 1 - left)
        self._fresh = left == 1 and nxt == 0
        self._normal_double = normal_y if normal_valid else None
        self._normal_float = float(np.float32(next_float)) if float_valid else None
        return self

    def _set_words(self, key: np.ndarray, pos: int) -> None:
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}

    def _state_bytes(self) -> bytes:
        st = self._bits.state["state"]
        pos = int(st["pos"])
        left, nxt = _N + 1 - pos, (0 if self._fresh else pos)
        dbl, flt = self._normal_double, self._normal_float
        return _STATE.pack(self._seed, left, 1, nxt, *st["key"].astype(np.uint64).tolist(), 0.0,
                           0.0 if dbl is None else dbl, 0.0, int(dbl is not None),
                           0.0 if flt is None else flt, flt is not None)  # fmt: skip

    # -- raw draws (the transforms call these) ----------------------------------------------
    def _u32(self, n: int) -> np.ndarray:
        """``n`` 32-bit draws (PyTorch's ``random()``), as uint64."""
        if n <= 0:
            return np.zeros(0, dtype=np.uint64)
        self._fresh = False
        return self._bits.random_raw(int(n))

    def _u64(self, n: int) -> np.ndarray:
        """``n`` 64-bit draws (PyTorch's ``random64()``: two 32-bit draws, the first the high half)."""
        raw = self._u32(2 * n)
        return (raw[0::2] << np.uint64(32)) | raw[1::2]

    def __repr__(self) -> str:
        return f"<tinygrad_attn.Generator object (device={self.device}, initial_seed={self._seed})>"


#: the generator every draw without ``generator=`` comes from (PyTorch's ``torch.default_generator``)
default_generator = Generator()


def generator_for(generator: Generator | None, name: str = "random") -> Generator:
    """The generator a draw comes from: ``generator``, or the default one. A draw inside a
    symbolic trace (outside a :class:`Draw` op) raises there: it would be frozen."""
    if (tracer := active_tracer()) is not None:
        tracer.random_draw()
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"{name}: generator must be a tinygrad_attn.Generator, got {type(generator).__name__}")
    return generator


def manual_seed(seed: int) -> Generator:
    """Make every later random draw repeatable, on every device, with PyTorch's numbers: the seed
    read as ``int(seed)`` (a float, a numeric string, a 0-d tensor), as PyTorch's.

    >>> manual_seed(0); a = tga.randn(2); manual_seed(0); b = tga.randn(2)  # doctest: +SKIP
    """
    try:
        seed = int(seed)  # type: ignore[arg-type]
    except (TypeError, ValueError) as e:
        raise type(e)(f"manual_seed: the seed must be a number int() reads: {e}") from None
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the operating system's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator started from."""
    return default_generator.initial_seed()


def get_rng_state() -> Any:
    """The default generator's state (a uint8 tensor, PyTorch's layout)."""
    return default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    """Restore the default generator's state from :func:`get_rng_state`."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices: Any = None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str | None = None) -> Iterator[None]:  # fmt: skip
    """Draws inside the block leave the default generator as it was before it (one generator
    serves every device here, so ``devices`` and ``device_type`` change nothing; ``_caller`` and
    ``_devices_kw`` are PyTorch's names of the caller in its warnings, which have no cause here).

    >>> with fork_rng(): noise = tga.randn(3)  # doctest: +SKIP
    """
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def host_generator() -> Generator:
    """The default generator, checked against a trace (see :func:`generator_for`)."""
    return generator_for(None)


class Draw(Function):
    """Random numbers as an op: ``args = (kind, shape, dtype, p, generator, order)``, one input whose
    device the draw goes to; ``order`` (see :func:`memory_order`) the order the draws fill the
    shape in, None for row order. ``kind``: ``"random"`` (uniform in [0, 1)), ``"standard_normal"``,
    ``"dropout"`` (the scale ``keep / (1 - p)`` of a dropout mask, ``keep`` where a
    uniform draw is ``>= p``), ``"rrelu"`` (the slopes of ``rrelu`` for the input ``like``,
    ``p = (lower, upper)``), or ``("fill", maker, params)``: ``transforms.<maker>(gen, shape,
    dtype, *params)``, an in-place fill's draws (``Tensor.exponential_``). Not differentiable;
    never folded or merged by a trace."""

    __slots__ = ()
    differentiable = False
    random = True  # (read by the symbolic passes)
    name = "draw"

    def forward(self, ns: Any, like: Any) -> Any:
        kind, shape, dtype, p, gen, order = (*self.args, None, None)[:6]
        gen = gen if gen is not None else default_generator
        arr = in_order(lambda s: self._draw(ns, like, (kind, s, dtype, p, gen, order is not None)), shape, order)
        return ns.device.asarray(arr, dtype=dtype)

    @staticmethod
    def _draw(ns: Any, like: Any, args: tuple) -> Any:
        from . import transforms as rt  # noqa: PLC0415 - the transforms import this module

        kind, shape, dtype, p, gen, strided = args
        if kind == "dropout":
            # PyTorch's CPU dropout: noise.bernoulli_(1 - p), one float64 uniform per element kept
            # where below 1 - p (as Tensor.bernoulli_ of a number), then noise / (1 - p) in the
            # tensor's float: the same masks for a seed. (PyTorch built with MKL on an Intel CPU
            # draws these from MKL's own stream instead.)
            work = np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)
            keep = rt.uniform(gen, shape, np.float64) < (1.0 - p)
            arr = keep.astype(work) / work.type(1.0 - p)
        elif kind == "rrelu":
            arr = rt.rrelu_slopes(gen, ns.device.to_host(like), dtype, *p)
        elif kind == "random":
            arr = rt.uniform(gen, shape, dtype)
        elif isinstance(kind, tuple):  # ("fill", maker, params): an in-place random fill (Tensor.uniform_)
            arr = getattr(rt, kind[1])(gen, shape, dtype, *kind[2])
        else:  # (a strided tensor's normals: PyTorch's serial kernel, one scalar draw each)
            arr = rt.normal(gen, shape, dtype, serial=strided)
        return arr


def draw(kind: str, shape: tuple, dtype: Any, like: Any, p: float = 0.0, generator: Generator | None = None,
         order: tuple[int, ...] | None = None) -> Any:  # fmt: skip
    """A tensor of draws of ``kind`` (see :class:`Draw`) on ``like``'s device, filling ``shape``
    in ``order`` (:func:`memory_order`; None: row order)."""
    return Draw.apply(like, args=(kind, tuple(shape), dtype, p, generator, order))
