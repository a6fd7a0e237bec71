"""Mistakes new users make, each run under PyTorch and here: where PyTorch raises ours must raise
an instance of PyTorch's (builtin) exception class, where it runs ours must run. The calls are
the slips of tutorials' readers: shapes that do not fit, out-of-range ids and dims, dtypes a
kernel does not take, a graph used twice, optimizers and modules misconfigured."""

from __future__ import annotations

import warnings

import pytest
from differential import builtin_class  # noqa: E402

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

MISTAKES = [
    "x = torch.randn(2,3, requires_grad=True); x.numpy()",
    "x = torch.randn(2,3); x.t().view(6)",
    "x = torch.randn(2,3); x.item()",
    "torch.nn.Embedding(3,2)(torch.tensor([3]))",
    "torch.nn.functional.cross_entropy(torch.randn(2,3), torch.tensor([0,3]))",
    "torch.nn.functional.nll_loss(torch.randn(2,3), torch.tensor([0,-1]))",
    "torch.optim.SGD([torch.randn(2, requires_grad=True) * 2], lr=0.1)",
    "torch.optim.SGD([], lr=0.1)",
    "torch.optim.Adam([torch.nn.Parameter(torch.randn(2))], lr=-1)",
    "torch.optim.Adam([torch.nn.Parameter(torch.randn(2))], betas=(1.0, 0.9))",
    "torch.nn.Linear(3,4)(torch.randn(2,5))",
    "torch.randn(2,3).to('cuda')",
    "torch.randn(2,3).cuda()",
    "torch.stack([torch.randn(2), torch.randn(3)])",
    "torch.cat([torch.randn(2,3), torch.randn(3,2)])",
    "torch.cat([torch.randn(2,3), torch.randn(2,3,1)])",
    "torch.randn(2,3).reshape(4,2)",
    "torch.randn(2,3).expand(4,3)",
    "torch.randn(2,3)[2]",
    "torch.randn(2,3)[:, torch.tensor([3])]",
    "torch.randn(2,3)[torch.tensor([True, False, True])]",
    "torch.randn(2,3).gather(1, torch.tensor([[3]]))",
    "torch.randn(2,3).sum(2)",
    "torch.randn(2,3).transpose(0,2)",
    "torch.randn(2,3).permute(0)",
    "torch.randn(2,3).permute(0,0)",
    "torch.randn(2,3).squeeze(3)",
    "torch.randn(2,3).unsqueeze(3)",
    "torch.randn(2,3).softmax(2)",
    "torch.randn(2,3).masked_fill(torch.ones(3,2).bool(), 0.)",
    "torch.randn(2,3).masked_fill(torch.ones(2,3), 0.)",
    "torch.randn(2,3) @ torch.randn(2,3)",
    "torch.randn(2,3).view(-1,-1)",
    "torch.randn(2,3).view(4,-1)",
    "torch.zeros(2,3).long().mean()",
    "torch.randn(3).backward()",
    "x = torch.randn(3, requires_grad=True); y=(x*2).sum(); y.backward(); y.backward()",
    "x = torch.randn(3, requires_grad=True); x.add_(1)",
    "x = torch.randn(3, requires_grad=True); y = x.sigmoid(); y.mul_(2); y.sum().backward()",
    "torch.nn.Conv2d(3, 4, 3)(torch.randn(1, 2, 5, 5))",
    "torch.nn.Conv2d(3, 4, 3)(torch.randn(1, 3, 2, 2))",
    "torch.nn.MaxPool2d(3)(torch.randn(1, 1, 2, 2))",
    "torch.nn.BatchNorm1d(3)(torch.randn(1, 3))",
    "torch.nn.LayerNorm(4)(torch.randn(2, 3))",
    "torch.nn.MultiheadAttention(5, 2)",
    "torch.nn.MultiheadAttention(4, 2)(torch.randn(3,1,4), torch.randn(3,1,5), torch.randn(3,1,4))",
    "torch.nn.functional.scaled_dot_product_attention(torch.randn(1,3,4), torch.randn(1,3,5), torch.randn(1,3,4))",
    "torch.nn.functional.softmax(torch.randn(2,3), dim=3)",
    "torch.nn.LSTM(3, 4)(torch.randn(5, 2, 4))",
    "torch.nn.LSTM(3, 4, batch_first=True)(torch.randn(2, 5, 3), (torch.zeros(1, 5, 4), torch.zeros(1, 5, 4)))",
    "torch.nn.functional.one_hot(torch.tensor([3]), 3)",
    "torch.nn.functional.one_hot(torch.tensor([1.0]), 3)",
    "torch.nn.functional.binary_cross_entropy(torch.tensor([1.5]), torch.tensor([1.]))",
    "torch.nn.functional.binary_cross_entropy(torch.tensor([0.5]), torch.tensor([2.]))",
    "torch.nn.functional.binary_cross_entropy(torch.tensor([0.5]), torch.tensor([float('nan')]))",
    "torch.nn.BCELoss()(torch.tensor([0.5, 0.2]), torch.tensor([1., -1.]))",
    "torch.nn.functional.pad(torch.ones(2, 2), (1,))",
    "torch.nn.functional.pad(torch.ones(2, 2), (1, 1, 1, 1, 1, 1))",
    "torch.ones(3)[torch.tensor([0., 1.])]",
    "torch.ones(3)[torch.tensor([0, 1], dtype=torch.int16)]",
    "torch.ones(3).index_select(0, torch.tensor([0, 1], dtype=torch.uint8))",
    "torch.ones(3).gather(0, torch.tensor([0, 1], dtype=torch.int8))",
    "torch.ones(2, 3).index_copy(0, torch.tensor([1, 0], dtype=torch.int32), torch.ones(2, 3))",
    "torch.nn.functional.one_hot(torch.tensor([0, 1], dtype=torch.int32), 3)",
    "torch.ones(2, 2).max(True)",
    "torch.ones(2, 2).reshape(True, 4)",
    "torch.zeros(True)",
    "w = torch.ones(3, requires_grad=True); w.register_post_accumulate_grad_hook(lambda p: p.grad.mul_(2)); "
    "(w * 2).sum().backward()",
    "w = torch.ones(3, requires_grad=True); w.register_post_accumulate_grad_hook(lambda p: None); (w * 2).sum().backward()",
    "torch.nn.functional.binary_cross_entropy(torch.tensor([0.5]), torch.tensor([1.,0.]))",
    "torch.nn.functional.mse_loss(torch.randn(2,3), torch.randn(3,2))",
    "torch.nn.functional.cross_entropy(torch.randn(2,3), torch.tensor([[0],[1]]))",
    "torch.nn.functional.cross_entropy(torch.randn(2,3), torch.tensor([0.,1.]))",
    "torch.tensor([[1,2],[3]])",
    "torch.tensor([1, 'a'])",
    "torch.zeros(-1)",
    "torch.arange(0, 10, -1)",
    "torch.linspace(0, 1, -2)",
    "torch.randint(5, 3, (2,))",
    "torch.multinomial(torch.tensor([0., 0.]), 1)",
    "torch.multinomial(torch.tensor([1., 1.]), 3)",
    "torch.randn(2,3).split([1,1], 1)",
    "torch.randn(2,3).chunk(0)",
    "torch.randn(2,3).repeat(2)",
    "torch.randn(2,3).index_select(0, torch.tensor([0.]))",
    "torch.randn(2,3).topk(4)",
    "torch.randn(2,2).inverse() @ torch.zeros(2,2).inverse()",
    "torch.linalg.cholesky(-torch.eye(2))",
    "torch.randn(2,3).flatten(2)",
    "torch.randn(2,3).unflatten(1, (2,2))",
    "torch.nn.Sequential(torch.nn.Linear(2,2))[3]",
    "torch.nn.ModuleList([torch.nn.Linear(2,2)])[3]",
    "torch.nn.Linear(2,2).load_state_dict({'weight': torch.zeros(2,2)})",
    "torch.nn.Linear(2,2).load_state_dict({'weight': torch.zeros(3,2), 'bias': torch.zeros(2)})",
    "torch.nn.Linear(2,2).weight.grad.zero_()",
    "m = torch.nn.Linear(2,2); m.weight = torch.zeros(2,2)",
    "m = torch.nn.Linear(2,2); m.register_buffer('weight', torch.zeros(2))",
    "torch.nn.Dropout(1.5)",
    "torch.nn.functional.dropout(torch.randn(3), p=-0.1)",
    "torch.nn.utils.clip_grad_norm_([torch.nn.Parameter(torch.randn(2))], 1.0, error_if_nonfinite=True)",
    "torch.randn(3).new_tensor([1,2]).sum(1)",
    "torch.einsum('ij,jk->ik', torch.randn(2,3), torch.randn(2,3))",
    "torch.einsum('ij->k', torch.randn(2,3))",
    "torch.randn(2,3).scatter(1, torch.tensor([[0,1,2,0]]), 1.0)",
    "torch.randn(2,3).scatter_(1, torch.tensor([[3]]), 1.0)",
    "torch.randn(4).unfold(0, 5, 1)",
    "torch.randn(1,1,4,4).unfold(2, 2, 0)",
    "torch.nn.functional.pad(torch.randn(1,2,3), (4,4), mode='reflect')",
    "torch.nn.functional.interpolate(torch.randn(1,1,4), scale_factor=2, mode='bilinear')",
    "torch.nn.functional.interpolate(torch.randn(1,1,4))",
    "torch.nn.functional.avg_pool2d(torch.randn(1,1,4,4), 2, padding=2)",
    "torch.nn.functional.embedding(torch.tensor([1.]), torch.randn(3,2))",
    "torch.randn(2,3).max(dim=1).values.backward()",
    "torch.where(torch.randn(3) > 0, torch.randn(3), torch.randn(2))",
    "torch.randn(3).clamp()",
    "torch.randn(3).clamp(min=torch.randn(4))",
    "torch.randn(3) + torch.randn(4)",
    "x = torch.randn(3); x += torch.randn(2, 3)",
    "x = torch.randn(3).long(); x += 1.5",
    "x = torch.randn(3).long(); x *= 1.5",
    "x = torch.randn(3).bool(); x -= True",
    "torch.randn(3) - torch.tensor([True, False, True])",
    "torch.tensor([True]) - torch.tensor([True])",
    "-torch.tensor([True])",
    "torch.randn(3).long() / 0",
    "torch.randn(3).long() // 0",
    "torch.tensor([5]) % 0",
    "torch.tensor(5).item() + torch.tensor([1,2]).item()",
    "int(torch.tensor([1,2]))",
    "float(torch.tensor([1.,2.]))",
    "bool(torch.tensor([1.,2.]))",
    "len(torch.tensor(3.))",
    "iter(torch.tensor(3.))",
    "torch.tensor(3.)[0]",
    "torch.randn(2,3).T.T.view(6)",
    "torch.randn(2,3).mT.reshape(6).view(3,2)",
    "torch.randn(2,3).numpy().reshape(3,3)",
    "torch.save(torch.randn(2), '/nonexistent/dir/x.pt')",
    "torch.load('/nonexistent/x.pt')",
    "torch.randn(2,2).cholesky_solve(torch.randn(3,3))",
    "torch.distributions.Normal(0., -1.)",
    "torch.distributions.Categorical(probs=torch.tensor([-0.1, 1.1]))",
    "torch.distributions.Normal(torch.zeros(2), torch.ones(2)).log_prob(torch.zeros(3))",
    "torch.utils.data.DataLoader([1,2,3], batch_size=0)",
    "torch.utils.data.random_split(range(10), [3, 3])",
    "torch.manual_seed(-1)",
    "torch.manual_seed(2**70)",
    "torch.set_default_dtype(torch.int64)",
    "torch.randn(2, dtype=torch.int64)",
    "torch.rand(2, dtype=torch.bool)",
    "torch.full((2,), 1.5, dtype=torch.int64)",
    "torch.zeros(2).fill_(torch.tensor([1., 2.]))",
    "torch.randn(2,3).std(dim=3)",
    "torch.randn(0).max()",
    "torch.randn(0).argmax()",
    "torch.randn(2, 0).max(1)",
    "torch.randn(2, 0).sum(1).mean()",
    "torch.tensor([]).mean()",
    "torch.kthvalue(torch.randn(3), 4)",
    "torch.randn(3).median(1)",
    "torch.nn.init.xavier_uniform_(torch.randn(3))",
    "torch.nn.init.kaiming_normal_(torch.randn(3), mode='fan_avg')",
    "torch.nn.init.orthogonal_(torch.randn(3))",
    "torch.nn.init.calculate_gain('foo')",
    "torch.nn.functional.gelu(torch.randn(2), approximate='exact')",
    "torch.nn.functional.leaky_relu(torch.randn(2), negative_slope='a')",
    "torch.nn.Softmax(dim=3)(torch.randn(2,3))",
    "torch.nn.Flatten(2)(torch.randn(2,3))",
    "torch.nn.Unflatten(1, (2, 2))(torch.randn(2,3))",
    "torch.nn.Embedding(3, 2, padding_idx=3)",
    "torch.nn.Embedding(3, 2, padding_idx=-4)",
    "torch.nn.TransformerEncoderLayer(5, 2)",
    "torch.nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=8)(torch.randn(3,1,4), torch.randn(2,2,4))",
    "torch.nn.functional.scaled_dot_product_attention(torch.randn(1,3,4), torch.randn(1,3,4), torch.randn(1,3,4), attn_mask=torch.ones(3,3).bool(), is_causal=True)",
    "torch.nn.functional.scaled_dot_product_attention(torch.randn(1,3,4), torch.randn(1,3,4), torch.randn(1,3,4), attn_mask=torch.ones(4,4).bool())",
    "torch.nn.functional.scaled_dot_product_attention(torch.randn(1,3,4), torch.randn(1,3,4), torch.randn(1,3,4), dropout_p=1.5)",
    "torch.nn.functional.scaled_dot_product_attention(torch.randn(3,4), torch.randn(1,3,4), torch.randn(1,3,4))",
]

KNOWN: dict[str, str] = {}


def _run(lib, code: str):
    # (both libraries' distributions validate their arguments, as by default: another test module of the
    # same process may have switched PyTorch's default off, which changes what a mistake raises)
    dist = lib.distributions.Distribution
    before = dist._validate_args
    dist.set_default_validate_args(True)
    try:
        return _run_validated(lib, code)
    finally:
        dist.set_default_validate_args(before)


def _run_validated(lib, code: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(code, {"torch": lib})  # noqa: S102 - the table above
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's below
            return e
    return None


@pytest.mark.parametrize(
    "code",
    [pytest.param(c, marks=[pytest.mark.xfail(reason=KNOWN[c], strict=True)] if c in KNOWN else []) for c in MISTAKES],
)
def test_a_mistake_is_met_as_in_torch(code):
    want, got = _run(torch, code), _run(tga, code)
    if want is None:
        assert got is None, f"PyTorch runs {code}; ours raises {type(got).__name__}: {got}"
    else:
        assert got is not None, f"PyTorch raises {type(want).__name__} ({want}) for {code}; ours runs"
        assert isinstance(got, builtin_class(type(want))), (
            f"{code}: PyTorch raises {type(want).__name__}, ours {type(got).__name__}: {got}"
        )
