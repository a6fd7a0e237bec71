"""Stochastic weight averaging, as ``torch.optim.swa_utils``: a running average of a model's
parameters (:class:`AveragedModel`, plain or exponential), the schedule that anneals to a
constant SWA rate (:class:`SWALR`) and the pass that recomputes BatchNorm statistics for the
averaged weights (:func:`update_bn`).

>>> swa = AveragedModel(model); sched = SWALR(opt, swa_lr=0.05)  # doctest: +SKIP
>>> for epoch in range(n): train(...); swa.update_parameters(model); sched.step()  # doctest: +SKIP
>>> update_bn(loader, swa)  # doctest: +SKIP
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from copy import deepcopy
from typing import Any

from ..engine.switches import no_grad
from ..nn import Module
from ..nn.normalization import _BatchNorm
from ..tensors._tensor import Tensor
from .lr_scheduler import LRScheduler, _per_group
from .optimizer import Optimizer

__all__ = [
    "AveragedModel",
    "update_bn",
    "SWALR",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]

ParamList = Sequence[Tensor]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _is_inexact(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[ParamList, ParamList, Any], None]:
    """An ``multi_avg_fn`` for :class:`AveragedModel`: each averaged tensor moves, in place,
    ``1 - decay`` of the way towards the model's (an exponential moving average)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list: ParamList, current_param_list: ParamList, _: Any) -> None:
        inexact = _is_inexact(ema_param_list[0])
        for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
            if inexact:
                p_ema.lerp_(p_model, 1 - decay)
            else:
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[ParamList, ParamList, Any], None]:
    """An ``multi_avg_fn`` for :class:`AveragedModel`: the running mean, in place, of the
    ``num_averaged`` models seen so far and the current one."""

    @no_grad()
    def swa_update(averaged_param_list: ParamList, current_param_list: ParamList, num_averaged: Tensor | int) -> None:
        inexact = _is_inexact(averaged_param_list[0])
        for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
            if inexact:
                p_avg.lerp_(p_model, float(1 / (num_averaged + 1)))
            elif isinstance(num_averaged, Tensor):
                p_avg.addcdiv_(p_model - p_avg, num_averaged + 1)
            else:
                p_avg.add_(p_model - p_avg, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """An ``avg_fn`` for :class:`AveragedModel`: ``decay * averaged + (1 - decay) * current``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """An ``avg_fn`` for :class:`AveragedModel`: the running mean of ``num_averaged + 1`` models."""

    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` (``module``, moved to ``device`` where given) whose parameters,
    at each :meth:`update_parameters`, become an average of the model's: the first call copies
    them, later ones apply ``avg_fn(averaged, current, n_averaged)`` (returning the new value)
    or ``multi_avg_fn(averaged_list, current_list, n_averaged)`` (in place), by default the
    running mean. With ``use_buffers`` the buffers are averaged too; otherwise they are copied.
    ``n_averaged`` (an int64 buffer) counts the calls. Calling it calls the copy.

    >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))  # doctest: +SKIP
    """

    def __init__(self, model: Module, device: Any = None, avg_fn: Callable[[Tensor, Tensor, Any], Tensor] | None = None,
                 multi_avg_fn: Callable[[ParamList, ParamList, Any], None] | None = None,
                 use_buffers: bool = False) -> None:  # fmt: skip
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        from .. import int64, tensor

        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged copy's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s parameters (and, with ``use_buffers``, buffers) into this copy's."""
        if self.use_buffers:
            mine: Iterable[Tensor] = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs: Iterable[Tensor] = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        with no_grad():
            for p_avg, p_model in zip(mine, theirs, strict=False):
                p_model_ = p_model.detach().to(p_avg.device)
                averaged.append(p_avg.detach())
                current.append(p_model_)
                if first:
                    p_avg.detach().copy_(p_model_)
            if self.n_averaged > 0:
                n = self.n_averaged
                if self.multi_avg_fn is not None or self.avg_fn is None:
                    groups: dict[tuple[str, Any], tuple[list[Tensor], list[Tensor]]] = {}
                    for a, c in zip(averaged, current, strict=True):  # (by device and dtype, as PyTorch's)
                        mine_, theirs_ = groups.setdefault((str(a.device), a.dtype), ([], []))
                        mine_.append(a)
                        theirs_.append(c)
                    for (dev, _), (avs, cur) in groups.items():
                        if self.multi_avg_fn is not None:
                            self.multi_avg_fn(avs, cur, n.to(dev))
                        elif dev.startswith("cuda"):  # (PyTorch's foreach kernels: their devices only)
                            get_swa_multi_avg_fn()(avs, cur, n.to(dev))
                        else:  # (one tensor at a time: an integer buffer's mean truncated by copy_)
                            mean = get_swa_avg_fn()
                            for a, c in zip(avs, cur, strict=True):
                                a.copy_(mean(a, c, n.to(dev)))
                else:
                    for a, c in zip(averaged, current, strict=True):
                        a.copy_(self.avg_fn(a, c, n.to(a.device)))
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of every BatchNorm of ``model`` from one pass over
    ``loader`` (a batch that is a list or tuple gives its first entry; moved to ``device``
    where given): the statistics are reset and averaged over all batches (``momentum=None``
    for the pass), the model's mode and the momenta restored after."""
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's rate from its current value to ``swa_lr`` (one per group, or one
    for all) over ``anneal_epochs`` steps, by a cosine (``"cos"``) or a line (``"linear"``),
    then hold it; the rates of other schedules or of a user's changes between steps are
    taken as the point the anneal continues from, as PyTorch's.

    >>> sched = SWALR(opt, swa_lr=0.05, anneal_epochs=5, anneal_strategy="linear")  # doctest: +SKIP
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:  # fmt: skip
        for lr, group in zip(_per_group(swa_lr, optimizer, "swa_lr", "SWALR"), optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        # the rate the anneal started from, given where it is now (alpha of the way)
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self) -> list[float]:
        """The rates for the next update (inside :meth:`step`)."""
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / span)))
        groups = self.optimizer.param_groups
        starts = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / span)))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, starts, strict=True)]

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer and the anneal function (PyTorch's layout)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
