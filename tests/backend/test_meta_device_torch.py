"""The meta device against PyTorch's: tensors with a shape, dtype, strides and graph but no values.

Each program runs twice, with ``torch`` bound to PyTorch and to tinygrad_attn, and what it sees of
every meta tensor is compared: shape, dtype, strides, device, ``is_meta``, ``requires_grad`` and
the name of its ``grad_fn``, and the class of the exception it stops at. The fast part runs the
factories, the reads of values PyTorch refuses, printing, modules (``to_empty``,
``load_state_dict(assign=True)``, backward, optimizers, ``nn.init``) and a memory check; the slow
sweeps run every op of the op table (``tests/opinfo.py``) on meta inputs of its first sample's
shapes, and every module of PyTorch's ModuleInfo database that we have, built on the meta device
and run on meta inputs. ``KNOWN`` lists the cases that differ, with why (strict xfails).
"""

from __future__ import annotations

import sys
import textwrap
import tracemalloc
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402


def _record(v: Any, lib: Any) -> Any:
    """What a program sees of ``v``: a tensor's metadata (no values), containers item by item."""
    if isinstance(v, lib.Tensor):
        fn = v.grad_fn
        return ("tensor", tuple(v.shape), str(v.dtype).replace("torch.", ""), tuple(v.stride()), str(v.device),
                bool(v.is_meta), bool(v.requires_grad), None if fn is None else fn.name())  # fmt: skip
    if isinstance(v, (list, tuple)):
        return [_record(x, lib) for x in v]
    if isinstance(v, dict):
        return {k: _record(x, lib) for k, x in v.items()}
    if type(v).__name__ in ("dtype", "device", "Size"):
        return str(v).replace("torch.", "")
    return v if v is None or isinstance(v, (bool, int, float, str)) else type(v).__name__


def run(program: str, lib: Any) -> tuple[list[Any], tuple[str, ...] | None]:
    """What ``program`` recorded with ``R(...)`` with ``torch`` = ``lib``, and the names of the
    classes of the exception it stopped at (None when it ran to its end)."""
    seen: list[Any] = []
    scope = {"torch": lib, "nn": lib.nn, "F": lib.nn.functional, "np": np,
             "R": lambda *vs: seen.extend(_record(v, lib) for v in vs)}  # fmt: skip
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(textwrap.dedent(program), scope)  # noqa: S102 - the program is the test's own text
        raised = None
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        raised = tuple(c.__name__ for c in type(e).__mro__)
    finally:
        lib.set_default_device(None if lib is torch else "cpu")
    return seen, raised


def assert_as_torch(program: str) -> None:
    theirs, raised_t = run(program, torch)
    ours, raised_o = run(program, tga)
    assert ours == theirs, f"recorded:\n  ours    {ours}\n  PyTorch {theirs}"
    if raised_t is None:
        assert raised_o is None, f"ours raised {raised_o[0]}, PyTorch ran to the end"
    else:
        assert raised_o is not None and raised_t[0] in raised_o, f"ours raised {raised_o}, PyTorch {raised_t[0]}"


def _xfail(cases: dict, known: dict) -> list[Any]:
    return [pytest.param(k, id=k, marks=[pytest.mark.xfail(reason=known[k], strict=True)] if k in known else [])
            for k in cases]  # fmt: skip


