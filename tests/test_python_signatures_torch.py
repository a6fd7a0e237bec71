"""PyTorch's Python-level API takes the same parameters here: every public function and class
that a PyTorch module of the Python API (``torch.nn``, ``torch.optim``, ``torch.distributions``,
``torch.utils.data``, ``torch.autograd``, ...) shares with ours, and every public method of such a
class (inherited ones too, each pair of functions once), has PyTorch's parameter names in PyTorch's order, of PyTorch's kinds, with PyTorch's
defaults, wherever ``inspect`` can read PyTorch's signature.

The inventory is read from PyTorch's modules when the tests are collected, so a name either side
adds later is covered at once. The rules of the comparison:

- defaults are compared by ``repr``; a function default is compared by its name (its address
  differs), and a ``Generator`` default by its class (PyTorch's is its C generator object);
- ours may take keyword-only parameters after all of PyTorch's (no PyTorch call reaches them, so
  each PyTorch call means the same);
- the names of ``*args`` and ``**kwargs`` are not compared (no caller names them);
- where PyTorch's signature is ``(*args, **kwargs)`` alone (a C++ overload set, a module whose
  ``__init__`` is ``Module``'s), the signatures say nothing: ``CALLS`` holds calls PyTorch's
  accepts (and ones it rejects), made on both sides and compared, and a name without one fails;
- ``Tensor``'s methods are left to ``tests/tensor/test_signatures.py``.

``PROGRAMS`` calls, by keyword, each parameter that was renamed or added to match, under PyTorch
and under ours, and compares the results (or the classes of what they raise). ``KNOWN`` lists the differences left, each with its
reason, as strict xfails.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as tga  # noqa: E402

P = inspect.Parameter

#: PyTorch's modules of the Python API compared, by their path under ``torch``
MODULES = (
    "nn", "nn.functional", "nn.init", "nn.utils", "nn.utils.rnn", "nn.utils.parametrize",
    "nn.utils.parametrizations", "nn.utils.prune", "nn.utils.stateless", "optim", "optim.lr_scheduler",
    "optim.swa_utils", "utils.data", "utils.checkpoint", "utils.hooks", "distributions",
    "distributions.constraints", "distributions.transforms", "autograd", "autograd.functional", "func", "fft",
    "random",
)  # fmt: skip

#: name -> why ours differs from PyTorch's (strict xfails)
KNOWN: dict[str, str] = {
    "autograd.gradcheck": "ours takes the inputs one by one after func as well as PyTorch's one tuple "
    "(gradcheck(func, *inputs): gradcheck(f, x, w) is the library's form, in some 200 calls of its tests), so inputs "
    "is *inputs; the rest is PyTorch's",
}


def _ours_module(path: str) -> Any:
    try:
        return importlib.import_module("tinygrad_attn." + path)
    except ImportError:
        mod: Any = tga
        for part in path.split("."):
            mod = getattr(mod, part, None)
        return mod


def _signature(obj: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):  # a builtin without a readable signature
        return None


def _inventory() -> dict[str, tuple[Any, Any]]:
    """name -> (PyTorch's callable, ours), each pair once (under the first module that has it)."""
    out: dict[str, tuple[Any, Any]] = {}
    seen: set[tuple[int, int]] = set()

    def add(name: str, theirs: Any, ours: Any) -> None:
        if (id(theirs), id(ours)) in seen or _signature(theirs) is None:
            return
        seen.add((id(theirs), id(ours)))
        out[name] = (theirs, ours)

    for path in MODULES:
        theirs_mod, ours_mod = importlib.import_module("torch." + path), _ours_module(path)
        if ours_mod is None:
            continue
        for n in sorted(dir(theirs_mod)):
            t, o = getattr(theirs_mod, n), getattr(ours_mod, n, None)
            if n.startswith("_") or o is None or not callable(t) or not callable(o):
                continue
            if not getattr(t, "__module__", "").startswith("torch") or t is torch.Tensor:
                continue  # (typing's names re-exported; Tensor's methods: tests/tensor/test_signatures.py)
            add(f"{path}.{n}", t, o)
            if inspect.isclass(t) and inspect.isclass(o):
                for a in sorted(dir(t)):  # (inherited methods too: ours may define them elsewhere)
                    owner = next((c for c in t.__mro__ if a in vars(c)), object)
                    if a.startswith("_") or not owner.__module__.startswith("torch") or owner in torch.Tensor.__mro__:
                        continue  # (Tensor's methods, a Parameter's too: tests/tensor/test_signatures.py)
                    static = vars(owner)[a]
                    if inspect.isclass(static) or isinstance(static, property):
                        continue  # (a class attribute naming another class; a property)
                    ta, oa = getattr(t, a, None), getattr(o, a, None)
                    if oa is None or not callable(ta):
                        continue
                    # (named after the class that defines it, unless ours differs there: after this one)
                    key = f"{path}.{owner.__name__}.{a}"
                    if getattr(theirs_mod, owner.__name__, None) is not owner or key in out:
                        key = f"{path}.{n}.{a}"
                    add(key, ta, oa)
    return out


INVENTORY = _inventory()

_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _default(p: P) -> str:
    d = p.default
    if d is P.empty:
        return "<required>"
    if isinstance(d, (torch.Generator, tga.Generator)):
        return "<Generator>"  # (PyTorch's default generator is a C object; ours its twin)
    if callable(d) and hasattr(d, "__name__") and not isinstance(d, type):
        return f"<function {d.__name__}>"
    return _ADDRESS.sub("", repr(d))


def _params(sig: inspect.Signature) -> list[tuple[str, Any, str]]:
    # (a caller never names *args or **kwargs: those are compared by kind alone)
    var = {P.VAR_POSITIONAL: "args", P.VAR_KEYWORD: "kwargs"}
    return [(var.get(p.kind, p.name), p.kind, _default(p)) for p in sig.parameters.values()]


def _varargs_only(sig: inspect.Signature) -> bool:
    kinds = [p.kind for p in sig.parameters.values() if p.name != "self"]
    return bool(kinds) and set(kinds) <= {P.VAR_POSITIONAL, P.VAR_KEYWORD}


def _describe(params: list[tuple[str, Any, str]]) -> str:
    marks = {P.POSITIONAL_ONLY: "/", P.KEYWORD_ONLY: "kw:", P.VAR_POSITIONAL: "*", P.VAR_KEYWORD: "**"}
    return ", ".join(f"{marks.get(k, '')}{n}" + ("" if d == "<required>" else f"={d}") for n, k, d in params)


# -- calls, where PyTorch's signature is (*args, **kwargs) alone ------------------------------------
def _record(fn: Callable[[Any], Any], lib: Any) -> Any:
    """What ``fn(lib)`` gives, as plain data: numbers and lists, or the class of what it raised."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the class raised is the result compared
        return ("raises", type(e))
    return _plain(out)


def _same(want: Any, got: Any) -> bool:
    """Equal results, or both raised and ours is an instance of PyTorch's (builtin) class."""
    if isinstance(want, tuple) and want[:1] == ("raises",):
        builtin = next(c for c in want[1].__mro__ if c.__module__ == "builtins")
        return isinstance(got, tuple) and got[:1] == ("raises",) and issubclass(got[1], builtin)
    return got == want


def _plain(v: Any) -> Any:
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, (torch.Tensor, tga.Tensor)):
        a = np.asarray(v.detach().numpy())
        return [(a.round(5) if a.dtype.kind in "fc" else a).tolist(), str(v.dtype)]
    if isinstance(v, (torch.nn.Module, tga.nn.Module)):
        return [(n, tuple(p.shape)) for n, p in v.named_parameters()] + [type(v).__name__]
    return v


