"""The public ops that PyTorch computes for real dtypes only: orderings (``<``, ``max``, ``sort``),
rounding, the piecewise activations, the special functions of the real line. Given a complex
tensor (or a complex ``dtype=``) each raises PyTorch's exception class before computing:
``NotImplementedError`` (a missing kernel: "... not implemented for 'ComplexFloat'") or
``RuntimeError`` (a check of its own). :func:`~.declare.public` applies this to the names here,
as it applies ``composite.HALF_IN_FLOAT32``; the op's definition stays as it is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

# (PyTorch raises NotImplementedError: no complex kernel)
_NO_KERNEL = frozenset(
    """amax amin aminmax cummax cummin digamma erfc erf erfinv ge gt le lt greater greater_equal less less_equal
    __lt__ __le__ __gt__ __ge__ i0 kthvalue lgamma logaddexp2 logit max min median nanmedian mode celu elu glu
    hardshrink hardsigmoid hardtanh leaky_relu logsigmoid mish mse_loss prelu relu relu6 rrelu selu softplus
    softshrink polygamma round sign i0e i1 i1e unique unique_consecutive xlogy xlog1py zeta mvlgamma multigammaln
    index_reduce floor ceil trunc fix frac atan2 arctan2 copysign hypot fmod remainder floor_divide __floordiv__
    __rfloordiv__ __mod__ __rmod__ signbit histc igamma igammac gammainc gammaincc grid_sample clamp clip clamp_min
    clamp_max bernoulli scaled_dot_product_attention group_norm layer_norm batch_norm instance_norm
    local_response_norm softmin softmax log_softmax gelu hardswish nextafter gammaln erfcx ndtri ndtr log_ndtr entr
    threshold huber_loss smooth_l1_loss nll_loss binary_cross_entropy binary_cross_entropy_with_logits
    multilabel_soft_margin_loss margin_ranking_loss hinge_embedding_loss cosine_embedding_loss bucketize
    searchsorted avg_pool1d avg_pool2d
    avg_pool3d max_pool1d max_pool2d max_pool3d interpolate upsample bitwise_and bitwise_or bitwise_xor
    bitwise_not __and__ __or__ __xor__ __invert__ __rand__ __ror__ __rxor__ arange hash_tensor native_group_norm
    native_layer_norm modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1
    scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0 bessel_j0 bessel_j1 bessel_y0 bessel_y1
    airy_ai""".split()
)
# (PyTorch raises RuntimeError: a check of the op's own)
_CHECKED = frozenset(
    """argmax argmin argsort msort sort topk deg2rad rad2deg fmax fmin heaviside isin isneginf isposinf maximum
    minimum nansum nanmean cosine_similarity pdist cdist frexp kl_div gumbel_softmax randint_like embedding_bag""".split()
)
REAL_ONLY = _NO_KERNEL | _CHECKED


def _complex_of(x: Any) -> str | None:
    """PyTorch's name of ``x``'s dtype where ``x`` is a complex tensor or a complex dtype, else None."""
    dt = getattr(x, "dtype", x)
    kind = getattr(dt, "kind", None)
    if kind != "c" or not (hasattr(x, "_data") or hasattr(x, "to_real")):
        return None
    return "ComplexFloat" if dt.itemsize == 8 else "ComplexDouble"


def _complex_with(args: tuple[Any, ...]) -> str:
    """PyTorch's name of the complex dtype that real tensors among ``args`` and a complex number
    compute in: ComplexDouble with a float64 tensor, ComplexFloat otherwise."""
    wide = any(getattr(getattr(a, "_data", None), "dtype", None) == "float64" for a in args)
    return "ComplexDouble" if wide else "ComplexFloat"


def refusing_complex(name: str, fn: Callable[..., Any], error: type) -> Callable[..., Any]:
    """``fn`` raising PyTorch's error where one of its tensor arguments (or its ``dtype=``) is complex."""
    kind = error if name in _NO_KERNEL else RuntimeError

    def refuse(found: str) -> None:
        label = name.strip("_")
        raise kind(f'"{label}" not implemented for {found!r}: {label} is not supported for complex tensors')

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if kwargs and getattr(kwargs.get("dtype"), "kind", "c") != "c":  # (computed in the real dtype it casts to)
            return fn(*args, **kwargs)
        # (the common call, tensors and numbers only, read fast: these ops run in training loops)
        for a in args:
            d = getattr(a, "_data", None)
            if d is not None:
                if getattr(d.dtype, "kind", None) == "c":
                    refuse(_complex_of(a))
            elif a.__class__ is complex:  # (a real tensor with a complex number computes in complex)
                refuse(_complex_with(args))
            elif a.__class__ in (list, tuple) and (found := next((c for v in a if (c := _complex_of(v))), None)):
                refuse(found)
        for a in kwargs.values():
            if found := _complex_of(a):
                refuse(found)
            if a.__class__ is complex:
                refuse(_complex_with(args))
        return fn(*args, **kwargs)

    return checked
