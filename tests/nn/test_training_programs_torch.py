"""Training programs as a PyTorch user writes them, drawn by the seed-driven builder of
tests/nn/training_programs.py (models, losses, optimizers, schedules, clipping,
parametrizations, state dict round trips), run with ``torch`` bound to PyTorch and to
tinygrad_attn: the same losses, parameters, gradients, buffers and optimizer state dicts.
A fast band of seeds runs always, a wider one with ``-m slow``; ``python -m
tests.nn.training_programs LO HI`` sweeps any range. Then a user's mistakes: where PyTorch
raises (wrong input shapes, target dtypes, optimizer arguments), the same exception class."""

from __future__ import annotations

import pytest

from tests.differential import assert_same_as_torch
from tests.nn.training_programs import build, compare

torch = pytest.importorskip("torch")

FAST = range(0, 120)
SLOW = range(120, 2000)


def _check(seed: int) -> None:
    found = compare(seed)
    assert found is None, f"program {seed}, {found[0]}: {found[1]}\n{build(seed)}"


@pytest.mark.parametrize("seed", FAST)
def test_training_program_observes_what_pytorch_does(seed: int) -> None:
    _check(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW)
def test_more_training_programs_observe_what_pytorch_does(seed: int) -> None:
    _check(seed)


def test_programs_differ_with_the_seed() -> None:
    assert len({build(s) for s in range(30)}) == 30


