"""L-BFGS, as ``torch.optim.LBFGS``: quasi-Newton steps from a short history, with an optional strong-Wolfe line search."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..engine.quiet import quiet
from ..engine.switches import enable_grad, no_grad
from ..tensors._tensor import Tensor
from ..tensors.mutation.inplace import store_array
from .optimizer import Optimizer


class _NoClosureError(TypeError, RuntimeError):
    """``step()`` without its closure: PyTorch's is a missing argument (TypeError)."""


class LBFGS(Optimizer):
    """Minimises what ``closure()`` returns (it re-evaluates the model, calls ``backward()``
    and returns the loss) with up to ``max_iter`` L-BFGS iterations per ``step(closure)``.
    All parameters are one flat vector; there is one param group. ``line_search_fn``
    may be ``'strong_wolfe'``; without it each iteration steps by ``lr`` (the first by
    ``lr * min(1, 1 / |grad|_1)``).

    >>> opt = LBFGS(model.parameters(), line_search_fn="strong_wolfe")  # doctest: +SKIP
    >>> def closure():  # doctest: +SKIP
    ...     opt.zero_grad(); loss = model(x).sub(y).pow(2).mean(); loss.backward(); return loss
    >>> opt.step(closure)  # doctest: +SKIP

    The state (``state_dict()["state"][0]``) has PyTorch's names: ``func_evals``,
    ``n_iter``, ``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``,
    ``prev_flat_grad``, ``prev_loss``, ``al``.
    """

    def __init__(self, params: Iterable[Any], lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:  # fmt: skip
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))  # fmt: skip
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS: LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if self.param_groups:
            raise ValueError("LBFGS: LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    # -- the parameters as one flat vector ------------------------------------------------
    @property
    def _dev(self) -> Any:
        return self._params[0]._dev

    def _flat_grad(self) -> Any:
        ns = self._dev.ops
        parts = []
        for p in self._params:
            g = p.grad
            gd = ns.zeros(p._data.shape, p._data.dtype) if g is None else g._data
            if gd.dtype != p._data.dtype:
                gd = ns.astype(gd, p._data.dtype)
            parts.append(ns.reshape(gd, (-1,)))
        return ns.concat(parts)  # (a new array even for one parameter)

    def _add(self, t: float, d: Any) -> None:
        """Each parameter moves by ``t`` times its slice of ``d``, in its own memory."""
        ns, o = self._dev.ops, 0
        for p in self._params:
            n = math.prod(p.shape)
            store_array(p, p._data + t * ns.reshape(d[o : o + n], p._data.shape))
            o += n

    def _evaluate_at(self, closure: Callable[[], Any], x: list[Any], t: float, d: Any) -> tuple[float, Any]:
        """The loss and flat gradient at ``x + t d``; the parameters are put back to ``x``."""
        self._add(t, d)
        with enable_grad():
            loss = float(closure())
        g = self._flat_grad()
        for p, v in zip(self._params, x):
            store_array(p, v)
        return loss, g

    def _dot(self, a: Any, b: Any) -> float:
        return float(self._dev.to_host(self._dev.ops.sum(a * b)))

    def _absmax(self, a: Any) -> float:
        return float(self._dev.to_host(self._dev.ops.max(self._dev.ops.abs(a))))

    # -- the iterations --------------------------------------------------------------------
    @no_grad()
    @quiet()
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` iterations on ``closure`` (required) and return its first loss."""
        if closure is None:
            raise _NoClosureError("LBFGS.step: LBFGS needs a closure that re-evaluates the model and returns the loss")
        self._opt_called = True
        for hook in list(self._pre_hooks.values()):
            hook(self, (), {})
        group = self.param_groups[0]
        lr, max_iter, max_eval = float(group["lr"]), int(group["max_iter"]), int(group["max_eval"])
        tol_grad, tol_change = float(group["tolerance_grad"]), float(group["tolerance_change"])
        history, search = int(group["history_size"]), group["line_search_fn"]
        if search is not None and search != "strong_wolfe":
            raise RuntimeError("LBFGS.step: only 'strong_wolfe' is supported")
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            first_loss = closure()
        loss = float(first_loss)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if self._absmax(g) <= tol_grad:
            return first_loss
        st = {k: _array(v) for k, v in state.items()}
        d, t, ro, h_diag = st.get("d"), st.get("t"), st.get("ro"), st.get("H_diag")
        old_dirs, old_stps = st.get("old_dirs"), st.get("old_stps")
        prev_g, prev_loss = st.get("prev_flat_grad"), st.get("prev_loss")
        done_now = False
        n = 0
        while n < max_iter:
            n += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = -g, [], [], [], 1  # (PyTorch's int, until measured)
            else:
                y = g - prev_g
                s = d * t
                ys = self._dot(y, s)
                if ys > 1e-10:  # (a curvature pair that keeps the inverse Hessian positive definite)
                    if len(old_dirs) == history:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / self._dot(y, y)
                al = st.get("al") or [None] * history
                st["al"] = al
                state.setdefault("al", al)  # (where PyTorch's state dict lists it)
                q = -g
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = self._dot(old_stps[i], q) * ro[i]
                    q = q - al[i] * old_dirs[i]
                d = q * h_diag
                for i in range(len(old_dirs)):
                    be = self._dot(old_dirs[i], d) * ro[i]
                    d = d + (al[i] - be) * old_stps[i]
            prev_g = g * 1.0
            prev_loss = loss
            if state["n_iter"] == 1:
                inv = 1.0 / float(self._dev.to_host(self._dev.ops.sum(self._dev.ops.abs(g))))
                t, self._t_measured = min(1.0, inv) * lr, inv < 1.0
            else:
                t, self._t_measured = group["lr"], False  # (as given: PyTorch's state keeps an int lr)
            gtd = self._dot(g, d)
            if gtd > -tol_change:  # not a descent direction
                break
            ls_evals = 0
            if search is not None:
                x0 = [p._data * 1 for p in self._params]
                t = _Measured(t) if self._t_measured else t
                loss, g, t, ls_evals = _strong_wolfe(
                    lambda t_, d_, x0=x0: self._evaluate_at(closure, x0, t_, d_), self._dot, self._absmax,
                    t, d, loss, g, gtd, max_ls=max_eval - evals,
                )  # fmt: skip
                self._add(t, d)
                self._t_measured = isinstance(t, _Measured)
                t = float(t) if self._t_measured else 0 if t == 0 else t  # (0: PyTorch's int start)
                done_now = self._absmax(g) <= tol_grad
            else:
                self._add(t, d)
                if n != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    g = self._flat_grad()
                    done_now = self._absmax(g) <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if n == max_iter or evals >= max_eval or done_now:
                break
            if self._absmax(d * t) <= tol_change or abs(loss - prev_loss) < tol_change:
                break
        state.update(d=_tensor(self._dev, d), t=t, old_dirs=_tensor(self._dev, old_dirs),
                     old_stps=_tensor(self._dev, old_stps), ro=ro, H_diag=h_diag,
                     prev_flat_grad=_tensor(self._dev, prev_g), prev_loss=prev_loss)  # fmt: skip
        if "al" in st:
            state["al"] = st["al"]
        for hook in list(self._post_hooks.values()):
            hook(self, (), {})
        return first_loss

    def _traceable(self) -> bool:
        return False

    _t_measured = False  # (whether the last step size came from the gradients: a tensor in PyTorch)

    # -- state dicts: flat vectors and lists of them, numbers as Python floats ------------
    def state_dict(self) -> dict[str, Any]:
        """PyTorch's layout: the numbers PyTorch computes from tensors (``ro``, ``al``, a
        measured ``H_diag`` and step size ``t``) as 0-d tensors of the parameters' dtype, the
        counters and ``prev_loss`` as Python numbers."""
        sd = super().state_dict()
        dtype = self._params[0].dtype
        as_t = lambda v: v if v is None else Tensor._wrap(np.asarray(v, dtype=dtype), self._params[0]._dev)  # noqa: E731
        for st in sd["state"].values():
            for k in ("ro", "al"):
                if k in st:
                    st[k] = [as_t(v) for v in st[k]]
            if isinstance(st.get("H_diag"), float):
                st["H_diag"] = as_t(st["H_diag"])
            if "t" in st and self._t_measured:
                st["t"] = as_t(st["t"])
        return sd

    def _state_value(self, p: Tensor, name: str, v: Any, where: str, scalar: bool = False) -> Any:  # type: ignore[override]
        if isinstance(v, (list, tuple)):
            return [self._state_value(p, name, x, where) for x in v]
        if isinstance(v, Tensor):
            v = np.asarray(v._dev.to_host(v._data))
        if v is None or isinstance(v, (bool, int, float)):
            return v
        arr = np.asarray(v)
        if arr.ndim == 0:
            return int(arr) if name in ("func_evals", "n_iter") else float(arr)
        return Tensor._wrap(p._dev.asarray(np.array(arr.reshape(-1), order="C"), dtype=p.dtype), p._dev)


def _array(v: Any) -> Any:
    """A state entry as the iterations use it: flat arrays (lists of them) for tensors."""
    if isinstance(v, Tensor):
        return v._data
    if isinstance(v, list):
        return [_array(x) for x in v]
    return v


def _tensor(dev: Any, v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, list):
        return [Tensor._wrap(x, dev) for x in v]
    return Tensor._wrap(v, dev)


class _Measured(float):
    """A step size PyTorch's line search holds as a 0-d tensor (computed from gradients), so
    that the state dict gives it as one; arithmetic on it gives plain floats, marked again
    where PyTorch's would still be a tensor (:func:`_mark`)."""


def _mark(v: float, *sources: Any) -> float:
    return _Measured(v) if any(isinstance(x, _Measured) for x in sources) else v


def _cubic_min(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
               bounds: tuple[float, float] | None = None) -> float:  # fmt: skip
    """The minimiser of the cubic through ``(x1, f1)``, ``(x2, f2)`` with slopes ``g1``, ``g2``,
    kept within ``bounds`` (the two points by default); their midpoint if the cubic has none."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return _mark((lo + hi) / 2.0, lo, hi)
    d2 = math.sqrt(disc)
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    x = _Measured(x)  # (a bound, where it clamps, keeps its own kind: Python's max and min return it)
    x = lo if lo > x else x
    return hi if hi < x else x


def _strong_wolfe(evaluate: Callable[[float, Any], tuple[float, Any]], dot: Callable[[Any, Any], float],
                  absmax: Callable[[Any], float], t: float, d: Any, f: float, g: Any, gtd: float, c1: float = 1e-4,
                  c2: float = 0.9, tolerance_change: float = 1e-9, max_ls: int = 25) -> tuple[float, Any, float, int]:  # fmt: skip
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions (sufficient decrease,
    ``|slope| <= c2 |initial slope|``): a bracketing phase, then zooming in with cubic
    interpolation. Returns the loss, flat gradient and ``t`` found, and the evaluations made."""
    d_norm = absmax(d)
    f_new, g_new = evaluate(t, d)
    evals, ls_iter = 1, 0
    gtd_new = dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    bracket: list[float] = []
    bf: list[float] = []
    bg: list[Any] = []
    bgtd: list[float] = []
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bf, bg, bgtd, done = [t], [f_new], [g_new], [gtd_new], True
            break
        if gtd_new >= 0:
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new]
            break
        # (extrapolate: a cubic step between 1.01 t and 10 t)
        lo, hi = _mark(t + 0.01 * (t - t_prev), t, t_prev), _mark(t * 10, t)
        t_prev, t = t, _cubic_min(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lo, hi))
        f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
        f_new, g_new = evaluate(t, d)
        evals += 1
        gtd_new = dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bf, bg = [0.0, t], [f, f_new], [g, g_new]
    insufficient = False
    low, high = (0, 1) if bf[0] <= bf[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_min(bracket[0], bf[0], bgtd[0], bracket[1], bf[1], bgtd[1])
        top, bottom = max(bracket), min(bracket)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:  # too near an end: move away, unless progress was fine
            if insufficient or t >= top or t <= bottom:
                t = _mark(top - eps if abs(t - top) < abs(t - bottom) else bottom + eps, *bracket)
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t, d)
        evals += 1
        gtd_new = dot(g_new, d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bf[low]:
            bracket[high], bf[high], bg[high], bgtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bf[0] <= bf[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bf[high], bg[high], bgtd[high] = bracket[low], bf[low], bg[low], bgtd[low]
            bracket[low], bf[low], bg[low], bgtd[low] = t, f_new, g_new, gtd_new
    return bf[low], bg[low], bracket[low], evals
