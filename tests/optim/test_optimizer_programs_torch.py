"""Training-loop programs written for PyTorch's optimizers and schedulers, run with ``torch``
bound to PyTorch and to tinygrad_attn (tests/differential.py), observe the same: each optimizer's
parameters after five steps with weight decay, momentum, nesterov, amsgrad, maximize and foreach
options, its state dict's groups and state keys, per-group settings and ``add_param_group``, the
optimizer's repr and its errors, and every scheduler's ``get_last_lr()`` over thirty steps."""

from __future__ import annotations

import pytest

from tests.differential import assert_same_as_torch

torch = pytest.importorskip("torch")

SETUP = """
torch.manual_seed(0)
def mk():
    w = nn.Parameter(torch.tensor([[0.5, -1.0], [2.0, 0.3]])); b = nn.Parameter(torch.tensor([0.1, -0.2]))
    return w, b
def step(opt, ps, n=5):
    for i in range(n):
        opt.zero_grad()
        loss = ((ps[0] @ torch.tensor([1.0, 2.0]) + ps[1]) ** 2).sum() + (ps[0] ** 3).sum() * 0.1
        loss.backward()
        opt.step()
    return ps
"""

PROGRAMS = {
    "SGD(lr=0.1)": SETUP
    + """
ps = mk(); opt = torch.optim.SGD(ps, lr=0.1); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "SGD(lr=0.1, momentum=0.9)": SETUP
    + """
ps = mk(); opt = torch.optim.SGD(ps, lr=0.1, momentum=0.9); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "SGD(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)": SETUP
    + """
ps = mk(); opt = torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "SGD(lr=0.1, momentum=0.5, dampening=0.3, maximize=True)": SETUP
    + """
ps = mk(); opt = torch.optim.SGD(ps, lr=0.1, momentum=0.5, dampening=0.3, maximize=True); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "SGD(lr=0.1, foreach=True, momentum=0.9)": SETUP
    + """
ps = mk(); opt = torch.optim.SGD(ps, lr=0.1, foreach=True, momentum=0.9); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "Adam(lr=0.01)": SETUP
    + """
ps = mk(); opt = torch.optim.Adam(ps, lr=0.01); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "Adam(lr=0.01, weight_decay=0.1, amsgrad=True)": SETUP
    + """
ps = mk(); opt = torch.optim.Adam(ps, lr=0.01, weight_decay=0.1, amsgrad=True); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "Adam(lr=0.01, maximize=True, foreach=False)": SETUP
    + """
ps = mk(); opt = torch.optim.Adam(ps, lr=0.01, maximize=True, foreach=False); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "Adam(lr=0.01, betas=(0.8, 0.9), eps=1e-6)": SETUP
    + """
ps = mk(); opt = torch.optim.Adam(ps, lr=0.01, betas=(0.8, 0.9), eps=1e-6); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "AdamW(lr=0.01)": SETUP
    + """
ps = mk(); opt = torch.optim.AdamW(ps, lr=0.01); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "AdamW(lr=0.01, weight_decay=0.1, amsgrad=True)": SETUP
    + """
ps = mk(); opt = torch.optim.AdamW(ps, lr=0.01, weight_decay=0.1, amsgrad=True); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "RMSprop(lr=0.01)": SETUP
    + """
ps = mk(); opt = torch.optim.RMSprop(ps, lr=0.01); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "RMSprop(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)": SETUP
    + """
ps = mk(); opt = torch.optim.RMSprop(ps, lr=0.01, momentum=0.9, centered=True, weight_decay=0.1); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "Adagrad(lr=0.1)": SETUP
    + """
ps = mk(); opt = torch.optim.Adagrad(ps, lr=0.1); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "Adagrad(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)": SETUP
    + """
ps = mk(); opt = torch.optim.Adagrad(ps, lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "Adadelta(lr=1.0)": SETUP
    + """
ps = mk(); opt = torch.optim.Adadelta(ps, lr=1.0); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "Adadelta(lr=1.0, rho=0.8, weight_decay=0.1)": SETUP
    + """
ps = mk(); opt = torch.optim.Adadelta(ps, lr=1.0, rho=0.8, weight_decay=0.1); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "Adamax(lr=0.01)": SETUP
    + """
ps = mk(); opt = torch.optim.Adamax(ps, lr=0.01); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "Adamax(lr=0.01, weight_decay=0.1)": SETUP
    + """
ps = mk(); opt = torch.optim.Adamax(ps, lr=0.01, weight_decay=0.1); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "NAdam(lr=0.01)": SETUP
    + """
ps = mk(); opt = torch.optim.NAdam(ps, lr=0.01); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "NAdam(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)": SETUP
    + """
ps = mk(); opt = torch.optim.NAdam(ps, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "RAdam(lr=0.01)": SETUP
    + """
ps = mk(); opt = torch.optim.RAdam(ps, lr=0.01); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "RAdam(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)": SETUP
    + """
ps = mk(); opt = torch.optim.RAdam(ps, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "ASGD(lr=0.01)": SETUP
    + """
ps = mk(); opt = torch.optim.ASGD(ps, lr=0.01); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "ASGD(lr=0.01, weight_decay=0.1, t0=2)": SETUP
    + """
ps = mk(); opt = torch.optim.ASGD(ps, lr=0.01, weight_decay=0.1, t0=2); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "Rprop(lr=0.01)": SETUP
    + """
ps = mk(); opt = torch.optim.Rprop(ps, lr=0.01); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "Rprop(lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-3, 1))": SETUP
    + """
ps = mk(); opt = torch.optim.Rprop(ps, lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-3, 1)); R(step(opt, ps)); sd = opt.state_dict(); R(sd["param_groups"]); R(sorted(sd["state"][0].keys()))
""",
    "param_groups": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([{'params': [w]}, {'params': [b], 'lr': 0.5, 'weight_decay': 0.1}], lr=0.1, momentum=0.9)
R([{k: v for k, v in g.items() if k != 'params'} for g in opt.param_groups]); step(opt, (w, b)); R(w, b)
x = nn.Parameter(torch.ones(2)); opt.add_param_group({'params': x, 'lr': 0.3}); R(len(opt.param_groups), opt.param_groups[2]['momentum'], type(opt.param_groups[2]['params']).__name__)
""",
    "add_dup_param": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w], lr=0.1); opt.add_param_group({'params': [w]})
""",
    "opt_repr": SETUP
    + """
w, b = mk(); R(repr(torch.optim.SGD([w], lr=0.1)), repr(torch.optim.Adam([w])))
""",
    "opt_bad_lr": SETUP
    + """
w, b = mk(); torch.optim.SGD([w], lr=-0.1)
""",
    "opt_empty": SETUP
    + """
torch.optim.SGD([], lr=0.1)
""",
    "opt_nesterov_bad": SETUP
    + """
w, b = mk(); torch.optim.SGD([w], lr=0.1, nesterov=True)
""",
    "opt_tensor_param": SETUP
    + """
w, b = mk(); torch.optim.SGD(w, lr=0.1)
""",
    "opt_zero_grad": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1); step(opt, (w, b), 1); opt.zero_grad(); R(w.grad); step(opt, (w, b), 1); opt.zero_grad(set_to_none=False); R(w.grad)
