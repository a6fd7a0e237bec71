"""Recurrent layers as one node each: a whole sequence (or one cell step) forward, and a
hand-written backward through time.

Not primitives: each class is the fast path of the ``recurrence`` composite in
:mod:`tinygrad_attn.nn.rnn`, whose primitive definition (one small op per gate and
step) stays the reference; the tests hold the two equal, and higher orders run through
it (see ``FusedFunction``).

Inputs, in order: ``x``, ``h0``, ``c0`` (the LSTM's; else None), ``w_ih``, ``w_hh``,
``b_ih``, ``b_hh`` (the states and biases may be None). ``args = (reverse, batch_first,
cell, lengths)``; ``lengths`` (a tuple of ints, one per sequence of the batch, or None)
makes each sequence stop at its own last step, as a ``PackedSequence`` does in PyTorch:
past it the state is carried unchanged and the outputs are zeros, and the reverse
direction starts at that step. The mask is applied inside the step loop, forward and
backward. The layer form takes ``x`` ``(T, B, in)`` (``(B, T, in)`` with ``batch_first``)
and returns every hidden state in the same layout; the cell form takes ``(B, in)`` or
``(in,)`` and returns the next state. The LSTM stacks the cell states under the hidden
ones: its output has a leading axis of 2 (``out[0]`` = h, ``out[1]`` = c).

What makes it fast: the input half of every step is one matrix product over the whole
sequence; each step then makes one product with ``W_hh`` and a few elementwise calls
over all gates at once, writing into buffers allocated once per call. Backward runs the
steps in reverse to collect the gates' gradients in one buffer, then gets ``W_ih``,
``W_hh``, both biases and ``x`` from it with one product each. Sigmoids are written as
``0.5 * tanh(x / 2) + 0.5``: one transcendental call, never overflowing. On NumPy the
LSTM writes every step into preallocated buffers (``out=``) and takes all four gates from
one ``exp``; with numba installed (the ``jit`` extra) each step's arithmetic between NumPy's
``exp`` and ``tanh``, and each step of the backward, is one compiled loop
(:mod:`.cpu_kernels`), the same numbers bit for bit. Other namespaces, and ragged lengths,
run the generic loop.
"""

from __future__ import annotations

import numpy as np

from ..engine.composite import FusedFunction
from . import cpu_kernels


def _rows(ns, a):
    """``a`` ``(..., n)`` as a 2-D ``(rows, n)`` array."""
    return ns.reshape(a, (-1, a.shape[-1]))


def _prev_states(ns, seq, h0, reverse, masks=None):
    """The state each step starts from, ``(T, B, H)``: ``h0`` then all but the last. With
    lengths (``masks``), a step whose neighbour is past its sequence's end starts from
    ``h0`` (the reverse direction's first step)."""
    first = ns.reshape(h0, (1,) + tuple(h0.shape))
    if reverse:
        prev = ns.concat([seq[1:, ...], first], axis=0)
    else:
        prev = ns.concat([first, seq[:-1, ...]], axis=0)
    if masks is None:
        return prev
    on = masks[0]
    edge = ns.ones_like(on[:1, ...])
    came = ns.concat([on[1:, ...], edge], axis=0) if reverse else ns.concat([edge, on[:-1, ...]], axis=0)
    return ns.where(came, prev, first)


def _host_length_masks(ns, lengths, t_len, dtype):
    """``(on, on_f, off_f, ragged)``: the first three ``(T, B, 1)``, whether step t is within
    sequence b's length (bool, then as 1/0 and 0/1 in ``dtype``); ``ragged[t]`` (host bools):
    whether some sequence has ended by step t (the other steps take the unmasked path).
    None without lengths. Made on the host from the Python ints of ``lengths``."""
    if lengths is None:
        return None
    dev = ns.device
    on = (np.arange(t_len)[:, None] < np.asarray(lengths, dtype=np.int64)[None, :])[..., None]
    nd = dev.np_dtype(dtype)
    ragged = tuple(bool(r) for r in ~on.all(axis=(1, 2)))
    return dev.asarray(on), dev.asarray(on.astype(nd)), dev.asarray((~on).astype(nd)), ragged


def _lengths(args):
    return args[3] if len(args) > 3 else None


def _in_place(ns, args, t_len: int) -> bool:
    """Whether the LSTM takes its NumPy path: functions that write into given buffers
    (``out=``), so the steps allocate nothing and every gate stays in one buffer. Only
    NumPy here (array_api_strict has no ``out=``; CuPy keeps the path its tests cover), and
    only where no sequence ends early: masked steps keep the generic loop, and lengths that
    all reach the last step give the same numbers as none."""
    lengths = _lengths(args)
    return ns.device.xp is np and (lengths is None or min(lengths) >= t_len)


