"""Matrix product, as ``numpy.matmul``: 1-D operands and broadcast batches.

(``ns.matrix_transpose`` rather than ``.mT``: CuPy arrays have no ``.mT``.)
"""

from __future__ import annotations

import math

from ..engine.function import Function, InvalidArgumentError
from ..engine.layout import row_major_array


def rows_shape(x):
    """``x (..., k)`` as a 2-D ``(rows, k)`` shape, the rows counted (``-1`` is ambiguous
    when ``k`` is 0, and an empty batch must stay a valid product)."""
    shape = tuple(x.shape)
    return (math.prod(shape[:-1]), shape[-1])


def batch_times_matrix(ns, a, b):
    """``a (..., m, k) @ b (k, n)`` (or ``a (k,)``) as one 2-D product (BLAS runs one
    large product faster than a batch of small ones)."""
    if a.ndim == 2 or (a.ndim == 3 and a.shape[0] == 1):  # one matrix already: no reshapes
        return ns.matmul(a, b)
    out = ns.matmul(ns.reshape(a, rows_shape(a)), b)  # (batch * m, n)
    return ns.reshape(out, (*a.shape[:-1], b.shape[-1]))


def matmul_shape_error(sa: tuple, sb: tuple) -> InvalidArgumentError:
    """The error for operands that cannot be multiplied, in the user's terms: both shapes
    and the dimension that disagrees (not the array library's gufunc signature)."""
    if not sa or not sb:
        msg = f"matmul: both operands need at least 1 dimension, got shapes {sa} and {sb}; use * for a scalar"
    else:
        kb_dim = 0 if len(sb) == 1 else -2
        if sa[-1] != sb[kb_dim]:
            which = "only" if len(sb) == 1 else "second-to-last"
            msg = (f"matmul: shapes {sa} and {sb} cannot be multiplied: the first's last dimension has size "
                   f"{sa[-1]} but the second's {which} dimension has size {sb[kb_dim]} (they must be equal); "
                   "transpose (.mT) or reshape one operand")  # fmt: skip
        else:
            msg = (f"matmul: shapes {sa} and {sb} cannot be multiplied: their batch dimensions {sa[:-2]} and "
                   f"{sb[:-2]} do not broadcast (each pair must be equal or one of them 1)")  # fmt: skip
    err = InvalidArgumentError(msg)  # (PyTorch's RuntimeError, and a ValueError)
    err.names_op = True  # type: ignore[attr-defined]  # complete as it is: _op_error passes it on
    return err


class Matmul(Function):
    __slots__ = ()
    primitive = True
    operands = ("a", "b")  # a @ b
    reads_output = False

    def keeps_input(self, i: int) -> bool:
        # As PyTorch's: each side's gradient reads the other side, so a side is kept only
        # when its partner needs a gradient (``x @ W`` with a frozen W keeps W alone)
        return getattr(self.inputs[1 - i], "requires_grad", False)

    def forward(self, ns, a, b):
        try:
            if b.ndim == 2 and a.ndim > 2:
                return batch_times_matrix(ns, a, b)
            return row_major_array(ns.matmul(a, b))  # (NumPy's batched product may follow a's batch order)
        except (ValueError, TypeError):
            raise matmul_shape_error(tuple(a.shape), tuple(b.shape)) from None

    def backward(self, g, ns, inputs, out):
        a, b = inputs
        mt = ns.matrix_transpose
        if b.ndim == 2 and a.ndim > 2:  # a weight shared by the batch; one 2-D product also sums over it
            a2 = ns.reshape(a, rows_shape(a))  # (batch * m, k)
            return batch_times_matrix(ns, g, mt(b)), ns.matmul(mt(a2), ns.reshape(g, rows_shape(g)))
        if a.ndim >= 2 and b.ndim >= 2:  # (..., m, k) @ (..., k, n)
            return ns.matmul(g, mt(b)), ns.matmul(mt(a), g)
        # 1-D operands: promote as matmul does, then drop the added axis again.
        a2 = ns.reshape(a, (1,) + tuple(a.shape)) if a.ndim == 1 else a  # (..., m, k)
        b2 = ns.reshape(b, tuple(b.shape) + (1,)) if b.ndim == 1 else b  # (..., k, n)
        gshape = tuple(g.shape)
        if a.ndim == 1:
            gshape = gshape[:-1] + (1,) + gshape[-1:] if b.ndim > 1 else gshape + (1,)
        if b.ndim == 1:
            gshape = gshape + (1,)
        g2 = ns.reshape(g, gshape)  # (..., m, n)
        ga = ns.matmul(g2, ns.matrix_transpose(b2))
        gb = ns.matmul(ns.matrix_transpose(a2), g2)
        if a.ndim == 1:
            ga = ns.reshape(ga, tuple(ga.shape[:-2]) + tuple(ga.shape[-1:]))
        if b.ndim == 1:
            gb = ns.reshape(gb, tuple(gb.shape[:-1]))
        return ga, gb
