"""Packed sequences (``nn.utils.rnn``): packing and padding as PyTorch's, and ``nn.RNN``,
``nn.GRU``, ``nn.LSTM`` over a ``PackedSequence`` honouring each sequence's length: its
final state is the state at its own last step, padded outputs are zeros, the reverse
direction starts at its last step. The fused op (a lengths mask inside the step loop and
the backward through time) equals the decomposed reference, and both equal PyTorch in
float64, values and gradients."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor, nn
from tinygrad_attn.nn.rnn import recurrence
from tinygrad_attn.nn.utils.rnn import (
    PackedSequence,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)
from tinygrad_attn.ops import recurrent

torch = pytest.importorskip("torch")
TR = torch.nn.utils.rnn

MODES = ("rnn_tanh", "rnn_relu", "gru", "lstm")
GATES = {"rnn_tanh": 1, "rnn_relu": 1, "gru": 3, "lstm": 4}
LAYERS = {
    "rnn_tanh": (nn.RNN, torch.nn.RNN, {}),
    "rnn_relu": (nn.RNN, torch.nn.RNN, {"nonlinearity": "relu"}),
    "gru": (nn.GRU, torch.nn.GRU, {}),
    "lstm": (nn.LSTM, torch.nn.LSTM, {}),
}


def _both(a, requires_grad=True):
    return Tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad)


def _same_packed(p, tp):
    assert isinstance(p, PackedSequence)
    np.testing.assert_allclose(p.data.detach().numpy(), tp.data.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert p.batch_sizes.tolist() == tp.batch_sizes.tolist()
    for ours, theirs in ((p.sorted_indices, tp.sorted_indices), (p.unsorted_indices, tp.unsorted_indices)):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert ours.tolist() == theirs.tolist()


# -- packing and padding ------------------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize(
    ("lengths", "enforce_sorted"),
    [([5, 3, 3, 1], True), ([2, 5, 1, 4], False), ([3, 3, 3, 3], True), ([1, 3, 3, 2], False)],
)
def test_pack_and_pad_as_pytorch(lengths, enforce_sorted, batch_first, rng):
    shape = (4, 6, 2) if batch_first else (6, 4, 2)
    x, tx = _both(rng.standard_normal(shape))
    p = pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    tp = TR.pack_padded_sequence(tx, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    _same_packed(p, tp)
    padded, lens = pad_packed_sequence(p, batch_first=batch_first, padding_value=-1.0, total_length=7)
    tpadded, tlens = TR.pad_packed_sequence(tp, batch_first=batch_first, padding_value=-1.0, total_length=7)
    np.testing.assert_array_equal(padded.detach().numpy(), tpadded.detach().numpy())
    assert lens.tolist() == tlens.tolist() and lens.dtype == np.int64
    w = rng.standard_normal(padded.shape)
    (padded * Tensor(w)).sum().backward()
    (tpadded * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.detach().numpy(), tx.grad.detach().numpy())  # zeros at the padding


def test_lengths_as_tensors_and_pack_sequence_as_pytorch(rng):
    seqs = [rng.standard_normal((n, 3)) for n in (4, 2, 3)]
    ours = [Tensor(s) for s in seqs]
    theirs = [torch.tensor(s) for s in seqs]
    _same_packed(pack_sequence(ours, enforce_sorted=False), TR.pack_sequence(theirs, enforce_sorted=False))
    x = pad_sequence(ours, batch_first=True)
    p = pack_padded_sequence(x, tga.tensor([4, 2, 3]), batch_first=True, enforce_sorted=False)
    _same_packed(p, TR.pack_padded_sequence(TR.pad_sequence(theirs, batch_first=True), torch.tensor([4, 2, 3]),
                                            batch_first=True, enforce_sorted=False))  # fmt: skip
    back = unpack_sequence(p)
    for a, b in zip(back, seqs):
        np.testing.assert_array_equal(a.detach().numpy(), b)
    for a, b in zip(unpad_sequence(x, [4, 2, 3], batch_first=True), seqs):
        np.testing.assert_array_equal(a.detach().numpy(), b)
    assert p.to(tga.float32).data.dtype == np.float32 and p.double().data.dtype == np.float64
    assert not p.is_cuda


def test_bad_lengths_raise_as_pytorch():
    x = Tensor.zeros(4, 3, 2)
    for lengths, match in [
        ([3, 4, 1], "sorted in decreasing order"),
        ([4, 1, 0], "positive"),
        ([4, 3], "expected 3 lengths"),
    ]:
        with pytest.raises(RuntimeError, match=match):
            pack_padded_sequence(x, lengths)
        with pytest.raises(RuntimeError):
            TR.pack_padded_sequence(torch.zeros(4, 3, 2), lengths)
    with pytest.raises(RuntimeError, match="longer"):  # (PyTorch reads past the input's end here)
        pack_padded_sequence(x, [5, 3, 1])


# -- layers over packed batches ------------------------------------------------------------------
def _load(ours, theirs):
    theirs.double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours.double()


LAYER_OPTIONS = list(itertools.product([False, True], [1, 2], [False, True], [False, True]))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("bidirectional", "num_layers", "initial", "enforce_sorted"),
    LAYER_OPTIONS,
    ids=[f"bi{int(a)}-L{b}-h0{int(c)}-sorted{int(d)}" for a, b, c, d in LAYER_OPTIONS],
)
@pytest.mark.parametrize("decomposed", [False, True])
def test_layer_over_a_packed_batch_matches_torch(mode, bidirectional, num_layers, initial, enforce_sorted,
                                                 decomposed, rng):  # fmt: skip
    ours_cls, torch_cls, extra = LAYERS[mode]
    kw = dict(num_layers=num_layers, bidirectional=bidirectional, **extra)
    ours, theirs = ours_cls(3, 4, **kw), torch_cls(3, 4, **kw)
    _load(ours, theirs)
    lengths = [5, 4, 2, 1] if enforce_sorted else [2, 5, 1, 4]
    x, tx = _both(rng.standard_normal((5, 4, 3)))
    n = num_layers * (2 if bidirectional else 1)
    h0, th0 = _both(rng.standard_normal((n, 4, 4)))
    c0, tc0 = _both(rng.standard_normal((n, 4, 4)))
    p = pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
    tp = TR.pack_padded_sequence(tx, lengths, enforce_sorted=enforce_sorted)
    if mode == "lstm":
        hx, thx = ((h0, c0), (th0, tc0)) if initial else (None, None)
    else:
        hx, thx = (h0, th0) if initial else (None, None)
    if decomposed:
        with tga.decompose():
            out, hn = ours(p, hx)
    else:
        out, hn = ours(p, hx)
    assert isinstance(out, PackedSequence)
    tout, thn = theirs(tp, thx)
    _same_packed(out, tout)
    finals = list(hn) if mode == "lstm" else [hn]
    tfinals = list(thn) if mode == "lstm" else [thn]
    loss, tloss = (out.data * out.data).sum(), (tout.data * tout.data).sum()
    for f, tf in zip(finals, tfinals):
        np.testing.assert_allclose(f.detach().numpy(), tf.detach().numpy(), rtol=1e-10, atol=1e-12)
        w = rng.standard_normal(tuple(tf.shape))
        loss, tloss = loss + (f * Tensor(w)).sum(), tloss + (tf * torch.tensor(w)).sum()
    loss.backward()
    tloss.backward()
    leaves = [(x, tx)] + ([(h0, th0)] + ([(c0, tc0)] if mode == "lstm" else []) if initial else [])
    for a, ta in leaves:
        np.testing.assert_allclose(a.grad.detach().numpy(), ta.grad.detach().numpy(), rtol=1e-10, atol=1e-12)
    grads = dict(theirs.named_parameters())
    for name, prm in ours.named_parameters():
        np.testing.assert_allclose(
            prm.grad.detach().numpy(), grads[name].grad.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=name
        )


def test_padded_outputs_are_zero_and_final_states_are_each_sequences_own(rng):
    gru = nn.GRU(2, 3, bidirectional=True, batch_first=True).double()
    x = Tensor(rng.standard_normal((3, 4, 2)))
    lengths = [4, 1, 2]
    out, hn = gru(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
    padded, _ = pad_packed_sequence(out, batch_first=True)
    for b, n in enumerate(lengths):
        assert not np.any(padded.detach().numpy()[b, n:])
        alone, h_alone = gru(x[b : b + 1, :n])  # the sequence by itself, unpadded
        np.testing.assert_allclose(padded.detach().numpy()[b, :n], alone.detach().numpy()[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(hn.detach().numpy()[:, b], h_alone.detach().numpy()[:, 0], rtol=1e-12, atol=1e-12)


def test_a_batch_first_layer_takes_the_packed_batch_as_it_is(rng):
    ours, theirs = nn.LSTM(3, 2, batch_first=True), torch.nn.LSTM(3, 2, batch_first=True)
    _load(ours, theirs)
    x, tx = _both(rng.standard_normal((3, 4, 3)))
    out, (h, c) = ours(pack_padded_sequence(x, [2, 4, 3], batch_first=True, enforce_sorted=False))
    tout, (th, tc) = theirs(TR.pack_padded_sequence(tx, [2, 4, 3], batch_first=True, enforce_sorted=False))
    _same_packed(out, tout)
    np.testing.assert_allclose(h.detach().numpy(), th.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(c.detach().numpy(), tc.detach().numpy(), rtol=1e-12)


# -- the fused op with lengths against its definition -------------------------------------------
def _operands(mode, rng, t=4, b=3, n_in=2, n_h=3, device="cpu"):
    g = GATES[mode] * n_h

    def arr(*shape):
        return Tensor(rng.standard_normal(shape) * 0.7, device=device, requires_grad=True)

    c0 = arr(b, n_h) if mode == "lstm" else None
    return [arr(t, b, n_in), arr(b, n_h), c0, arr(g, n_in), arr(g, n_h), arr(g), arr(g)]


CASES = list(itertools.product(MODES, [False, True], [False, True]))


@pytest.mark.parametrize(
    ("mode", "reverse", "batch_first"), CASES, ids=[f"{m}-r{int(r)}-bf{int(f)}" for m, r, f in CASES]
)
def test_fused_equals_decomposed_with_lengths(mode, reverse, batch_first, device, rng):
    ops = _operands(mode, rng, device=device)
    if batch_first:
        ops[0] = Tensor(ops[0].detach().numpy().transpose(1, 0, 2).copy(), device=device, requires_grad=True)
    lengths = (4, 2, 3)  # two steps where all run, two where one has ended
    fused = recurrence(mode, *ops, reverse=reverse, batch_first=batch_first, lengths=lengths)
    assert isinstance(fused._ctx, recurrent.RECURRENCES[mode])  # one node
    with tga.decompose():
        ref = recurrence(mode, *ops, reverse=reverse, batch_first=batch_first, lengths=lengths)
    assert not isinstance(ref._ctx, recurrent.RECURRENCES[mode])
    np.testing.assert_allclose(fused.detach().numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-12)
    w = Tensor(rng.standard_normal(fused.shape), device=device)
    leaves = [t for t in ops if t is not None]
    g_fused = tga.grad((fused * w).sum(), leaves, create_graph=True)
    g_ref = tga.grad((ref * w).sum(), leaves, create_graph=True)
    for a, b in zip(g_fused, g_ref):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    # second order: the gradient of the gradients, fused (through its reference) and decomposed
    gg_fused = tga.grad(sum((g * g).sum() for g in g_fused), leaves)
    gg_ref = tga.grad(sum((g * g).sum() for g in g_ref), leaves)
    for a, b in zip(gg_fused, gg_ref):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reverse", [False, True])
def test_gradcheck_with_lengths(mode, reverse, device, rng):
    x, h0, c0, w_ih, w_hh, b_ih, b_hh = _operands(mode, rng, t=3, b=2, n_h=2, device=device)

    def f(x, h0, w_ih, w_hh, b_ih, b_hh, *c):
        out = recurrence(mode, x, h0, c[0] if c else None, w_ih, w_hh, b_ih, b_hh, reverse=reverse, lengths=(1, 3))
        return (out * out).sum() + out.sum()

    extra = (c0,) if mode == "lstm" else ()
    assert tga.gradcheck(f, x, h0, w_ih, w_hh, b_ih, b_hh, *extra)


def test_full_lengths_equal_no_lengths(rng):
    for mode in MODES:
        ops = _operands(mode, rng)
        for reverse in (False, True):
            a = recurrence(mode, *ops, reverse=reverse)
            b = recurrence(mode, *ops, reverse=reverse, lengths=(4, 4, 4))
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


# -- a tutorial: the chatbot encoder ----------------------------------------------------------------
def _encoder_class(lib):
    """The PyTorch chatbot tutorial's encoder, in its style: embed a padded batch, pack it by
    length, a bidirectional GRU, unpack, and sum the two directions' outputs."""

    class EncoderRNN(lib.nn.Module):
        def __init__(self, hidden_size, embedding, n_layers=1, dropout=0.0):
            super().__init__()
            self.n_layers = n_layers
            self.hidden_size = hidden_size
            self.embedding = embedding
            self.gru = lib.nn.GRU(hidden_size, hidden_size, n_layers, dropout=(0 if n_layers == 1 else dropout),
                                  bidirectional=True)  # fmt: skip

        def forward(self, input_seq, input_lengths, hidden=None):
            embedded = self.embedding(input_seq)  # (T, B, H)
            packed = lib.nn.utils.rnn.pack_padded_sequence(embedded, input_lengths)
            outputs, hidden = self.gru(packed, hidden)
            outputs, _ = lib.nn.utils.rnn.pad_packed_sequence(outputs)
            outputs = outputs[:, :, : self.hidden_size] + outputs[:, :, self.hidden_size :]
            return outputs, hidden

    return EncoderRNN