def _x(lib: Any, *shape: int) -> Any:
    n = int(np.prod(shape))
    return lib.tensor(np.sin(np.arange(n) * 0.7 + 0.3).reshape(shape).tolist())


def _no_args(name: str) -> list[Callable[[Any], Any]]:
    """A module whose PyTorch ``__init__`` is ``Module``'s: made without arguments, and an argument
    rejected."""
    cls = name.split(".")[-1]
    return [lambda m: getattr(m.nn, cls)()(_x(m, 2, 3, 2, 2)), lambda m: getattr(m.nn, cls)(1)]


def _rnn(cls: str) -> list[Callable[[Any], Any]]:
    def by_keyword(m: Any) -> Any:
        m.manual_seed(0)
        return getattr(m.nn, cls)(input_size=3, hidden_size=4, num_layers=2, bias=False, batch_first=True,
                                  dropout=0.0, bidirectional=True)  # fmt: skip

    return [
        by_keyword,
        lambda m: getattr(m.nn, cls)(3, 4, 1, True, False, 0.0, False),
        lambda m: getattr(m.nn, cls)(3, 4, nonsense=1),
    ]


def _pool(fn: str, nd: int) -> list[Callable[[Any], Any]]:
    shape = (1, 2) + (5,) * nd
    return [
        lambda m: getattr(m.nn.functional, fn)(
            input=_x(m, *shape), kernel_size=2, stride=1, padding=1, dilation=1, ceil_mode=True, return_indices=True
        ),  # fmt: skip
        lambda m: getattr(m.nn.functional, fn)(_x(m, *shape), 3, 2, 0, 1, False, False),
    ]


