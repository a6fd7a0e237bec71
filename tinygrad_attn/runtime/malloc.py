"""How much freed memory the process keeps for its next arrays (glibc's malloc, Linux).

A training step allocates and frees the same large arrays over and over. By default glibc
gives freed memory back to the system as soon as more than a few MiB lie free at the top
of its heap, and the next step gets it back page by page, one page fault per 4 KiB: about
5000 faults and a quarter of the time of a small GPT's step on a 2-core virtual machine
(50 -> 38 ms), 20% of a medium attention step written by hand in NumPy. NumPy arrays
come from malloc, so this is the process's allocator, not an engine's.

:func:`keep_freed_memory` asks malloc to keep up to ``limit`` bytes of freed memory in
the process, and to serve arrays below 32 MiB from that memory instead of mapping fresh
pages for each; the CPU device calls it with 128 MiB when it is first made. It changes
nothing where the C library is not glibc, where the environment already sets malloc's
thresholds (``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_MMAP_THRESHOLD_``, ``GLIBC_TUNABLES``),
or where ``TINYGRAD_ATTN_KEEP_FREED_MEMORY`` is ``0``, ``false``, ``no`` or ``off`` (any case).

Why on by default, for a library: it makes each training step faster (a 413k-parameter
GPT: 47-49 ms instead of 56-60 ms, 25 page faults per step instead of 5700), which is
what the library is for; the price is bounded and is memory, not time: up to 128 MiB
that any code in the process freed (120 MiB of plain NumPy arrays freed: the process
stays 120 MiB larger instead of shrinking back) is kept for the next arrays.

>>> tga.keep_freed_memory(512 << 20)  # doctest: +SKIP
True
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys

#: What the CPU device keeps by default: freed memory up to this, at the top of the heap.
DEFAULT_LIMIT = 128 << 20
#: Arrays below this size come from the heap (glibc's own ceiling for its adaptive threshold).
MMAP_THRESHOLD = 32 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)
KEEP_ENV = "TINYGRAD_ATTN_KEEP_FREED_MEMORY"
#: Whether the CPU device keeps freed memory when the environment does not say.
KEEP_DEFAULT = True
_USER_SETTINGS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_")  # and GLIBC_TUNABLES


def _mallopt():
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return None


def keep_freed_memory(limit: int = DEFAULT_LIMIT) -> bool:
    """Keep up to ``limit`` bytes of freed memory for the next arrays; True if applied.

    Returns False, and changes nothing, where the C library is not glibc.
    """
    mallopt = _mallopt()
    if mallopt is None:
        return False
    # Setting either threshold turns off glibc's own adjustment of both: set both.
    ok = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    ok &= mallopt(_M_TRIM_THRESHOLD, max(int(limit), 0))
    return bool(ok)


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def env_flag(name: str, default: bool) -> bool:
    """A yes/no environment variable: ``1/0``, ``true/false``, ``yes/no``, ``on/off`` in any
    case; unset or empty means ``default``. Anything else raises ``ValueError`` naming it."""
    raw = os.environ.get(name, "")
    value = raw.strip().lower()
    if not value:
        return default
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(
        f"the environment variable {name}={raw!r} is not a yes/no value: use one of "
        f"{', '.join(_TRUE)} or {', '.join(_FALSE)} (any case)"
    )


def keep_by_default() -> bool:
    """What the CPU device does when first made: :func:`keep_freed_memory` unless the
    environment says otherwise (see the module's docstring)."""
    if not env_flag(KEEP_ENV, KEEP_DEFAULT):
        return False
    if any(os.environ.get(k) for k in _USER_SETTINGS) or "malloc" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    return keep_freed_memory(DEFAULT_LIMIT)
