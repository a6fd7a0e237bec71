"""``tga.distributed``: PyTorch's multi-process training, which this single-process library does
not have. ``is_available()`` and ``is_initialized()`` are False (so ``if dist.is_available() and
dist.is_initialized():`` guards take their single-process branch); every other function raises a
``NotImplementedError`` naming it when called."""

from ._not_here import not_here

_INSTEAD = "this library trains in one process; guard the call with tga.distributed.is_available()"
_FUNCTIONS = (
    "init_process_group", "destroy_process_group", "get_rank", "get_world_size", "get_backend", "barrier",
    "all_reduce", "all_gather", "all_gather_object", "all_gather_into_tensor", "all_to_all", "broadcast",
    "broadcast_object_list", "reduce", "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "send",
    "recv", "isend", "irecv", "new_group", "monitored_barrier",
)  # fmt: skip

__all__ = ["is_available", "is_initialized", "is_torchelastic_launched", *_FUNCTIONS]


def is_available() -> bool:
    """False: no multi-process backend here."""
    return False


def is_initialized() -> bool:
    """False: no process group is ever made here."""
    return False


def is_torchelastic_launched() -> bool:
    """False: never started by torchrun's launcher."""
    return False


globals().update({name: not_here(f"distributed.{name}", _INSTEAD) for name in _FUNCTIONS})