# -- factories ------------------------------------------------------------------------------------
FACTORIES = {
    "empty": "R(torch.empty(3, 4, device='meta'))",
    "empty_huge": "R(torch.empty(10**6, 10**6, device='meta'))",
    "empty_dtype": "R(torch.empty(2, 3, dtype=torch.float64, device='meta', requires_grad=True))",
    "zeros": "R(torch.zeros(2, 3, device='meta'), torch.zeros((), device='meta'))",
    "ones": "R(torch.ones(2, 0, 3, device='meta', dtype=torch.int32))",
    "full": "R(torch.full((2, 3), 7, device='meta'), torch.full((2,), 1.5, device='meta'))",
    "rand": "R(torch.rand(2, 3, device='meta'), torch.randn(4, device='meta', dtype=torch.float64))",
    "randint": "R(torch.randint(0, 5, (3, 2), device='meta'))",
    "arange": "R(torch.arange(5, device='meta'), torch.arange(0, 1, 0.25, device='meta'))",
    "linspace": "R(torch.linspace(0, 1, 5, device='meta'))",
    "eye": "R(torch.eye(3, 2, device='meta'))",
    "tensor": "R(torch.tensor([[1, 2], [3, 4]], device='meta'), torch.tensor(2.0, device='meta'))",
    "empty_strided": "R(torch.empty_strided((2, 3), (1, 2), device='meta'))",
    "like": """
        x = torch.empty(4, 3, device='meta').t()
        R(torch.empty_like(x), torch.zeros_like(x), torch.ones_like(x, dtype=torch.int64), torch.full_like(x, 2.0))
        R(torch.rand_like(x), torch.randn_like(x))
    """,
    "like_of_cpu": "R(torch.empty_like(torch.ones(2, 3), device='meta'), torch.zeros_like(torch.ones(2), device='meta'))",
    "new": """
        x = torch.empty(2, 3, device='meta', dtype=torch.float64)
        R(x.new_empty(4), x.new_zeros(2, 2), x.new_ones(1), x.new_full((3,), 5.0), x.new_tensor([1, 2]))
    """,
    "context_manager": """
        with torch.device('meta'):
            R(torch.ones(2), torch.empty(3, 4), torch.arange(3))
            with torch.device('cpu') as d:
                R(torch.ones(1).device, d)
            R(torch.ones(1).device)
        R(torch.ones(2).device)
    """,
    "set_default_device": """
        torch.set_default_device('meta')
        R(torch.zeros(2, 2), torch.get_default_device())
    """,
    "to_meta": """
        x = torch.ones(4, 3).t()
        R(x.to('meta'), x.to(device='meta', dtype=torch.float64), torch.ones(2, requires_grad=True).to('meta'))
    """,
}


@pytest.mark.parametrize("name", _xfail(FACTORIES, {}))
def test_factories_make_meta_tensors_as_pytorchs(name: str) -> None:
    assert_as_torch(FACTORIES[name])


# -- what needs values refuses, as PyTorch's ------------------------------------------------------
REFUSALS = {
    "item": "torch.empty((), device='meta').item()",
    "bool": "bool(torch.empty((), device='meta'))",
    "float": "float(torch.empty((), device='meta'))",
    "int": "int(torch.empty(1, device='meta'))",
    "tolist": "torch.empty(2, device='meta').tolist()",
    "numpy": "torch.empty(2, device='meta').numpy()",
    "np_asarray": "np.asarray(torch.empty(2, device='meta'))",
    "cpu": "torch.empty(2, device='meta').cpu()",
    "to_cpu": "torch.empty(2, device='meta').to('cpu')",
    "copy_into_cpu": "torch.ones(2).copy_(torch.empty(2, device='meta'))",
    "nonzero": "torch.empty(2, 3, device='meta').nonzero()",
    "masked_select": "x = torch.empty(2, 3, device='meta'); x.masked_select(x > 0)",
    "boolean_mask": "x = torch.empty(2, 3, device='meta'); x[x > 0]",
    "unique": "torch.unique(torch.empty(4, device='meta'))",
    "repeat_interleave": "torch.empty(3, device='meta').repeat_interleave(torch.tensor([1, 2, 3], device='meta'))",
    "repeat_interleave_sized": """
        R(torch.empty(3, device='meta').repeat_interleave(torch.tensor([1, 2, 3], device='meta'), output_size=6))
        R(torch.empty(3, 2, device='meta').repeat_interleave(2, dim=0))
    """,
    "allclose": "x = torch.empty(2, device='meta'); torch.allclose(x, x)",
    "contains": "1.0 in torch.empty(2, device='meta')",
    "with_cpu": "torch.empty(2, 3, device='meta') + torch.ones(2, 3)",
    "cpu_with": "torch.ones(2, 3) * torch.empty(2, 3, device='meta')",
    "with_0d_cpu": """
        x = torch.empty(2, 3, device='meta')
        R(x + torch.tensor(1.0), torch.tensor(2) * x, torch.where(x > 0, x, torch.tensor(0.0)))
    """,
}

KNOWN_REFUSALS: dict[str, str] = {}


@pytest.mark.parametrize("name", _xfail(REFUSALS, KNOWN_REFUSALS))
def test_reading_values_refuses_as_pytorchs(name: str) -> None:
    assert_as_torch(REFUSALS[name])


