"""PyTorch's older ``torch.nn.utils.weight_norm`` / ``remove_weight_norm``: the parameter
``name`` replaced by ``name_g`` (its norm over every axis but ``dim``) and ``name_v`` (its
direction), ``module.<name>`` computed from them at each read (PyTorch recomputes it before
each forward; reading it is the same value). New code uses ``parametrizations.weight_norm``."""

from __future__ import annotations

from ...engine.switches import no_grad
from ...engine.warn import warn as _user_warn
from ..module import Module, Parameter
from .parametrizations import _norm_except

__all__ = ["weight_norm", "remove_weight_norm"]


def _property(name: str, dim: int | None) -> property:
    def get(self: Module) -> object:
        v = getattr(self, name + "_v")
        return v * (getattr(self, name + "_g") / _norm_except(v, dim))

    return property(get)


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """``module.<name> = name_g * name_v / ||name_v||``, with ``name_g`` and ``name_v`` the
    learned parameters (PyTorch's deprecated ``nn.utils.weight_norm``). Returns ``module``."""
    _user_warn("`torch.nn.utils.weight_norm` is deprecated in favor of `torch.nn.utils.parametrizations.weight_norm`.",
                  FutureWarning)  # fmt: skip
    if name + "_g" in module._parameters:
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    weight = module._parameters.get(name)
    if weight is None:
        raise ValueError(f"Module '{type(module).__name__}' has no parameter named '{name}'")
    dim = -1 if dim is None else dim
    del module._parameters[name]
    module.__dict__.pop(name, None)
    with no_grad():
        module.register_parameter(name + "_g", Parameter(_norm_except(weight, dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
    cls = type(module)
    # (a subclass of the module's class for the property, under the class's own name: PyTorch keeps the
    # class, so the module prints and names itself as before)
    fields = {name: _property(name, dim), "__qualname__": cls.__qualname__, "__module__": cls.__module__}
    object.__setattr__(module, "__class__", type(cls.__name__, (cls,), fields))
    object.__setattr__(module, "_weight_norm_of", (name, cls))
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``name`` a plain parameter again, holding the current value."""
    done = module.__dict__.get("_weight_norm_of")
    if done is None or done[0] != name:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    with no_grad():
        value = getattr(module, name).detach()
    object.__setattr__(module, "__class__", done[1])
    object.__delattr__(module, "_weight_norm_of")
    del module._parameters[name + "_g"], module._parameters[name + "_v"]
    module.__dict__.pop(name + "_g", None)
    module.__dict__.pop(name + "_v", None)
    setattr(module, name, Parameter(value))
    return module
