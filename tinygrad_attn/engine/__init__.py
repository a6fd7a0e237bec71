"""The autograd engine, by concern; it imports no op and not the Tensor class.

- :mod:`.switches`: per-thread switches (grad mode, ``decompose``, ``detect_anomaly``,
  scopes) and the one observer hook of a thread.
- :mod:`.function`: :class:`Function` and ``Function.apply``, op errors, the early
  release of values no backward reads, the collector deferral for long graphs.
- :mod:`.versions`: version counters of arrays changed in place and their check.
- :mod:`.backward`: the one backward pass, ``backward``, ``grad``, the one gradient
  accumulation, ``unbroadcast``.
- :mod:`.reference_backward`: the same pass in about 40 lines, to read first (order,
  apply, accumulate); tested equal to the real one.
- :mod:`.composite`: ``composite`` and :class:`FusedFunction`.

``tinygrad_attn.tensors._tensor`` registers the Tensor class and the namespace of tensor ops
(:func:`register_tensor`); the in-place machinery (``tinygrad_attn.tensors.mutation.inplace``) registers
the replay of stale views and the lookup of histories detached in place (``detach_()``,
``versions.register_detached_history``). (``backward`` and ``composite`` are the
submodules here; the functions of those names are ``engine.backward.backward`` and
``engine.composite.composite``.)
"""

from .backward import SliceGradient, accumulate_grad, grad, run_backward, unbroadcast
from .composite import FusedFunction
from .function import (
    FREE_MIN_SIZE,
    FreedArray,
    Function,
    InvalidArgumentError,
    may_overwrite,
    register_tensor,
)
from .switches import (
    Hook,
    Scope,
    current_scope,
    decompose,
    detect_anomaly,
    enable_grad,
    is_grad_enabled,
    no_grad,
    observing,
    scope,
)
from .versions import bump_version, version_of

__all__ = [
    "FREE_MIN_SIZE",
    "FreedArray",
    "Function",
    "FusedFunction",
    "Hook",
    "InvalidArgumentError",
    "Scope",
    "SliceGradient",
    "accumulate_grad",
    "bump_version",
    "current_scope",
    "decompose",
    "detect_anomaly",
    "enable_grad",
    "grad",
    "is_grad_enabled",
    "may_overwrite",
    "no_grad",
    "observing",
    "register_tensor",
    "run_backward",
    "scope",
    "unbroadcast",
    "version_of",
]