def test_meta_errors_say_what_pytorchs_say() -> None:
    x = tga.empty(2, device="meta")
    with pytest.raises(RuntimeError, match="Tensor.item\\(\\) cannot be called on meta tensors"):
        x[0].item()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        x.cpu()
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        x.numpy()
    with pytest.raises(RuntimeError, match="cannot repeat_interleave a meta tensor without output_size"):
        x.repeat_interleave(tga.tensor([1, 2], device="meta"))


# -- printing -------------------------------------------------------------------------------------
PRINTED = [
    "torch.empty(3, 4, device='meta')",
    "torch.empty((), device='meta', dtype=torch.int64)",
    "torch.empty(0, device='meta')",
    "torch.empty(2, device='meta', dtype=torch.float64)",
    "torch.empty(2, device='meta', dtype=torch.bool)",
    "torch.empty(2, device='meta', requires_grad=True)",
    "torch.empty(2, device='meta', requires_grad=True) * 2",
    "nn.Parameter(torch.empty(2, 2, device='meta'))",
    "nn.Linear(2, 3, device='meta').weight",
]


@pytest.mark.parametrize("expr", PRINTED)
def test_meta_tensors_print_as_pytorchs(expr: str) -> None:
    scope = {"nn": None}
    reprs = []
    for lib in (torch, tga):
        scope = {"torch": lib, "nn": lib.nn}
        reprs.append(repr(eval(expr, scope)))  # noqa: S307 - the test's own expression
    assert reprs[1] == reprs[0]