@pytest.mark.slow  # (over half a second: the full suite runs it, the fast loop does not)
def test_chatbot_encoder_trains_as_in_pytorch(rng):
    vocab, hidden, t_len = 11, 6, 5
    enc_t = _encoder_class(torch)(hidden, torch.nn.Embedding(vocab, hidden), n_layers=2).double()
    enc_o = _encoder_class(tga)(hidden, nn.Embedding(vocab, hidden), n_layers=2)
    enc_o.load_state_dict({k: v.detach().numpy() for k, v in enc_t.state_dict().items()})
    enc_o.double()
    opt_t = torch.optim.Adam(enc_t.parameters(), lr=0.01)
    opt_o = tga.optim.Adam(enc_o.parameters(), lr=0.01)
    lengths = [5, 4, 4, 2]  # sorted, as the tutorial's batch2TrainData sorts them
    for _ in range(3):
        ids = rng.integers(1, vocab, (t_len, len(lengths)))
        for b, n in enumerate(lengths):
            ids[n:, b] = 0  # PAD_token
        target = rng.standard_normal((t_len, len(lengths), hidden))
        losses = []
        for enc, opt, lib in ((enc_t, opt_t, torch), (enc_o, opt_o, tga)):
            out, h = enc(lib.tensor(ids), lib.tensor(lengths))
            loss = ((out - lib.tensor(target)) ** 2).mean() + (h**2).mean()
            opt.zero_grad()
            loss.backward()
            lib.nn.utils.clip_grad_norm_(enc.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
        np.testing.assert_allclose(losses[1], losses[0], rtol=1e-10)
    theirs = dict(enc_t.named_parameters())
    for name, p in enc_o.named_parameters():
        np.testing.assert_allclose(
            p.detach().numpy(), theirs[name].detach().numpy(), rtol=1e-9, atol=1e-12, err_msg=name
        )


def test_a_compiled_step_over_packed_batches_retraces_for_new_lengths(rng):
    gru = nn.GRU(3, 4, bidirectional=True).double()

    def f(x, lengths):
        out, h = gru(pack_padded_sequence(x, lengths, enforce_sorted=False))
        padded, _ = pad_packed_sequence(out, total_length=4)
        return (padded * padded).sum() + (h * h).sum()

    step = tga.compile(f)
    x = Tensor(rng.standard_normal((4, 3, 3)))
    for lengths in ([4, 2, 3], [4, 2, 3], [4, 2, 3], [1, 4, 2], [1, 4, 2], [4, 2, 3]):
        np.testing.assert_allclose(step(x, lengths).item(), f(x, lengths).item(), rtol=1e-12)