""",
    "sched_StepLR": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1); s = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_MultiStepLR": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1); s = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[3, 7, 20], gamma=0.3)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_ExponentialLR": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1); s = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_CosineAnnealingLR": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1); s = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=0.001)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_OneCycleLR": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1, momentum=0.9); s = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=31)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_LambdaLR": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1); s = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda=lambda e: 0.95 ** e)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_MultiplicativeLR": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1); s = torch.optim.lr_scheduler.MultiplicativeLR(opt, lr_lambda=lambda e: 0.9)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_CyclicLR": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1, momentum=0.9); s = torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_CyclicLR_tri2": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1, momentum=0.9); s = torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=3, mode='triangular2')
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_CyclicLR_exp": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1, momentum=0.9); s = torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=3, mode='exp_range', gamma=0.9)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_CosineAnnealingWarmRestarts": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1); s = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=5, T_mult=2, eta_min=0.01)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_LinearLR": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1); s = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.2, total_iters=6)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_ConstantLR": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1); s = torch.optim.lr_scheduler.ConstantLR(opt, factor=0.3, total_iters=4)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_PolynomialLR": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1); s = torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=10, power=2.0)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_OneCycleLR_lin": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w, b], lr=0.1, momentum=0.9); s = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=31, anneal_strategy='linear', three_phase=True)
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, opt.param_groups[0].get('momentum'), s.last_epoch); sd = s.state_dict(); R(sorted(k for k in sd if k != 'lr_lambdas'))
""",
    "sched_plateau": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w], lr=0.1); s = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=2, factor=0.5, threshold=0.1, cooldown=1, min_lr=0.001)
