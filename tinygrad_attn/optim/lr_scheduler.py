"""Learning-rate schedules: a generic ``LambdaLR`` and the warm-up schedule of the Transformer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .optimizer import Optimizer


class LRScheduler:
    """Sets ``lr`` of every param group of an optimizer; call ``step()`` after ``optimizer.step()``.

    ``last_step`` counts the calls to ``step()``; the learning rate for the next update
    is set on construction and after each call.
    """

    def __init__(self, optimizer: Optimizer) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__}: expected an Optimizer, got {type(optimizer).__name__}")
        self.optimizer = optimizer
        for g in optimizer.param_groups:
            g.setdefault("initial_lr", g["lr"])
        self.base_lrs = [float(g["initial_lr"]) for g in optimizer.param_groups]
        self.last_step = 0
        self._apply()

    def get_lr(self) -> list[float]:
        raise NotImplementedError(f"{type(self).__name__} has no get_lr()")

    def step(self) -> None:
        self.last_step += 1
        self._apply()

    def _apply(self) -> None:
        self._last_lr = [float(lr) for lr in self.get_lr()]
        for g, lr in zip(self.optimizer.param_groups, self._last_lr):
            g["lr"] = lr

    def get_last_lr(self) -> list[float]:
        return list(self._last_lr)


class LambdaLR(LRScheduler):
    """``lr = initial_lr * fn(last_step)`` for each group, as ``torch.optim.lr_scheduler.LambdaLR``.

    >>> sched = LambdaLR(opt, lambda s: 0.95**s)  # doctest: +SKIP
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float]) -> None:
        self.lr_lambda = lr_lambda
        super().__init__(optimizer)

    def get_lr(self) -> list[float]:
        return [base * self.lr_lambda(self.last_step) for base in self.base_lrs]


def noam_rate(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """``factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)`` ("Attention Is All You Need", 5.3).

    It rises linearly for ``warmup`` steps, then decays as ``step^-0.5``. Step 0 counts as 1.
    """
    step = max(int(step), 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


class NoamSchedule(LRScheduler):
    """The warm-up schedule of the Transformer: the ``k``-th update (from 1) uses ``noam_rate(k)``.

    It sets the learning rate itself (the optimizer's ``lr`` is overwritten).

    >>> opt = Adam(model.parameters(), betas=(0.9, 0.98), eps=1e-9)  # doctest: +SKIP
    >>> sched = NoamSchedule(opt, d_model=512, warmup=4000)  # doctest: +SKIP
    >>> for batch in data: loss(batch).backward(); opt.step(); opt.zero_grad(); sched.step()  # doctest: +SKIP
    """

    def __init__(self, optimizer: Optimizer, d_model: int, warmup: int, factor: float = 1.0) -> None:
        if d_model <= 0 or warmup <= 0:
            raise ValueError(f"NoamSchedule: d_model and warmup must be positive, got {d_model} and {warmup}")
        self.d_model, self.warmup, self.factor = d_model, warmup, factor
        super().__init__(optimizer)

    def get_lr(self) -> list[Any]:
        lr = noam_rate(self.last_step + 1, self.d_model, self.warmup, self.factor)
        return [lr] * len(self.optimizer.param_groups)
