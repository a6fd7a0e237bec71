"""``torch.special``'s Bessel functions of the first and second kind, ``J0 J1 Y0 Y1``, and the Airy
function ``Ai``; no gradient, as PyTorch's.

PyTorch's CPU kernels evaluate Cephes' rational approximations in the input's own dtype (float32
in float32), and so do these, step by step in the same order: the same rounding at each step,
so the same values to an ulp of the sines and logarithms (the loss of digits of a float32 phase
``x - pi/4`` at large ``x`` included). Below ``|x| = 5`` ``J`` and ``Y`` are ratios of polynomials
in ``x^2`` (``Y`` plus ``2/pi log(x) J``), above it the Hankel forms ``sqrt(2 / (pi x))
(P cos(x - phase) - Q sin(x - phase))`` with ``P``, ``Q`` ratios in ``25 / x^2``. ``Ai`` is its
asymptotic forms below ``-2.09`` and above ``2.09`` and its Maclaurin series between, summed until
a term falls below the dtype's epsilon; 0 above ``103.892``, NaN at ``+-inf``. ``Y`` of a negative
number is NaN, ``Y(0)`` is ``-inf``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...engine.declare import public
from ...functional.checks import tensor_arg
from ...ops.array_function import array_function
from ...ops.factorizations import loop_namespace
from .._tensor import Tensor
from ..mutation.out_argument import written_to_out
from ..promotion import float_dtype_of

# (Cephes' coefficients, as PyTorch's ATen/native/Math.h has them: highest power first)
_J0_PP = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e00, 5.44725003058768775090e00,
          8.74716500199817011941e00, 5.30324038235394892183e00, 9.99999999999999997821e-01)  # fmt: skip
_J0_PQ = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e00, 5.47097740330417105182e00,
          8.76190883237069594232e00, 5.30605288235394617618e00, 1.00000000000000000218e00)  # fmt: skip
_J0_QP = (-1.13663838898469149931e-02, -1.28252718670509318512e00, -1.95539544257735972385e01,
          -9.32060152123768231369e01, -1.77681167980488050595e02, -1.47077505154951170175e02,
          -5.14105326766599330220e01, -6.05014350600728481186e00)  # fmt: skip
_J0_QQ = (6.43178256118178023184e01, 8.56430025976980587198e02, 3.88240183605401609683e03, 7.24046774195652478189e03,
          5.93072701187316984827e03, 2.06209331660327847417e03, 2.42005740240291393179e02)  # fmt: skip
_J0_RP = (-4.79443220978201773821e09, 1.95617491946556577543e12, -2.49248344360967716204e14, 9.70862251047306323952e15)
_J0_RQ = (4.99563147152651017219e02, 1.73785401676374683123e05, 4.84409658339962045305e07, 1.11855537045356834862e10,
          2.11277520115489217587e12, 3.10518229857422583814e14, 3.18121955943204943306e16, 1.71086294081043136091e18)  # fmt: skip
_J1_PP = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e00, 5.11207951146807644818e00,
          8.42404590141772420927e00, 5.21451598682361504063e00, 1.00000000000000000254e00)  # fmt: skip
_J1_PQ = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e00, 5.07386386128601488557e00,
          8.39985554327604159757e00, 5.20982848682361821619e00, 9.99999999999999997461e-01)  # fmt: skip
_J1_QP = (5.10862594750176621635e-02, 4.98213872951233449420e00, 7.58238284132545283818e01, 3.66779609360150777800e02,
          7.10856304998926107277e02, 5.97489612400613639965e02, 2.11688757100572135698e02, 2.52070205858023719784e01)  # fmt: skip
_J1_QQ = (7.42373277035675149943e01, 1.05644886038262816351e03, 4.98641058337653607651e03, 9.56231892404756170795e03,
          7.99704160447350683650e03, 2.82619278517639096600e03, 3.36093607810698293419e02)  # fmt: skip
_J1_RP = (-8.99971225705559398224e08, 4.52228297998194034323e11, -7.27494245221818276015e13, 3.68295732863852883286e15)
_J1_RQ = (6.20836478118054335476e02, 2.56987256757748830383e05, 8.35146791431949253037e07, 2.21511595479792499675e10,
          4.74914122079991414898e12, 7.84369607876235854894e14, 8.95222336184627338078e16, 5.32278620332680085395e18)  # fmt: skip
_Y0_YP = (1.55924367855235737965e04, -1.46639295903971606143e07, 5.43526477051876500413e09, -9.82136065717911466409e11,
          8.75906394395366999549e13, -3.46628303384729719441e15, 4.42733268572569800351e16, -1.84950800436986690637e16)  # fmt: skip
_Y0_YQ = (1.04128353664259848412e03, 6.26107330137134956842e05, 2.68919633393814121987e08, 8.64002487103935000337e10,
          2.02979612750105546709e13, 3.17157752842975028269e15, 2.50596256172653059228e17)  # fmt: skip
_Y1_YP = (1.26320474790178026440e09, -6.47355876379160291031e11, 1.14509511541823727583e14, -8.12770255501325109621e15,
          2.02439475713594898196e17, -7.78877196265950026825e17)  # fmt: skip
_Y1_YQ = (5.94301592346128195359e02, 2.35564092943068577943e05, 7.34811944459721705660e07, 1.87601316108706159478e10,
          3.88231277496238566008e12, 6.20557727146953693363e14, 6.87141087355300489866e16, 3.97270608116560655612e18)  # fmt: skip
_AI_AN = (3.46538101525629032477e-01, 1.20075952739645805542e01, 7.62796053615234516538e01, 1.68089224934630576269e02,
          1.59756391350164413639e02, 7.05360906840444183113e01, 1.40264691163389668864e01, 9.99999999999999995305e-01)  # fmt: skip
_AI_AD = (5.67594532638770212846e-01, 1.47562562584847203173e01, 8.45138970141474626562e01, 1.77318088145400459522e02,
          1.64234692871529701831e02, 7.14778400825575695274e01, 1.40959135607834029598e01, 1.00000000000000000470e00)  # fmt: skip
_AI_AFN = (-1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
           -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
           -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08)  # fmt: skip
_AI_AFD = (1.33560420706553243746e01, 3.26825032795224613948e01, 2.67367040941499554804e01, 9.18707402907259625840e00,
           1.47529146771666414581e00, 1.15687173795188044134e-01, 4.40291641615211203805e-03,
           7.54720348287414296618e-05, 4.51850092970580378464e-07)  # fmt: skip
_AI_AGN = (1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e00, 9.39169229816650230044e-01,
           3.51465656105547619242e-01, 6.33888919628925490927e-02, 5.85804113048388458567e-03,
           2.82851600836737019778e-04, 6.98793669997260967291e-06, 8.11789239554389293311e-08,
           3.41551784765923618484e-10)  # fmt: skip
_AI_AGD = (9.30892908077441974853e00, 1.98352928718312140417e01, 1.55646628932864612953e01, 5.47686069422975497931e00,
           9.54293611618961883998e-01, 8.64580826352392193095e-02, 4.12656523824222607191e-03,
           1.01259085116509135510e-04, 1.17166733214413521882e-06, 4.91834570062930015649e-09)  # fmt: skip

_SQRT_2_OVER_PI = 0.797884560802865355879892119868763737
_TWO_OVER_PI = 0.636619772367581343075535053490057448
_J0_ZEROS_SQUARED = (5.78318596294678452118e00, 3.04712623436620863991e01)
_J1_ZEROS_SQUARED = (1.46819706421238932572e01, 4.92184563216946036703e01)


def _poly(c: Any, coefficients: tuple[float, ...], v: Any) -> Any:
    """Horner's sum of ``coefficients`` (highest power first) at ``v``, from 0 as PyTorch's loops."""
    acc = c(0.0)
    for a in coefficients:
        acc = acc * v + c(a)
    return acc


def _hankel(raw: Any, c: Any, x: Any, order: int, second_kind: bool) -> Any:
    """``J``/``Y`` of order 0 or 1 above ``x = 5``: ``sqrt(2 / (pi x)) (P cos - Q sin)`` (``J``), ``(P sin + Q cos)`` (``Y``)."""
    pp, pq, qp, qq = (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ) if order == 0 else (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ)
    # (order 0 writes 25 / x^2, order 1 writes 5 / x * (5 / x): they round differently)
    w = c(25.0) / (x * x) if order == 0 else c(5.0) / x * (c(5.0) / x)
    p = _poly(c, pp, w) / _poly(c, pq, w)
    q = c(5.0) / x * (_poly(c, qp, w) / _poly(c, qq, w))
    phase = x - c(0.785398163397448309615660845819875721 if order == 0 else 2.356194490192344928846982537459627163)
    if second_kind:
        wave = p * raw.sin(phase) + q * raw.cos(phase)
    else:
        wave = p * raw.cos(phase) - q * raw.sin(phase)
    return wave * c(_SQRT_2_OVER_PI) / raw.sqrt(x)


def _j0(raw: Any, c: Any, x: Any) -> Any:
    x = raw.abs(x)
    small = x <= c(5.0)
    s = raw.where(small, x, c(1.0))
    y = s * s
    near = (y - c(_J0_ZEROS_SQUARED[0])) * (y - c(_J0_ZEROS_SQUARED[1])) * _poly(c, _J0_RP, y) / _poly(c, _J0_RQ, y)
    near = raw.where(s < c(0.00001), c(1.0) - s * s / c(4.0), near)
    return raw.where(small, near, _hankel(raw, c, raw.where(small, c(6.0), x), 0, False))


def _j1(raw: Any, c: Any, x: Any) -> Any:
    negative = x < c(0.0)
    a = raw.where(negative, -x, x)  # (PyTorch's: -J1(-x) below 0; -0.0 stays -0.0)
    small = a <= c(5.0)
    s = raw.where(small, a, c(1.0))
    y = s * s
    near = _poly(c, _J1_RP, y) / _poly(c, _J1_RQ, y) * s * (y - c(_J1_ZEROS_SQUARED[0])) * (y - c(_J1_ZEROS_SQUARED[1]))
    out = raw.where(small, near, _hankel(raw, c, raw.where(small, c(6.0), a), 1, False))
    return raw.where(negative, -out, out)


def _y0(raw: Any, c: Any, x: Any) -> Any:
    small = x <= c(5.0)
    s = raw.where(small & (x > c(0.0)), x, c(1.0))
    y = s * s
    near = _poly(c, _Y0_YP, y) / _poly(c, _Y0_YQ, y) + c(_TWO_OVER_PI) * raw.log(s) * _j0(raw, c, s)
    near = raw.where(x == c(0.0), c(-math.inf), raw.where(x < c(0.0), c(math.nan), near))
    return raw.where(small, near, _hankel(raw, c, raw.where(small, c(6.0), x), 0, True))


def _y1(raw: Any, c: Any, x: Any) -> Any:
    small = x <= c(5.0)
    s = raw.where(small & (x > c(0.0)), x, c(1.0))
    y = s * s
    near = s * (_poly(c, _Y1_YP, y) / _poly(c, _Y1_YQ, y)) + c(_TWO_OVER_PI) * (
        _j1(raw, c, s) * raw.log(s) - c(1.0) / s
    )
    near = raw.where(x == c(0.0), c(-math.inf), raw.where(x < c(0.0), c(math.nan), near))
    return raw.where(small, near, _hankel(raw, c, raw.where(small, c(6.0), x), 1, True))


def _airy_ai(raw: Any, c: Any, x: Any) -> Any:
    left, right = x < c(-2.09), x >= c(2.09)
    # below -2.09: sin/cos of zeta + pi/4 with the rational corrections in 1 / zeta
    a = raw.where(left, x, c(-3.0))
    zeta = c(-2.0) * a * raw.sqrt(-a) / c(3.0)
    z = c(1.0) / zeta
    zz = z * z
    t = zeta + c(0.25) * c(math.pi)
    far_left = (c(5.64189583547756286948e-01) / raw.sqrt(raw.sqrt(-a))
                * (raw.sin(t) * (c(1.0) + zz * _poly(c, _AI_AFN, zz) / _poly(c, _AI_AFD, zz))
                   - raw.cos(t) * (z * _poly(c, _AI_AGN, zz) / _poly(c, _AI_AGD, zz))))  # fmt: skip
    # above 2.09: exp(-zeta) times a ratio in 1 / zeta
    b = raw.where(right, x, c(3.0))
    zeta = c(2.0) * b * raw.sqrt(b) / c(3.0)
    w = c(1.0) / zeta
    far_right = (c(5.64189583547756286948e-01) * (_poly(c, _AI_AN, w) / _poly(c, _AI_AD, w))
                 / (c(2.0) * raw.sqrt(raw.sqrt(b)) * raw.exp(zeta)))  # fmt: skip
    # between: the Maclaurin series f - g, each entry summed until its term is below epsilon
    s = raw.where(left | right | raw.isnan(x), c(0.0), x)
    f, g, m, n = raw.ones_like(s), s, raw.ones_like(s), s
    cube = s * s * s
    eps = c(np.finfo(s.dtype).eps)
    active = raw.ones(s.shape, dtype=bool)
    k = 1.0
    while bool(active.any()):
        m2 = m * cube / c(k + 1.0)
        n2 = n * cube / c(k + 2.0)
        m2 = m2 / c(k + 2.0)
        f2 = f + m2
        n2 = n2 / c(k + 3.0)
        g2 = g + n2
        k += 3.0
        m, n = raw.where(active, m2, m), raw.where(active, n2, n)
        f, g = raw.where(active, f2, f), raw.where(active, g2, g)
        active = active & (raw.abs(m / f) > eps)
    series = c(0.355028053887817239260) * f - c(0.258819403792806798405) * g
    out = raw.where(left, far_left, raw.where(right, far_right, series))
    out = raw.where(x > c(103.892), c(0.0), out)
    return raw.where(raw.isinf(x), c(math.nan), raw.where(raw.isnan(x), x, out))


def _cephes_array(ns: Any, a: Any, function: Callable[..., Any]) -> Any:
    raw, to_raw, back = loop_namespace(ns.device)
    r = to_raw(a)
    c = r.dtype.type  # (each constant rounded to the input's dtype, as the kernel's T(...))
    with np.errstate(all="ignore"):
        return back(raw.asarray(function(raw, c, r), dtype=r.dtype))


_FUNCTIONS = {
    "bessel_j0": (_j0, "The Bessel function of the first kind of order 0, ``J0(x)``"),
    "bessel_j1": (_j1, "The Bessel function of the first kind of order 1, ``J1(x)``"),
    "bessel_y0": (_y0, "The Bessel function of the second kind of order 0, ``Y0(x)`` (``-inf`` at 0, NaN below)"),
    "bessel_y1": (_y1, "The Bessel function of the second kind of order 1, ``Y1(x)`` (``-inf`` at 0, NaN below)"),
    "airy_ai": (_airy_ai, "The Airy function ``Ai(x)`` (0 above 103.892, NaN at ``+-inf``)"),
}


def _declare(name: str) -> None:
    fn, what = _FUNCTIONS[name]

    def special(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
        x = tensor_arg(input, f"special_{name}").detach()
        x = x if x.dtype.kind == "f" else x.astype(float_dtype_of(x.dtype))
        return written_to_out(array_function(_cephes_array, x, function=fn), out, f"special_{name}")

    special.__name__ = special.__qualname__ = name
    special.__module__ = __name__
    special.__doc__ = f"{what}, ``torch.special.{name}``: Cephes' approximation, as PyTorch's; no gradient."
    globals()[name] = public(function=False, special=(name,), name=name, dtypes="no_half")(special)


for _name in _FUNCTIONS:
    _declare(_name)