def _adaptive(fn: str, nd: int) -> list[Callable[[Any], Any]]:
    shape = (1, 2) + (5,) * nd
    return [
        lambda m: getattr(m.nn.functional, fn)(input=_x(m, *shape), output_size=3, return_indices=True),
        lambda m: getattr(m.nn.functional, fn)(_x(m, *shape), 2, False),
    ]


def _fractional(fn: str, nd: int) -> list[Callable[[Any], Any]]:
    shape = (1, 2) + (6,) * nd
    samples = [[[0.3] * nd, [0.7] * nd]]
    return [
        lambda m: getattr(m.nn.functional, fn)(
            input=_x(m, *shape),
            kernel_size=2,
            output_size=3,
            output_ratio=None,
            return_indices=True,
            _random_samples=m.tensor(samples),
        ),  # fmt: skip
    ]


CALLS: dict[str, list[Callable[[Any], Any]]] = {
    **{f"nn.{c}": _no_args(f"nn.{c}") for c in ("LogSigmoid", "Sigmoid", "Softmax2d", "Softsign", "Tanh", "Tanhshrink")},
    "nn.Module": [lambda m: m.nn.Module().training, lambda m: m.nn.Module(1)],
    "nn.Identity": [lambda m: m.nn.Identity(3, flag=True)(_x(m, 2, 3))],
    "nn.Container": [lambda m: list(m.nn.Container(a=m.nn.Tanh()).named_children())[0][0]],
    **{f"nn.{c}": _rnn(c) for c in ("RNN", "GRU", "LSTM")},
    "nn.NLLLoss2d": [
        lambda m: m.nn.NLLLoss2d(weight=None, ignore_index=1, reduction="sum")(
            _x(m, 2, 3, 2, 2), m.tensor([[[0, 1], [2, 1]], [[1, 1], [0, 2]]])),
    ],
    "nn.Module.to": [lambda m: m.nn.Linear(2, 2).to(dtype=m.float64).weight.dtype == m.float64,
                     lambda m: m.nn.Linear(2, 2).to("cpu", m.float64, non_blocking=False).bias.dtype == m.float64],
    **{f"nn.functional.max_pool{d}d": _pool(f"max_pool{d}d", d) for d in (1, 2, 3)},
    **{f"nn.functional.adaptive_max_pool{d}d": _adaptive(f"adaptive_max_pool{d}d", d) for d in (1, 2, 3)},
    **{f"nn.functional.fractional_max_pool{d}d": _fractional(f"fractional_max_pool{d}d", d) for d in (2, 3)},
    "nn.utils.rnn.PackedSequence.cuda": [  # (no CUDA here: PyTorch's error class)
        lambda m: m.nn.utils.rnn.pack_padded_sequence(_x(m, 3, 2), [3, 2]).cuda().data,
    ],
    "nn.utils.rnn.PackedSequence.cpu": [
        lambda m: m.nn.utils.rnn.pack_padded_sequence(_x(m, 3, 2), [3, 2]).cpu().data,
    ],
}  # fmt: skip


