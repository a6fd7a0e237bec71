"""``torch.autograd.forward_ad`` as PyTorch's: the level's rules and messages, dual tensors' views, printing,
in-place writes, a custom Function's ``jvp``, and a tangent that a backward pass differentiates."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

LIBS = [pytest.param(torch, id="torch"), pytest.param(tga, id="tga")]


def _both(program: Any) -> None:
    """``program(lib)`` returns a list of values and exception classes; PyTorch's and ours must be equal."""
    seen = []
    for lib in (torch, tga):
        out = []
        for step in program(lib):
            try:
                v = step()
            except Exception as e:  # (the class and the message's first line)
                v = (type(e).__name__, str(e).splitlines()[0])
            out.append(_plain(v, lib))
        seen.append(out)
    assert seen[0] == seen[1]


def _plain(v: Any, lib: Any) -> Any:
    if isinstance(v, lib.Tensor):
        return (v.detach().numpy().round(12).tolist(), v.requires_grad, str(v.dtype).split(".")[-1])
    if isinstance(v, tuple):
        return (type(v).__name__, *(_plain(x, lib) for x in v))
    return v


def test_the_level_and_make_dual_check_as_pytorch() -> None:
    def program(lib: Any) -> list:
        fw = lib.autograd.forward_ad
        x, t = lib.tensor([1.0, 2.0, 3.0]), lib.tensor([0.5, 0.25, 1.0])
        steps = [lambda: fw.make_dual(x, t), lambda: fw.unpack_dual(x).tangent, lambda: fw.exit_dual_level()]
        level = fw.enter_dual_level()
        steps += [
            lambda: level,
            lambda: fw.enter_dual_level(),
            lambda: fw.make_dual(x, t[:1]),
            lambda: fw.make_dual(lib.arange(3), t),
            lambda: fw.make_dual(x, lib.arange(3)),
            lambda: fw.make_dual(x, t, level=3),
            lambda: fw.unpack_dual(x, level=3),
            lambda: fw.make_dual(fw.make_dual(x, t), t),
            lambda: fw.unpack_dual(fw.make_dual(x, t)).tangent,
            lambda: fw.unpack_dual(fw.make_dual(x, t)).primal,
            lambda: fw.unpack_dual(x).tangent,
            lambda: fw.make_dual(x, t).requires_grad,
        ]
        values = [s for s in steps[:3]] + [s for s in steps[3:]]
        out = []
        for s in values[3:]:
            out.append(s)
        fw.exit_dual_level()
        return values[:3] + out + [lambda: fw.exit_dual_level(level=0)]

    _both(program)


def test_tangents_of_ops_views_and_in_place_writes_are_pytorchs() -> None:
    rng = np.random.default_rng(0)
    xs, ts, ys = (rng.standard_normal((2, 3)) for _ in range(3))

    def program(lib: Any) -> list:
        fw = lib.autograd.forward_ad
        x, t, y = (lib.tensor(a) for a in (xs, ts, ys))
        with fw.dual_level():
            d = fw.make_dual(x, t)
            z = lib.zeros(2, 3, dtype=lib.float64)
            z.add_(d)
            w = x.clone()
            w[1] = d[0] * 2
            v = d.clone()
            v.transpose_(0, 1)
            u = d.clone()
            u.mul_(y)
            out = [
                fw.unpack_dual(o).tangent
                for o in (
                    d.sin() * y,
                    d.softmax(-1),
                    d @ y.T,
                    d[:, ::2],
                    z,
                    w,
                    v,
                    u,
                    d.detach() if False else d.flip(0),
                    d.max(),
                    d.sort(1)[0],
                )
            ]
            out.append(fw.unpack_dual(d.detach()).tangent)
            out.append(fw.unpack_dual(d.argmax()).tangent)
            with lib.no_grad():
                out.append(fw.unpack_dual(d * 3).tangent)
        out.append(fw.unpack_dual(d).tangent)  # (the level's tangents are gone)
        return [lambda o=o: o for o in out]

    _both(program)


def test_a_dual_tensor_prints_its_tangent_as_pytorch() -> None:
    printed = []
    for lib in (torch, tga):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor([1.0, 2.0, 3.0]), lib.tensor([1.0, 0.5, 0.0]))
            printed.append((repr(d), repr(d * 2), repr(fw.make_dual(lib.zeros(2, 30), lib.ones(2, 30)))))
    assert printed[0] == printed[1]


def test_a_custom_function_gives_its_tangent_by_its_jvp() -> None:
    def program(lib: Any) -> list:
        fw = lib.autograd.forward_ad

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any, k: float) -> Any:
                ctx.save_for_forward(a)
                ctx.k = k
                return a * a * a * k

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g, None

            @staticmethod
            def jvp(ctx: Any, t: Any, _k: Any) -> Any:
                (a,) = ctx.saved_tensors
                return 3 * a * a * t * ctx.k

        class NoJvp(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any) -> Any:
                return a * 2

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g * 2

        with fw.dual_level():
            d = fw.make_dual(lib.tensor([1.0, -2.0]), lib.tensor([1.0, 1.0]))
            cube = fw.unpack_dual(Cube.apply(d, 0.5)).tangent
            return [lambda: cube, lambda: NoJvp.apply(d), lambda: fw.unpack_dual(Cube.apply(lib.ones(2), 2.0)).tangent]

    _both(program)


