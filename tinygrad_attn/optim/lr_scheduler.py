"""Learning-rate schedules with PyTorch's names and behaviour, and the Transformer's warm-up.

>>> sched = StepLR(opt, step_size=30, gamma=0.1)  # doctest: +SKIP
>>> for epoch in range(100): train(...); sched.step()  # doctest: +SKIP

As in ``torch.optim.lr_scheduler``: constructing a schedule records ``initial_lr`` in
every param group and sets the learning rate for the first update (``last_epoch`` is then
0); each ``step()``, called after ``optimizer.step()``, advances ``last_epoch`` by one and
sets the next rate; ``get_last_lr()`` gives the rates set last, one per group;
``state_dict()``/``load_state_dict()`` save and restore the counters (not the optimizer,
not lambdas). Each schedule computes its rate from ``base_lrs`` and ``last_epoch`` in
closed form, which equals PyTorch's step-by-step form as long as nothing else changes
the rates in between.
"""

from __future__ import annotations

import bisect
import math
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from ..engine.switches import _State
from .optimizer import Optimizer


class LRScheduler:
    """Sets ``lr`` of every param group of an optimizer; subclasses give ``get_lr()``."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__}: expected an Optimizer, got {type(optimizer).__name__}")
        self.optimizer = optimizer
        if last_epoch == -1:
            for g in optimizer.param_groups:
                g.setdefault("initial_lr", g["lr"])
        else:
            missing = [i for i, g in enumerate(optimizer.param_groups) if "initial_lr" not in g]
            if missing:
                raise KeyError(
                    f"{type(self).__name__}: resuming at last_epoch={last_epoch} needs 'initial_lr' in param "
                    f"group(s) {missing}: load the optimizer's state dict first"
                )
        self.base_lrs = [float(g["initial_lr"]) for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    @property
    def last_step(self) -> int:
        """How many times ``step()`` has been called since construction (``last_epoch``)."""
        return self.last_epoch

    def get_lr(self) -> list[float]:
        raise NotImplementedError(f"{type(self).__name__} has no get_lr()")

    def step(self, epoch: int | None = None) -> None:
        """Advance one step (one epoch) and set every group's learning rate for the next update.

        ``epoch`` (deprecated in PyTorch, accepted for its code) sets ``last_epoch`` instead.
        """
        if _State.tracer is not None:  # inside a traced step: a line of the program, made at each replay
            return _State.tracer.effect(self, "step", LRScheduler.step)
        if epoch is None:
            self.last_epoch += 1
        else:
            warnings.warn("LRScheduler.step(epoch) is deprecated, as in PyTorch: call step() once per epoch",
                          UserWarning, stacklevel=2)  # fmt: skip
            self.last_epoch = int(epoch)
        self._last_lr = [float(lr) for lr in self.get_lr()]
        for g, lr in zip(self.optimizer.param_groups, self._last_lr):
            g["lr"] = lr

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last ``step()`` (or construction), one per group."""
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer and functions (PyTorch's layout)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer" and not callable(v) and k != "lr_lambdas"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned (the optimizer's rates come with its own state dict)."""
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "lr_lambdas"})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(last_epoch={self.last_epoch}, last_lr={self.get_last_lr()})"


def _per_group(value: Any, n: int, what: str, who: str) -> list[Any]:
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{who}: expected {n} {what} (one per param group), got {len(value)}")
        return list(value)
    return [value] * n


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(last_epoch)``, one function or one per group.

    >>> sched = LambdaLR(opt, lambda epoch: 0.95**epoch)  # doctest: +SKIP
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:  # fmt: skip
        self.lr_lambdas = _per_group(lr_lambda, len(optimizer.param_groups), "functions", "LambdaLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for base, fn in zip(self.base_lrs, self.lr_lambdas)]


class StepLR(LRScheduler):
    """``lr = initial_lr * gamma ** (last_epoch // step_size)``: decays every ``step_size`` steps."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        if int(step_size) < 1:
            raise ValueError(f"StepLR: step_size must be >= 1, got {step_size}")
        self.step_size, self.gamma = int(step_size), float(gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """``lr = initial_lr * gamma ** (milestones passed)``: decays at each milestone step."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:  # fmt: skip
        self.milestones = Counter(int(m) for m in milestones)  # a repeated milestone decays twice (PyTorch's layout)
        self.gamma = float(gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        passed = bisect.bisect_right(sorted(Counter(self.milestones).elements()), self.last_epoch)
        return [base * self.gamma**passed for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """``lr = initial_lr * gamma ** last_epoch``."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = float(gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """``lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * last_epoch / T_max)) / 2``:
    half a cosine from the initial rate down to ``eta_min`` over ``T_max`` steps."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if int(T_max) < 1:
            raise ValueError(f"CosineAnnealingLR: T_max must be >= 1, got {T_max}")
        self.T_max, self.eta_min = int(T_max), float(eta_min)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        c = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * c for base in self.base_lrs]