def _cases(names: Any) -> list[Any]:
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN[n])) if n in KNOWN else n
            for n in sorted(names)]  # fmt: skip


@pytest.mark.parametrize("name", _cases(INVENTORY))
def test_signature_as_pytorch(name: str) -> None:
    theirs, ours = INVENTORY[name]
    t_sig, o_sig = _signature(theirs), _signature(ours)
    assert o_sig is not None, f"{name}: ours has no readable signature; PyTorch's is {t_sig}"
    t, o = _params(t_sig), _params(o_sig)
    if t == o:
        return
    if _varargs_only(t_sig):
        assert name in CALLS, f"{name}: PyTorch's is {t_sig}; CALLS needs calls it accepts, to compare ours by"
        for i, call in enumerate(CALLS[name]):
            want, got = _record(call, torch), _record(call, tga)
            assert _same(want, got), f"{name}: call {i} gives {got}, PyTorch's {want}"
        return
    extra = o[len(t) :]
    if o[: len(t)] == t and all(k is P.KEYWORD_ONLY for _, k, _ in extra):
        return  # (ours' keyword-only extras come after all of PyTorch's)
    pytest.fail(f"{name}:\n  PyTorch's ({_describe(t)})\n  ours      ({_describe(o)})")


# -- each renamed or added parameter, called by keyword on both sides ---------------------------
def _shared(m: Any) -> Any:
    """A model whose one Linear is reached by two paths."""
    lin = m.nn.Linear(2, 2)
    return m.nn.Sequential(lin, m.nn.Sequential(lin, m.nn.Tanh()))


def _shape(t: Any) -> list[int]:
    return list(t.shape)


def _handle(m: Any) -> Any:
    d: OrderedDict = OrderedDict()  # (PyTorch's keeps a weak reference: a dict subclass)
    h = m.utils.hooks.RemovableHandle(hooks_dict=d, extra_dict=None)
    d[h.id] = "hook"
    h.remove()
    return len(d)


def _forked(m: Any) -> Any:
    m.manual_seed(3)
    with m.random.fork_rng(devices=[], enabled=True, device_type="cuda"):
        inside = m.rand(2)
    return [inside, m.rand(2)]


def _lbfgs(m: Any) -> Any:
    w = m.nn.Parameter(m.tensor([1.0, -2.0]))
    opt = m.optim.LBFGS([w], lr=0.5, max_iter=3)

    def closure() -> Any:
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    return [opt.step(closure=closure), w]


def _param_group(m: Any) -> Any:
    opt = m.optim.SGD([m.nn.Parameter(m.zeros(2))], lr=0.1)
    opt.add_param_group(param_group={"params": [m.nn.Parameter(m.zeros(3))], "lr": 0.5})
    return [(g["lr"], len(g["params"])) for g in opt.param_groups]


def _module_list(m: Any) -> Any:
    ml = m.nn.ModuleList()
    ml.append(module=m.nn.Tanh())
    ml.extend(modules=[m.nn.ReLU(), m.nn.Sigmoid()])
    ml.insert(index=0, module=m.nn.Identity())
    popped = ml.pop(key=1)
    return [type(popped).__name__] + [type(c).__name__ for c in ml]


