"""PyTorch's ``torch.nn.utils.parametrize``: a module's parameter replaced by a function of
other tensors, computed each time it is read.

``register_parametrization(module, "weight", P)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` (or ``original0, original1, ...`` where
``P.right_inverse`` returns several tensors) and makes ``module.weight`` a property that
returns ``P(original)``; state dict keys, ``remove_parametrizations`` and ``cached()`` are
PyTorch's. The property lives on a subclass made for the module (``Parametrized<Class>``),
as PyTorch does it, so other instances of the class are untouched.

>>> parametrize.register_parametrization(layer, "weight", Symmetric())  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from ...engine.switches import no_grad
from ...tensors._tensor import Tensor
from ..module import Module, ModuleDict, ModuleList, Parameter

__all__ = [
    "register_parametrization",
    "remove_parametrizations",
    "cached",
    "is_parametrized",
    "type_before_parametrizations",
    "ParametrizationList",
]

_cache: dict[tuple[int, str], Tensor] = {}
_cache_depth = 0


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Within the block each parametrized tensor is computed once, at its first read (for a
    parametrized weight read many times in one forward, such as an RNN's)."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the ``original`` tensor(s)
    they are applied to."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(list(self)):  # (right inverses, last parametrization first)
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        if isinstance(new, Tensor):
            self.is_tensor, self.ntensors = True, 1
            if isinstance(original, Parameter) and new.shape == original.shape and new.dtype == original.dtype:
                with no_grad():  # (PyTorch keeps the parameter object, its values set to the inverse)
                    original.data = new.detach()
                self.original = original
            else:
                self.original = Parameter(new.detach(), requires_grad=original.requires_grad)
        else:
            self.is_tensor, self.ntensors = False, len(new)
            for i, t in enumerate(new):
                setattr(self, f"original{i}", Parameter(t.detach(), requires_grad=original.requires_grad))

    def right_inverse(self, value: Tensor) -> None:
        """Set the original(s) so that the parametrized tensor is ``value`` (``module.weight = value``)."""
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                elif not self.unsafe:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
            if self.is_tensor:  # (PyTorch's checks: a tensor of the original's dtype)
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while `original` "
                                     f"has dtype {self.original.dtype}")  # fmt: skip
                self.original.data = value.detach()
            else:
                for i, t in enumerate(value):
                    getattr(self, f"original{i}").data = t.detach()

    def forward(self) -> Tensor:
        mods = list(self)
        if self.is_tensor:
            x = mods[0](self.original)
        else:
            x = mods[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in mods[1:]:
            x = module(x)
        return x


def _value(module: Module, name: str) -> Tensor:
    key = (id(module), name)
    if _cache_depth and key in _cache:
        return _cache[key]
    value = module.parametrizations[name]()
    if _cache_depth:
        _cache[key] = value
    return value


def _property(name: str) -> property:
    def get(self: Module) -> Tensor:
        return _value(self, name)

    def set_(self: Module, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    return property(get, set_)


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has parametrizations (of ``tensor_name``, where given)."""
    plist = module.__dict__.get("parametrizations")
    if not isinstance(plist, ModuleDict):
        return False
    return tensor_name is None or tensor_name in plist


def type_before_parametrizations(module: Module) -> type:
    """The class ``module`` had before it was parametrized."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:  # fmt: skip
    """Read ``module.<tensor_name>`` as ``parametrization(original)`` from now on; a second call
    for the same name appends to its list. Returns ``module``."""
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            current = getattr(module, tensor_name)
            out = parametrization(current)
            if not isinstance(out, Tensor) or out.shape != current.shape or out.dtype != current.dtype:
                raise ValueError(
                    f"Registering a parametrization may not change the shape or dtype of the tensor "
                    f"{tensor_name!r}, unless unsafe=True"
                )
        plist.append(parametrization)
        return module
    if tensor_name in module._parameters:
        original = module._parameters[tensor_name]
    elif tensor_name in module._buffers:
        original = module._buffers[tensor_name]
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")  # fmt: skip
    if not unsafe:
        out = parametrization(original)
        if not isinstance(out, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {type(out).__name__}.")
        if out.shape != original.shape or out.dtype != original.dtype:
            raise ValueError(
                f"Registering a parametrization may not change the shape or dtype of the tensor, unless unsafe=True."
                f"\nunparametrized shape: {tuple(original.shape)}\nparametrized shape: {tuple(out.shape)}"
            )
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    module._parameters.pop(tensor_name, None)
    module._buffers.pop(tensor_name, None)
    module.__dict__.pop(tensor_name, None)
    if not is_parametrized(module):
        module.parametrizations = ModuleDict()
        cls = type(module)
        object.__setattr__(module, "__class__", type(f"Parametrized{cls.__name__}", (cls,), {}))
    module.parametrizations[tensor_name] = plist
    setattr(type(module), tensor_name, _property(tensor_name))
    return module


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo :func:`register_parametrization` for ``tensor_name``: a plain parameter again,
    holding the parametrized value (``leave_parametrized=True``) or the original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if leave_parametrized:
        with no_grad():
            value = getattr(module, tensor_name)
        if plist.is_tensor and value.shape == plist.original.shape and value.dtype == plist.original.dtype:
            with no_grad():
                plist.original.data = value.detach()
            param = plist.original
        else:
            param = Parameter(value.detach(), requires_grad=True)
    else:
        if not plist.is_tensor:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")  # fmt: skip
        param = plist.original
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if not len(module.parametrizations):
        del module.parametrizations
        object.__setattr__(module, "__class__", type(module).__bases__[0])
    setattr(module, tensor_name, param)
    return module