# -- modules, graphs, optimizers ------------------------------------------------------------------
PROGRAMS = {
    "module_on_meta": """
        with torch.device('meta'):
            m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        R([p for p in m.parameters()])
        y = m(torch.empty(5, 4, device='meta'))
        R(y)
        y.sum().backward()
        R([p.grad for p in m.parameters()])
    """,
    "linear_device_argument": "R(nn.Linear(4096, 4096, device='meta').weight, nn.Conv2d(3, 8, 3, device='meta').bias)",
    "shape_inference": """
        with torch.device('meta'):
            net = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                                nn.Flatten(), nn.Linear(8 * 55 * 55, 10))
        R(net(torch.empty(8, 3, 224, 224, device='meta')))
    """,
    "to_empty": """
        with torch.device('meta'):
            m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        m2 = m.to_empty(device='cpu')
        R(m2 is m, [(t.shape, t.device, t.dtype, t.requires_grad) for t in m.state_dict().values()])
        m.to_empty(device='meta', recurse=False)
        R(m[0].weight.device)
    """,
    "load_state_dict_assign": """
        with torch.device('meta'):
            m = nn.Linear(3, 2)
        sd = nn.Linear(3, 2).state_dict()
        R(tuple(m.load_state_dict(sd, assign=True)))
        R(m.weight.device, type(m.weight).__name__, m.weight.requires_grad, m.bias.is_meta)
        R(m.weight.data_ptr() == sd['weight'].data_ptr())
    """,
    "load_state_dict_into_meta": """
        with torch.device('meta'):
            m = nn.Linear(3, 2)
        m.load_state_dict(nn.Linear(3, 2).state_dict())
        R(m.weight)
    """,
    "module_to_meta": "m = nn.Linear(2, 3).to('meta'); R(m.weight, m.bias)",
    "init_is_a_no_op": """
        w = nn.Parameter(torch.empty(4, 3, device='meta'))
        R(nn.init.normal_(w) is w, nn.init.kaiming_uniform_(w) is w, nn.init.zeros_(w) is w)
        R(nn.init.xavier_normal_(w) is w, nn.init.uniform_(w, -1, 1) is w, nn.init.constant_(w, 3) is w, w)
    """,
    "every_init": """
        for name in sorted(n for n in dir(nn.init) if n.endswith('_') and not n.startswith('_')):
            w = torch.empty(4, 3, 2, 2, device='meta') if name == 'dirac_' else torch.empty(4, 3, device='meta')
            args = {'constant_': (1.0,), 'sparse_': (0.5,)}.get(name, ())
            R(name, getattr(nn.init, name)(w, *args) is w, w)
    """,
    "in_place": """
        x = torch.empty(3, 4, device='meta')
        R(x.add_(1) is x, x.mul_(2), x.t().fill_(0), x.normal_() is x, x.uniform_() is x)
        x[0] = 5
        x[:, 1] = torch.empty(3, device='meta')
        R(x, x.zero_())
    """,
    "backward": """
        x = torch.empty(3, 4, device='meta', requires_grad=True)
        w = torch.empty(4, 2, device='meta', requires_grad=True)
        y = torch.tanh(x @ w).sum()
        R(y)
        y.backward()
        R(x.grad, w.grad)
    """,
    "autograd_grad": """
        x = torch.empty(3, device='meta', requires_grad=True)
        R(torch.autograd.grad((x * x).sum(), x))
    """,
    "optimizers": """
        for name in ('SGD', 'Adam', 'AdamW', 'Adamax', 'Adadelta', 'Adagrad', 'NAdam', 'RAdam', 'RMSprop', 'Rprop',
                     'Muon', 'LBFGS'):
            p = nn.Parameter(torch.empty(3, 2, device='meta'))
            p.grad = torch.empty(3, 2, device='meta')
            o = getattr(torch.optim, name)([p], lr=0.1)
            o.step(lambda: (p * p).sum()) if name == 'LBFGS' else o.step()
            R(name, p, p.grad, sorted(o.state_dict()['state']))
    """,
    "optimizers_pytorch_refuses": """
        for name in ('ASGD', 'Adafactor'):
            p = nn.Parameter(torch.empty(3, 2, device='meta'))
            p.grad = torch.empty(3, 2, device='meta')
            getattr(torch.optim, name)([p], lr=0.1).step()
    """,
    "views_and_strides": """
        x = torch.empty(2, 3, 4, device='meta')
        R(x.transpose(0, 2), x.permute(2, 0, 1).reshape(4, 6), x[:, 1:, ::2], x.unsqueeze(1), x.expand(5, 2, 3, 4))
        R(x.view(6, 4), x.flatten(), x.t() if x.ndim == 2 else x.mT, x.diagonal(0, 1, 2), x.unfold(2, 2, 1))
        R(x.permute(2, 0, 1).contiguous(), x.permute(2, 0, 1).clone(), x.permute(2, 0, 1) + 1, x.mT * x.mT)
    """,
    "channels_last": """
        x = torch.empty(2, 3, 4, 5, device='meta').contiguous(memory_format=torch.channels_last)
        R(x, x + 1, torch.relu(x), x.clone())
    """,
    "save_and_load": """
        import io
        b = io.BytesIO()
        torch.save({'w': torch.empty(3, 4, device='meta')}, b)
        b.seek(0)
        R(torch.load(b)['w'])
    """,
    "module_to_cpu_refuses": """
        with torch.device('meta'):
            m = nn.Linear(3, 2)
        m.to('cpu')
    """,
    "tensor_of_a_meta_tensor": "R(torch.tensor(torch.empty(2, 3, device='meta')), torch.empty(2, device='meta').data_ptr())",
    "indexing_with_meta_indices": """
        x = torch.empty(4, 5, device='meta')
        i = torch.empty(3, dtype=torch.long, device='meta')
        R(x[i], x[:, i], x.gather(1, torch.empty(4, 2, dtype=torch.long, device='meta')), x.index_select(0, i))
        R(x.scatter(1, torch.empty(4, 2, dtype=torch.long, device='meta'), 1.0), x.index_put_((i,), torch.empty(5, device='meta')))
        x[i] = 2.0
        R(x, F.embedding(i, x), F.one_hot(i, 6), F.cross_entropy(x, torch.empty(4, dtype=torch.long, device='meta')))
    """,
    "attention_and_recurrence": """
        q = torch.empty(2, 4, 5, 8, device='meta')  # (no graph: the nodes' names are the CPU tests' business)
        R(F.scaled_dot_product_attention(q, q, q, is_causal=True), F.dropout(q, 0.5))
        mha = nn.MultiheadAttention(8, 2, device='meta', batch_first=True)
        x = torch.empty(2, 5, 8, device='meta')
        R(mha(x, x, x)[0])
        y, (h, c) = nn.LSTM(4, 6, device='meta')(torch.empty(5, 2, 4, device='meta'))
        R(tuple(y.shape), y.stride(), h, c)
    """,
    "huge_products_and_reductions": """
        x = torch.empty(10**6, 10**6, device='meta')
        R(x @ torch.empty(10**6, 5, device='meta'), torch.empty(7, 10**6, device='meta') @ x, x.sum(0), x.amax(1, keepdim=True))
        R(x.mean(), torch.empty(3, 10**6, 10**3, device='meta').matmul(torch.empty(10**3, 4, device='meta')))
    """,
    "ops_computed_from_values": """
        def S(*vs, names=True):  # (LAPACK's results lie column-major in PyTorch's, row-major in ours on the CPU too)
            for v in vs:
                if isinstance(v, tuple):
                    S(*v, names=names)
                else:
                    R(v.shape, v.dtype, v.is_meta, v.requires_grad, names and v.grad_fn and v.grad_fn.name())
        a = torch.empty(2, 4, 4, device='meta', dtype=torch.float64, requires_grad=True)
        b = torch.empty(4, 3, device='meta', dtype=torch.float64).t()
        S(torch.linalg.inv(a), torch.linalg.solve(a, torch.empty(2, 4, 3, device='meta', dtype=torch.float64)))
        S(torch.linalg.cholesky(a), torch.linalg.lu_factor(a), torch.linalg.slogdet(a), torch.linalg.pinv(b))
        S(torch.linalg.matrix_exp(a), torch.linalg.tensorinv(a[0].reshape(4, 2, 2), ind=1))
        LU, piv = torch.linalg.lu_factor(a)
        S(torch.lu_unpack(LU, piv), torch.linalg.lu_solve(LU, piv, a), torch.cholesky_inverse(a))
        torch.linalg.inv(a).sum().backward()
        R(a.grad)
        x = torch.empty(3, 5, device='meta', requires_grad=True)
        R(x.median(), x.median(1), x.kthvalue(2, 1), x.mode(0))
        S(x.quantile(0.3, 1), x.nanquantile(0.5), names=False)  # (ours names the node otherwise on the CPU too)
        s = torch.empty(3, 6, device='meta')
        R(torch.searchsorted(s, x), torch.bucketize(x, s[0]), torch.histc(x, 4), torch.isin(x, s))
        R(x.nonzero_static(size=4), x.masked_scatter(x > 0, torch.empty(20, device='meta')))
        R(F.binary_cross_entropy(x.sigmoid(), torch.empty(3, 5, device='meta')))
        R(F.multilabel_margin_loss(x, torch.empty(3, 5, dtype=torch.long, device='meta')))
        R(F.fractional_max_pool2d(torch.empty(2, 3, 8, 8, device='meta'), 2, output_size=4, return_indices=True))
        R(F.ctc_loss(torch.empty(6, 2, 4, device='meta').log_softmax(2), torch.empty(2, 3, dtype=torch.long, device='meta'),
                     [6, 5], [3, 2]))
    """,
    "draws_and_spectra_computed_from_values": """
        x = torch.empty(3, 4, device='meta')
        R(torch.poisson(x), torch.normal(x, x), torch.normal(x, 1.0), torch.bernoulli(x), torch.bernoulli(x, 0.3))
        R(torch.multinomial(x, 2), torch.multinomial(x[0], 6, replacement=True), x.take(torch.empty(5, dtype=torch.long, device='meta')))
        R(torch.linalg.svdvals(x), torch.linalg.eigvals(x[:, :3]), torch.linalg.matrix_rank(x), torch.linalg.cond(x[:, :3]))
    """,
    "no_meta_kernel_binomial": "torch.binomial(torch.empty(3, device='meta'), torch.empty(3, device='meta'))",
    "no_meta_kernel_lstsq": "torch.linalg.lstsq(torch.empty(5, 3, device='meta'), torch.empty(5, 2, device='meta'))",
    "second_gradients_through_ops_computed_from_values": """
        a = torch.empty(2, 3, 3, device='meta', dtype=torch.float64, requires_grad=True)
        g, = torch.autograd.grad(torch.linalg.inv(a).sum(), a, create_graph=True)
        R(g.shape, g.stride(), g.is_meta, g.requires_grad)  # (the node's name is the CPU tests' business)
        R(torch.autograd.grad((g * g).sum(), a)[0])
    """,
    "range_checks_skipped": """
        R(F.nll_loss(torch.empty(4, 3, device='meta'), torch.empty(4, dtype=torch.long, device='meta')))
        R(torch.empty(4, 3, device='meta').kthvalue(3, 1))
    """,
    "no_meta_kernel_cov": "torch.cov(torch.empty(3, 4, device='meta'))",
    "no_meta_kernel_cov_checks_first": "torch.cov(torch.empty(3, 4, 5, device='meta'))",
    "no_meta_kernel_corrcoef": "torch.corrcoef(torch.empty(3, 4, device='meta'))",
    "no_meta_kernel_combinations": "R(torch.combinations(torch.empty(4, device='meta'), 0)); torch.combinations(torch.empty(4, device='meta'))",
    "no_meta_kernel_ctc_loss_of_tensor_lengths": """
        F.ctc_loss(torch.empty(6, 2, 4, device='meta'), torch.empty(2, 3, dtype=torch.long, device='meta'),
                   torch.empty(2, dtype=torch.long, device='meta'), torch.empty(2, dtype=torch.long, device='meta'))
    """,
    "grouped_mm_meta_kernel_takes_bfloat16": """
        F.grouped_mm(torch.empty(4, 8, device='meta'), torch.empty(2, 8, 8, device='meta'),
                     offs=torch.empty(2, dtype=torch.int32, device='meta'))
    """,
    "huge_factorisation": "R(torch.linalg.inv(torch.empty(10**5, 10**5, device='meta')))",
    "reductions_and_products": """
        x = torch.empty(3, 4, 5, device='meta')
        R(x.sum(1), x.mean((0, 2), keepdim=True), x.max(1), x.argmax(), x.softmax(-1), x @ x.mT)
        R(x.topk(2, dim=-1), x.sort(1), x.cumsum(2), torch.cat([x, x], 1), torch.stack([x, x]))
    """,
}

