"""Learning-rate schedules with PyTorch's names and behaviour, and the Transformer's warm-up.

>>> sched = StepLR(opt, step_size=30, gamma=0.1)  # doctest: +SKIP
>>> for epoch in range(100): train(...); sched.step()  # doctest: +SKIP

As in ``torch.optim.lr_scheduler``: constructing a schedule records ``initial_lr`` in
every param group (where a loaded optimizer state has not already) and makes its first
step (``last_epoch`` is then 0); each ``step()``, called after ``optimizer.step()``,
advances ``last_epoch`` by one and sets the next rates; ``get_last_lr()`` gives the rates
set last, one per group; ``state_dict()``/``load_state_dict()`` save and restore every
attribute but the optimizer (lambdas are left out, as PyTorch leaves them).

Most schedules are chainable, as PyTorch's: each step multiplies the group's current rate
by a factor (StepLR by ``gamma`` at each ``step_size``), so several schedules can act on
one optimizer (:class:`ChainedScheduler`, :class:`SequentialLR`), and a schedule built
on an optimizer whose state was just loaded starts from the loaded rates instead of
resetting them. ``step(epoch)`` (deprecated, as in PyTorch) jumps to ``epoch`` through
the closed form where a schedule has one.
"""

from __future__ import annotations

import bisect
import math
import types
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..engine.switches import active_tracer
from ..engine.warn import warn as _user_warn
from .optimizer import Optimizer

_EPOCH_DEPRECATED = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible "
    "(as in PyTorch): call `scheduler.step()` once per epoch"
)


def _group_lrs(optimizer: Optimizer) -> list[float]:
    return [g["lr"] for g in optimizer.param_groups]


def _per_group(value: Any, optimizer: Optimizer, name: str, who: str) -> list[Any]:
    """``value`` for each param group: a list or tuple of one per group, or one for all."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{who}: expected {n} values for {name}, got {len(value)}")
        return list(value)
    return [value] * n


def _warning_outside_step(own: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``own`` (a scheduler's ``get_lr``), warning when called outside ``step``; PyTorch's ``get_lr(self)``."""

    def get_lr(self: LRScheduler) -> Any:
        if not self._get_lr_called_within_step:
            _user_warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                       UserWarning)  # fmt: skip
        return own(self)

    get_lr._warns_outside_step = True  # type: ignore[attr-defined]
    get_lr.__doc__, get_lr.__name__, get_lr.__qualname__ = own.__doc__, "get_lr", own.__qualname__
    return get_lr