tr = []
for v in [1, 0.9, 0.95, 0.93, 0.92, 0.91, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]:
    s.step(v); tr.append(opt.param_groups[0]['lr'])
R(tr, s.get_last_lr(), s.num_bad_epochs, s.best)
""",
    "sched_plateau_max": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w], lr=0.1); s = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode='max', patience=1, threshold_mode='abs', threshold=0.05)
tr = []
for v in [1, 1.02, 1.04, 1.1, 1.1, 1.1, 1.1]:
    s.step(v); tr.append(opt.param_groups[0]['lr'])
R(tr)
""",
    "sched_sequential": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w], lr=0.1)
s1 = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=5); s2 = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
s = torch.optim.lr_scheduler.SequentialLR(opt, [s1, s2], milestones=[5])
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr)
""",
    "sched_chained": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w], lr=0.1)
s1 = torch.optim.lr_scheduler.ConstantLR(opt, factor=0.1, total_iters=4); s2 = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
s = torch.optim.lr_scheduler.ChainedScheduler([s1, s2])
tr = [s.get_last_lr()]
for i in range(30):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr)
""",
    "sched_two_groups": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([{'params': [w]}, {'params': [b], 'lr': 0.5}], lr=0.1)
s = torch.optim.lr_scheduler.LambdaLR(opt, [lambda e: 0.5 ** e, lambda e: 1 / (e + 1)])
tr = []
for i in range(10):
    opt.step(); s.step(); tr.append(s.get_last_lr())
R(tr, [g['initial_lr'] for g in opt.param_groups])
""",
    "sched_order_warn": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w], lr=0.1); s = torch.optim.lr_scheduler.StepLR(opt, 2)
s.step(); R(s.get_last_lr())
""",
    "sched_cosine_over": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w], lr=0.1); s = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
tr = []
for i in range(15):
    opt.step(); s.step(); tr.append(s.get_last_lr()[0])
R(tr)
""",
    "onecycle_over": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w], lr=0.1, momentum=0.9); s = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=5)
for i in range(6):
    opt.step(); s.step()
""",
    "sched_cawr_epoch_float": SETUP
    + """
w, b = mk(); opt = torch.optim.SGD([w], lr=0.1); s = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3)
tr = []
for e in range(4):
    for i in range(4):
        s.step(e + i / 4); tr.append(s.get_last_lr()[0])
R(tr)
""",
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_optimizer_program_observes_what_pytorch_does(name: str) -> None:
    assert_same_as_torch(PROGRAMS[name], torch)


SCHEDULERS = {
    "StepLR": lambda S, o: S.StepLR(o, 2),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, [2]),
    "ConstantLR": lambda S, o: S.ConstantLR(o),
    "LinearLR": lambda S, o: S.LinearLR(o),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, 0.9),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, 5),
    "LambdaLR": lambda S, o: S.LambdaLR(o, lambda e: 1.0),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.9),
    "CyclicLR": lambda S, o: S.CyclicLR(o, 0.01, 0.1),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, 1.0, total_steps=10),
    "CosineAnnealingWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, 3),
    "SequentialLR": lambda S, o: S.SequentialLR(o, [S.ConstantLR(o), S.ExponentialLR(o, 0.9)], [2]),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler([S.ConstantLR(o), S.ExponentialLR(o, 0.9)]),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_get_lr_outside_step_warns_as_pytorchs(name: str) -> None:
    import warnings  # noqa: PLC0415

    import tinygrad_attn as tga  # noqa: PLC0415

    def run(lib):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1, momentum=0.9)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched = SCHEDULERS[name](lib.optim.lr_scheduler, opt)
            opt.step()
            sched.step()
            made = len(caught)
            try:
                got = [float(v) for v in sched.get_lr()]
            except NotImplementedError:
                got = "NotImplementedError"
        return made, [w.category.__name__ for w in caught[made:]], got

    assert run(tga) == run(torch)
