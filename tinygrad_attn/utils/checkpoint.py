"""PyTorch's ``torch.utils.checkpoint``: ``checkpoint`` and ``checkpoint_sequential``.

PyTorch drops a checkpointed function's intermediates and recomputes them during backward,
trading time for memory with the same values and gradients. This eager library keeps them
(the function runs once, recorded as usual), so the results are those of PyTorch's
recomputation; what is PyTorch's here is the interface: the ``use_reentrant`` warning and
argument checks, and the reentrant variant's rule that an output records only if an input
requires grad.

>>> y = checkpoint(block, x, use_reentrant=False)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

from ..engine.switches import no_grad
from ..engine.warn import warn as _user_warn
from ..tensors._tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn"]

_EXPLICIT = (
    "torch.utils.checkpoint{}: the use_reentrant parameter should be passed explicitly. {} use_reentrant=False is "
    "recommended, but if you need to preserve the current default behavior, you can pass use_reentrant=True. "
    "Refer to docs for more details on the differences between the two variants."
)


def _reentrant(use_reentrant: bool | None, where: str, when: str) -> bool:
    if use_reentrant is None:
        _user_warn(_EXPLICIT.format(where, when), UserWarning)
        return True
    return bool(use_reentrant)


def noop_context_fn() -> tuple[Any, Any]:
    """PyTorch's default ``context_fn``: no context around the forward, nor around a recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], Any] = noop_context_fn, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs: Any) -> Any:  # fmt: skip
    """``function(*args, **kwargs)`` as PyTorch's checkpoint returns it: the non-reentrant variant
    runs it inside ``context_fn()``'s first context (nothing is recomputed here, so the second,
    ``early_stop`` and ``determinism_check`` have nothing to act on); ``preserve_rng_state=``, as
    PyTorch's, is read from ``kwargs``."""
    reentrant = _reentrant(use_reentrant, "", "Starting in PyTorch 2.9, calling checkpoint without use_reentrant "
                           "will raise an exception.")  # fmt: skip
    kwargs.pop("preserve_rng_state", True)  # (no recomputation: no draws to replay)
    if not reentrant:
        forward_context, _ = context_fn()
        with forward_context:
            return function(*args, **kwargs)
    if context_fn is not noop_context_fn or debug:
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        _user_warn("None of the inputs have requires_grad=True. Gradients will be None", UserWarning)
        with no_grad():  # the reentrant variant records nothing then, parameters included
            return function(*args)
    return function(*args)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Any:  # fmt: skip
    """The modules of a ``Sequential`` (or a list of functions) applied in turn, in ``segments`` checkpoints."""
    reentrant = _reentrant(use_reentrant, ".checkpoint_sequential", "In version 2.9 we will raise an exception "
                           "if use_reentrant is not passed.")  # fmt: skip
    fns = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = len(fns) // int(segments)

    def run(chunk: list, x: Any) -> Any:
        for f in chunk:
            x = f(x)
        return x

    for start in range(0, size * (int(segments) - 1), size):  # segments - 1 checkpoints
        input = checkpoint(functools.partial(run, fns[start : start + size]), input, use_reentrant=reentrant, **kwargs)
    return run(fns[size * (int(segments) - 1) :], input)  # the rest runs outside any checkpoint, as in PyTorch
