"""``tga.special`` is PyTorch's ``torch.special``: every name it has, against PyTorch's."""

import numpy as np
import pytest
import tinygrad_attn.special as special
from helpers import assert_rounding_close

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

# the arguments each kind of function takes besides its input (x in (0.05, 0.95), so every
# function is defined there: logit, gammaln, multigammaln, the log of xlogy)
EXTRA = {"polygamma": lambda x: (2, x), "multigammaln": lambda x: (x + 2.0, 3), "xlogy": lambda x: (x, x + 0.5),
         "softmax": lambda x: (x, -1), "gammainc": lambda x: (x + 0.5, x), "gammaincc": lambda x: (x + 0.5, x), "log_softmax": lambda x: (x, -1), "logsumexp": lambda x: (x, -1), "xlog1py": lambda x: (x, x - 0.5),
         "zeta": lambda x: (x + 1.5, x)}  # fmt: skip


@pytest.mark.parametrize("name", special.__all__)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_each_special_function_is_pytorchs(name, dtype):
    x = np.random.default_rng(7).uniform(0.05, 0.95, (3, 4)).astype(dtype)
    args = EXTRA.get(name, (lambda x: (x, 5)) if "polynomial" in name else lambda x: (x,))(x)
    ours = getattr(special, name)(*(tga.tensor(a) if isinstance(a, np.ndarray) else a for a in args))
    theirs = getattr(torch.special, name)(*(torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args))
    # (to the dtype's rounding of values of size 1: lgamma near its zeros is conditioned by x * digamma(x))
    assert_rounding_close(ours.detach().numpy(), theirs.detach().numpy(), np.dtype(dtype).type, scale=1.0, ulps=16)
    assert str(ours.dtype) == str(theirs.dtype)


def test_the_module_imports_as_pytorchs_path():
    import importlib

    assert importlib.import_module("tinygrad_attn.special") is tga.special is special
    assert set(special.__all__) <= set(dir(torch.special))