KNOWN_PROGRAMS: dict[str, str] = {
    "huge_factorisation": "ours computes an op that reads values on CPU stand-ins of the meta inputs' shapes "
    "(runtime/meta_stand_ins.py), and refuses where they would hold more than STAND_IN_LIMIT elements; "
    "PyTorch's meta kernels take any shape",
}


@pytest.mark.parametrize("name", _xfail(PROGRAMS, KNOWN_PROGRAMS))
def test_meta_programs_as_pytorchs(name: str) -> None:
    assert_as_torch(PROGRAMS[name])


def test_an_op_computed_on_stand_ins_draws_nothing_from_the_generator() -> None:
    tga.manual_seed(0)
    state, g = tga.get_rng_state(), tga.Generator().manual_seed(1)
    given = g.get_state()
    y = tga.nn.functional.fractional_max_pool2d(tga.empty(2, 3, 8, 8, device="meta"), 2, output_size=4)
    z = tga.bernoulli(tga.empty(3, 4, device="meta"), generator=g)
    assert y.is_meta and tuple(y.shape) == (2, 3, 4, 4) and z.is_meta and tuple(z.shape) == (3, 4)
    assert tga.equal(tga.get_rng_state(), state)  # (PyTorch's meta kernels draw nothing)
    assert tga.equal(g.get_state(), given)