class LinearLR(LRScheduler):
    """The rate times a factor that goes linearly from ``start_factor`` to ``end_factor``
    over ``total_iters`` steps, then stays (a linear warm-up with the defaults)."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:  # fmt: skip
        if not (0 < start_factor <= 1 and 0 <= end_factor <= 1):
            raise ValueError(
                f"LinearLR: start_factor must be in (0, 1] and end_factor in [0, 1], got {start_factor}, {end_factor}"
            )
        self.start_factor, self.end_factor, self.total_iters = float(start_factor), float(end_factor), int(total_iters)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        done = min(self.last_epoch, self.total_iters) / self.total_iters if self.total_iters > 0 else 1.0
        factor = self.start_factor + (self.end_factor - self.start_factor) * done
        return [base * factor for base in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy, as ``torch.optim.lr_scheduler.OneCycleLR``: the rate rises from
    ``max_lr / div_factor`` to ``max_lr`` over the first ``pct_start`` of ``total_steps``,
    then falls to ``initial_lr / final_div_factor`` (cosine or linear); momentum (SGD's
    ``momentum`` or Adam's first beta) moves the opposite way when ``cycle_momentum``.
    Call ``step()`` after each batch, ``total_steps`` times at most.
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float], total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True, base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1) -> None:  # fmt: skip
        who = "OneCycleLR"
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError(f"{who}: give total_steps, or both epochs and steps_per_epoch")
            total_steps = int(epochs) * int(steps_per_epoch)
        if int(total_steps) <= 0:
            raise ValueError(f"{who}: total_steps must be positive, got {total_steps}")
        if not 0.0 <= pct_start <= 1.0:
            raise ValueError(f"{who}: pct_start must be in [0, 1], got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"{who}: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.total_steps, self.anneal_strategy, self.cycle_momentum = int(total_steps), anneal_strategy, cycle_momentum
        n = float(pct_start) * self.total_steps
        if three_phase:
            self._schedule_phases = [
                {"end_step": n - 1, "start_lr": "initial_lr", "end_lr": "max_lr",
                 "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
                {"end_step": 2 * n - 2, "start_lr": "max_lr", "end_lr": "initial_lr",
                 "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
                {"end_step": self.total_steps - 1, "start_lr": "initial_lr", "end_lr": "min_lr",
                 "start_momentum": "max_momentum", "end_momentum": "max_momentum"},
            ]  # fmt: skip
        else:
            self._schedule_phases = [
                {"end_step": n - 1, "start_lr": "initial_lr", "end_lr": "max_lr",
                 "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
                {"end_step": self.total_steps - 1, "start_lr": "max_lr", "end_lr": "min_lr",
                 "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
            ]  # fmt: skip
        groups = optimizer.param_groups
        if last_epoch == -1:
            for g, top in zip(groups, _per_group(max_lr, len(groups), "max_lr values", who)):
                g["initial_lr"] = float(top) / div_factor
                g["lr"], g["max_lr"] = g["initial_lr"], float(top)
                g["min_lr"] = g["initial_lr"] / final_div_factor
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(f"{who}: cycle_momentum needs an optimizer with momentum or betas")
            self._use_beta1 = "betas" in optimizer.defaults
            lows = _per_group(base_momentum, len(groups), "base_momentum values", who)
            highs = _per_group(max_momentum, len(groups), "max_momentum values", who)
            if last_epoch == -1:
                for g, lo, hi in zip(groups, lows, highs):
                    self._set_momentum(g, float(hi))
                    g["max_momentum"], g["base_momentum"] = float(hi), float(lo)
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict[str, Any], m: float) -> None:
        if self._use_beta1:
            group["betas"] = (m, *group["betas"][1:])
        else:
            group["momentum"] = m

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"OneCycleLR: step() called {step} times, more than total_steps={self.total_steps}; "
                "make total_steps (or epochs * steps_per_epoch) cover the whole run"
            )
        lrs = []
        for g in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(g[phase["start_lr"]], g[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        m = self._anneal(g[phase["start_momentum"]], g[phase["end_momentum"]], pct)
                        self._set_momentum(g, m)
                    break
                start = end
        return lrs


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
        lr = noam_rate(self.last_epoch + 1, self.d_model, self.warmup, self.factor)
        return [lr] * len(self.optimizer.param_groups)


# PyTorch's older name of the base class, still subclassed by much published code.
_LRScheduler = LRScheduler
