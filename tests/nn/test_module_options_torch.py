"""Every constructor option of every module, one at a time, against PyTorch.

The options are read from PyTorch's own signatures (``inspect.signature`` of each module class
of its ModuleInfo database that we share), not listed by hand: each keyword with a default gets
another value (a bool flipped, an int and a float moved, a string from the values PyTorch
takes, None replaced where a table names a value), set on PyTorch's first ModuleInfo sample of
the module. For each: construction raises where PyTorch's raises (with its class); else the
reprs are equal (what ``print(model)`` shows), and the module runs the sample as PyTorch's
(``tests/nn/test_torch_moduleinfo.py``'s comparison: state dict, outputs, input and parameter
gradients) in training mode."""

from __future__ import annotations

import copy
import inspect
import warnings
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # PyTorch's test internals import it

import test_torch_moduleinfo as moduleinfo  # noqa: E402

from tinygrad_attn import nn  # noqa: E402

pytestmark = pytest.mark.slow  # (about 360 constructions and runs)

#: values for options whose default is None or a string, by the option's name
NONE_VALUES = {"max_norm": 1.0, "padding_idx": 0, "dtype": torch.float64, "kdim": 3, "vdim": 5, "proj_size": 2,
               "scale_factor": 2.0, "size": 3, "norm_type": 1.5}  # fmt: skip
STR_VALUES = {"padding_mode": ["reflect", "replicate", "circular"], "reduction": ["sum", "none"],
              "nonlinearity": ["relu"], "approximate": ["tanh"], "activation": ["gelu"],
              "mode": ["sum", "max", "bilinear", "nearest", "linear"]}  # fmt: skip

KNOWN: dict[str, str] = {}


def _alternatives(name: str, default: Any) -> list[Any]:
    if default is inspect.Parameter.empty:
        return []
    if isinstance(default, bool):
        return [not default]
    if isinstance(default, int):
        return [default + 1, 0]
    if isinstance(default, float):
        return [default / 2 + 0.05]
    if isinstance(default, str):
        return [v for v in STR_VALUES.get(name, []) if v != default]
    return [NONE_VALUES[name]] if default is None and name in NONE_VALUES else []


class _Sample:
    """A ModuleInfo sample with other constructor keywords."""

    def __init__(self, sample: Any, kwargs: dict) -> None:
        self.constructor_input = copy.copy(sample.constructor_input)
        self.constructor_input.kwargs = kwargs
        self.forward_input, self.desc = sample.forward_input, sample.desc


def _cases() -> list[tuple[str, Any, Any, Any]]:
    out = []
    for info in moduleinfo.module_db:
        if not hasattr(nn, info.module_cls.__name__):
            continue
        samples = moduleinfo._samples(info, True, 1)
        if not samples:
            continue
        base = samples[0]
        params = inspect.signature(info.module_cls.__init__).parameters
        for i, (name, p) in enumerate(params.items()):
            given = name in base.constructor_input.kwargs or i - 1 < len(base.constructor_input.args)
            if name in ("self", "device") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or given:
                continue
            for value in _alternatives(name, p.default):
                case = f"{info.module_cls.__name__}({name}={value!r})"
                kwargs = dict(base.constructor_input.kwargs, **{name: value})
                out.append(pytest.param(info, base, kwargs, id=case,
                                        marks=[pytest.mark.xfail(reason=KNOWN[case], strict=True)] if case in KNOWN
                                        else []))  # fmt: skip
    return out


@pytest.mark.parametrize("info, base, kwargs", _cases())
def test_each_option_builds_prints_and_runs_as_pytorchs(info: Any, base: Any, kwargs: dict) -> None:
    name, args = info.module_cls.__name__, base.constructor_input.args
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs = info.module_cls(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the class is compared
            with pytest.raises(Exception) as ours_error:  # noqa: PT011 - compared below
                getattr(nn, name)(*moduleinfo._ours(args), **moduleinfo._ours(kwargs))
            assert type(e).__name__ in [c.__name__ for c in type(ours_error.value).__mro__]
            return
        ours = getattr(nn, name)(*moduleinfo._ours(args), **moduleinfo._ours(kwargs))
        assert repr(ours) == repr(theirs)
        try:
            why = moduleinfo._run_sample(info, _Sample(base, kwargs), True)
        except moduleinfo._Skip:  # (PyTorch refuses the sample with this option)
            why = None
    assert why is None, why


CONTAINERS = {
    "ParameterList": "nn.ParameterList([nn.Parameter(torch.ones(2)), nn.Parameter(torch.zeros(1, 3, dtype=torch.float64))])",
    "ParameterDict": "nn.ParameterDict({'a': nn.Parameter(torch.ones(2)), 'b': torch.zeros(2, 3, dtype=torch.float64)})",
    "empty ParameterList": "nn.ParameterList()",
    "nested": "nn.ModuleDict({'p': nn.ParameterList([nn.Parameter(torch.ones(1))]), 'l': nn.Linear(1, 1)})",
}  # fmt: skip


@pytest.mark.parametrize("name", CONTAINERS)
def test_parameter_containers_print_their_parameters(name: str) -> None:
    import tinygrad_attn as tga  # noqa: PLC0415

    reprs = [repr(eval(CONTAINERS[name], {"torch": lib, "nn": lib.nn})) for lib in (torch, tga)]  # noqa: S307
    assert reprs[1] == reprs[0]
