"""``tga.compile``: trace a function on its first call, replay it on later ones.

Programs are cached by what a trace specialises on: each tensor argument's shape,
dtype, device and ``requires_grad``, and every other argument's value (a NumPy array by
its contents). New shapes trace again.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from .program import Program
from .trace import trace_with_result


def _key_of(a: Any) -> Any:
    if isinstance(a, Tensor):
        return ("tensor", tuple(a._data.shape), str(a.dtype), a.device, a.requires_grad)
    if hasattr(a, "__array_interface__") and hasattr(a, "tobytes"):  # a host array: baked into the program
        return ("array", a.shape, str(a.dtype), hashlib.sha1(a.tobytes()).hexdigest())
    try:
        hash(a)
    except TypeError:
        return ("object", id(a))
    return ("value", type(a).__name__, a)


class Compiled:
    """``fn`` with a cache of traced programs; call it as ``fn``."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.programs: dict[Any, Program] = {}
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kw: Any) -> Any:
        key = tuple(_key_of(a) for a in args)
        fn = self.fn
        if kw:  # keyword arguments are baked into the program: part of the key
            bad = [k for k, v in kw.items() if isinstance(v, Tensor)]
            if bad:
                raise TypeError(
                    f"compile: tensor keyword argument(s) {', '.join(bad)}: pass tensors positionally, "
                    "so that a replay reads the new ones"
                )
            key += (tuple(sorted((k, _key_of(v)) for k, v in kw.items())),)
            fn = functools.partial(self.fn, **kw)
        prog = self.programs.get(key)
        if prog is None:  # the first call with these shapes: run fn eagerly, recording it
            prog, result = trace_with_result(fn, args, auto_backward=False)
            self.programs[key] = prog
            return result
        return prog(*args)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # As a method decorator: ``self`` becomes the first argument (a constant of the key).
        return self if obj is None else functools.partial(self.__call__, obj)

    @property
    def program(self) -> Program | None:
        """The most recently traced program."""
        return next(reversed(self.programs.values()), None)


def compile(fn: Callable[..., Any]) -> Compiled:  # noqa: A001 - the name the API gives it
    """Trace ``fn`` on its first call and replay the program on later calls with inputs of
    the same shapes, dtypes and devices. ``fn`` may be a whole training step (forward,
    ``backward()``, ``optimizer.step()``, ``zero_grad()``); replaying it updates the
    parameters and gradients as running ``fn`` would.

    >>> @tga.compile  # doctest: +SKIP
    ... def step(x, y):
    ...     loss = F.cross_entropy(model(x), y)
    ...     opt.zero_grad(); loss.backward(); opt.step()
    ...     return loss
    """
    return Compiled(fn)
