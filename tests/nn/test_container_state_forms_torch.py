"""What a module's state reads before its first input and in which order a parameter dict
holds its entries, as PyTorch's: a lazy module's ``state_dict`` holds its placeholders (whose
shape PyTorch refuses to read), and ``ParameterDict`` built or updated from a plain mapping
takes its keys sorted (an ``OrderedDict`` or another ParameterDict in their order); the recurrent
bases hold parameters and have no forward."""

from __future__ import annotations

from collections import OrderedDict

import pytest

import tinygrad_attn as tga

torch = pytest.importorskip("torch")


def _state(lib, name: str):  # noqa: ANN001, ANN202
    m = getattr(lib.nn, name)(*{"LazyLinear": (3,), "LazyBatchNorm1d": ()}.get(name, (3, 2)))
    out = []
    for k, v in m.state_dict().items():
        try:
            out.append((k, type(v).__name__, tuple(v.shape)))
        except RuntimeError:
            out.append((k, type(v).__name__, "no shape"))
    return out


@pytest.mark.parametrize("name", ["LazyLinear", "LazyConv2d", "LazyBatchNorm1d", "LazyConvTranspose1d"])
def test_a_lazy_modules_state_dict_holds_its_placeholders(name: str) -> None:
    assert _state(tga, name) == _state(torch, name)


@pytest.mark.parametrize("kind", ["dict", "OrderedDict", "pairs", "update"])
def test_parameter_dict_order_as_pytorchs(kind: str) -> None:
    def names(lib):  # noqa: ANN001, ANN202
        entries = [("w", lib.nn.Parameter(lib.ones(2))), ("b", lib.nn.Parameter(lib.zeros(3))), ("a", lib.ones(1))]
        given = {"dict": dict(entries), "OrderedDict": OrderedDict(entries), "pairs": entries}.get(kind)
        pd = lib.nn.ParameterDict(given) if given is not None else lib.nn.ParameterDict({"z": lib.ones(1)})
        if given is None:
            pd.update(dict(entries))
        return list(pd.keys()), repr(pd)

    assert names(tga) == names(torch)


@pytest.mark.parametrize(("base", "args", "shape"), [("RNNBase", ("GRU", 4, 5), (3, 2, 4)),
                                                     ("RNNCellBase", (4, 5, True, 2), (2, 4))])  # fmt: skip
def test_the_recurrent_bases_have_no_forward(base: str, args: tuple, shape: tuple) -> None:
    """PyTorch's ``RNNBase`` and ``RNNCellBase`` build the parameters; only their subclasses run."""
    for lib in (torch, tga):
        m = getattr(lib.nn, base)(*args)
        with pytest.raises(NotImplementedError):
            m(lib.ones(shape))
