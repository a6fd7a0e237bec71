# import mapping: tinygrad's names -> tinygrad_attn (plus no-op stand-ins for tinygrad's lazy runtime)
import types

import numpy as np

import tinygrad_attn as tga
from tinygrad_attn import Tensor as _Base


class Tensor(_Base):
    # tinygrad differentiates any tensor (.gradient() needs no flag): a float tensor made
    # directly here records its graph, as if requires_grad=True
    def __init__(self, data, *args, requires_grad=None, **kw):
        if requires_grad is None:
            dt = kw.get("dtype")
            kind = (
                np.dtype(dt).kind
                if dt is not None
                else np.asarray(data.numpy() if isinstance(data, _Base) else data).dtype.kind
            )
            requires_grad = kind == "f"
            # tinygrad's Tensor(data) is torch.tensor(data): the dtype follows the data
            # (tinygrad_attn.Tensor(data) is torch.Tensor(data), always float)
            if dt is None and kind in "iub" and not isinstance(data, _Base):
                kw["dtype"] = np.asarray(data).dtype
        try:
            super().__init__(data, *args, requires_grad=requires_grad, **kw)
        except Exception:
            super().__init__(data, *args, **kw)


def _realize(self, *others):  # tinygrad is lazy; tinygrad_attn is eager
    return self


def _gradient(self, *targets):
    gs = tga.grad(self, list(targets), allow_unused=True)  # (tinygrad gives zeros for an unused input)
    return [tga.zeros_like(t) if g is None else g for t, g in zip(targets, gs)]


if not hasattr(_Base, "realize"):
    _Base.realize = _realize
if not hasattr(_Base, "gradient"):
    _Base.gradient = _gradient


class _Renderer:
    def supported_dtypes(self):
        return [dtypes.float32, dtypes.float64, dtypes.half, dtypes.int32, dtypes.bool]


class _Dev:
    renderer = _Renderer()


class _Device:
    DEFAULT = "CPU"

    def __getitem__(self, k):
        return _Dev()


Device = _Device()

dtypes = types.SimpleNamespace(
    float32=tga.float32,
    float=tga.float32,
    float64=tga.float64,
    double=tga.float64,
    half=tga.float16,
    float16=tga.float16,
    int32=tga.int32,
    int=tga.int32,
    int8=tga.int8,
    int64=tga.int64,
    long=tga.int64,
    uint8=tga.uint8,
    uint32=np.dtype("uint32"),
    uint64=np.dtype("uint64"),
    bool=tga.bool,
    default_float=tga.float32,
    default_int=tga.int32,
)

# tinygrad spells some functions as Tensor methods or class functions; map each name to the
# function of the same name (F.* or tga.*), nothing else
import tinygrad_attn.functional as _F  # noqa: E402 - after the Tensor class, which the functions below extend


def _stack(self, *others, dim=0):
    ts = list(self) if isinstance(self, (tuple, list)) else [self, *others]
    return tga.stack(ts, dim)


def _cat(self, *others, dim=0):
    return tga.cat([self, *others], dim)


def _where(self, a, b):
    return tga.where(self, a, b)


# tinygrad's conv2d/conv_transpose2d take any number of spatial axes: PyTorch's convNd by the weight's
def _by_dims(name):
    def call(x, weight, *a, **kw):
        fn = getattr(_F, name.replace("2d", f"{weight.ndim - 2}d"), None)
        if fn is None:
            raise NotImplementedError(f"{name.replace('2d', f'{weight.ndim - 2}d')} is missing")
        return fn(x, weight, *a, **kw)

    return call


_Base.conv2d, _Base.conv_transpose2d = _by_dims("conv2d"), _by_dims("conv_transpose2d")
for _n in [
    "conv2d",
    "max_pool2d",
    "avg_pool2d",
    "interpolate",
    "pad",
    "conv_transpose2d",
    "nll_loss",
    "scaled_dot_product_attention",
    "cross_entropy",
    "softsign",
    "hardsigmoid",
    "softplus",
    "softmin",
    "silu",
    "selu",
    "relu6",
    "one_hot",
    "normalize",
    "mish",
    "logsigmoid",
    "leaky_relu",
    "hardtanh",
    "hardswish",
    "elu",
    "celu",
    "unfold",
    "max_unpool2d",
]:
    if not hasattr(_Base, _n) and hasattr(_F, _n):
        setattr(_Base, _n, getattr(_F, _n))
_Base.meshgrid = lambda self, *others, indexing="ij": tga.meshgrid(self, *others, indexing=indexing)
for _n in ["einsum", "full_like", "zeros_like", "ones_like", "empty", "randint", "linspace"]:
    if not hasattr(_Base, _n) and hasattr(tga, _n):
        setattr(Tensor, _n, staticmethod(getattr(tga, _n)))
Tensor.stack, Tensor.cat = _stack, _cat
_Base.where = _where
_Base.cast = _Base.astype
_Base.mod = _Base.remainder
_Base.swish = _F.silu
_Base.std_mean = lambda self, *a, **kw: tga.std_mean(self, *a, **kw)  # torch.std_mean, spelled as a method
