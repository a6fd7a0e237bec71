"""PyTorch names a CPU program calls, each run under PyTorch and here (``tests/differential.py``):
the draws of ``poisson``/``binomial`` for a seed, the ``*_copy``/``*_scatter`` views, in-place
restrides, ``set_``, the removed functions' errors, the process switches (interop threads,
denormals, autocast's state), DLPack exchange, ``cond``/``while_loop``, ``nn.grad``,
``nn.DataParallel`` on a machine without a GPU. Each program records values, dtypes and
``requires_grad``, and the exception class of each refused step; differentiable names are also
checked against finite differences in float64."""

from __future__ import annotations

import pytest
from differential import PRELUDE, difference

import tinygrad_attn as tga

torch = pytest.importorskip("torch")

PROGRAMS: dict[str, str] = {
    "poisson": """
        torch.manual_seed(3)
        x = torch.tensor([0.5, 2.0, 14.0, 40.0], requires_grad=True)
        y = torch.poisson(x)
        R(y, y.grad_fn is not None)
        y.sum().backward(); R(x.grad)
        R(torch.poisson(torch.tensor([[1.0, 3.0]], dtype=torch.float64)))
        R(torch.poisson(torch.tensor([1.0, 3.0], dtype=torch.float16)))
        g = torch.Generator().manual_seed(5); R(torch.poisson(torch.full((3,), 7.0), generator=g))
        T(lambda: torch.poisson(torch.tensor([1, 2])))
        T(lambda: torch.poisson(torch.tensor([-1.0])))
        with torch.no_grad(): R(torch.poisson(x).requires_grad)
    """,
    "binomial": """
        torch.manual_seed(4)
        n = torch.tensor([5.0, 20.0, 100.0, 3.0]); p = torch.tensor([0.3, 0.5, 0.9, 0.0])
        R(torch.binomial(n, p), torch.binomial(n.double(), p.double()))
        R(torch.binomial(torch.tensor([[10.0], [4.0]]), torch.tensor([0.5, 0.25])))
        b = torch.binomial(n, p.requires_grad_())
        R(b.requires_grad)
        T(lambda: b.sum().backward())
        T(lambda: torch.binomial(torch.tensor([1, 2]), torch.tensor([0.1, 0.2])))
        T(lambda: torch.binomial(torch.tensor([1.0, 2]), torch.tensor([0.1, 0.2], dtype=torch.float64)))
        T(lambda: torch.binomial(torch.tensor([3.0], dtype=torch.float16), torch.tensor([0.1], dtype=torch.float16)))
    """,
    "is_inference": """
        x = torch.ones(2)
        with torch.inference_mode():
            y = x * 2
        R(torch.is_inference(x), x.is_inference(), torch.is_inference(y), y.is_inference())
        T(lambda: torch.is_inference(3))
    """,
    "as_strided views": """
        x = torch.arange(6.0)
        R(torch.as_strided_copy(x, (2, 2), (1, 2), 1), torch.as_strided_copy(x, (3,), (2,)))
        R(torch.as_strided_scatter(x, torch.ones(2, 2), (2, 2), (1, 2), 1))
        R(x.as_strided_scatter(torch.full((2, 2), 7.0), (2, 2), (1, 2)))
        R(torch.as_strided_scatter(x, torch.ones(2, 2, dtype=torch.float64), (2, 2), (1, 2), 1))
        y = torch.arange(6.0).view(2, 3)[:, 1:]
        R(torch.as_strided_scatter(y, torch.ones(2), (2,), (1,)), torch.as_strided_scatter(y, torch.ones(2), (2,), (1,), 3))
        T(lambda: torch.as_strided_scatter(x, torch.ones(3, 2), (2, 2), (1, 2), 1))
        T(lambda: torch.as_strided_scatter(x, torch.ones(2, 2), (2, 2), (1, 2), 4))
        T(lambda: torch.as_strided_copy(x, (2, 2), (1, 2), 9))
        z = torch.arange(6.0); w = z.as_strided_((2, 2), (1, 2), 1)
        R(w is z, z, z.shape, z.stride(), z.storage_offset())
        a = torch.randn(3, dtype=torch.float64, requires_grad=True)
        b = a * 1; b.as_strided_((2,), (1,), 1); R(b.requires_grad)
        b.sum().backward(); R(a.grad)
        c = torch.randn(6, requires_grad=True); s = torch.randn(2, 2, requires_grad=True)
        out = torch.as_strided_scatter(c, s, (2, 2), (1, 2), 1); out.pow(2).sum().backward()
        R(out.requires_grad, c.grad, s.grad)
    """,
    "complex view copies": """
        z = torch.tensor([1 + 2j, -3.5 + 0.5j])
        r = torch.view_as_real_copy(z); r[0, 0] = 9.0
        R(r, z)
        c = torch.view_as_complex_copy(torch.tensor([[1.0, 2.0], [3.0, 4.0]])); R(c)
        T(lambda: torch.view_as_complex_copy(torch.ones(2, 3)))
        T(lambda: torch.view_as_real_copy(torch.ones(2)))
        u = torch.tensor([1 + 2j, 3 - 1j]); v = torch.conj_physical_(u)
        R(v is u, u, torch.conj_physical_(torch.tensor([1.5, -2.0])))
    """,
    "empty_permuted": """
        e = torch.empty_permuted((2, 3, 4), (0, 2, 1))
        R(e.shape, e.stride(), e.dtype, e.requires_grad)
        f = torch.empty_permuted((2, 3, 4, 5), (0, 2, 3, 1), dtype=torch.float64, requires_grad=True)
        R(f.shape, f.stride(), f.dtype, f.requires_grad, f.is_contiguous(memory_format=torch.channels_last))
        R(torch.empty_permuted((3, 2), (1, 0), dtype=torch.int32).stride())
        T(lambda: torch.empty_permuted((2, 3, 4), (0, 2)))
        T(lambda: torch.empty_permuted((2, 3, 4), (0, 2, 2)))
    """,
    "set_ and is_set_to": """
        b = torch.zeros(3); c = torch.arange(4.0)
        r = b.set_(c)
        R(r is b, b, b.is_set_to(c), c.is_set_to(b), b.data_ptr() == c.data_ptr())
        c[0] = 5.0; R(b)
        d = torch.zeros(3); d.set_(c, 1, (2,), (1,)); R(d, d.storage_offset(), d.is_set_to(c))
        e = torch.zeros(3); e.set_(); R(e, e.shape)
        R(b.is_set_to(b), b.is_set_to(b.view(4)), b.is_set_to(b[:2]), b.is_set_to(torch.arange(4.0)))
        T(lambda: torch.zeros(3).set_(torch.arange(3)))
        T(lambda: torch.randn(3, requires_grad=True).set_(c))
        T(lambda: b.is_set_to(3))
    """,
    "module_load and as_subclass": """
        p = torch.zeros(3); q = torch.ones(3)
        r = p.module_load(q); R(r, p, r is q, r is p)
        R(p.module_load(q, assign=True) is q, p.module_load(torch.full((3,), 2.0, dtype=torch.float64)).dtype)
        T(lambda: p.module_load(torch.ones(4)))
        T(lambda: torch.nn.Parameter(torch.zeros(3)).module_load(q))
        class Sub(torch.Tensor):
            pass
        x = torch.randn(2, requires_grad=True)
        y = x.as_subclass(Sub)
        R(type(y).__name__, isinstance(y, torch.Tensor), y.requires_grad, y.grad_fn is not None, y.data_ptr() == x.data_ptr())
        (y * y).sum().backward(); R(x.grad / x)
        T(lambda: x.as_subclass(int))
    """,
    "removed and missing": """
        x = torch.randn(2, 2)
        T(lambda: x.solve(x))
        T(lambda: x.lstsq(x))
        T(lambda: x.symeig())
        T(lambda: x.eig())
    """,
    "threads and denormals": """
        R(isinstance(torch.get_num_interop_threads(), int), torch.get_num_interop_threads() >= 1)
        R(torch.init_num_threads())
        T(lambda: torch.set_num_interop_threads(0))
        T(lambda: torch.set_num_interop_threads("2"))
        R(torch.set_flush_denormal(False))
        T(lambda: torch.set_flush_denormal(1))
        T(lambda: torch.set_flush_denormal("a"))
    """,
    "autocast state": """
        R(torch.is_autocast_enabled(), torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled("cuda"))
        R(torch.get_autocast_dtype("cpu"), torch.get_autocast_dtype("cuda"), torch.get_autocast_dtype("xla"))
        R(torch.get_autocast_cpu_dtype(), torch.get_autocast_gpu_dtype(), torch.is_autocast_cpu_enabled())
        R(torch.is_autocast_cache_enabled())
        R(torch.autocast_increment_nesting(), torch.autocast_increment_nesting(), torch.autocast_decrement_nesting(),
          torch.autocast_decrement_nesting())
        with torch.autocast("cpu", dtype=torch.float16, enabled=False):
            R(torch.get_autocast_dtype("cpu"), torch.is_autocast_enabled("cpu"), torch.autocast_increment_nesting())
            R(torch.autocast_decrement_nesting())
        R(torch.get_autocast_dtype("cpu"))
        torch.set_autocast_dtype("cpu", torch.float16); R(torch.get_autocast_dtype("cpu"))
        torch.set_autocast_cpu_dtype(torch.bfloat16); R(torch.get_autocast_dtype("cpu"))
        torch.set_autocast_cache_enabled(False); R(torch.is_autocast_cache_enabled())
        torch.set_autocast_cache_enabled(True)
        R(torch.set_autocast_enabled(False), torch.set_autocast_enabled("cpu", False), torch.clear_autocast_cache())
        T(lambda: torch.set_autocast_enabled(1))
        T(lambda: torch.set_autocast_dtype("cpu", 3))
        T(lambda: torch.is_autocast_enabled("xyz"))
        T(lambda: torch.get_autocast_dtype("xyz"))
        T(lambda: torch.get_autocast_dtype("meta"))
        R(torch.is_autocast_ipu_enabled(), torch.is_autocast_xla_enabled(), torch.get_autocast_ipu_dtype(),
          torch.get_autocast_xla_dtype())
        torch.set_autocast_xla_dtype(torch.float16); torch.set_autocast_ipu_dtype(torch.bfloat16)
        R(torch.get_autocast_dtype("xla"), torch.get_autocast_dtype("ipu"))
        torch.set_autocast_xla_dtype(torch.bfloat16); torch.set_autocast_ipu_dtype(torch.float16)
        R(torch.set_autocast_xla_enabled(False), torch.set_autocast_ipu_enabled(False))
    """,
    "dlpack": """
        a = np.arange(3.0)
        t = torch.from_dlpack(a); a[0] = 9.0
        R(t, t.dtype)
        x = torch.arange(3.0)
        y = torch.from_dlpack(torch.to_dlpack(x)); y[0] = 5.0
        n = np.from_dlpack(x); n[1] = 7.0
        R(x, y, torch.from_dlpack(x).data_ptr() == x.data_ptr())
        w = torch.ones(2, requires_grad=True)
        T(lambda: torch.from_dlpack(w))
        T(lambda: np.from_dlpack(w))
        R(torch.from_dlpack(torch.to_dlpack(w)))
        T(lambda: torch.from_dlpack([1, 2]))
        T(lambda: torch.to_dlpack(np.ones(2)))
        R(torch.is_storage(x), torch.is_storage(a), torch.is_storage(3))
    """,
    "cond and while_loop": """
        w = torch.ones(2, requires_grad=True)
        r = torch.cond(torch.tensor(True), lambda x: x * 3, lambda x: x - 1, (w,))
        r.sum().backward(); R(r, w.grad)
        R(torch.cond(False, lambda x: x + 1, lambda x: x - 1, [torch.ones(2)]))
        R(torch.cond(0.5, lambda: torch.ones(1), lambda: torch.zeros(1)))
        T(lambda: torch.cond(torch.tensor([True, False]), lambda x: x + 1, lambda x: x - 1, (torch.ones(2),)))
        T(lambda: torch.cond(True, lambda x: x + 1, lambda x: x - 1, torch.ones(2)))
        R(torch.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (torch.tensor(0), torch.ones(2))))
        R(torch.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), [torch.tensor(0), torch.ones(2)]))
        R(torch.while_loop(lambda i: i < 3, lambda i: i + 1, (torch.tensor(0),)))
        R(torch.while_loop(lambda i: i < 3, lambda i: (i + 1,), (0,)))
        R(torch.while_loop(lambda i: i > 3, lambda i: (i + 1,), (torch.tensor(0),)))
        T(lambda: torch.while_loop(lambda i: i < 3, lambda i: (i + 1,), (1.5,)))
    """,
    "nn.grad": """
        torch.manual_seed(0)
        R(F.grad is nn.grad)
        x = torch.randn(2, 4, 9, dtype=torch.float64); w = torch.randn(6, 2, 3, dtype=torch.float64)
        g = torch.randn(2, 6, 4, dtype=torch.float64)
        R(nn.grad.conv1d_input(x.shape, w, g, stride=2, padding=1, groups=2))
        R(nn.grad.conv1d_weight(x, w.shape, g, stride=2, padding=1, groups=2))
        x = torch.randn(1, 3, 7, 6); w = torch.randn(4, 3, 3, 2); g = torch.randn(1, 4, 3, 5)
        R(nn.grad.conv2d_input(x.shape, w, g, stride=(2, 1), dilation=(1, 1), padding=(0, 0)))
        R(nn.grad.conv2d_weight(x, w.shape, g, stride=(2, 1)))
        x = torch.randn(1, 2, 4, 5, 4); w = torch.randn(3, 2, 2, 3, 2); g = torch.randn(1, 3, 3, 3, 3)
        R(nn.grad.conv3d_input(x.shape, w, g), nn.grad.conv3d_weight(x, w.shape, g))
        T(lambda: nn.grad.conv2d_input((1, 3, 7, 6), torch.randn(4, 3, 3, 3), torch.randn(1, 4, 9, 9)))
    """,
    "DataParallel": """
        torch.manual_seed(0)
        m = nn.Linear(2, 3)
        d = nn.DataParallel(m)
        R(d.device_ids, d.module is m, list(d.state_dict()), repr(d))
        x = torch.randn(4, 2)
        R(d(x), m(x))
        e = nn.DataParallel(nn.Linear(2, 3))
        e.load_state_dict(d.state_dict()); R(e(x))
        R(len(list(d.parameters())), [n for n, _ in d.named_parameters()])
        T(lambda: nn.parallel.data_parallel(m, x))
    """,
    "nn.utils norms and skip_init": """
        torch.manual_seed(0)
        R(nn.utils.get_total_norm([torch.tensor([3.0, 4.0]), torch.tensor([12.0])]), nn.utils.get_total_norm([]))
        R(nn.utils.get_total_norm(torch.tensor([1.0, -2.0, 2.0]), norm_type=float("inf")))
        R(nn.utils.get_total_norm([torch.tensor([1.0, -2.0]), torch.tensor([2.0])], 1.0))
        T(lambda: nn.utils.get_total_norm([torch.tensor([float("inf")])], error_if_nonfinite=True))
        m = nn.Linear(3, 2)
        m(torch.randn(4, 3)).pow(2).sum().backward()
        total = nn.utils.get_total_norm([p.grad for p in m.parameters()])
        R(nn.utils.clip_grads_with_norm_(m.parameters(), 0.5, total), nn.utils.get_total_norm([p.grad for p in m.parameters()]))
        R(nn.utils.clip_grad_norm(m.parameters(), 0.25), [p.grad for p in m.parameters()])
        s = nn.utils.skip_init(nn.Linear, 3, 2)
        R(s.weight.shape, s.bias.shape, s.weight.requires_grad)
        T(lambda: nn.utils.skip_init(nn.ReLU))
        T(lambda: nn.utils.skip_init(3))
    """,
    "autograd switches and stacked modules": """
        R(torch.autograd.is_multithreading_enabled(), torch.autograd.is_view_replay_enabled())
        with torch.autograd.set_multithreading_enabled(False):
            R(torch.autograd.is_multithreading_enabled())
        R(torch.autograd.is_multithreading_enabled())
        torch.autograd.set_multithreading_enabled(False); R(torch.autograd.is_multithreading_enabled())
        torch.autograd.set_multithreading_enabled(True)
        torch.manual_seed(0)
        models = [nn.Linear(3, 2) for _ in range(3)]
        params, buffers = torch.func.stack_module_state(models)
        R(sorted(params), params["weight"], params["bias"].requires_grad, params["bias"].grad_fn is None, buffers)
        bn = [nn.BatchNorm1d(2) for _ in range(2)]
        R(sorted(torch.func.stack_module_state(bn)[1]))
        T(lambda: torch.func.stack_module_state([]))
        T(lambda: torch.func.stack_module_state([nn.Linear(3, 2), nn.Linear(3, 2).eval()]))
        T(lambda: torch.func.stack_module_state([nn.Linear(3, 2), nn.Bilinear(3, 3, 2)]))
        frozen = nn.Linear(3, 2); frozen.weight.requires_grad_(False)
        T(lambda: torch.func.stack_module_state([nn.Linear(3, 2), frozen]))
    """,
}

