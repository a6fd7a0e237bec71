"""Which arrays a backward step reads: run its formula once on stand-ins and watch.

The engine keeps every input array of an op (``fn.saved``) except those the op
declares unread (``Function.keep``, dropped once a large op is recorded after it);
``reshape`` keeps its input, yet reads only its shape. To draw what
each step really uses, :func:`arrays_read` calls the op's own ``backward`` with
:class:`Probe` objects in place of the inputs, the output and the ``ctx`` arrays.
Reading a probe's shape, ndim or dtype is metadata; any arithmetic or namespace call
on it marks it read. No op is named here: a new op is probed like any other. A formula
that branches on values (or anything else a stand-in cannot do) raises, and then the
picture falls back to every array the engine kept.

>>> import tinygrad_attn as tga
>>> x = tga.Tensor([1.0, 2.0], requires_grad=True)
>>> y = x.exp()
>>> arrays_read(y)["output"], arrays_read(y)["inputs"]  # exp's gradient is g * out
(frozenset({0}), frozenset())
"""

from __future__ import annotations

from typing import Any

from ..runtime.backend import get_device
from ..tensors._tensor import Tensor


class Probe:
    """An array's stand-in: shape, ndim and dtype are real; touching the data is recorded."""

    __slots__ = ("shape", "ndim", "dtype", "_slot", "_read")
    __array_ufunc__ = None  # ndarray (op) Probe defers to the Probe's reflected operator

    def __init__(self, shape: tuple, dtype: Any, slot: Any, read: set) -> None:
        self.shape = tuple(shape)
        self.ndim = len(self.shape)
        self.dtype = dtype
        self._slot = slot
        self._read = read

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def _use(self, *others: Any) -> Probe:
        _mark((self, others))
        return Probe(self.shape, self.dtype, None, self._read)

    def __getattr__(self, name: str) -> Any:  # methods (.sum, .reshape) and .mT / .T
        if name.startswith("__"):
            raise AttributeError(name)
        out = self._use()
        return out if name in ("mT", "T") else (lambda *a, **k: self._use(a, k))

    def __bool__(self) -> bool:
        raise TypeError("a backward formula branched on array values")

    def __iter__(self) -> Any:
        raise TypeError("a backward formula iterated over an array")


def _binary(name: str) -> Any:
    def op(self: Probe, *other: Any) -> Probe:
        return self._use(*other)

    op.__name__ = name
    return op


for _name in (
    "add radd sub rsub mul rmul truediv rtruediv floordiv pow rpow matmul rmatmul mod "
    "lt le gt ge eq ne and rand or ror xor neg pos abs invert getitem"
).split():
    setattr(Probe, f"__{_name}__", _binary(f"__{_name}__"))
Probe.__hash__ = object.__hash__  # type: ignore[method-assign]


def _mark(x: Any) -> None:
    """Record every probe inside ``x`` (nested tuples, lists, dicts) as read."""
    if isinstance(x, Probe):
        if x._slot is not None:
            x._read.add(x._slot)
    elif isinstance(x, (tuple, list)):
        for v in x:
            _mark(v)
    elif isinstance(x, dict):
        for v in x.values():
            _mark(v)


class ProbeNamespace:
    """A real array namespace's stand-in: each of its functions marks its probe arguments read.

    Attributes that are not functions (``kernels = None``, the ``device`` helpers) are
    looked up on the real namespace, so a formula takes the branch it takes on the CPU.
    """

    def __init__(self, real: Any, read: set) -> None:
        self._real = real
        self._read = read

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        real = getattr(self._real, name)
        if real is None or isinstance(real, (bool, int, float, str, type)):
            return real
        if not callable(real):
            return ProbeNamespace(real, self._read)

        def call(*args: Any, **kw: Any) -> Probe:
            _mark((args, kw))
            like = next((a for a in args if isinstance(a, Probe)), None)
            if like is None:
                return Probe((), None, None, self._read)
            return Probe(like.shape, like.dtype, None, self._read)

        return call


def _is_array(a: Any) -> bool:
    return hasattr(a, "shape") and hasattr(a, "dtype")


def _stand_in(x: Any, tag: Any, read: set) -> Any:
    """``x`` with each array replaced by a probe tagged ``(tag, i)``; other values kept."""
    if isinstance(x, (tuple, list)):
        return type(x)(Probe(a.shape, a.dtype, (tag, i), read) if _is_array(a) else a for i, a in enumerate(x))
    return Probe(x.shape, x.dtype, (tag, 0), read) if _is_array(x) else x


def arrays_read(t: Tensor) -> dict[str, frozenset[int]] | None:
    """What the step that differentiates ``t``'s op reads, by place: positions among the
    op's ``"inputs"``, its ``"ctx"`` arrays and its array ``"args"``, and ``"output"``
    (``{0}`` when it reads its own output). ``None`` where the formula cannot run on
    stand-ins."""
    fn = t._ctx
    if fn is None or fn.saved is None:
        return None
    read: set = set()
    inputs = _stand_in(list(fn.saved), "inputs", read)
    ctx, args = getattr(fn, "ctx", None), fn.args
    out = Probe(t._data.shape, t._data.dtype, ("output", 0), read)
    g = Probe(t._data.shape, t._data.dtype, None, read)
    try:
        fn.ctx = _stand_in(ctx, "ctx", read)
        fn.args = _stand_in(args, "args", read)
        fn.backward(g, ProbeNamespace(get_device("cpu").ops, read), inputs, out)
    except Exception:  # any failure only means: draw every array that was kept
        return None
    finally:
        fn.ctx, fn.args = ctx, args
    return {tag: frozenset(i for k, i in read if k == tag) for tag in ("inputs", "ctx", "args", "output")}