def _sequential(m: Any) -> Any:
    seq = m.nn.Sequential()
    seq.append(module=m.nn.Linear(2, 3))
    seq.extend(sequential=[m.nn.Tanh(), m.nn.Linear(3, 1)])
    seq.insert(index=1, module=m.nn.ReLU())
    seq.pop(key=1)
    return [type(c).__name__ for c in seq] + _shape(seq(input=_x(m, 4, 2)))


def _dicts(m: Any) -> Any:
    md, pd = m.nn.ModuleDict(), m.nn.ParameterDict()
    md.update(modules={"a": m.nn.Tanh()})
    pd.update(parameters=[("w", m.nn.Parameter(m.ones(2)))])
    return [list(md.keys()), list(pd.keys()), pd["w"]]


def _checkpoint(m: Any) -> Any:
    x = _x(m, 3).requires_grad_()
    y = m.utils.checkpoint.checkpoint(lambda t: t.sin() * 2, x, use_reentrant=False, context_fn=m.utils.checkpoint.noop_context_fn, determinism_check="default", debug=False, early_stop=True, preserve_rng_state=False)  # fmt: skip
    y.sum().backward()
    return [y, x.grad]


def _lazy(m: Any, cls: str, nd: int, **kw: Any) -> Callable[[Any], Any]:
    def run(m: Any) -> Any:
        layer = getattr(m.nn, cls)(out_channels=4, kernel_size=3, stride=2, padding=1, groups=1, bias=False,
                                   dilation=1, padding_mode="zeros", device=None, dtype=m.float64, **kw)  # fmt: skip
        out = layer(input=_x(m, 1, 2, *(7,) * nd).double())
        return [_shape(out), out.dtype == m.float64, layer.bias is None, type(layer).__name__]

    return run


def _cell(cls: str) -> Callable[[Any], Any]:
    def run(m: Any) -> Any:
        m.manual_seed(0)  # (the same draws: PyTorch's uniform initialisation)
        cell = getattr(m.nn, cls)(3, 2)
        out = cell(input=_x(m, 4, 3), hx=None)
        return _shape(out[0] if isinstance(out, tuple) else out)

    return run


def _functional(fn: str) -> Callable[[Any], Any]:
    return lambda m: getattr(m.nn.functional, fn)(input=_x(m, 2, 3))


def _activation(cls: str, **kw: Any) -> Callable[[Any], Any]:
    return lambda m: getattr(m.nn, cls)(**kw)(input=_x(m, 2, 4) * 4)