class _Recurrence(FusedFunction):
    """The plumbing shared by the four recurrences: layouts, the input projection and the
    gradients of the weights; subclasses give the step loop (``run``) and its reverse
    (``bptt``) on time-major arrays."""

    __slots__ = ()
    operands = ("input", "h0", "c0", "weight_ih", "weight_hh", "bias_ih", "bias_hh")
    gates = 1
    pair = False  # the LSTM's output stacks (h, c)
    mode = ""
    fold_bias = True  # b_hh can join b_ih in the input projection (not the GRU's: b_hn is inside r * (...))

    def forward(self, ns, x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        reverse, batch_first, cell = self.args[:3]
        dev = ns.device
        hidden = w_hh.shape[1]
        x_shape = tuple(x.shape)
        if cell:
            x = ns.reshape(x, (1, -1, x.shape[-1]))  # (1, B, in)
        gi = ns.matmul(_rows(ns, x), ns.matrix_transpose(w_ih))  # one product for every step
        if b_ih is not None:
            gi += b_ih
        if self.fold_bias and b_hh is not None:
            gi += b_hh
        gi = ns.reshape(gi, tuple(x.shape[:-1]) + (gi.shape[-1],))
        if batch_first and not cell:
            gi = ns.permute_dims(gi, (1, 0, 2))  # (T, B, G): a view, read step by step
        batch = gi.shape[1]
        h = ns.reshape(h0, (batch, hidden)) if h0 is not None else dev.zeros((batch, hidden), gi.dtype)
        c = None
        if self.pair:
            c = ns.reshape(c0, (batch, hidden)) if c0 is not None else dev.zeros((batch, hidden), gi.dtype)
        masks = _host_length_masks(ns, _lengths(self.args), gi.shape[0], gi.dtype)
        out = self.run(ns, gi, h, c, w_hh, b_hh, reverse, masks)  # (T, B, H), or (2, T, B, H)
        if cell:  # (B, H) or (H,), under the LSTM's leading 2
            return ns.reshape(out, ((2,) if self.pair else ()) + x_shape[:-1] + (hidden,))
        if batch_first:
            return ns.permute_dims(out, (0, 2, 1, 3) if self.pair else (1, 0, 2))
        return out

    def backward_arrays(self, g, ns, inputs, out):
        x, h0, c0, w_ih, w_hh, b_ih, b_hh = inputs
        reverse, batch_first, cell = self.args[:3]
        hidden = w_hh.shape[1]
        x_shape = tuple(x.shape)
        if cell:
            x = ns.reshape(x, (1, -1, x.shape[-1]))
            g = ns.reshape(g, ((2,) if self.pair else ()) + (1, -1, hidden))
            out = ns.reshape(out, tuple(g.shape))
        elif batch_first:  # time-major views of what backward reads
            g = ns.permute_dims(g, (0, 2, 1, 3) if self.pair else (1, 0, 2))
            out = ns.permute_dims(out, (0, 2, 1, 3) if self.pair else (1, 0, 2))
        batch = out.shape[-2]
        dev = ns.device
        zeros = dev.zeros((batch, hidden), out.dtype)
        h0 = ns.reshape(h0, (batch, hidden)) if h0 is not None else zeros
        if self.pair:
            c0 = ns.reshape(c0, (batch, hidden)) if c0 is not None else zeros
        masks = _host_length_masks(ns, _lengths(self.args), out.shape[-3], out.dtype)
        d_i, d_h, dh0, dc0 = self.bptt(ns, g, out, h0, c0, w_hh, b_hh, reverse, masks)  # (T, B, G) each
        # The weights' gradients: one product over all steps each.
        if batch_first and not cell:  # rows in x's (B, T) order
            x_rows = _rows(ns, x)
            di_rows = _rows(ns, ns.permute_dims(d_i, (1, 0, 2)))
        else:
            x_rows, di_rows = _rows(ns, x), _rows(ns, d_i)
        hs = out[0, ...] if self.pair else out
        dh_rows = _rows(ns, d_h)  # time-major, as the states it multiplies
        h_rows = _rows(ns, _prev_states(ns, hs, h0, reverse, masks))
        gx = None
        recorded = getattr(self, "inputs", None)  # (None in a traced program's replay: compute all)
        if recorded is None or getattr(recorded[0], "requires_grad", True):
            gx = ns.reshape(ns.matmul(di_rows, w_ih), x_shape)
        gw_ih = ns.matmul(ns.matrix_transpose(di_rows), x_rows)
        gw_hh = ns.matmul(ns.matrix_transpose(dh_rows), h_rows)
        gb_ih = ns.sum(di_rows, axis=0) if b_ih is not None else None
        gb_hh = ns.sum(dh_rows, axis=0) if b_hh is not None else None
        if inputs[1] is not None:
            dh0 = ns.reshape(dh0, tuple(inputs[1].shape))
        else:
            dh0 = None
        if self.pair and inputs[2] is not None:
            dc0 = ns.reshape(dc0, tuple(inputs[2].shape))
        else:
            dc0 = None
        return gx, dh0, dc0, gw_ih, gw_hh, gb_ih, gb_hh

    def recompute(self, x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        reverse, batch_first, cell = self.args[:3]
        return self.definition(self.mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse, batch_first, cell,
                               lengths=_lengths(self.args))  # fmt: skip

    def run(self, ns, gi, h, c, w_hh, b_hh, reverse, masks):  # pragma: no cover - abstract
        raise NotImplementedError

    def bptt(self, ns, g, out, h0, c0, w_hh, b_hh, reverse, masks):  # pragma: no cover - abstract
        raise NotImplementedError


def _steps(n, reverse):
    return range(n - 1, -1, -1) if reverse else range(n)


def _order(n, reverse):
    """``(first, later, before)`` of ``n`` steps run forward (or in ``reverse``): the step that
    starts from the initial state, the steps after another step, and those steps'
    predecessors (slices of the time axis, ``later[i]`` following ``before[i]``)."""
    if reverse:
        return n - 1, slice(None, -1), slice(1, None)
    return 0, slice(1, None), slice(None, -1)


class RNNTanh(_Recurrence):
    """Elman: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)``."""

    __slots__ = ()
    name = "rnn_tanh"
    mode = "rnn_tanh"

    def activate(self, ns, a):
        return ns.tanh(a)

    def slope(self, ns, hs):
        """The activation's derivative at every step, from its outputs."""
        return 1.0 - hs * hs

    def run(self, ns, gi, h, c, w_hh, b_hh, reverse, masks):
        t_len = gi.shape[0]
        hs = ns.device.empty((t_len,) + tuple(h.shape), gi.dtype)
        w_t = ns.matrix_transpose(w_hh)
        for t in _steps(t_len, reverse):
            a = ns.matmul(h, w_t)
            a += gi[t, ...]
            if masks is None or not masks[3][t]:
                h = self.activate(ns, a)
                hs[t, ...] = h
            else:  # past a sequence's end: its state carried, its output zero
                new = self.activate(ns, a)
                hs[t, ...] = new * masks[1][t, ...]
                h = ns.where(masks[0][t, ...], new, h)
        return hs

    def bptt(self, ns, g, hs, h0, c0, w_hh, b_hh, reverse, masks):
        d = self.slope(ns, hs)  # (T, B, H), overwritten below by the gates' gradients
        if masks is not None:  # padded steps: no gradient in, none to the gates
            g = g * masks[1]
            d = d * masks[1]
        dh = None
        for t in _steps(hs.shape[0], not reverse):
            gt = g[t, ...] if dh is None else g[t, ...] + dh
            dt = gt * d[t, ...]
            d[t, ...] = dt
            dh = ns.matmul(dt, w_hh)
            if masks is not None and masks[3][t]:  # a carried state passes its gradient on unchanged
                dh += gt * masks[2][t, ...]
        return d, d, dh, None


class RNNRelu(RNNTanh):
    """Elman with ``relu``."""

    __slots__ = ()
    name = "rnn_relu"
    mode = "rnn_relu"

    def activate(self, ns, a):
        return ns.maximum(a, 0.0)

    def slope(self, ns, hs):
        return ns.astype(hs > 0, hs.dtype)


class GRURecurrence(_Recurrence):
    """PyTorch's GRU: ``r, z = sigmoid(i_rz + h_rz)``, ``n = tanh(i_n + r * h_n)``,
    ``h' = n + z * (h - n)``; ``h_n`` includes ``b_hn``, so that bias stays out of the
    input projection."""

    __slots__ = ()
    name = "gru"
    mode = "gru"
    gates = 3
    fold_bias = False

    def run(self, ns, gi, h, c, w_hh, b_hh, reverse, masks):
        t_len, batch, _ = gi.shape
        n_h = h.shape[-1]
        empty = ns.device.empty
        hs = empty((t_len, batch, n_h), gi.dtype)
        # Kept for backward: r and z (T, B, 2H), n, and W_hn h + b_hn.
        rz_all, n_all, hn_all = empty((t_len, batch, 2 * n_h), gi.dtype), empty((t_len, batch, n_h), gi.dtype), \
            empty((t_len, batch, n_h), gi.dtype)  # fmt: skip
        w_t = ns.matrix_transpose(w_hh)
        for t in _steps(t_len, reverse):
            gh = ns.matmul(h, w_t)  # (B, 3H)
            if b_hh is not None:
                gh += b_hh
            git = gi[t, ...]
            rz = gh[:, : 2 * n_h] + git[:, : 2 * n_h]
            rz *= 0.5
            rz = ns.tanh(rz)
            rz *= 0.5
            rz += 0.5  # sigmoid
            hn = gh[:, 2 * n_h :]
            a = rz[:, :n_h] * hn
            a += git[:, 2 * n_h :]
            n = ns.tanh(a)
            before = h
            h = h - n
            h *= rz[:, n_h:]
            h += n
            rz_all[t, ...], n_all[t, ...], hn_all[t, ...] = rz, n, hn
            if masks is None or not masks[3][t]:
                hs[t, ...] = h
            else:  # past a sequence's end: its state carried, its output zero
                hs[t, ...] = h * masks[1][t, ...]
                h = ns.where(masks[0][t, ...], h, before)
        self.ctx = (rz_all, n_all, hn_all)
        return hs

    def bptt(self, ns, g, hs, h0, c0, w_hh, b_hh, reverse, masks):
        rz_all, n_all, hn_all = self.ctx
        t_len, batch, n_h = hs.shape
        prev = _prev_states(ns, hs, h0, reverse, masks)
        if masks is not None:  # padded steps: no gradient in
            g = g * masks[1]
        # The gates' local slopes, for all steps at once: sigmoid' = s (1 - s), tanh' = 1 - n^2.
        drz = rz_all - rz_all * rz_all
        dn_all = 1.0 - n_all * n_all
        d_i = ns.device.empty((t_len, batch, 3 * n_h), hs.dtype)
        d_h = ns.device.empty((t_len, batch, 3 * n_h), hs.dtype)
        dh = None
        for t in _steps(t_len, not reverse):
            gt = g[t, ...] if dh is None else g[t, ...] + dh  # (B, H)
            z = rz_all[t, :, n_h:]
            through = gt * z  # what reaches h directly
            da_n = gt - through  # dL/dn
            da_n *= dn_all[t, ...]  # dL/d(i_n + r h_n)
            d_rz = ns.concat([da_n * hn_all[t, ...], gt * (prev[t, ...] - n_all[t, ...])], axis=-1)  # dL/dr, dL/dz
            d_rz *= drz[t, ...]
            ragged = masks is not None and masks[3][t]
            if ragged:  # none to a padded step's gates
                da_n *= masks[1][t, ...]
                d_rz *= masks[1][t, ...]
            d_i[t, :, : 2 * n_h] = d_rz
            d_i[t, :, 2 * n_h :] = da_n
            d_h[t, :, : 2 * n_h] = d_rz
            d_h[t, :, 2 * n_h :] = da_n * rz_all[t, :, :n_h]
            dh = ns.matmul(d_h[t, ...], w_hh)
            if not ragged:
                dh += through
            else:  # a carried state passes its gradient on unchanged
                dh += through * masks[1][t, ...]
                dh += gt * masks[2][t, ...]
        return d_i, d_h, dh, None


class LSTMRecurrence(_Recurrence):
    """PyTorch's LSTM, gates i, f, g, o: ``c' = f c + i g``, ``h' = o tanh(c')``."""

    __slots__ = ()
    name = "lstm"
    mode = "lstm"
    gates = 4
    pair = True

    def _affine(self, ns, n_h, dtype):
        """Per-gate scale and shift that turn one tanh over all gates into sigmoid, sigmoid,
        tanh, sigmoid: ``sigmoid(a) = 0.5 tanh(0.5 a) + 0.5``."""
        dev = ns.device
        scale = dev.zeros((4 * n_h,), dtype)
        scale += 0.5
        scale[2 * n_h : 3 * n_h] = 1.0
        shift = scale - 0.0
        shift[2 * n_h : 3 * n_h] = 0.0
        return scale, shift

    def run(self, ns, gi, h, c, w_hh, b_hh, reverse, masks):
        t_len, batch, _ = gi.shape
        n_h = h.shape[-1]
        empty = ns.device.empty
        out = empty((2, t_len, batch, n_h), gi.dtype)  # every h, then every c
        gates = empty((t_len, batch, 4 * n_h), gi.dtype)
        tcs = empty((t_len, batch, n_h), gi.dtype)  # tanh(c)
        scale, shift = self._affine(ns, n_h, gi.dtype)
        # The tanh's argument scale goes on both halves once, not on every step's sum.
        gi = gi * scale  # (T, B, 4H), time-major
        w_t = ns.matrix_transpose(w_hh) * scale
        for t in _steps(t_len, reverse):
            a = ns.matmul(h, w_t)  # (B, 4H)
            a += gi[t, ...]
            u = ns.tanh(a)
            u *= scale
            u += shift  # i, f, g, o
            h_before, c_before = h, c
            c = u[:, n_h : 2 * n_h] * c
            c += u[:, :n_h] * u[:, 2 * n_h : 3 * n_h]
            tc = ns.tanh(c)
            h = u[:, 3 * n_h :] * tc
            gates[t, ...], tcs[t, ...] = u, tc
            if masks is None or not masks[3][t]:
                out[0, t, ...], out[1, t, ...] = h, c
            else:  # past a sequence's end: its state carried, its outputs zero
                on, on_f = masks[0][t, ...], masks[1][t, ...]
                out[0, t, ...], out[1, t, ...] = h * on_f, c * on_f
                h, c = ns.where(on, h, h_before), ns.where(on, c, c_before)
        self.ctx = (gates, tcs)
        return out

    def bptt(self, ns, g, out, h0, c0, w_hh, b_hh, reverse, masks):
        gates, tcs = self.ctx
        t_len, batch, n_h = tcs.shape
        c_prev = _prev_states(ns, out[1, ...], c0, reverse, masks)
        # Everything that does not depend on the incoming gradient, for all steps at once:
        # the gates' gradients are dc * (g i', c_prev f', i g') and dh * tanh(c) o', where
        # s' = s (1 - s) for the sigmoids and g' = 1 - g^2.
        slope = gates - gates * gates
        gg = gates[..., 2 * n_h : 3 * n_h]
        slope[..., 2 * n_h : 3 * n_h] = 1.0 - gg * gg
        q = ns.concat([gg, c_prev, gates[..., :n_h], tcs], axis=-1)
        q *= slope
        q = ns.reshape(q, (t_len, batch, 4, n_h))
        o_dtc = gates[..., 3 * n_h :] * (1.0 - tcs * tcs)  # d c / d h through h = o tanh(c)
        f = gates[..., n_h : 2 * n_h]
        d = ns.device.empty((t_len, batch, 4, n_h), tcs.dtype)
        d_rows = ns.reshape(d, (t_len, batch, 4 * n_h))
        g_h, g_c = g[0, ...], g[1, ...]
        dh = dc_next = None
        if masks is not None:
            return self._bptt_masked(ns, g_h * masks[1], g_c * masks[1], q, o_dtc, f, d, d_rows, w_hh, reverse, masks)
        for t in _steps(t_len, not reverse):
            gt = g_h[t, ...] if dh is None else g_h[t, ...] + dh
            dc = gt * o_dtc[t, ...]
            dc += g_c[t, ...]
            if dc_next is not None:
                dc += dc_next
            d[t, :, :3, :] = ns.reshape(dc, (batch, 1, n_h)) * q[t, :, :3, :]
            d[t, :, 3, :] = gt * q[t, :, 3, :]
            dc_next = dc * f[t, ...]
            dh = ns.matmul(d_rows[t, ...], w_hh)
        return d_rows, d_rows, dh, dc_next

    def _bptt_masked(self, ns, g_h, g_c, q, o_dtc, f, d, d_rows, w_hh, reverse, masks):
        """The loop of :meth:`bptt` with lengths: a padded step's gates get no gradient, and
        its carried ``h`` and ``c`` pass theirs on unchanged."""
        t_len, batch, _, n_h = d.shape
        _, on_f, off_f, ragged = masks
        dh = dc_next = None
        for t in _steps(t_len, not reverse):
            gt = g_h[t, ...] if dh is None else g_h[t, ...] + dh
            dc = gt * o_dtc[t, ...]
            dc += g_c[t, ...]
            if not ragged[t]:  # every sequence is within its length here: bptt's step
                if dc_next is not None:
                    dc += dc_next
                d[t, :, :3, :] = ns.reshape(dc, (batch, 1, n_h)) * q[t, :, :3, :]
                d[t, :, 3, :] = gt * q[t, :, 3, :]
                dc_next = dc * f[t, ...]
                dh = ns.matmul(d_rows[t, ...], w_hh)
                continue
            dc *= on_f[t, ...]  # (zero where padded)
            if dc_next is not None:
                dc = dc + dc_next * on_f[t, ...]
                carried = dc_next * off_f[t, ...]
            else:
                carried = None
            d[t, :, :3, :] = ns.reshape(dc, (batch, 1, n_h)) * q[t, :, :3, :]
            d[t, :, 3, :] = gt * on_f[t, ...] * q[t, :, 3, :]
            dc_next = dc * f[t, ...]
            if carried is not None:
                dc_next += carried
            dh = ns.matmul(d_rows[t, ...], w_hh)
            dh += gt * off_f[t, ...]
        return d_rows, d_rows, dh, dc_next

    # -- NumPy: the same steps written into preallocated buffers --------------------------
    # The generic loop above makes a new array per elementwise call and assembles the
    # backward's per-gate factors with concatenations: at (T 50, B 32, H 256) some 60 MB of
    # new arrays per call, a third of them pages the system hands out fresh (a page fault
    # each). Here every value is written where it is kept, with NumPy's ``out=``.

    def forward(self, ns, x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        reverse, batch_first, cell = self.args[:3]
        if not _in_place(ns, self.args, 1 if cell else x.shape[1 if batch_first else 0]):
            return super().forward(ns, x, h0, c0, w_ih, w_hh, b_ih, b_hh)
        n_h = w_hh.shape[1]
        x_shape = tuple(x.shape)
        dtype = np.result_type(*[a for a in (x, h0, c0, w_ih, w_hh, b_ih, b_hh) if a is not None])
        if cell:
            x = x.reshape(1, -1, x_shape[-1])  # (1, B, in)
        elif batch_first:
            x = x.transpose(1, 0, 2)  # (T, B, in)
        t_len, batch = x.shape[0], x.shape[1]
        # Every gate as a sigmoid, from one exp over the step's (B, 4H) block (NumPy's float32
        # exp is vectorised, its tanh is not: 30% less time): sigmoid(a) = 1 / (1 + exp(-a)),
        # and the cell gate tanh(a) = 2 sigmoid(2a) - 1, which differs from tanh by a few float32
        # roundings of 1 (as far from float64 as PyTorch's float32 LSTM is). The
        # factors -1 and -2 go into the weights and the bias once, so that the projection
        # gives every step's exp argument.
        scale = np.full(4 * n_h, -1.0, dtype)
        scale[2 * n_h : 3 * n_h] = -2.0
        # The gates gate-major, (T, 4, B, H): each step's gate is then one contiguous (B, H)
        # block, and NumPy's ufuncs on contiguous blocks cost a third of those on the
        # strided column slices of a (B, 4H) row (3.5 against 1 us a call at B 2, H 16).
        rows = np.matmul(x.reshape(-1, x.shape[-1]), w_ih.T * scale)  # (T B, 4H)
        if b_ih is not None or b_hh is not None:
            bias = b_ih + b_hh if b_ih is not None and b_hh is not None else b_ih if b_ih is not None else b_hh
            rows += bias * scale
        gates = np.empty((t_len, 4, batch, n_h), dtype)  # i, f, g, o
        np.copyto(gates, rows.reshape(t_len, batch, 4, n_h).transpose(0, 2, 1, 3))
        w_h = w_hh.T * scale  # (H, 4H)
        out = np.empty((2, t_len, batch, n_h), dtype)  # every h, then every c
        tcs = np.empty((t_len, batch, n_h), dtype)  # tanh(c)
        h = h0.reshape(batch, n_h) if h0 is not None else np.zeros((batch, n_h), dtype)
        c = c0.reshape(batch, n_h) if c0 is not None else np.zeros((batch, n_h), dtype)
        hw = np.empty((batch, 4 * n_h), dtype)
        hw_gates = hw.reshape(batch, 4, n_h).transpose(1, 0, 2)  # (4, B, H): the same memory, gate-major
        ig = np.empty((batch, n_h), dtype)
        one, two = dtype.type(1), dtype.type(2)  # (a NumPy scalar: a Python float costs a conversion per call)
        add, multiply, subtract = np.add, np.multiply, np.subtract
        step = cpu_kernels.kernel("lstm_forward") if cpu_kernels.float_arrays(gates) else None
        if step is not None:  # the step's elementwise part as one compiled loop
            c = np.ascontiguousarray(c, dtype)
        with np.errstate(over="ignore"):  # exp(-a) = inf for a < -88 (float32): the sigmoid is 0, as it should be
            for t in _steps(t_len, reverse):
                u = gates[t]  # (4, B, H)
                np.matmul(h, w_h, out=hw)
                add(u, hw_gates, out=u)
                np.exp(u, out=u)
                c_new, tc, h = out[1, t], tcs[t], out[0, t]
                if step is not None:
                    step(u, c, c_new)
                else:
                    add(u, one, out=u)
                    np.reciprocal(u, out=u)
                    i_t, f_t, g_t = u[0], u[1], u[2]
                    multiply(g_t, two, out=g_t)
                    subtract(g_t, one, out=g_t)  # i, f, g, o
                    multiply(f_t, c, out=c_new)
                    multiply(i_t, g_t, out=ig)
                    add(c_new, ig, out=c_new)
                np.tanh(c_new, out=tc)
                multiply(u[3], tc, out=h)
                c = c_new
        self.ctx = (gates, tcs)
        if cell:
            return out.reshape((2,) + x_shape[:-1] + (n_h,))
        if batch_first:
            return out.transpose(0, 2, 1, 3)
        return out

    def backward_arrays(self, g, ns, inputs, out):
        x, h0, c0, w_ih, w_hh, b_ih, b_hh = inputs
        reverse, batch_first, cell = self.args[:3]
        if not _in_place(ns, self.args, 1 if cell else out.shape[2 if batch_first else 1]):
            return super().backward_arrays(g, ns, inputs, out)
        gates, tcs = self.ctx
        t_len, batch, n_h = tcs.shape
        x_shape = tuple(x.shape)
        if cell:
            x = x.reshape(1, -1, x_shape[-1])
        elif batch_first:  # time-major views of what backward reads
            x = x.transpose(1, 0, 2)
            g, out = g.transpose(0, 2, 1, 3), out.transpose(0, 2, 1, 3)
        g = g.reshape(2, t_len, batch, n_h)
        hs, cs = out.reshape(2, t_len, batch, n_h)
        step = cpu_kernels.kernel("lstm_backward") if cpu_kernels.float_arrays(gates, tcs) else None
        if step is not None:
            rows, dh, dc_next = self._bptt_compiled(step, g, cs, c0, w_hh, reverse)
        else:
            rows, dh, dc_next = self._bptt_numpy(g, cs, c0, w_hh, reverse)
        return self._weight_gradients(rows, dh, dc_next, x, x_shape, hs, inputs)

    def _bptt_compiled(self, step, g, cs, c0, w_hh, reverse):
        """The loop of :meth:`_bptt_numpy` with each step's elementwise part one compiled
        call (``ops.cpu_kernels``): the same formulas in the same order, so the same numbers."""
        gates, tcs = self.ctx
        t_len, batch, n_h = tcs.shape
        dtype = gates.dtype
        g_h, g_c = np.ascontiguousarray(g, dtype)  # (an output's gradient is often a broadcast)
        cs = np.ascontiguousarray(cs, dtype)
        first = _order(t_len, reverse)[0]
        c_first = np.ascontiguousarray(c0.reshape(batch, n_h), dtype) if c0 is not None else cs[first]
        back = 1 if reverse else -1  # where the step before a step lies
        rows = np.empty((t_len, batch, 4 * n_h), dtype)
        dh = np.empty((batch, n_h), dtype)
        dc_next = np.empty((batch, n_h), dtype)
        for k, t in enumerate(_steps(t_len, not reverse)):
            c_prev = c_first if t == first else cs[t + back]
            step(gates[t], tcs[t], c_prev, t != first or c0 is not None, g_h[t], g_c[t], dh, k == 0, dc_next, rows[t])
            np.matmul(rows[t], w_hh, out=dh)
        return rows, dh, dc_next

    def _bptt_numpy(self, g, cs, c0, w_hh, reverse):
        """The backward loop in NumPy calls: the gates' gradients ``(T, B, 4H)``, and those
        of the state the first step starts from, h and c."""
        gates, tcs = self.ctx
        t_len, batch, n_h = tcs.shape
        first, later, before = _order(t_len, reverse)
        # What does not depend on the incoming gradient, for all steps at once, into the
        # buffer that becomes the gates' gradients: dL/d(gate pre-activations) is
        # dc * (g i', c_prev f', i g') and dh * tanh(c) o', s' = s (1 - s), g' = 1 - g^2.
        # Gate-major (T, 4, B, H) as the forward's gates, so each step's calls run on
        # contiguous (B, H) blocks; each step's block is copied into ``rows`` (T, B, 4H) for the
        # step's product with W_hh and the weights' products after the loop.
        d = np.empty((t_len, 4, batch, n_h), gates.dtype)
        rows = np.empty((t_len, batch, 4 * n_h), gates.dtype)
        rows_gates = rows.reshape(t_len, batch, 4, n_h).transpose(0, 2, 1, 3)  # (T, 4, B, H) view
        np.multiply(gates, gates, out=d)
        np.subtract(gates, d, out=d)  # s (1 - s), and g - g^2 where g' is due
        i, f, gg, o = (gates[:, k] for k in range(4))  # (T, B, H) each
        d_i, d_f, d_g, d_o = (d[:, k] for k in range(4))
        np.multiply(gg, gg, out=d_g)
        np.subtract(1.0, d_g, out=d_g)
        d_i *= gg
        d_g *= i
        d_o *= tcs
        d_f[later] *= cs[before]
        if c0 is not None:
            d_f[first] *= c0.reshape(batch, n_h)
        else:
            d_f[first] = 0.0
        o_dtc = tcs * tcs  # dc / dh through h = o tanh(c): o (1 - tanh(c)^2)
        np.subtract(1.0, o_dtc, out=o_dtc)
        o_dtc *= o
        g_h, g_c = g[0], g[1]
        gt = np.empty((batch, n_h), gates.dtype)
        dc = np.empty((batch, n_h), gates.dtype)
        dc_next = np.empty((batch, n_h), gates.dtype)
        dh = np.empty((batch, n_h), gates.dtype)
        for k, t in enumerate(_steps(t_len, not reverse)):
            if k:
                np.add(g_h[t], dh, out=gt)
            else:
                gt[...] = g_h[t]
            np.multiply(gt, o_dtc[t], out=dc)
            dc += g_c[t]
            if k:
                dc += dc_next
            d_t = d[t]  # (4, B, H)
            d_t[:3] *= dc
            d_t[3] *= gt
            np.multiply(dc, f[t], out=dc_next)
            np.copyto(rows_gates[t], d_t)
            np.matmul(rows[t], w_hh, out=dh)
        return rows, dh, dc_next

    def _weight_gradients(self, rows, dh, dc_next, x, x_shape, hs, inputs):
        """The inputs' gradients from the gates' ``rows`` ``(T, B, 4H)``: one product each."""
        _, h0, c0, w_ih, _, b_ih, b_hh = inputs
        reverse, batch_first, cell = self.args[:3]
        t_len, batch, n_g = rows.shape
        n_h = n_g // 4
        first, later, before = _order(t_len, reverse)
        # The weights' gradients: one product over all steps each.
        d_rows = rows.reshape(t_len * batch, 4 * n_h)
        x_rows = x.reshape(t_len * batch, x.shape[-1])
        gx = None
        recorded = getattr(self, "inputs", None)  # (None in a traced program's replay: compute all)
        if recorded is None or getattr(recorded[0], "requires_grad", True):
            gx = np.matmul(d_rows, w_ih).reshape(x.shape)
            if cell:
                gx = gx.reshape(x_shape)
            elif batch_first:
                gx = gx.transpose(1, 0, 2)
        gw_ih = np.matmul(d_rows.T, x_rows)
        # W_hh meets each step's previous h: hs shifted by a step, and h0 at the first.
        gw_hh = np.matmul(rows[later].reshape(-1, 4 * n_h).T, hs[before].reshape(-1, n_h))
        if h0 is not None:
            gw_hh += np.matmul(rows[first].T, h0.reshape(batch, n_h))
        gb = np.sum(d_rows, axis=0) if b_ih is not None or b_hh is not None else None
        gb_ih = gb if b_ih is not None else None
        gb_hh = (gb.copy() if b_ih is not None else gb) if b_hh is not None else None
        dh0 = dh.reshape(h0.shape) if h0 is not None else None
        dc0 = dc_next.reshape(c0.shape) if c0 is not None else None
        return gx, dh0, dc0, gw_ih, gw_hh, gb_ih, gb_hh


#: The fused recurrences, by mode.
RECURRENCES = {cls.mode: cls for cls in (RNNTanh, RNNRelu, GRURecurrence, LSTMRecurrence)}