def test_stand_ins_beyond_the_limit_are_refused_before_any_memory() -> None:
    from tinygrad_attn.runtime.meta_stand_ins import STAND_IN_LIMIT  # noqa: PLC0415

    x = tga.empty(STAND_IN_LIMIT + 1, device="meta")
    tracemalloc.start()
    try:
        with pytest.raises(NotImplementedError, match="median: .* stand-ins"):
            x.median()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    assert tga.empty(4, device="meta").median().is_meta  # (within it: a placeholder)


def test_building_a_large_model_on_meta_allocates_no_memory_for_it() -> None:
    tga.empty(1, device="meta")  # (the device made before counting)
    tracemalloc.start()
    try:
        with tga.device("meta"):
            m = tga.nn.Sequential(tga.nn.Linear(4096, 4096), tga.nn.ReLU(), tga.nn.Linear(4096, 4096),
                                  tga.nn.LayerNorm(4096), tga.nn.Embedding(4096, 4096))  # fmt: skip
            x = tga.empty(10**6, 10**6)
            tga.nn.init.normal_(m[0].weight)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"building 5 layers of 4096x4096 on the meta device allocated {peak} bytes"
    assert x.is_meta and all(p.is_meta for p in m.parameters())


def test_a_meta_array_holds_one_element_whatever_its_shape() -> None:
    x = tga.empty(10**6, 10**6, device="meta")
    y = x.t()[1:] * 2
    assert (y.shape, y.stride()) == ((10**6 - 1, 10**6), (1, 10**6 - 1))  # (a pointwise result packs its dims densely)
    assert set(x._data.strides) == {0}  # (every element is the one element)
    w = tga.empty(300, 400, device="meta", requires_grad=True)
    (w * 2).tanh().sum().backward()  # (gradients computed on the device are placeholders too)
    assert set(w.grad._data.strides) == {0} and w.grad.stride() == (400, 1)


