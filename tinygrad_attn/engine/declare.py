"""One declaration per public op: ``@public`` beside a function's definition says where the
function is public, and everything else follows from it: the ``tga.`` free function, the
:class:`Tensor` method, the in-place twin (``x.logit_()``), PyTorch's second names and the
package's ``__all__``. No other list of names exists to keep in step.

    @public(method=True, inplace=True, aliases=("arccos",))
    def acos(input: Tensor) -> Tensor:
        ...

gives ``tga.acos``, ``tga.arccos``, ``Tensor.acos``, ``Tensor.arccos``, ``Tensor.acos_`` and
``Tensor.arccos_``, all the one function (the twins written through the one in-place
mechanism). A method that PyTorch spells differently from its free function (``x.where(c, y)``
is ``torch.where(c, x, y)``) is declared on its own with ``function=False``.

``functional=True`` puts the function in ``tga.nn.functional`` too (``F.<name>``), which is
made from these declarations alone; ``function=False`` keeps it out of ``tga.``:

    @public(function=False, functional=True)
    def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
        ...

The table is read once, by the package's ``__init__`` (:func:`install`), and ``F`` by its own
``__init__``; a name declared twice in one namespace is an error at import, so a public name
is defined in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Declaration:
    """Where one function is public (see :func:`public`)."""

    name: str
    fn: Any
    module: str
    function: bool
    method: bool
    inplace: bool
    inplace_function: bool
    static: bool
    aliases: tuple[str, ...]
    special: tuple[str, ...]
    functional: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


#: every declaration, by name, in the order of import
DECLARED: dict[str, Declaration] = {}
#: methods declared alone (``function=False``), by name: PyTorch's method spellings
METHOD_ONLY: dict[str, Declaration] = {}
#: the functions of ``tga.nn.functional`` (``functional=True``), by name, in the order of import
FUNCTIONAL: dict[str, Declaration] = {}


def public(
    fn: Any = None,
    *,
    function: bool = True,
    method: bool = False,
    inplace: bool = False,
    inplace_function: bool = False,
    static: bool = False,
    aliases: tuple[str, ...] = (),
    special: tuple[str, ...] = (),
    functional: bool = False,
    name: str | None = None,
) -> Any:
    """Declare ``fn`` public: ``tga.<name>`` when ``function``, ``Tensor.<name>`` when ``method``,
    ``Tensor.<name>_`` (computed, then written in place) when ``inplace``, and ``tga.<name>_`` too
    when ``inplace_function`` (PyTorch has ``torch.exp_``, not ``torch.pow_``); a ``static`` method is
    called on the class (``Tensor.zeros(2, 3)`` is ``tga.zeros(2, 3)``); ``special`` names it in
    ``tga.special`` too (``special=("expit",)`` on ``sigmoid``); ``functional`` names it
    ``F.<name>`` in ``tga.nn.functional`` (its aliases are not); each of ``aliases`` names the
    same. ``name`` defaults to the function's own; a property is declared by name.

    >>> @public(method=True)
    ... def double(input):
    ...     return input * 2
    """

    def declare(f: Any) -> Any:
        inner = f.fget if isinstance(f, property) else f  # (a property is declared as its getter's name)
        key = name or inner.__name__
        twin = inplace or inplace_function
        d = Declaration(
            key, f, inner.__module__, function, method, twin, inplace_function, static, tuple(aliases), tuple(special),
            functional,
        )  # fmt: skip
        if not (function or method or twin or special or functional):
            raise ValueError(f"public: {key!r} is declared public nowhere")
        if function or method or twin or special:
            _enter(DECLARED if function else METHOD_ONLY, d.names, d)
        if functional:
            _enter(FUNCTIONAL, (key,), d)
        return f

    return declare if fn is None else declare(fn)


def _enter(table: dict[str, Declaration], names: tuple[str, ...], d: Declaration) -> None:
    for n in names:
        if n in table and table[n].fn is not d.fn:
            raise RuntimeError(f"public: {n!r} is declared twice ({table[n].module} and {d.module})")
        table[n] = d


def install(cls: type, namespace: dict[str, Any], inplace_variant: Callable[[str], Any], special: Any,
            out_variant: Callable[[Any, tuple[str, ...]], Any] = lambda fn, names: fn) -> list[str]:  # fmt: skip
    """Put every declaration in place: free functions into ``namespace`` (the package's; each
    as ``out_variant(fn, names)`` makes it: PyTorch's ``out=`` adapter, or the function itself) and
    the module ``special`` (PyTorch's ``torch.special`` names),
    methods on ``cls`` (over a class attribute of that name:
    ``Tensor.__hash__``), in-place twins made by ``inplace_variant(name)`` unless ``cls``
    defines the twin itself. Returns the free functions' names, for ``__all__``."""
    exported = []
    # one function per declaration, under all its names: PyTorch's out= adapter of it where
    # PyTorch's free function takes out= (methods take it too, being the one function)
    adapted = {
        id(d): out_variant(d.fn, d.names) if d.function else d.fn for d in (*DECLARED.values(), *METHOD_ONLY.values())
    }
    for d in {id(d): d for d in (*DECLARED.values(), *METHOD_ONLY.values())}.values():
        for n in d.special:
            setattr(special, n, adapted[id(d)])
            special.__all__.append(n)
    for table in (DECLARED, METHOD_ONLY):
        for n, d in table.items():
            fn = adapted[id(d)]
            if d.function:
                namespace[n] = fn
                exported.append(n)
            if d.method and cls.__dict__.get(n) is not fn:
                setattr(cls, n, staticmethod(fn) if d.static else fn)
    for table in (DECLARED, METHOD_ONLY):
        for n, d in table.items():
            if d.inplace and n + "_" not in cls.__dict__:
                setattr(cls, n + "_", inplace_variant(n))
            if d.inplace_function:
                namespace[n + "_"] = getattr(cls, n + "_")
                exported.append(n + "_")
    return exported
