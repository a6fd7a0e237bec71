"""Every padding module of PyTorch (``nn.*Pad1d/2d/3d``, read from ``dir(torch.nn)``) with
every form of ``padding`` (an int, tuples of 2, 3, 4 and 6 ints, a list, negative widths) on
inputs of 1 to 5 dimensions: the module builds, prints, pads and refuses as PyTorch's (an
iterable padding is passed to ``F.pad`` as it is, whatever the module's dimension)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

MODULES = sorted(n for n in dir(torch.nn) if n[:-2].endswith("Pad") and n[-2:] in ("1d", "2d", "3d"))
PADDINGS = ["1", "(1, 2)", "(1, 2, 0, 1)", "(1, 1, 1, 1, 1, 1)", "(1, 2, 3)", "[2, 0]", "(-1, 1)", "(0, 0, -1, 2)"]
RANKS = [1, 2, 3, 4, 5]


def _run(lib, module: str, padding: str, rank: int):
    try:
        args = (eval(padding),) + ((1.5,) if module.startswith("Constant") else ())  # noqa: S307
        m = getattr(lib.nn, module)(*args)
    except Exception as e:  # noqa: BLE001 - the class is compared
        return "build raises", [c.__name__ for c in type(e).__mro__]
    x = lib.arange(float(3**rank)).reshape(*(3,) * rank)
    try:
        return "ok", repr(m), m(x).detach().numpy()
    except Exception as e:  # noqa: BLE001
        return "raises", repr(m), [c.__name__ for c in type(e).__mro__]


@pytest.mark.parametrize("rank", RANKS)
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("module", MODULES)
def test_padding_module_as_pytorchs(module: str, padding: str, rank: int) -> None:
    assert MODULES, "PyTorch's padding modules"
    theirs, ours = _run(torch, module, padding, rank), _run(tga, module, padding, rank)
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] == "build raises":
        assert theirs[1][0] in ours[1]
        return
    assert ours[1] == theirs[1]  # the repr
    if theirs[0] == "raises":
        assert theirs[2][0] in ours[2], (ours, theirs)
    else:
        np.testing.assert_array_equal(ours[2], theirs[2])