MISTAKES = {
    "linear_in": "nn.Linear(3, 2)(torch.randn(4, 5))",
    "conv2d_channels": "nn.Conv2d(3, 4, 3)(torch.randn(1, 2, 8, 8))",
    "conv2d_rank": "nn.Conv2d(3, 4, 3)(torch.randn(3, 8))",
    "conv1d_small": "nn.Conv1d(1, 2, 5)(torch.randn(1, 1, 3))",
    "lstm_feat": "nn.LSTM(3, 4)(torch.randn(5, 2, 6))",
    "lstm_rank": "nn.LSTM(3, 4)(torch.randn(5, 2, 3, 1))",
    "gru_h0": "nn.GRU(3, 4)(torch.randn(5, 2, 3), torch.randn(1, 3, 4))",
    "lstm_h0": "nn.LSTM(3, 4)(torch.randn(5, 2, 3), (torch.randn(1, 2, 4), torch.randn(2, 2, 4)))",
    "bn_feat": "nn.BatchNorm1d(4)(torch.randn(3, 5))",
    "bn_one": "nn.BatchNorm1d(4)(torch.randn(1, 4))",
    "ln_shape": "nn.LayerNorm(4)(torch.randn(3, 5))",
    "emb_range": "nn.Embedding(5, 2)(torch.tensor([1, 5]))",
    "emb_float": "nn.Embedding(5, 2)(torch.tensor([1.0, 2.0]))",
    "ce_float_target": "F.cross_entropy(torch.randn(3, 4), torch.tensor([0.0, 1.0, 2.0]))",
    "ce_target_range": "F.cross_entropy(torch.randn(3, 4), torch.tensor([0, 1, 4]))",
    "ce_batch": "F.cross_entropy(torch.randn(3, 4), torch.tensor([0, 1]))",
    "nll_int_input": "F.nll_loss(torch.randn(3, 4), torch.tensor([0, 1, 2], dtype=torch.int32))",
    "mse_shape": "F.mse_loss(torch.randn(3, 4), torch.randn(4))",
    "mse_broadcast_bad": "F.mse_loss(torch.randn(3, 4), torch.randn(3, 5))",
    "bce_target_shape": "F.binary_cross_entropy(torch.rand(3), torch.rand(4))",
    "bce_range": "F.binary_cross_entropy(torch.rand(3) + 1, torch.rand(3))",
    "bce_logits_shape": "F.binary_cross_entropy_with_logits(torch.rand(3), torch.rand(4))",
    "opt_nonleaf": "w = torch.randn(2, requires_grad=True) * 2; torch.optim.SGD([w], lr=0.1)",
    "opt_dup": "w = nn.Parameter(torch.randn(2)); torch.optim.SGD([w, w], lr=0.1)",
    "opt_dup_groups": "w = nn.Parameter(torch.randn(2)); torch.optim.SGD([{'params': [w]}, {'params': [w]}], lr=0.1)",
    "opt_neg_lr": "torch.optim.Adam([nn.Parameter(torch.randn(2))], lr=-1)",
    "opt_tensor": "torch.optim.Adam(nn.Parameter(torch.randn(2)))",
    "opt_bad_beta": "torch.optim.Adam([nn.Parameter(torch.randn(2))], betas=(1.0, 0.9))",
    "opt_nesterov": "torch.optim.SGD([nn.Parameter(torch.randn(2))], lr=0.1, nesterov=True)",
    "clip_nonfinite": "w = nn.Parameter(torch.randn(2)); w.grad = torch.tensor([float('nan'), 1.0]); nn.utils.clip_grad_norm_([w], 1.0, error_if_nonfinite=True)",
    "backward_twice": "w = nn.Parameter(torch.randn(2)); l = (w.exp()).sum(); l.backward(); l.backward()",
    "backward_nonscalar": "w = nn.Parameter(torch.randn(2)); (w * 2).backward()",
    "load_sd_missing": "m = nn.Linear(2, 2); m.load_state_dict({'weight': torch.zeros(2, 2)})",
    "load_sd_shape": "m = nn.Linear(2, 2); m.load_state_dict({'weight': torch.zeros(3, 2), 'bias': torch.zeros(2)})",
    "opt_load_groups": "a = torch.optim.SGD([nn.Parameter(torch.randn(2))], lr=0.1); b = torch.optim.SGD([nn.Parameter(torch.randn(2)), nn.Parameter(torch.randn(2))], lr=0.1); b.load_state_dict(a.state_dict())",
    "sched_bad": "o = torch.optim.SGD([nn.Parameter(torch.randn(2))], lr=0.1); torch.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0)",
    "mha_embed": "nn.MultiheadAttention(5, 2)",
    "tel_nhead": "nn.TransformerEncoderLayer(6, 4)",
    "ctc_lengths": "F.ctc_loss(torch.randn(5, 2, 4).log_softmax(2), torch.randint(1, 4, (2, 3)), torch.tensor([5, 5]), torch.tensor([3, 7]))",
    "kldiv_shape": "F.kl_div(torch.randn(3, 4), torch.randn(3, 5))",
    "pack_unsorted": "nn.utils.rnn.pack_padded_sequence(torch.randn(2, 4, 3), torch.tensor([2, 4]), batch_first=True)",
    "pack_zero": "nn.utils.rnn.pack_padded_sequence(torch.randn(2, 4, 3), torch.tensor([4, 0]), batch_first=True)",
    "bilinear_in": "nn.Bilinear(2, 3, 4)(torch.randn(5, 2), torch.randn(5, 4))",
    "convT_outpad": "nn.ConvTranspose2d(2, 3, 3, stride=1, output_padding=1)",
    "groupnorm_div": "nn.GroupNorm(3, 4)",
    "conv_groups": "nn.Conv2d(4, 6, 3, groups=4)",
    "conv_same_stride": "nn.Conv2d(4, 6, 3, stride=2, padding='same')",
    "embbag_offsets": "nn.EmbeddingBag(5, 2)(torch.tensor([[1, 2]]), torch.tensor([0]))",
    "multi_margin_target": "F.multi_margin_loss(torch.randn(3, 4), torch.tensor([0.0, 1.0, 2.0]))",
    "zero_grad_frozen_step": "w = nn.Parameter(torch.randn(2)); o = torch.optim.LBFGS([w]); o.step()",
    "dropout_p": "nn.Dropout(1.5)",
    "rnn_nonlin": "nn.RNN(2, 3, nonlinearity='gelu')",
    "lstm_proj": "nn.LSTM(2, 3, proj_size=3)",
    "huber_delta": "F.huber_loss(torch.randn(3), torch.randn(3), delta=-1.0)",
}


@pytest.mark.parametrize("name", list(MISTAKES))
def test_a_mistake_raises_what_pytorch_raises(name: str) -> None:
    assert_same_as_torch(MISTAKES[name], torch)
