"""A module's backward hooks, as PyTorch runs them.

``register_full_backward_pre_hook(hook(module, grad_output))`` and
``register_full_backward_hook(hook(module, grad_input, grad_output))`` need two moments of
one backward pass: when the gradients of the module's outputs are known, and when those of its
inputs are. Each call of a hooked module therefore passes its tensor inputs and its tensor
outputs through an identity :class:`~tinygrad_attn.autograd.Function` (one node for all the
inputs, one for all the outputs), whose ``backward`` runs the hooks. The engine sums every
gradient reaching a node before calling it, so each hook fires once per backward, whatever the
number of inputs and outputs.

``grad_input`` has one entry per positional argument of the call: None for an argument that is
no tensor, and, as PyTorch's, zeros for a tensor argument that takes no gradient while another
does (all None when none does). ``grad_output`` has one per output (None for an output the loss
does not reach). What a hook returns (not None) replaces those gradients.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function, _version
from ..engine.switches import is_grad_enabled
from ..engine.warn import warn
from ..tensors._tensor import Tensor

_INPLACE = (
    "Output {i} of BackwardHookFunction is a view and is being modified inplace. This view was created inside a "
    "custom Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would "
    "override the custom backward associated with the custom Function, leading to incorrect gradients. This "
    "behavior is forbidden. You can fix this by cloning the output of the custom Function. ({name} changed its "
    "input {i} in place while it has backward hooks: give it inplace=False, or clone the input)"
)


class _HookPoint(Function):
    """The identity through which a hooked module's inputs (or outputs) pass: its ``backward``
    hands the gradients to the call's :class:`BackwardHookCall`."""

    @staticmethod
    def forward(ctx: Any, call: BackwardHookCall, side: str, *tensors: Tensor) -> tuple:
        ctx.call, ctx.side = call, side
        ctx.mark_non_differentiable(*(t for t in tensors if not t.requires_grad))
        # PyTorch's hooks see what reached the outputs (None for one left out of the loss), and
        # what the identity's backward returns for the inputs (zeros where nothing reached one).
        ctx.set_materialize_grads(side == "input")
        return tensors

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        call = ctx.call
        out = call.on_inputs(grads) if ctx.side == "input" else call.on_outputs(grads)
        return (None, None, *out)


def _pack(index: list[int], values: Any, n: int) -> tuple:
    """``values`` at the places ``index`` of an ``n``-tuple of None."""
    out: list[Any] = [None] * n
    for i, v in zip(index, values):
        out[i] = v
    return tuple(out)


class BackwardHookCall:
    """One call of a module with backward hooks: the hooks as registered at the call, and the
    gradients of its outputs once the backward pass has reached them."""

    def __init__(self, module: Any, hooks: list, pre_hooks: list) -> None:
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.n_inputs = self.n_outputs = 0
        self.input_index: list[int] | None = None  # which arguments passed the identity (None: none needed grad)
        self.output_index: list[int] = []
        self.grad_outputs: tuple | None = None
        self._passed: list[tuple[Tensor, int]] = []  # the inputs as forward receives them, with their versions

    # -- forward ------------------------------------------------------------------
    def setup_inputs(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (is_grad_enabled() and any(args[i].requires_grad for i in index)):
            return args
        self.input_index = index
        passed = _HookPoint.apply(self, "input", *(args[i] for i in index))
        new = list(args)
        for i, t in zip(index, passed):
            new[i] = t
        self._passed = [(t, _version(t)) for t in passed if t.requires_grad]
        return tuple(new)

    def check_inputs_unchanged(self) -> None:
        """PyTorch refuses a forward that changes a hooked input in place (its gradient would
        skip the hook); so do we, once forward has returned."""
        for i, (t, version) in enumerate(self._passed):
            if _version(t) != version:
                raise RuntimeError(_INPLACE.format(i=i, name=type(self.module).__name__))
        self._passed = []

    def setup_outputs(self, result: Any) -> Any:
        single = isinstance(result, Tensor)
        outs = (result,) if single else result
        if not isinstance(outs, tuple):
            return result
        self.n_outputs = len(outs)
        index = [i for i, o in enumerate(outs) if isinstance(o, Tensor)]
        if not (is_grad_enabled() and any(outs[i].requires_grad for i in index)):
            return result
        self.output_index = index
        passed = _HookPoint.apply(self, "output", *(outs[i] for i in index))
        new = list(outs)
        for i, t in zip(index, passed):
            new[i] = t
        return new[0] if single else tuple(new)

    # -- backward -----------------------------------------------------------------
    def on_outputs(self, grads: tuple) -> tuple:
        self.grad_outputs = _pack(self.output_index, grads, self.n_outputs)
        for hook in self.pre_hooks:
            got = hook(self.module, self.grad_outputs)
            if got is None:
                continue
            got = (got,) if isinstance(got, Tensor) else tuple(got)
            if len(got) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got {len(got)}, "
                                   f"but expected {len(self.grad_outputs)}")  # fmt: skip
            self.grad_outputs = got
        given = self.grad_outputs
        if self.input_index is None:  # no input takes a gradient: the hooks run now, with grad_input all None
            warn("Full backward hook is firing when gradients are computed with respect to module outputs since no "
                 "inputs require gradients. See https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                 "#torch.nn.Module.register_full_backward_hook for more details.")  # fmt: skip
            nothing = (None,) * self.n_inputs
            for hook in self.hooks:
                got = hook(self.module, nothing, self.grad_outputs)
                if got is not None and not (isinstance(got, tuple) and all(g is None for g in got)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")  # fmt: skip
            self.grad_outputs = None
        return tuple(given[i] for i in self.output_index)

    def on_inputs(self, grads: tuple) -> tuple:
        if self.grad_outputs is None:  # (the outputs took no gradient: the hooks ran there, or not at all)
            return grads
        assert self.input_index is not None
        res = _pack(self.input_index, grads, self.n_inputs)
        for hook in self.hooks:
            got = hook(self.module, res, self.grad_outputs)
            if got is None:
                continue
            got = (got,) if isinstance(got, Tensor) else tuple(got)
            if len(got) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(got)}, but "
                                   f"expected {len(res)}")  # fmt: skip
            res = got
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)
