"""``tga.autograd.graph``: PyTorch's ``torch.autograd.graph``, the backward graph as a user sees it.

- :class:`saved_tensors_hooks` (``pack`` when an op saves a tensor for backward, ``unpack``
  when backward reads it), :class:`save_on_cpu`, :func:`disable_saved_tensors_hooks`;
- :class:`Node`, what every ``grad_fn`` and ``AccumulateGrad`` is an instance of;
- :class:`GradientEdge`, :func:`get_gradient_edge`, :func:`increment_version`;
- :func:`register_multi_grad_hook`: one call once several tensors have their gradients.

>>> with tga.autograd.graph.saved_tensors_hooks(lambda t: t.numpy(), tga.from_numpy):  # doctest: +SKIP
...     y = x.exp()
"""

from __future__ import annotations

import abc
import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, NamedTuple

from ..engine import backward as _backward
from ..engine import function as _function
from ..engine import saved as _saved
from ..engine.versions import bump_version

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook",
           "allow_mutation_on_saved_tensors", "Node", "GradientEdge", "get_gradient_edge", "increment_version"]  # fmt: skip


class Node(abc.ABC):
    """A node of the backward graph: ``y.grad_fn`` and the ``AccumulateGrad`` of a leaf."""

    @abc.abstractmethod
    def name(self) -> str: ...

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]: ...

    @property
    @abc.abstractmethod
    def metadata(self) -> dict: ...

    @abc.abstractmethod
    def register_hook(self, fn: Callable[..., Any]) -> Any: ...

    @abc.abstractmethod
    def register_prehook(self, fn: Callable[..., Any]) -> Any: ...


Node.register(_function.BackwardNode)
Node.register(_function.AccumulateGrad)
Node.register(_function.TransposeNode)


class GradientEdge(NamedTuple):
    """Where a tensor's gradient is computed: a node and which of its outputs."""

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def get_gradient_edge(tensor: Any) -> GradientEdge:
    """The :class:`GradientEdge` of ``tensor``: its ``grad_fn``, or its ``AccumulateGrad`` for a leaf."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    fn = tensor.grad_fn
    return GradientEdge(fn if fn is not None else _function.AccumulateGrad(tensor), 0)


def increment_version(tensor: Any) -> None:
    """Count an in-place change of ``tensor`` (or of each tensor of an iterable) that autograd
    could not see, so that a backward reading its saved value raises."""
    tensors = (tensor,) if isinstance(tensor, _function.Tensor) else tuple(tensor)
    for t in tensors:
        if getattr(t, "_tracks_versions", True):
            bump_version(t._data)


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """While inside, every tensor an op saves for backward goes through ``pack_hook`` and what it
    returns is kept instead; backward reads it back through ``unpack_hook``, which must return a
    tensor. Nested blocks: the innermost pair applies.

    >>> with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):  # doctest: +SKIP
    ...     y = a * b
    """

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        _saved.push_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        _saved.pop_hooks()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Saved tensors are kept on the CPU (pinned, if ``pin_memory``) and moved back to their
    device when backward reads them."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Any) -> tuple[Any, Any]:
            return t.device, t.detach().to("cpu")

        def unpack(packed: tuple[Any, Any]) -> Any:
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Inside, setting saved-tensor hooks raises ``RuntimeError(error_message)``."""
    _saved.disable(error_message)
    try:
        yield
    finally:
        _saved.enable()


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[None]:
    """PyTorch's block in which a tensor saved for backward may be changed in place (the saved
    value is cloned first). Not supported here: entering raises ``NotImplementedError``."""
    raise NotImplementedError("allow_mutation_on_saved_tensors is not supported by tinygrad_attn")
    yield  # pragma: no cover


class _MultiHandle:
    """Removes every hook of one :func:`register_multi_grad_hook`."""

    def __init__(self, handles: Sequence[Any]) -> None:
        self.handles = tuple(handles)

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def register_multi_grad_hook(
    tensors: Sequence[Any], fn: Callable[[Any], None], *, mode: Literal["all", "any"] = "all"
) -> _MultiHandle:
    """Call ``fn`` once per backward pass with the gradients of ``tensors``.

    ``mode="all"``: ``fn(grads)`` once every tensor of ``tensors`` that this pass reaches has its
    gradient (None for those it does not reach); ``mode="any"``: ``fn(grad)`` with the first of
    them to be computed. Returns a handle whose ``remove()`` takes the hooks away.
    """
    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    lock = threading.Lock()
    tensors = list(tensors)
    if mode == "any":
        ran: set[int] = set()

        def first(grad: Any) -> None:
            p = _backward.current_pass()
            key = p.serial if p is not None else 0
            with lock:
                if key in ran:
                    return
                ran.add(key)
            if p is not None:
                p.call_at_end(lambda: ran.discard(key))
            fn(grad)

        return _MultiHandle([t.register_hook(first) for t in tensors if t.requires_grad])

    waiting: dict[int, list[Any]] = {}  # pass serial -> gradients so far

    def inner(i: int) -> Callable[[Any], None]:
        def hook(grad: Any) -> None:
            p = _backward.current_pass()
            key = p.serial if p is not None else 0
            with lock:
                grads = waiting.get(key)
                if grads is None:
                    grads = waiting[key] = [None] * len(tensors)
                    if p is not None:  # (called once this pass has computed all it will)
                        p.call_at_end(lambda: fn(waiting.pop(key)))
                grads[i] = grad

        return hook

    return _MultiHandle([t.register_hook(inner(i)) for i, t in enumerate(tensors)])