PROGRAMS: dict[str, Callable[[Any], Any]] = {
    # (modules' constructors by PyTorch's names, and forward(input=))
    "nn.LayerNorm(normalized_shape=)": lambda m: m.nn.LayerNorm(normalized_shape=[3], eps=1e-3)(input=_x(m, 2, 3)),
    "nn.LeakyReLU(negative_slope=)": _activation("LeakyReLU", negative_slope=0.2, inplace=False),
    "nn.ELU(alpha=)": _activation("ELU", alpha=0.5, inplace=False),
    "nn.CELU(alpha=)": _activation("CELU", alpha=0.7, inplace=False),
    "nn.Hardtanh(min_val=, max_val=)": _activation("Hardtanh", min_val=-0.5, max_val=2.0, inplace=False),
    "nn.Hardtanh(min_value=, max_value=)": _activation("Hardtanh", min_value=-0.5, max_value=2.0),
    "nn.Threshold(threshold=, value=)": _activation("Threshold", threshold=0.1, value=20.0, inplace=False),
    **{f"nn.{c}(inplace=)": _activation(c, inplace=False)
       for c in ("SELU", "ReLU6", "Hardswish", "Hardsigmoid", "Mish", "SiLU", "ReLU")},
    **{f"nn.{c}()(input=)": _activation(c)
       for c in ("GELU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Softmin", "GLU", "Softplus", "Softsign",
                 "LogSigmoid", "Identity", "Tanhshrink")},
    "nn.Dropout()(input=)": lambda m: m.nn.Dropout(p=0.0)(input=_x(m, 2, 3)),
    "nn.Embedding()(input=)": lambda m: _shape(m.nn.Embedding(5, 2)(input=m.tensor([[0, 4]]))),
    **{f"nn.{c}()(input=, hx=)": _cell(c) for c in ("RNNCell", "GRUCell", "LSTMCell")},
    "nn.Module().forward(input)": lambda m: m.nn.Module().forward(_x(m, 2)),
    **{f"nn.{c}(out_channels=, ...)": _lazy(m, c, int(c[-2]))
       for c in ("LazyConv1d", "LazyConv2d", "LazyConv3d") for m in [None]},
    **{f"nn.{c}(out_channels=, ..., output_padding=)": _lazy(m, c, int(c[-2]), output_padding=1)
       for c in ("LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d") for m in [None]},
    "nn.TransformerEncoderLayer: activation F.relu": lambda m: m.nn.TransformerEncoderLayer(4, 2).activation.__name__,
    # (Module's methods)
    "Module.named_modules(memo=, prefix=, remove_duplicate=)": lambda m: [
        [n for n, _ in _shared(m).named_modules(memo=None, prefix="net", remove_duplicate=False)],
        [n for n, _ in _shared(m).named_modules(memo=set(), prefix="", remove_duplicate=True)],
    ],
    "Module.modules(remove_duplicate=)": lambda m: [type(c).__name__ for c in _shared(m).modules(remove_duplicate=False)],
    "Module.named_parameters(remove_duplicate=False)": lambda m: [
        n for n, _ in _shared(m).named_parameters(remove_duplicate=False)],
    "Module.requires_grad_(requires_grad=)": lambda m: [
        p.requires_grad for p in _shared(m).requires_grad_(requires_grad=False).parameters()],
    "ModuleList.append/extend/insert/pop by keyword": _module_list,
    "Sequential.append/extend/insert/pop by keyword": _sequential,
    "ModuleDict.update(modules=), ParameterDict.update(parameters=)": _dicts,
    "Parameter()": lambda m: [_shape(m.nn.Parameter()), m.nn.Parameter().requires_grad, str(m.nn.Parameter().dtype)],
    "Parameter(data=, requires_grad=)": lambda m: m.nn.Parameter(data=_x(m, 2), requires_grad=False).requires_grad,
    # (nn.functional's input=)
    **{f"F.{f}(input=)": _functional(f) for f in ("sigmoid", "tanh", "silu", "elu", "leaky_relu")},
    "F.softmax(input=, dim=)": lambda m: m.nn.functional.softmax(input=_x(m, 2, 3), dim=0),
    "F.log_softmax(input=, dim=, dtype=)": lambda m: m.nn.functional.log_softmax(input=_x(m, 2, 3), dim=1,
                                                                                   dtype=m.float64),
    "F.dropout(input=, p=, training=)": lambda m: m.nn.functional.dropout(input=_x(m, 3), p=0.5, training=False),
    "F.pad(input=, pad=, mode=, value=)": lambda m: m.nn.functional.pad(input=_x(m, 1, 2, 3), pad=(1, 2),
                                                                       mode="constant", value=7.0),
    "F.margin_ranking_loss margin's default": lambda m: m.nn.functional.margin_ranking_loss(
        _x(m, 4), -_x(m, 4), m.tensor([1.0, -1.0, 1.0, -1.0])),
    "F.cosine_embedding_loss margin's default": lambda m: m.nn.functional.cosine_embedding_loss(
        _x(m, 2, 3), -_x(m, 2, 3), m.tensor([1.0, -1.0])),
    # (optim)
    "Optimizer.add_param_group(param_group=)": _param_group,
    "LBFGS.step(closure=)": _lbfgs,
    "LBFGS.step() without closure": lambda m: m.optim.LBFGS([m.nn.Parameter(m.zeros(1))]).step(),
    # (distributions)
    "Distribution.sample(sample_shape=)": lambda m: _shape(m.distributions.Normal(0.0, 1.0).sample(sample_shape=(2,))),
    "Distribution.rsample() default shape": lambda m: _shape(m.distributions.Gamma(m.ones(3), 1.0).rsample()),
    "Distribution(batch_shape=, event_shape=)": lambda m: list(
        m.distributions.Distribution(batch_shape=(2,), event_shape=(), validate_args=False).batch_shape),
    "constraints.dependent(is_discrete=, event_dim=)": lambda m: [
        m.distributions.constraints.dependent(is_discrete=True, event_dim=1).event_dim,
        m.distributions.constraints.dependent(is_discrete=True).is_discrete],
    "constraints.dependent.event_dim unset": lambda m: m.distributions.constraints.dependent.event_dim,
    "constraints.multinomial.check(x=)": lambda m: m.distributions.constraints.multinomial(3).check(
        x=m.tensor([[1.0, 1.0], [2.0, 2.0]])),
    # (nn.utils.rnn, utils, random, autograd)
    "PackedSequence((data, batch_sizes))": lambda m: list(m.nn.utils.rnn.PackedSequence(
        (_x(m, 3, 2), m.tensor([2, 1]))).batch_sizes),
    "PackedSequence(sorted_indices=) inverts": lambda m: m.nn.utils.rnn.PackedSequence(
        data=_x(m, 3, 2), batch_sizes=m.tensor([2, 1]), sorted_indices=m.tensor([1, 0])).unsorted_indices,
    "checkpoint(..., context_fn=, early_stop=, preserve_rng_state=)": _checkpoint,
    "random_split(dataset=, lengths=) default generator": lambda m: [
        m.manual_seed(5) and None, [list(s.indices) for s in m.utils.data.random_split(dataset=range(7),
                                                                                       lengths=[3, 4])]],
    "RemovableHandle(hooks_dict=, extra_dict=)": _handle,
    "fork_rng(devices=, enabled=, device_type=)": _forked,
    "no_grad()": lambda m: m.no_grad()(lambda: (_x(m, 2).requires_grad_() * 2).requires_grad)(),
    "enable_grad(orig_func=)": lambda m: m.no_grad()(lambda: m.enable_grad(orig_func=lambda: (
        _x(m, 2).requires_grad_() * 2).requires_grad)())(),
    "gradgradcheck(func=, inputs=, check_rev_over_rev=)": lambda m: m.autograd.gradgradcheck(
        func=lambda t: (t * t * t).sum(), inputs=(_x(m, 3).double().requires_grad_(),), check_rev_over_rev=True),
    "gradcheck(func=, options)": lambda m: m.autograd.gradcheck(
        lambda t: t.sin(), (_x(m, 3).double().requires_grad_(),), fast_mode=True, nondet_tol=0.0),
    "func.jacrev(func=, argnums=, _preallocate_and_copy=)": lambda m: m.func.jacrev(
        func=lambda t: t.sin(), argnums=0, _preallocate_and_copy=True)(_x(m, 3)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_keyword_call_as_pytorch(name: str) -> None:
    want, got = _record(PROGRAMS[name], torch), _record(PROGRAMS[name], tga)
    assert _same(want, got), f"{name}: ours gives {got}, PyTorch's {want}"


def test_inventory_is_pytorchs() -> None:
    """The inventory is PyTorch's API (hundreds of names), and every KNOWN and CALLS name is in it."""
    assert len(INVENTORY) > 1000
    assert set(KNOWN) <= set(INVENTORY), sorted(set(KNOWN) - set(INVENTORY))
    assert set(CALLS) <= set(INVENTORY), sorted(set(CALLS) - set(INVENTORY))