@pytest.mark.parametrize(
    "body",
    [
        "a.sin() * b",
        "a * b",
        "torch.relu(a) / (b.abs() + 1)",
        "(a @ b) * a[0]",
        "a.sum() * b",
        "torch.where(a > 0, a, 2 * a)",
        "a.clamp(-0.5, 0.5) + b",
    ],
)
def test_a_tangent_that_a_backward_differentiates_is_pytorchs(body: str) -> None:
    """A Hessian-vector product written by hand: the tangent of ``f`` at a primal that requires grad, then
    ``backward`` of the tangent's sum: whether the tangent requires grad, and the gradient it gives."""
    rng = np.random.default_rng(1)
    an, tn, bn = (rng.standard_normal(3) for _ in range(3))
    seen = []
    for lib in (torch, tga):
        fw = lib.autograd.forward_ad
        a, b = lib.tensor(an, requires_grad=True), lib.tensor(bn)
        with fw.dual_level():
            f = eval("lambda a, b: " + body, {"torch": lib})  # noqa: S307 - (a fixed table above)
            tangent = fw.unpack_dual(f(fw.make_dual(a, lib.tensor(tn)), b)).tangent
        grad = None
        if tangent.requires_grad:
            tangent.sum().backward()
            grad = lib.zeros(3, dtype=lib.float64).add(a.grad).numpy() if a.grad is not None else None  # (a ZeroTensor)
        seen.append((tangent.detach().numpy(), tangent.requires_grad, grad))
    (t_val, t_req, t_grad), (o_val, o_req, o_grad) = seen
    np.testing.assert_allclose(o_val, t_val, rtol=1e-12, atol=1e-12)
    assert o_req == t_req
    if t_grad is None:
        assert o_grad is None or not np.any(o_grad)
    else:
        np.testing.assert_allclose(o_grad, t_grad, rtol=1e-12, atol=1e-12)


_MODULE_PROGRAMS = {
    "mlp": ("nn.Sequential(nn.Linear(4, 5), nn.GELU(), nn.LayerNorm(5), nn.Linear(5, 2))", (2, 4)),
    "conv_pool": ("nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))", (1, 2, 5, 5)),
    "encoder_layer": ("nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True)", (2, 3, 4)),
    "attention_weights": ("nn.MultiheadAttention(4, 2, batch_first=True)", (2, 3, 4)),
    "lstm": ("nn.LSTM(4, 3, batch_first=True)", (2, 3, 4)),
}


@pytest.mark.parametrize("name", sorted(_MODULE_PROGRAMS))
def test_the_tangent_of_a_module_is_pytorchs(name: str) -> None:
    """The Jacobian-vector product of a whole module (its parameters PyTorch's), in float64."""
    build, shape = _MODULE_PROGRAMS[name]
    rng = np.random.default_rng(2)
    xn, tn = rng.standard_normal(shape), rng.standard_normal(shape)
    ref = eval(build, {"nn": torch.nn}).double().eval()  # noqa: S307 - (a fixed table above)
    ours = eval(build, {"nn": tga.nn}).double().eval()  # noqa: S307
    ours.load_state_dict({k: tga.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    seen: list[Any] = []
    for lib, m in ((torch, ref), (tga, ours)):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            try:
                d = fw.make_dual(lib.tensor(xn), lib.tensor(tn))
                out = m(d, d, d) if name.startswith("attention") else m(d)
            except NotImplementedError as e:  # (PyTorch's CPU flash attention has no forward formula)
                seen.append(str(e).splitlines()[0])
                continue
            out = out[0] if isinstance(out, tuple) else out
            seen.append(fw.unpack_dual(out).tangent.detach().numpy())
    if isinstance(seen[0], str):
        assert seen[1] == seen[0]
    else:
        np.testing.assert_allclose(seen[1], seen[0], rtol=1e-9, atol=1e-11)


def test_dtypes_printing_and_nesting_as_pytorch() -> None:
    def program(lib: Any) -> list:
        fw = lib.autograd.forward_ad
        x, t = lib.tensor([0.3, -1.2, 2.0]), lib.tensor([1.0, 2.0, 3.0])
        x64, t64 = x.double(), t.double()
        with fw.dual_level():
            d = fw.make_dual(x, t.double())  # (a wider tangent: kept through the ops)
            e = fw.make_dual(x, t)
            return [
                lambda: fw.unpack_dual(d * 2).tangent,
                lambda: fw.unpack_dual(e.half()).tangent,
                lambda: repr(e.sum()),
                lambda: lib.func.jvp(lib.sin, (x64,), (t64,)),
                lambda: lib.func.jacfwd(lib.sin)(x64),
                lambda: lib.func.jacrev(lib.sin)(x64),
            ]

    _both(program)
