"""Every way to draw random numbers, after the same seed, gives PyTorch's numbers and leaves the
default generator where PyTorch's leaves it: the random factories in every dtype, the in-place
fills, the random functionals (gumbel_softmax, rrelu, dropouts), ``nn.init``, the data samplers and
splits, ``torch.distributions`` samples and every module's initial weights. Each call is followed
by ``rand(4)``, so a call that draws one number too many or too few shows there. The calls are the
random-sampling entries of PyTorch's documentation (torch, Tensor, nn.functional, nn.init,
utils.data, distributions) in the forms a program writes them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch_oracle import torch_bernoulli_is_ours  # noqa: E402

import tinygrad_attn as tga  # noqa: E402

CALLS = [  # fmt: skip
    "F.gumbel_softmax(torch.zeros(4, 5), tau=0.7)",
    "F.gumbel_softmax(torch.zeros(4, 5, dtype=torch.float64), hard=True, dim=0)",
    "F.rrelu(-torch.ones(9), training=True)",
    "F.rrelu(-torch.ones(3, 4, dtype=torch.float64), 0.1, 0.2, training=True)",
    "F.rrelu_(-torch.ones(9), training=True)",
    "nn.RReLU()(-torch.ones(2, 5))",
    "torch.rand_like(torch.zeros(2, 3, dtype=torch.float64))",
    "torch.randn_like(torch.zeros(17))",
    "torch.randint_like(torch.zeros(6), 10)",
    "torch.randint_like(torch.zeros(6, dtype=torch.int32), 3, 9)",
    "torch.randint(0, 2, (8,), dtype=torch.bool)",
    "torch.randint(-3, 3, (8,), dtype=torch.int16)",
    "torch.randint(0, 255, (8,), dtype=torch.uint8)",
    "torch.randint(0, 10, (8,), dtype=torch.float32)",
    "torch.randint(0, 10, (8,), dtype=torch.float16)",
    "torch.randint(2**40, (5,))",
    "torch.randperm(10, dtype=torch.int32)",
    "torch.randperm(10, dtype=torch.float32)",
    "torch.rand(5, dtype=torch.float16)",
    "torch.rand(5, dtype=torch.complex64)",
    "torch.randn(5, dtype=torch.complex128)",
    "torch.randn(18, dtype=torch.float16)",
    "torch.empty(6, dtype=torch.int8).random_()",
    "torch.empty(6, dtype=torch.uint8).random_()",
    "torch.empty(6, dtype=torch.bool).random_()",
    "torch.empty(6, dtype=torch.float16).random_()",
    "torch.empty(6, dtype=torch.float64).random_()",
    "torch.empty(6, dtype=torch.int32).random_(-5, 5)",
    "torch.empty(6).random_(100)",
    "torch.empty(6, dtype=torch.float16).uniform_(-2, 2)",
    "torch.empty(6, dtype=torch.float64).uniform_(3, 4)",
    "torch.empty(20, dtype=torch.float64).normal_(1, 2)",
    "torch.empty(6, dtype=torch.float16).exponential_(2.0)",
    "torch.empty(6, dtype=torch.float16).cauchy_()",
    "torch.empty(6, dtype=torch.float16).log_normal_()",
    "torch.empty(6, dtype=torch.int32).geometric_(0.4)",
    "torch.empty(6, dtype=torch.float16).geometric_(0.4)",
    "torch.empty(6, dtype=torch.int64).bernoulli_(0.3)",
    "torch.empty(6, dtype=torch.float16).bernoulli_(torch.full((6,), 0.3))",
    "torch.bernoulli(torch.full((3, 4), 0.5, dtype=torch.float64))",
    "torch.bernoulli(torch.full((7,), 0.5), p=0.2)",
    "torch.bernoulli(torch.rand(3, 4).half())",
    "torch.normal(0.0, 1.0, size=(5,))",
    "torch.normal(torch.zeros(5, dtype=torch.float64), 2.0)",
    "torch.normal(torch.zeros(3, 1), torch.ones(3, 4))",
    "torch.multinomial(torch.tensor([1., 2., 3.]), 5, replacement=True)",
    "torch.multinomial(torch.tensor([[1., 2., 3.], [3., 0., 1.]], dtype=torch.float64), 2)",
    "torch.multinomial(torch.tensor([1., 2., 3.]).half(), 2)",
    "nn.init.uniform_(torch.empty(3, 4), -1, 1)",
    "nn.init.normal_(torch.empty(3, 4), 0, 0.1)",
    "nn.init.xavier_uniform_(torch.empty(3, 4), gain=2.0)",
    "nn.init.xavier_normal_(torch.empty(3, 4, 2))",
    "nn.init.kaiming_uniform_(torch.empty(3, 4), mode='fan_out', nonlinearity='relu')",
    "nn.init.kaiming_normal_(torch.empty(3, 4, 5))",
    "nn.init.kaiming_normal_(torch.empty(3, 4), a=0.2, nonlinearity='leaky_relu')",
    "nn.init.trunc_normal_(torch.empty(20), 0, 1, -0.5, 0.5)",
    "nn.init.orthogonal_(torch.empty(5, 3))",
    "nn.init.orthogonal_(torch.empty(2, 3, 2), gain=0.5)",
    "nn.init.sparse_(torch.empty(6, 4), 0.5)",
    "nn.init.uniform_(torch.empty(3, 4, dtype=torch.float64))",
    "nn.init.normal_(torch.empty(30, dtype=torch.float16))",
    "nn.init.trunc_normal_(torch.empty(5, dtype=torch.float64))",
    "F.dropout(torch.ones(3, 7, dtype=torch.float16), 0.4)",
    "F.dropout(torch.ones(10), 0.0)",
    "F.dropout(torch.ones(10), 1.0)",
    "F.alpha_dropout(torch.ones(3, 7, dtype=torch.float64), 0.3, True)",
    "F.feature_alpha_dropout(torch.ones(2, 4, 3), 0.5, True)",
    "F.dropout1d(torch.ones(4, 5), 0.5)",
    "F.dropout2d(torch.ones(3, 2, 2), 0.5)",
    "F.dropout3d(torch.ones(2, 3, 1, 2, 2), 0.5)",
    "nn.Dropout1d(0.3)(torch.ones(2, 3, 4))",
    "nn.AlphaDropout(0.3)(torch.ones(2, 3, 4))",
    "nn.FeatureAlphaDropout(0.3)(torch.ones(2, 3, 4))",
    "[list(s) for s in torch.utils.data.random_split(range(7), [3, 4])]",
    "[list(s) for s in torch.utils.data.random_split(range(10), [0.25, 0.25, 0.5])]",
    "list(torch.utils.data.RandomSampler(range(6), replacement=True, num_samples=8))",
    "list(torch.utils.data.RandomSampler(range(6), num_samples=9))",
    "list(torch.utils.data.SubsetRandomSampler([3, 5, 7, 9]))",
    "list(torch.utils.data.WeightedRandomSampler([1., 2., 3.], 4, replacement=False))",
    "[b.tolist() for b in torch.utils.data.DataLoader(torch.arange(7), batch_size=2, shuffle=True)]",
    "[b.tolist() for b in torch.utils.data.DataLoader(torch.arange(7), batch_size=2, sampler=torch.utils.data.RandomSampler(range(7)))]",
    "torch.rand(3, generator=torch.Generator().manual_seed(5))",
    "torch.Generator().manual_seed(5).seed() > 0",
    "torch.empty(5).random_(generator=torch.Generator().manual_seed(2))",
    "torch.distributions.Normal(torch.zeros(3), 1.).rsample()",
    "torch.distributions.Dirichlet(torch.ones(3)).sample()",
    "torch.distributions.Poisson(torch.tensor([1., 20.])).sample((3,))",
    "torch.distributions.Binomial(10, torch.tensor([0.2, 0.7])).sample()",
    "torch.distributions.RelaxedOneHotCategorical(0.5, logits=torch.zeros(4)).rsample()",
    "torch.distributions.StudentT(3.).sample((4,))",
    "torch.distributions.Laplace(0., 1.).sample((4,))",
    "torch.distributions.Gumbel(0., 1.).sample((4,))",
    "torch.distributions.LogNormal(0., 1.).sample((4,))",
    "torch.distributions.Geometric(0.3).sample((4,))",
    "torch.distributions.NegativeBinomial(3, 0.4).sample((4,))",
    "torch.distributions.VonMises(0., 1.).sample((4,))",
    "torch.distributions.Chi2(3.).sample((4,))",
    "torch.distributions.LKJCholesky(3, 0.5).sample()",
    "torch.distributions.Wishart(torch.tensor(4.), torch.eye(2)).sample()",
    "torch.distributions.OneHotCategorical(torch.tensor([0.2, 0.8])).sample((3,))",
    "torch.distributions.ContinuousBernoulli(0.3).sample((4,))",
    "torch.distributions.Kumaraswamy(2., 3.).sample((4,))",
    "torch.distributions.Weibull(1., 2.).sample((4,))",
    "torch.distributions.HalfNormal(1.).sample((4,))",
    "torch.distributions.FisherSnedecor(3., 4.).sample((4,))",
    "nn.Linear(3, 2).weight",
    "nn.Conv2d(2, 3, 3).bias",
    "nn.Embedding(4, 3).weight",
    "nn.LSTM(2, 3).weight_hh_l0",
    "nn.MultiheadAttention(4, 2).in_proj_weight",
    "nn.Bilinear(2, 3, 4).weight",
    "nn.PReLU().weight",
    "nn.TransformerEncoderLayer(4, 2, 8).linear1.weight",
    "nn.ConvTranspose1d(2, 3, 3, groups=1).weight",
    "nn.LazyLinear(3)(torch.ones(2, 5))",
]

# (PyTorch's bernoulli_(p) with a float p draws from MKL's stream on an Intel CPU: dropout's masks)
BERNOULLI_P = ("dropout", "bernoulli_(0.", "p=0.2", "FeatureAlpha", "AlphaDropout")


def _run(lib, call: str) -> tuple:
    env = {"torch": lib, "nn": lib.nn, "F": lib.nn.functional}
    lib.manual_seed(11)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = eval(call, env)  # noqa: S307 - the table's own text
        return "ok", _plain(value), lib.rand(4).numpy()
    except Exception as e:  # noqa: BLE001 - the class is compared
        return "raises", [c.__name__ for c in type(e).__mro__], str(e)


def _plain(v):
    if hasattr(v, "detach"):
        return v.detach().numpy()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _assert_same(ours, theirs) -> None:
    if isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray) and (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape)
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)  # (float32 normals: libm's last place)
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _assert_same(o, t)
    else:
        assert ours == theirs


@pytest.mark.parametrize("call", CALLS)
def test_a_draw_is_pytorchs_and_moves_the_generator_alike(call: str) -> None:
    if any(k in call for k in BERNOULLI_P) and not torch_bernoulli_is_ours():
        pytest.skip("PyTorch draws bernoulli_(p) from MKL's stream on this CPU")
    theirs, ours = _run(torch, call), _run(tga, call)
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] == "raises":
        assert theirs[1][0] in ours[1], (ours, theirs)
        return
    _assert_same(ours[1], theirs[1])
    np.testing.assert_array_equal(ours[2], theirs[2])  # the generator moved on alike


def test_the_table_has_every_random_factory_and_fill() -> None:
    """The inventory: PyTorch's random factories and in-place fills all appear in the table."""
    names = ["rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
             "multinomial", "normal", "random_", "uniform_", "normal_", "exponential_", "cauchy_", "log_normal_",
             "geometric_", "bernoulli_", "gumbel_softmax", "rrelu"]  # fmt: skip
    text = "\n".join(CALLS)
    assert [n for n in names if f"{n}(" not in text] == []
