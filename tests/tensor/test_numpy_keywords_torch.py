"""NumPy's keywords given to PyTorch's functions: PyTorch's parser reads ``axis=`` as ``dim=`` and
``keepdims=`` as ``keepdim=`` for every function it parses (``x.amax(axis=0, keepdims=True)``,
``torch.nansum(x, axis=0)``, ``x.unbind(axis=0)``), and its methods take no ``out=``. Every method and
free function that PyTorch and tinygrad_attn share is called so on one tensor; what comes back (the
class of the result, its shape) or the class of what is raised must be PyTorch's."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

#: the calls: keywords, and the arguments before them
CALLS = [({"axis": 0}, ()), ({"keepdims": True}, ()), ({"axis": 0, "keepdims": True}, ()), ({"keepdims": True}, (0,)),
         ({"out": None}, ())]  # fmt: skip

#: calls that act on more than the tensor, or read the machine's state
_SKIP = {"backward", "register_hook", "register_post_accumulate_grad_hook", "apply_", "map_", "map2_", "share_memory_",
         "pin_memory", "record_stream", "cuda", "to", "new_tensor", "manual_seed", "seed", "load", "save", "compile",
         "from_file", "set_rng_state"}  # fmt: skip

_NUMPY_MEANING = "the API's rule (API.md): NumPy's keywords give NumPy's meaning here (the values, or NumPy's error)"
_NO_NUMPY_MEANING = "the API keeps axis= for NumPy's meaning here, which is not written: refused (TypeError)"
_NUMPY_KEEPDIMS = "the API's sum(axis=None, keepdims=False): keepdims= over every axis, which PyTorch's parser refuses"
#: (name, keywords as written) -> why ours differs
KNOWN = {
    **{(n, k): _NUMPY_MEANING for n in ("max", "min") for k in ("axis", "axis keepdims", "keepdims@0")},
    ("sort", "axis"): _NUMPY_MEANING, ("squeeze", "axis"): _NUMPY_MEANING, ("squeeze_", "axis"): _NUMPY_MEANING,
    **{(n, k): _NO_NUMPY_MEANING for n in ("median", "nanmedian", "mode")
       for k in ("axis", "axis keepdims", "keepdims@0")},  # fmt: skip
    ("mode", "keepdims"): _NO_NUMPY_MEANING, ("kthvalue", "keepdims@0"): _NO_NUMPY_MEANING,
    **{(n, "keepdims"): _NUMPY_KEEPDIMS for n in ("sum", "mean", "max", "min", "logsumexp")},
}  # fmt: skip


def _outcome(lib: Any, fn: Any, free: bool, kw: dict, args: tuple) -> Any:
    x = lib.tensor([[1.0, 4.0], [3.0, 2.0]])
    try:
        r = fn(x, *args, **kw) if free else getattr(x, fn)(*args, **kw)
    except Exception as e:  # noqa: BLE001 - its class is what is compared
        return "raised", tuple(c.__name__ for c in type(e).__mro__)
    if isinstance(r, lib.Tensor):
        return "Tensor", tuple(r.shape)
    return type(r).__name__


def _key(kw: dict, args: tuple) -> str:
    return " ".join(kw) + ("@0" if args else "")


def _differences(free: bool) -> dict[tuple[str, str], tuple[Any, Any]]:
    if free:
        names = [n for n in dir(torch) if not n.startswith("_") and n not in _SKIP and callable(getattr(tga, n, None))
                 and callable(getattr(torch, n)) and not isinstance(getattr(torch, n), type)]  # fmt: skip
    else:
        names = [n for n in dir(torch.Tensor) if not n.startswith("_") and n not in _SKIP
                 and callable(getattr(tga.Tensor, n, None))]  # fmt: skip
    found = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in sorted(names):
            for kw, args in CALLS:
                if free and "out" in kw:  # (the free functions take out=: tests/tensor/test_out_argument.py)
                    continue
                want = _outcome(torch, getattr(torch, n) if free else n, free, kw, args)
                got = _outcome(tga, getattr(tga, n) if free else n, free, kw, args)
                if want != got and not (want[0] == got[0] == "raised" and want[1][0] in got[1]):
                    found[(n, _key(kw, args))] = (want, got)
    return found


def test_numpy_keywords_as_pytorchs_parser_reads_them() -> None:
    found = {**_differences(free=False), **_differences(free=True)}
    new = {k: v for k, v in found.items() if k not in KNOWN}
    assert not new, f"{len(new)} calls differ from PyTorch's (PyTorch's outcome, ours): {new}"
    fixed = [k for k in KNOWN if k not in found]
    assert not fixed, f"now as PyTorch's: take them off KNOWN: {fixed}"


def test_numpy_names_read_as_pytorchs() -> None:
    x = tga.tensor([[1.0, 4.0], [3.0, 2.0]])
    assert x.amax(axis=0, keepdims=True).tolist() == [[3.0, 4.0]]
    assert tga.nansum(x, axis=1).tolist() == [5.0, 5.0]
    assert [t.tolist() for t in x.unbind(axis=1)] == [[1.0, 3.0], [4.0, 2.0]]
    assert tga.amin(x, axis=0, out=tga.zeros(2)).tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="amax"):
        x.amax(0, axis=0)  # (dim twice: by position and by its NumPy name)
    with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
        tga.amax(x, dim=0, axis=0)