KNOWN: dict[str, str] = {}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_runs_as_in_pytorch(name: str) -> None:
    why = difference(PRELUDE + PROGRAMS[name], torch)
    if name in KNOWN:
        assert why is not None, f"{name} now runs as in PyTorch: take it off KNOWN"
        pytest.xfail(KNOWN[name])
    assert why is None, f"{name}: {why[0]}: {why[1]}"


def _f64(*shape: int) -> tga.Tensor:
    return tga.randn(*shape, dtype=tga.float64, requires_grad=True)


def test_gradients_against_finite_differences() -> None:
    tga.manual_seed(0)
    checks = [
        (lambda a: tga.as_strided_copy(a, (2, 2), (1, 2), 1), (_f64(6),)),
        (lambda a, s: tga.as_strided_scatter(a, s, (2, 2), (1, 2), 1), (_f64(6), _f64(2, 2))),
        (lambda a: tga.view_as_real_copy(tga.complex(a, 2 * a)), (_f64(3),)),
        (lambda a: tga.view_as_complex_copy(a).abs(), (_f64(3, 2),)),
        (lambda w, g: tga.nn.grad.conv2d_input((1, 2, 5, 5), w, g, padding=1), (_f64(3, 2, 3, 3), _f64(1, 3, 5, 5))),
        (lambda x, g: tga.nn.grad.conv1d_weight(x, (3, 2, 2), g, stride=2), (_f64(1, 2, 6), _f64(1, 3, 3))),
        (lambda w, g: tga.nn.grad.conv3d_input((1, 1, 3, 3, 3), w, g), (_f64(2, 1, 2, 2, 2), _f64(1, 2, 2, 2, 2))),
    ]
    for fn, inputs in checks:
        assert tga.autograd.gradcheck(fn, inputs)

    def restrided(a: tga.Tensor) -> tga.Tensor:
        b = a * 1
        return b.as_strided_((2, 2), (1, 2), 1)

    assert tga.autograd.gradcheck(restrided, (_f64(6),))