# -- the op table on meta inputs (slow) -----------------------------------------------------------
KNOWN_OPS: dict[str, str] = {}


def _args(op: Any, args: tuple, lib: Any, device: str) -> list[Any]:
    """A sample's arrays as tensors of ``lib`` on ``device`` (the meta device: no values), the ones
    the op table differentiates requiring grad."""
    out = []
    for i, a in enumerate(args):
        if device == "meta":
            t = lib.empty(a.shape, dtype=getattr(lib, a.dtype.name), device="meta")
        else:
            t = lib.from_numpy(np.array(a, copy=True))
        wanted = op.grad and a.dtype == np.float64 and (op.grad_args is None or i < op.grad_args)
        out.append(t.requires_grad_(True) if wanted else t)
    return out


def _op_params() -> list[Any]:
    from opinfo import OPS  # noqa: PLC0415 - the op table needs hypothesis, loaded for the sweep only

    return [pytest.param(op, id=op.name, marks=[pytest.mark.slow] + (
        [pytest.mark.xfail(reason=KNOWN_OPS[op.name], strict=True)] if op.name in KNOWN_OPS else []))
        for op in OPS]  # fmt: skip


def _outcome(f: Any, lib: Any) -> tuple[Any, tuple[str, ...] | None]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _record(f(), lib), None
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return None, tuple(c.__name__ for c in type(e).__mro__)


def _fields(record: Any) -> list[Any]:
    """A record's tensors' fields and other values, flat, in order (device and ``is_meta`` left out)."""
    if isinstance(record, tuple) and record and record[0] == "tensor":
        return [(i, v) for i, v in enumerate(record) if i not in (4, 5)]
    if isinstance(record, (list, tuple)):
        return [f for r in record for f in _fields(r)]
    if isinstance(record, dict):
        return [f for r in record.values() for f in _fields(r)]
    return [record]


def meta_difference(op: Any, sample: Any) -> str | None:
    """How ``op`` on meta inputs of ``sample``'s shapes differs from PyTorch's, or None. A field in which
    our result on the CPU (the sample's values) already differs from PyTorch's in the same way (a
    ``grad_fn`` named otherwise, the strides of an empty view) is the CPU tests' business, not a
    difference of the meta device."""
    where = f"{op.name} of {[a.shape for a in sample.args]} {sample.kwargs}"
    theirs, raised_t = _outcome(lambda: op.theirs(*_args(op, sample.args, torch, "meta"), **sample.kwargs), torch)
    ours, raised_o = _outcome(lambda: op.ours(*_args(op, sample.args, tga, "meta"), **sample.kwargs), tga)
    if raised_t is not None:
        same = raised_o is not None and raised_t[0] in raised_o
        return None if same else f"{where}: PyTorch raises {raised_t[0]}, ours {raised_o[0] if raised_o else ours}"
    if raised_o is not None:
        return f"{where}: ours raises {raised_o[0]}"
    cpu, _ = _outcome(lambda: op.ours(*_args(op, sample.args, tga, "cpu"), **sample.kwargs), tga)
    return None if _alike(ours, theirs, cpu) else f"{where}: ours {ours}, PyTorch {theirs}"


def _alike(ours: Any, theirs: Any, cpu: Any) -> bool:
    """Whether records ``ours`` (meta) and ``theirs`` agree in every field where ``cpu`` (ours on the
    CPU) does not already differ from ``theirs`` as ``ours`` does."""
    mine, want, on_cpu = _fields(ours), _fields(theirs), _fields(cpu) if cpu is not None else []
    if len(mine) != len(want):
        return False
    return all(m == w or (k < len(on_cpu) and on_cpu[k] == m) for k, (m, w) in enumerate(zip(mine, want)))


