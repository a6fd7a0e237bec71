"""Snippets in the style of PyTorch's tutorials (tensors, autograd, a model's forward, a training
loop, initialisation, losses), run with ``torch`` bound to PyTorch and to tinygrad_attn
(tests/differential.py): what they print (tensors with their ``grad_fn``, shapes, models, the
named results of ``max``/``sort``/``topk``) and compute is PyTorch's."""

from __future__ import annotations

import pytest

from tests.differential import assert_same_as_torch

torch = pytest.importorskip("torch")

PROGRAMS = {
    "print_model_out": """
torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
X = torch.rand(1, 2, 2); logits = model(X); pred_probab = nn.Softmax(dim=1)(logits); y_pred = pred_probab.argmax(1)
R(str(logits), str(pred_probab), str(y_pred), f"Predicted class: {y_pred}")
for name, param in model.named_parameters():
    R(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")
R(str(model))
""",
    "autograd_tut": """
x = torch.ones(5); y = torch.zeros(3); w = torch.randn(5, 3, requires_grad=True); b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
R(f"Gradient function for z = {z.grad_fn}"[:30], f"Gradient function for loss = {loss.grad_fn}"[:33])
loss.backward(); R(w.grad.shape, b.grad.shape)
z = torch.matmul(x, w)+b; R(z.requires_grad)
with torch.no_grad(): z = torch.matmul(x, w)+b
R(z.requires_grad); z_det = (torch.matmul(x, w)+b).detach(); R(z_det.requires_grad)
inp = torch.eye(4, 5, requires_grad=True); out = (inp+1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True); R(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True); R(f"\nSecond call\n{inp.grad}")
inp.grad.zero_(); out.backward(torch.ones_like(out), retain_graph=True); R(f"\nCall after zeroing gradients\n{inp.grad}")
""",
    "training_loop_print": """
torch.manual_seed(0)
model = nn.Linear(3, 1); opt = torch.optim.SGD(model.parameters(), lr=0.1); loss_fn = nn.MSELoss()
X = torch.randn(8, 3); Y = torch.randn(8, 1)
for epoch in range(3):
    pred = model(X); loss = loss_fn(pred, Y); opt.zero_grad(); loss.backward(); opt.step()
    R(f"loss: {loss.item():>7f}", f"{loss:.4f}", str(loss))
correct = (pred.argmax(1) == Y.argmax(1)).type(torch.float).sum().item(); R(correct)
""",
    "rand_seed": """
torch.manual_seed(42); R(torch.rand(3), torch.randn(2, 2), torch.randint(0, 10, (5,)), torch.randperm(6), torch.normal(0., 1., size=(3,)))
""",
    "init_seed": """
torch.manual_seed(1); l = nn.Linear(3, 2); R(l.weight, l.bias)
torch.manual_seed(1); c_ = nn.Conv2d(1, 2, 3); R(c_.weight.sum(), c_.bias)
torch.manual_seed(1); e = nn.Embedding(4, 2); R(e.weight)
""",
    "dropout_seed": """
torch.manual_seed(0); R(nn.Dropout(0.5)(torch.ones(8)), F.dropout(torch.ones(6), 0.3))
""",
    "view_reshape_common": """
x = torch.arange(24.).view(2, 3, 4)
R(x.view(-1, 4).shape, x.view(2, -1).shape, x.permute(0, 2, 1).contiguous().view(2, -1).shape, x.flatten(1).shape, x.size(0), x.transpose(1, 2).reshape(2, -1)[0, :4])
""",
    "item_types": """
R(torch.tensor([1, 2]).sum().item(), type(torch.tensor([1.5]).mean().item()).__name__, torch.tensor([True, False]).sum(), torch.tensor([True, False]).float().mean())
""",
    "max_returns": """
x = torch.tensor([[1., 5.], [7., 2.]])
v, i = x.max(1); R(v, i); r = x.max(dim=0); R(r.values, r.indices, type(r).__name__, str(r))
R(torch.max(x), torch.max(x, torch.ones(2, 2)))
""",
    "sort_topk_str": """
x = torch.tensor([3., 1., 2.])
R(str(x.sort()), str(x.topk(2)), str(torch.sort(x, descending=True)))
""",
    "where_masks": """
x = torch.tensor([1., -2., 3.])
R(torch.where(x > 0), torch.where(x > 0, x, torch.zeros(3)), x[x > 0], (x > 0).nonzero(), x.masked_fill(x < 0, 0))
""",
    "device_stuff": """
x = torch.ones(2)
device = "cuda" if torch.cuda.is_available() else "cpu"
R(device, str(x.to(device).device), x.cpu() is x, x.to("cpu") is x, x.device.type, str(torch.device("cpu")), repr(torch.device("cpu")), repr(x.device))
""",
    "dtypes_conv": """
x = torch.tensor([1.7, -2.3])
R(x.long(), x.int(), x.to(torch.int32), x.double().dtype, x.half().dtype, x.bool(), x.to(dtype=torch.float64).dtype, x.type(torch.LongTensor) if hasattr(torch, 'LongTensor') else 0)
""",
    "one_hot_etc": """
R(F.one_hot(torch.tensor([0, 2, 1]), 3), F.one_hot(torch.tensor([0, 2])), F.softmax(torch.tensor([1., 2., 3.]), dim=0), F.log_softmax(torch.tensor([[1., 2.]]), 1))
""",
    "ce_loss_print": """
torch.manual_seed(0)
logits = torch.randn(3, 5, requires_grad=True); target = torch.tensor([1, 0, 4])
loss = nn.CrossEntropyLoss()(logits, target); R(str(loss)); loss.backward(); R(logits.grad)
""",
    "nll_print": """
x = torch.tensor([[-1., -2.], [-0.5, -3.]], requires_grad=True)
R(str(F.nll_loss(x, torch.tensor([0, 1]))), str(F.binary_cross_entropy(torch.tensor([0.3, 0.8], requires_grad=True), torch.tensor([0., 1.]))))
""",
    "conv_out_print": """
torch.manual_seed(0)
conv = nn.Conv2d(1, 2, 3); out = conv(torch.ones(1, 1, 4, 4)); R(str(out.shape), str(out)[:40])
""",
    "sum_dims": """
x = torch.arange(6.).view(2, 3)
R(x.sum(0), x.sum(dim=1, keepdim=True), x.mean((0, 1)), x.std(), x.var(0, unbiased=False), x.sum(-1).dtype, torch.arange(6).view(2,3).sum(0).dtype)
""",
    "stack_cat_errors": """
torch.cat([torch.ones(2, 3), torch.ones(3, 2)])
""",
    "matmul_errors": """
torch.ones(2, 3) @ torch.ones(2, 3)
""",
    "add_shape_error": """
torch.ones(2, 3) + torch.ones(4)
""",
    "index_error": """
torch.ones(3)[5]
""",
    "float_index_error": """
torch.ones(3)[1.0]
""",
    "long_float_mix": """
R(torch.tensor([1, 2]) + 0.5, torch.tensor([1, 2]) * torch.tensor([0.5, 1.]), torch.tensor([1, 2]) / 2, torch.tensor(3) // 2, torch.tensor([1, 2], dtype=torch.int32) + torch.tensor(1), torch.tensor([1., 2.], dtype=torch.float16) + torch.tensor([1.], dtype=torch.float64).sum())
""",
    "inplace_int_float": """
x = torch.tensor([1, 2]); x.mul_(0.5)
""",
    "linspace_arange": """
R(torch.arange(5), torch.arange(1, 4, 0.5), torch.arange(0, 1, 0.25).dtype, torch.linspace(0, 1, 5), torch.logspace(0, 2, 3), torch.arange(5.).dtype, torch.eye(2), torch.full((2,), 7), torch.full((2,), 7.).dtype, torch.empty(2, 3).shape, torch.zeros(2, dtype=torch.long))
""",
    "numpy_roundtrip": """
a = torch.arange(4.).reshape(2, 2).detach().numpy(); R(type(a).__name__, a.dtype.name, a.flags['C_CONTIGUOUS'], torch.arange(4.).reshape(2,2).t().detach().numpy().flags['C_CONTIGUOUS'])
""",
    "named_tuple_unpack": """
x = torch.tensor([[3., 1.], [2., 4.]])
vals, idx = torch.sort(x, dim=1); R(vals, idx); m = torch.median(x); R(m); u = torch.unique(torch.tensor([3, 1, 3])); R(u)
u2, inv, cnt = torch.unique(torch.tensor([3, 1, 3]), return_inverse=True, return_counts=True); R(u2, inv, cnt)
""",
    "tensor_bool_if": """
x = torch.tensor([1., 2.])
if (x > 0).all(): R("pos")
if x.sum() > 2: R("big")
R(x.any(), torch.all(x > 1), torch.equal(x, x.clone()), torch.allclose(x, x + 1e-9), torch.isclose(x, x).all())
""",
    "module_train_flags_str": """
m = nn.Dropout(); m.eval(); R(str(m), m.training)
""",
    "grad_clip": """
torch.manual_seed(0)
m = nn.Linear(3, 2); (m(torch.randn(4, 3)) ** 2).sum().backward()
n = torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5); R(n, m.weight.grad)
torch.nn.utils.clip_grad_value_(m.parameters(), 0.01); R(m.bias.grad)
""",
    "save_load_sd": """
import io
m = nn.Linear(2, 2); buf = io.BytesIO(); torch.save(m.state_dict(), buf); buf.seek(0)
sd = torch.load(buf); R(list(sd), type(sd).__name__); m2 = nn.Linear(2, 2); R(str(m2.load_state_dict(sd)))
""",
    "param_count_str": """
m = nn.Sequential(nn.Linear(10, 5), nn.ReLU(), nn.Linear(5, 1))
R(f"{sum(p.numel() for p in m.parameters()):,}", [p.shape for p in m.parameters()], [str(p.shape) for p in m.parameters()])
""",
    "weight_init": """
torch.manual_seed(0)
l = nn.Linear(3, 2)
nn.init.xavier_uniform_(l.weight); nn.init.zeros_(l.bias); R(l.weight, l.bias)
nn.init.kaiming_normal_(l.weight, mode='fan_out', nonlinearity='relu'); R(l.weight)
nn.init.constant_(l.bias, 0.1); nn.init.normal_(l.weight, std=0.02); R(l.weight, l.bias)
""",
    "sched_print": """
opt = torch.optim.SGD([nn.Parameter(torch.ones(1))], lr=0.1)
s = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
for _ in range(2): opt.step(); s.step(); R(f"lr: {s.get_last_lr()[0]:.4f}", s.get_last_lr())
""",
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_tutorial_program_observes_what_pytorch_does(name: str) -> None:
    assert_same_as_torch(PROGRAMS[name], torch)