class LRScheduler:
    """Sets ``lr`` of every param group of an optimizer; subclasses give ``get_lr()``
    (and optionally ``_get_closed_form_lr()``, the rates at ``last_epoch`` from ``base_lrs``)."""

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A scheduler's own ``get_lr`` warns when called outside ``step``, as PyTorch's do
        (what it returns there is the next step's rate, not the current one)."""
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("get_lr")
        if own is not None and not getattr(own, "_warns_outside_step", False):
            cls.get_lr = _warning_outside_step(own)  # type: ignore[method-assign]

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        who = type(self).__name__
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{who}: expected an Optimizer, got {type(optimizer).__name__}")
        self.optimizer = optimizer
        if last_epoch == -1:
            for g in optimizer.param_groups:
                g.setdefault("initial_lr", g["lr"])
        else:
            missing = [i for i, g in enumerate(optimizer.param_groups) if "initial_lr" not in g]
            if missing:
                raise KeyError(
                    f"{who}: resuming at last_epoch={last_epoch} needs 'initial_lr' in param "
                    f"group(s) {missing}: load the optimizer's state dict first"
                )
        self.base_lrs: list[float] = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """The step a schedule makes when it is built (``last_epoch`` -1 to 0, or one on)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    @property
    def last_step(self) -> int:
        """How many times ``step()`` has been called since construction (``last_epoch``)."""
        return self.last_epoch

    def get_lr(self) -> list[float]:
        """The rates for the next update, computed inside :meth:`step` (outside it, use
        :meth:`get_last_lr`)."""
        raise NotImplementedError(f"{type(self).__name__} has no get_lr()")

    def step(self, epoch: int | None = None) -> None:
        """Advance one step (one epoch) and set every group's learning rate for the next update.

        ``epoch`` (deprecated in PyTorch, accepted for its code) sets ``last_epoch`` instead.
        """
        if (tracer := active_tracer()) is not None:  # inside a traced step: a line of the program, made at each replay
            return tracer.effect(self, "step", type(self).step)
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            _user_warn(
                f"{type(self).__name__}.step() was called before optimizer.step(): call them in the other order "
                "(as in PyTorch), or the first value of the schedule is skipped",
                UserWarning,
            )
        self._step_count += 1
        if epoch is not None:
            _user_warn(_EPOCH_DEPRECATED, UserWarning)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for g, lr in zip(self.optimizer.param_groups, values):
            g["lr"] = lr
        self._last_lr = _group_lrs(self.optimizer)

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last ``step()`` (or construction), one per group."""
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer (PyTorch's layout)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned. The optimizer's rates are left as they
        are, as PyTorch leaves them to the optimizer's state dict: build the schedule, then
        load both (a schedule built after the optimizer's state was loaded has changed the
        rates in its construction step, and resumes from those, as PyTorch's does)."""
        self.__dict__.update(state_dict)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(last_epoch={self.last_epoch}, last_lr={self.get_last_lr()})"


# PyTorch's older name of the base class, still subclassed by much published code.
_LRScheduler = LRScheduler


class _WithLambdas(LRScheduler):
    """A schedule holding one function per group (``lr_lambdas``), which its state dict
    leaves out, as PyTorch's: a function as None, a callable object as its ``__dict__``."""

    def _set_lambdas(self, optimizer: Optimizer, lr_lambda: Any) -> None:
        who = type(self).__name__
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"{who}: Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"{who}: lr_lambda should be a function, but got {type(fn).__name__}")

    def state_dict(self) -> dict[str, Any]:
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        sd["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__) for fn in self.lr_lambdas]
        return sd

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        saved = state_dict.get("lr_lambdas") or []
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "lr_lambdas"})
        for fn, attrs in zip(self.lr_lambdas, saved):
            if attrs is not None:
                fn.__dict__.update(attrs)


class LambdaLR(_WithLambdas):
    """``lr = initial_lr * lr_lambda(last_epoch)``, one function or one per group.

    >>> sched = LambdaLR(opt, lambda epoch: 0.95**epoch)  # doctest: +SKIP
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:  # fmt: skip
        self._set_lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for base, fn in zip(self.base_lrs, self.lr_lambdas)]


class MultiplicativeLR(_WithLambdas):
    """Each step multiplies the rate by ``lr_lambda(last_epoch)`` (one function or one per group)."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:  # fmt: skip
        self._set_lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return _group_lrs(self.optimizer)
        return [g["lr"] * fn(self.last_epoch) for g, fn in zip(self.optimizer.param_groups, self.lr_lambdas)]


class StepLR(LRScheduler):
    """``lr = initial_lr * gamma ** (last_epoch // step_size)``: decays every ``step_size`` steps."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        if not step_size >= 1:  # (PyTorch divides by it at the first step)
            raise ValueError(f"StepLR: step_size must be >= 1, got {step_size}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_lrs(self.optimizer)
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """``lr = initial_lr * gamma ** (milestones passed)``: decays at each milestone step
    (twice at a milestone listed twice)."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:  # fmt: skip
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return _group_lrs(self.optimizer)
        return [g["lr"] * self.gamma ** self.milestones[self.last_epoch] for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        passed = bisect.bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma**passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """The rate times ``factor`` for the first ``total_iters`` steps, then the rate itself."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:  # fmt: skip
        if factor > 1.0 or factor < 0:
            raise ValueError("ConstantLR: Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _group_lrs(self.optimizer)
        return [g["lr"] * (1.0 / self.factor) for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        f = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [base * f for base in self.base_lrs]


class LinearLR(LRScheduler):
    """The rate times a factor that goes linearly from ``start_factor`` to ``end_factor``
    over ``total_iters`` steps, then stays (a linear warm-up with the defaults)."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:  # fmt: skip
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "LinearLR: Starting multiplicative factor expected to be greater than 0 and less or equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("LinearLR: Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_lrs(self.optimizer)
        span = self.end_factor - self.start_factor
        # (the ratio of this step's factor to the last one's)
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [g["lr"] * ratio for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        done = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + (self.end_factor - self.start_factor) * done) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """``lr = initial_lr * gamma ** last_epoch``: each step multiplies the rate by ``gamma``."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return _group_lrs(self.optimizer)
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``lr = initial_lr * (1 - min(t, total_iters) / total_iters) ** power``."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_lrs(self.optimizer)
        t, n = self.last_epoch, self.total_iters
        factor = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [g["lr"] * factor for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * left**self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """``lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * last_epoch / T_max)) / 2``:
    half a cosine from the initial rate down to ``eta_min`` over ``T_max`` steps (and back
    up past it), stepped as PyTorch's recursive form."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if not T_max >= 1:  # (PyTorch divides by it at the first step)
            raise ValueError(f"CosineAnnealingLR: T_max must be >= 1, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups, t, n, lo = self.optimizer.param_groups, self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return _group_lrs(self.optimizer)
        if self._step_count == 1 and t > 0:  # (built to resume at last_epoch: the closed form)
            return [lo + (base - lo) * (1 + math.cos(t * math.pi / n)) / 2 for base in self.base_lrs]
        if (t - 1 - n) % (2 * n) == 0:  # (at the bottom: the recursion's ratio would be 0 / 0)
            return [g["lr"] + (base - lo) * (1 - math.cos(math.pi / n)) / 2 for base, g in zip(self.base_lrs, groups)]
        ratio = (1 + math.cos(math.pi * t / n)) / (1 + math.cos(math.pi * (t - 1) / n))
        return [ratio * (g["lr"] - lo) + lo for g in groups]

    def _get_closed_form_lr(self) -> list[float]:
        c = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * c for base in self.base_lrs]


def _check_schedulers(who: str, optimizer: Optimizer, schedulers: Sequence[LRScheduler]) -> None:
    if len(schedulers) < 1:
        raise ValueError(f"{who} expects at least one scheduler, but got no scheduler.")
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{who}: the scheduler at index {i} should have `optimizer` as its attribute.")
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(
                f"{who} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
                f"specified when calling `step`, but got one at index {i} in the given schedulers sequence."
            )
        if s.optimizer is not optimizer:
            raise ValueError(
                f"{who} expects all schedulers to belong to the same optimizer, but got scheduler "
                f"{type(s).__name__} at index {i} with another optimizer."
            )


class _Composite(LRScheduler):
    """A schedule made of others (``_schedulers``), whose state dicts its own holds."""

    _schedulers: list[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        sd["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return sd

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "_schedulers"})
        for s, sd in zip(self._schedulers, state_dict["_schedulers"]):
            s.load_state_dict(sd)


class SequentialLR(_Composite):
    """``schedulers[i]`` drives the rates from step ``milestones[i - 1]`` on, each restarted
    at its milestone.

    >>> warm = LinearLR(opt, start_factor=0.1, total_iters=5)  # doctest: +SKIP
    >>> sched = SequentialLR(opt, [warm, CosineAnnealingLR(opt, T_max=95)], milestones=[5])  # doctest: +SKIP
    """

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler], milestones: list[int],
                 last_epoch: int = -1) -> None:  # fmt: skip
        _check_schedulers("SequentialLR", optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "SequentialLR expects number of schedulers provided to be one more than the number of milestone "
                f"points, but got number of schedulers {len(schedulers)} and the number of milestones to be equal "
                f"to {len(milestones)}"
            )
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # The schedules each made their first step when built: take those back, and make the
        # first one's again from the initial rates.
        for g in optimizer.param_groups:
            g["lr"] = g["initial_lr"]
        self._undo(self)
        first = self._schedulers[bisect.bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def _undo(self, sched: Any) -> None:
        if hasattr(sched, "_schedulers"):
            for s in sched._schedulers:
                self._undo(s)
        elif hasattr(sched, "last_epoch"):
            sched.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        if (tracer := active_tracer()) is not None:
            return tracer.effect(self, "step", SequentialLR.step)
        self.last_epoch += 1
        i = bisect.bisect_right(self._milestones, self.last_epoch)
        sched = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            sched._update_lr(0)  # (its start: the closed form at 0 where it has one)
        else:
            sched.step()
        self._last_lr = sched.get_last_lr()


class ChainedScheduler(_Composite):
    """Steps every schedule of ``schedulers`` at each step, in order: their factors multiply."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers("ChainedScheduler", optimizer, schedulers)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = _group_lrs(self._schedulers[-1].optimizer)

    def step(self) -> None:  # type: ignore[override]
        if (tracer := active_tracer()) is not None:
            return tracer.effect(self, "step", ChainedScheduler.step)
        for s in self._schedulers:
            s.step()
        self._last_lr = _group_lrs(self._schedulers[-1].optimizer)


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the rates by ``factor`` when ``step(metric)`` has seen no improvement for
    more than ``patience`` steps (then waits ``cooldown`` steps), never below ``min_lr``.

    >>> sched = ReduceLROnPlateau(opt, patience=3)  # doctest: +SKIP
    >>> for epoch in range(100): sched.step(validate())  # doctest: +SKIP
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: list[float] | float = 0, eps: float = 1e-8) -> None:  # fmt: skip
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau: Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"ReduceLROnPlateau: expected an Optimizer, got {type(optimizer).__name__}")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(
                    f"ReduceLROnPlateau: expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}"
                )
            self.default_min_lr: float | None = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = _group_lrs(optimizer)
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record this epoch's ``metrics`` (a number or 0-d tensor) and reduce the rates if due."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            _user_warn(_EPOCH_DEPRECATED, UserWarning)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = _group_lrs(self.optimizer)

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"ReduceLROnPlateau: the optimizer has {len(groups)} param groups but min_lr gave "
                    f"{len(self.min_lrs)}; set min_lrs to one per group"
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for g, lo in zip(groups, self.min_lrs):
            old = float(g["lr"])
            new = max(old * self.factor, lo)
            if old - new > self.eps:
                g["lr"] = new

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold mode {threshold_mode} is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


class _CyclesMomentum:
    """Sets SGD's ``momentum`` or Adam's first beta of a param group (CyclicLR, OneCycleLR)."""

    use_beta1: bool

    def _momentum_kind(self, optimizer: Optimizer, who: str) -> None:
        if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
            raise ValueError(f"{who}: optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
        self.use_beta1 = "betas" in optimizer.defaults

    def _set_momentum(self, group: dict[str, Any], m: float) -> None:
        if self.use_beta1:
            group["betas"] = (m, *group["betas"][1:])
        else:
            group["momentum"] = m


class CyclicLR(_CyclesMomentum, LRScheduler):
    """The rate cycles between ``base_lr`` and ``max_lr`` (up over ``step_size_up`` steps,
    down over ``step_size_down``), the amplitude scaled per ``mode`` (``'triangular'``,
    ``'triangular2'``: halved each cycle, ``'exp_range'``: ``gamma ** step``) or
    ``scale_fn``; momentum moves the opposite way between ``max_momentum`` and
    ``base_momentum`` when ``cycle_momentum``. Call ``step()`` after each batch."""

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float], max_lr: float | list[float],
                 step_size_up: int = 2000, step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum: float | list[float] = 0.8,
                 max_momentum: float | list[float] = 0.9, last_epoch: int = -1) -> None:  # fmt: skip
        who = "CyclicLR"
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{who}: expected an Optimizer, got {type(optimizer).__name__}")
        self.optimizer = optimizer
        base_lrs = _per_group(base_lr, optimizer, "base_lr", who)
        if last_epoch == -1:
            for lr, g in zip(base_lrs, optimizer.param_groups):
                g["lr"] = lr
        self.max_lrs = _per_group(max_lr, optimizer, "max_lr", who)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(f"{who}: mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._momentum_kind(optimizer, who)
            self.base_momentums = _per_group(base_momentum, optimizer, "base_momentum", who)
            self.max_momentums = _per_group(max_momentum, optimizer, "max_momentum", who)
            if last_epoch == -1:
                for hi, lo, g in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    self._set_momentum(g, hi)
                    g["max_momentum"], g["base_momentum"] = hi, lo
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        # (the built-in modes fix the scale mode, as in PyTorch)
        self.scale_mode = "iterations" if self.mode == "exp_range" else "cycle"

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or step) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        frac = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * frac * scale for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for g, lo, hi in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                self._set_momentum(g, hi - (hi - lo) * frac * scale)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        sd = super().state_dict()
        fn = sd.pop("_scale_fn_custom")
        sd["_scale_fn_custom"] = None if fn is None or isinstance(fn, types.FunctionType) else dict(fn.__dict__)
        return sd

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        fn = state_dict.get("_scale_fn_custom")
        super().load_state_dict({k: v for k, v in state_dict.items() if k != "_scale_fn_custom"})
        if fn is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the initial rate to ``eta_min`` over ``T_0`` steps, restarted
    at the top each time, each period ``T_mult`` times the last."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:  # fmt: skip
        who = "CosineAnnealingWarmRestarts"
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"{who}: Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"{who}: Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"{who}: Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        c = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base - self.eta_min) * c for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """One step on, or (``epoch``, fractional allowed) to that point of the schedule."""
        if (tracer := active_tracer()) is not None:
            return tracer.effect(self, "step", CosineAnnealingWarmRestarts.step)
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:  # (a remainder: resuming at last_epoch can be periods past T_i)
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"CosineAnnealingWarmRestarts: Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            lrs = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for g, lr in zip(self.optimizer.param_groups, lrs):
            g["lr"] = lr
        self._last_lr = _group_lrs(self.optimizer)


class OneCycleLR(_CyclesMomentum, LRScheduler):
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
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{who}: expected an Optimizer, got {type(optimizer).__name__}")
        self.optimizer = optimizer
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"{who}: Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"{who}: Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"{who}: Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError(f"{who}: You must define either total_steps OR (epochs AND steps_per_epoch)")
        n = float(pct_start * self.total_steps)
        up = {"start_lr": "initial_lr", "end_lr": "max_lr", "start_momentum": "max_momentum",
              "end_momentum": "base_momentum"}  # fmt: skip
        if three_phase:
            self._schedule_phases = [
                {"end_step": n - 1, **up},
                {"end_step": float(2 * pct_start * self.total_steps) - 2, "start_lr": "max_lr",
                 "end_lr": "initial_lr", "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
                {"end_step": self.total_steps - 1, "start_lr": "initial_lr", "end_lr": "min_lr",
                 "start_momentum": "max_momentum", "end_momentum": "max_momentum"},
            ]  # fmt: skip
        else:
            self._schedule_phases = [
                {"end_step": n - 1, **up},
                {"end_step": self.total_steps - 1, "start_lr": "max_lr", "end_lr": "min_lr",
                 "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
            ]  # fmt: skip
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"{who}: Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"{who}: anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        tops = _per_group(max_lr, optimizer, "max_lr", who)
        if last_epoch == -1:
            for g, top in zip(optimizer.param_groups, tops):
                g["initial_lr"] = top / div_factor
                g["max_lr"] = top
                g["min_lr"] = g["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._momentum_kind(optimizer, who)
            highs = _per_group(max_momentum, optimizer, "max_momentum", who)
            lows = _per_group(base_momentum, optimizer, "base_momentum", who)
            if last_epoch == -1:
                for hi, lo, g in zip(highs, lows, optimizer.param_groups):
                    self._set_momentum(g, hi)
                    g["max_momentum"], g["base_momentum"] = hi, lo
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"OneCycleLR: Tried to step {step} times. The specified number of total steps is {self.total_steps} "
                f"(step() called more than total_steps={self.total_steps}: make total_steps, or epochs * "
                "steps_per_epoch, cover the whole run)"
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
                        self._set_momentum(g, self._anneal(g[phase["start_momentum"]], g[phase["end_momentum"]], pct))
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
