"""PyTorch's ``torch.nn.utils.prune``: a parameter ``name`` pruned becomes the parameter
``name + "_orig"``, the buffer ``name + "_mask"`` and the plain attribute ``name`` (their
product), recomputed by a forward pre-hook before each call; a second pruning of the same
parameter combines with the first (:class:`PruningContainer`), and :func:`remove` makes the
product the parameter again.

>>> prune.l1_unstructured(model.fc, "weight", amount=0.3)  # doctest: +SKIP
>>> prune.remove(model.fc, "weight")  # doctest: +SKIP

Which entries are pruned is PyTorch's choice: the same ``topk``/``kthvalue`` on the same
scores, and the random methods draw from the same stream (``manual_seed`` gives PyTorch's masks).
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from ...tensors._tensor import Tensor

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured",
           "custom_from_mask", "remove", "is_pruned"]  # fmt: skip


def _torch() -> Any:
    import tinygrad_attn  # noqa: PLC0415 - (the package's ops, loaded before any pruning runs)

    return tinygrad_attn


def _pre_hooks(module: Any) -> dict:
    """The module's forward pre-hooks, by handle id (PyTorch's registry: id -> hook)."""
    return module.__dict__.get("_forward_pre_hooks") or {}


class BasePruningMethod(ABC):
    """A pruning method: :meth:`compute_mask` says which entries stay (1) and which go (0); as a
    forward pre-hook it sets the module's attribute to ``mask * orig`` before each call."""

    _tensor_name: str
    PRUNING_TYPE: str

    def __call__(self, module: Any, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for ``t``, given the mask of earlier prunings (``default_mask``)."""

    def apply_mask(self, module: Any) -> Tensor:
        """``mask * orig`` of the pruned parameter (``orig``'s dtype)."""
        if not hasattr(self, "_tensor_name"):
            raise AssertionError(f"Module {module} has to be pruned")
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Any, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> BasePruningMethod:  # fmt: skip
        """Prune ``module``'s ``name`` with ``cls(*args, **kwargs)``, combined with an earlier
        pruning of it, scoring the entries by ``importance_scores`` (the parameter by default)."""
        old_method, found = None, []
        for k, hook in _pre_hooks(module).items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old_method = hook
                found.append(k)
        if len(found) > 1:
            raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                                 "Use a PruningContainer.")  # fmt: skip
        for k in found:
            del _pre_hooks(module)[k]
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old_method is not None:
            container = PruningContainer(old_method)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as parameter {name} of {module}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            delattr(module, name)
            default_mask = _torch().ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                if name in module.__dict__:
                    delattr(module, name)
                module.register_parameter(name, orig)
                delattr(module, name + "_orig")
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None) -> Tensor:
        """``t`` times its mask (computed from ``importance_scores``, ``t`` by default)."""
        if importance_scores is not None and importance_scores.shape != t.shape:
            raise AssertionError("importance_scores should have the same shape as tensor t")
        scores = importance_scores if importance_scores is not None else t
        default_mask = default_mask if default_mask is not None else _torch().ones_like(t)
        return t * self.compute_mask(scores, default_mask=default_mask)

    def remove(self, module: Any) -> None:
        """Make the pruned product the parameter ``name`` again, dropping ``_orig`` and ``_mask``."""
        if not hasattr(self, "_tensor_name"):
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        name = self._tensor_name
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = weight.data
        delattr(module, name + "_orig")
        delattr(module, name + "_mask")
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """The prunings of one parameter, in order: the last computes its mask over the entries
    (unstructured) or channels (structured) the earlier ones kept."""

    def __init__(self, *args: Any) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: Any) -> None:
        """Append ``method`` (a pruning method of the same parameter)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'")  # fmt: skip
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Any:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> Any:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            slc: Any = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim` "
                                     "defined.")  # fmt: skip
            n_dims, dim = t.dim(), method.dim
            if dim < 0:
                dim = n_dims + dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            keep_channel = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            parts: list[Any] = [slice(None)] * n_dims
            parts[dim] = keep_channel
            slc = tuple(parts)
        elif method.PRUNING_TYPE == "global":
            slc = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial_mask = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Any, name: str) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes ``amount`` entries (a fraction or a count): the ``amount`` of top :meth:`_scores`
    (least, with ``_LARGEST`` False)."""

    PRUNING_TYPE = "unstructured"
    _LARGEST = True

    def __init__(self, amount: int | float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def _scores(self, t: Tensor) -> Tensor:
        raise NotImplementedError

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone()
        if nparams_toprune != 0:  # (only then are the scores computed: the random draws too)
            topk = _torch().topk(self._scores(t).view(-1), k=nparams_toprune, largest=self._LARGEST)
            flat = mask.view(-1)
            flat[topk.indices] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes ``amount`` entries (a fraction or a count) chosen at random."""

    def _scores(self, t: Tensor) -> Tensor:
        return _torch().rand_like(t)

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the ``amount`` entries (a fraction or a count) of least absolute value."""

    _LARGEST = False

    def _scores(self, t: Tensor) -> Tensor:
        return _torch().abs(t)

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:  # fmt: skip
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` channels (slices along ``dim``) chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        prob = _torch().rand(tensor_size)
        threshold = _torch().kthvalue(prob, k=nparams_toprune).values
        mask = _channel_mask(t, self.dim, prob > threshold)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float, dim: int = -1) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels (slices along ``dim``) of least ``n``-norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        nparams_tokeep = tensor_size - nparams_toprune
        _validate_pruning_amount(nparams_toprune, tensor_size)
        dims = list(range(t.dim()))
        dims.remove(dims[self.dim])
        norm = _torch().norm(t, p=self.n, dim=dims)
        topk = _torch().topk(norm, k=nparams_tokeep, largest=True)
        if nparams_toprune == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, topk.indices)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float, n: Any, dim: int,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:  # fmt: skip
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"the mask's shape {tuple(self.mask.shape)} is not the parameter's "
                                 f"{tuple(default_mask.shape)}")  # fmt: skip
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, mask: Tensor) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, mask=mask)


def identity(module: Any, name: str) -> Any:
    """Prune nothing of ``module``'s ``name`` (the mask is ones), but reparametrize it. Returns ``module``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Any, name: str, amount: int | float) -> Any:
    """Prune ``amount`` random entries of ``module``'s ``name``. Returns ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Any, name: str, amount: int | float, importance_scores: Tensor | None = None) -> Any:
    """Prune the ``amount`` entries of ``module``'s ``name`` of least absolute score. Returns ``module``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Any, name: str, amount: int | float, dim: int) -> Any:
    """Prune ``amount`` random channels along ``dim`` of ``module``'s ``name``. Returns ``module``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Any, name: str, amount: int | float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> Any:  # fmt: skip
    """Prune the ``amount`` channels along ``dim`` of ``module``'s ``name`` of least ``n``-norm. Returns ``module``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable[tuple[Any, str]], pruning_method: type, importance_scores: Any = None,
                        **kwargs: Any) -> None:  # fmt: skip
    """Prune the ``(module, name)`` pairs of ``parameters`` together, as one vector: ``pruning_method``
    (unstructured) with ``**kwargs`` picks among all their entries."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    from .convert_parameters import parameters_to_vector  # noqa: PLC0415

    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask", _torch().ones_like(getattr(m, n)))
                                         for m, n in parameters])  # fmt: skip
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")  # fmt: skip
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    at = 0
    for m, n in parameters:
        param = getattr(m, n)
        k = param.numel()
        custom_from_mask(m, n, mask=final_mask[at : at + k].view_as(param))
        at += k


def custom_from_mask(module: Any, name: str, mask: Tensor) -> Any:
    """Prune ``module``'s ``name`` where ``mask`` is 0. Returns ``module``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Any, name: str) -> Any:
    """Make the pruned ``name`` of ``module`` a plain parameter again (its pruned values). Returns ``module``."""
    hooks = _pre_hooks(module)
    for k, hook in list(hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module: Any) -> bool:
    """Whether ``module`` or a module inside it has a pruning pre-hook."""
    for _, sub in module.named_modules():
        for hook in _pre_hooks(sub).values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _validate_pruning_amount_init(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)
    ):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _validate_pruning_amount(amount: Any, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}")


def _validate_structured_pruning(t: Tensor) -> None:
    if len(t.shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
                         f"{t.shape} with {len(t.shape)} dims")  # fmt: skip


def _compute_nparams_toprune(amount: Any, tensor_size: int) -> int:
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(amount * tensor_size)


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _channel_mask(t: Tensor, dim: int, keep: Tensor) -> Tensor:
    """Zeros like ``t`` with ones in the channels ``keep`` (a mask or indices) along ``dim``."""
    mask = _torch().zeros_like(t)
    parts: list[Any] = [slice(None)] * len(t.shape)
    parts[dim] = keep
    mask[tuple(parts)] = 1
    return mask
