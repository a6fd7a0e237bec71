"""Dropout of integer and bool tensors as PyTorch's: ``p`` of 0 returns the input, ``p`` of 1 zeros
in the input's own dtype, anything between refuses (the kept values would be scaled as floats),
an empty tensor returns itself; in place or not, by the function or the layer."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402


def _outcome(lib, dtype: str, p: float, inplace: bool, layer: bool, empty: bool):
    x = lib.arange(0 if empty else 6).reshape((0, 3) if empty else (2, 3))
    x = x > 2 if dtype == "bool" else x.to(getattr(lib, dtype))
    try:
        out = lib.nn.Dropout(p, inplace)(x) if layer else lib.nn.functional.dropout(x, p, True, inplace)
    except Exception as e:  # noqa: BLE001 - the class is compared
        return type(e).__mro__[1].__name__ if type(e).__module__ != "builtins" else type(e).__name__
    return str(out.dtype), tuple(out.shape), out.tolist() if p in (0.0, 1.0) else None


@pytest.mark.parametrize("empty", [False, True])
@pytest.mark.parametrize("layer", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "int64", "float32", "float64"])
def test_dropout_of_every_dtype_as_in_torch(dtype: str, p: float, inplace: bool, layer: bool, empty: bool) -> None:
    want = _outcome(torch, dtype, p, inplace, layer, empty)
    got = _outcome(tga, dtype, p, inplace, layer, empty)
    if isinstance(want, tuple) and want[2] is None:  # (a drawn mask: compare dtype and shape)
        assert got[:2] == want[:2]
    else:
        assert got == want


@pytest.mark.parametrize(
    "call",
    ["F.gumbel_softmax(x.long())", "F.gumbel_softmax(x, torch.tensor(0.5))", "F.gumbel_softmax(x, 1.0, 1)",
     "F.gumbel_softmax(x, 1.0, 0)", "F.gumbel_softmax(x.double(), 2)", "F.gumbel_softmax(x.half())"],
)  # fmt: skip
def test_gumbel_softmax_takes_what_torch_takes(call: str) -> None:
    """PyTorch's Python-level ``F.gumbel_softmax`` reads ``tau`` and ``hard`` as given (a tensor, an int);
    its noise is ``exponential_()``, which refuses integer logits."""

    def run(lib):
        scope = {"torch": lib, "F": lib.nn.functional, "x": lib.tensor([[0.5, 1.0, -1.0], [2.0, 0.0, 0.0]])}
        try:
            out = eval(call, scope)  # noqa: S307 - the test's own text
        except Exception as e:  # noqa: BLE001 - the class is compared
            return type(e).__name__
        return str(out.dtype), tuple(out.shape)

    assert run(tga) == run(torch)