@pytest.mark.parametrize("op", _op_params())
def test_every_op_on_meta_inputs_as_pytorchs(op: Any) -> None:
    from hypothesis import HealthCheck, given, settings  # noqa: PLC0415
    from hypothesis import strategies as st  # noqa: PLC0415

    @settings(max_examples=1, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])  # fmt: skip
    @given(st.data())
    def check(data: Any) -> None:
        sample = data.draw(op.sample)
        try:  # (a sample PyTorch refuses on the CPU says nothing of the meta device)
            op.theirs(*_args(op, sample.args, torch, "cpu"), **sample.kwargs)
        except Exception:  # noqa: BLE001
            return
        why = meta_difference(op, sample)
        assert why is None, why

    check()


# -- every module of PyTorch's ModuleInfo database, built and run on meta (slow) ------------------
KNOWN_MODULES: dict[str, str] = {
    "nn.LinearCrossEntropyLoss": "the sample builds the layer with device='cpu' and it runs on meta inputs: "
    "PyTorch's meta linear takes the CPU weight, ours refuses tensors of two devices in one op",
    "nn.TransformerEncoder": "PyTorch's forward makes a CPU tensor of its own (the fast path's mask check) and "
    "refuses it beside meta ones; ours runs",
}


def _moduleinfo() -> Any:
    """tests/nn/test_torch_moduleinfo.py (PyTorch's ModuleInfo database, and the conversion of its samples)."""
    pytest.importorskip("expecttest")  # (PyTorch's test internals import it)
    here = Path(__file__).resolve().parents[1] / "nn"
    if str(here) not in sys.path:
        sys.path.insert(0, str(here))
    import test_torch_moduleinfo  # noqa: PLC0415

    return test_torch_moduleinfo


def _to_meta(x: Any, lib: Any, convert: Any) -> Any:
    if isinstance(x, torch.Tensor):
        t = convert(x).to("meta")
        return t.requires_grad_(True) if x.requires_grad and x.is_floating_point() else t
    if isinstance(x, (tuple, list)):
        return type(x)(_to_meta(v, lib, convert) for v in x)
    if isinstance(x, dict):
        return {k: _to_meta(v, lib, convert) for k, v in x.items()}
    return convert(x)


def _module_on_meta(moduleinfo: Any, name: str) -> str | None:
    """Why module ``name`` (its first sample) built and run on the meta device differs from PyTorch's, or None."""
    info = moduleinfo.INFOS[name]
    sample = moduleinfo._samples(info, True, 1)[0]
    cargs, ckw = sample.constructor_input.args, sample.constructor_input.kwargs
    fargs, fkw = sample.forward_input.args, sample.forward_input.kwargs
    results = []
    for lib, convert, device in ((torch, lambda x: x, "meta"), (tga, moduleinfo._ours, "meta"),
                                 (tga, moduleinfo._ours, "cpu")):  # fmt: skip
        cls = info.module_cls if lib is torch else getattr(tga.nn, info.module_cls.__name__)

        def program(cls: Any = cls, lib: Any = lib, convert: Any = convert, device: str = device) -> Any:
            with lib.device(device):
                m = cls(*convert(cargs), **convert(ckw)).double()  # (as the samples' inputs)
            if device == "meta":
                args, kw = _to_meta(fargs, lib, convert), _to_meta(fkw, lib, convert)
            else:
                args, kw = convert(fargs), convert(fkw)
            return [*m.parameters(), *m.buffers(), m(*args, **kw)]

        results.append(_outcome(program, lib))
    (theirs, raised_t), (ours, raised_o), (cpu, _) = results
    if raised_t is not None:
        same = raised_o is not None and raised_t[0] in raised_o
        return None if same else f"ours {ours or raised_o}, PyTorch {raised_t}"
    if raised_o is not None:
        return f"ours raised {raised_o}"
    return None if _alike(ours, theirs, cpu) else f"ours {ours}, PyTorch {theirs}"


@pytest.mark.slow
def test_every_module_builds_and_runs_on_meta_as_pytorchs() -> None:
    moduleinfo = _moduleinfo()
    failures = {name: why for name in moduleinfo.INFOS if (why := _module_on_meta(moduleinfo, name)) is not None}
    new = {k: v for k, v in failures.items() if k not in KNOWN_MODULES}
    fixed = [k for k in KNOWN_MODULES if k not in failures]
    assert not new, "modules on meta unlike PyTorch's:\n" + "\n".join(f"{k}: {v}" for k, v in new.items())
    assert not fixed, f"KNOWN_MODULES entries that now match PyTorch (remove them): {fixed}"
