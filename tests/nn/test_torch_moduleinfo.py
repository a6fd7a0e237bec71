"""PyTorch's own ModuleInfo samples, run through ours.

PyTorch's test suite describes each of its modules by a ``ModuleInfo``
(``torch.testing._internal.common_modules.module_db``) whose ``module_inputs_func`` makes
sample constructor arguments and forward inputs: the options, shapes and corner cases its
authors thought of. For every ModuleInfo whose class we have as ``nn.<name>``, this builds
PyTorch's module and ours from each sample's constructor arguments, checks that both list the
same parameters and buffers (names, order, shapes), loads PyTorch's state dict into ours, runs
both on the sample's forward inputs in float64, in training and in evaluation mode, and compares
the outputs (values, dtypes) and the gradients of the inputs and of every parameter for a fixed
random cotangent. Draws (fractional pooling's placements, dropout) start from the same seed.

PyTorch's error inputs (``module_error_inputs_func``) are run through ours too: each must be
refused with PyTorch's exception class, at construction or in the forward as PyTorch refuses it.

Every module x mode that fails today is listed in ``KNOWN`` (``KNOWN_ERRORS`` for the error
inputs) with its reason, marked ``xfail(strict=True)``: a fix shows as XPASS and must remove
its entry.

``python tests/nn/test_torch_moduleinfo.py`` prints, per module and mode, the samples run,
equal and failing, and the first failure of each.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # PyTorch's test internals import it

import tinygrad_attn as tga  # noqa: E402
from tinygrad_attn import nn  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal.common_modules import module_db  # noqa: E402

#: samples per module and mode: spread over PyTorch's list (its variants come in blocks)
FAST_SAMPLES = 8
SLOW_SAMPLES = 64
ATOL, RTOL = 1e-9, 1e-7

#: module@mode (or module, for both modes) -> why ours differs; strict xfails
KNOWN: dict[str, str] = {}


# ---------------------------------------------------------------------------------------------
# Converting PyTorch's arguments to ours
# ---------------------------------------------------------------------------------------------
def _encoder_layer(m: Any) -> Any:
    """Ours for a PyTorch ``TransformerEncoderLayer`` (an argument of ``TransformerEncoder``),
    built from its options; its weights come with the state dict."""
    activation = m.activation if not callable(m.activation) else m.activation.__name__
    return nn.TransformerEncoderLayer(
        m.self_attn.embed_dim, m.self_attn.num_heads, m.linear1.out_features, m.dropout.p,
        getattr(tga.nn.functional, activation) if isinstance(activation, str) else activation,
        m.norm1.eps, m.self_attn.batch_first, m.norm_first, bias=m.linear1.bias is not None,
    )  # fmt: skip


#: PyTorch modules that samples pass as constructor arguments, and how to build ours from one
MODULE_ARGUMENTS = {torch.nn.TransformerEncoderLayer: _encoder_layer}


def _ours(x: Any, seen: dict[int, Any] | None = None) -> Any:
    """A sample's argument as ours: tensors copied (dtype, requires_grad kept; one PyTorch tensor
    passed twice, as a sample's input and target, is one tensor of ours, in ``seen``), containers
    converted item by item, PyTorch's dtypes as ours, the modules of ``MODULE_ARGUMENTS`` and
    the functions of ``torch.nn.functional``."""
    seen = {} if seen is None else seen
    if type(x) in MODULE_ARGUMENTS:
        return MODULE_ARGUMENTS[type(x)](x)
    if callable(x) and getattr(torch.nn.functional, getattr(x, "__name__", ""), None) is x:  # activation=
        return getattr(tga.nn.functional, x.__name__)
    if isinstance(x, torch.Tensor):
        if id(x) not in seen:
            t = tga.tensor(x.detach().numpy().copy())
            seen[id(x)] = t.requires_grad_(True) if x.requires_grad else t
        return seen[id(x)]
    if isinstance(x, torch.dtype):
        return getattr(tga, str(x).removeprefix("torch."))
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, tuple):
        return tuple(_ours(v, seen) for v in x)
    if isinstance(x, list):
        return [_ours(v, seen) for v in x]
    if isinstance(x, dict):
        return {k: _ours(v, seen) for k, v in x.items()}
    return x


def _leaves(x: Any) -> list[Any]:
    """The tensors in a (nested) output or argument, in order; ``None`` kept as a place."""
    if isinstance(x, (tuple, list)):
        return [y for v in x for y in _leaves(v)]
    if isinstance(x, dict):
        return [y for v in x.values() for y in _leaves(v)]
    return [x] if x is None or isinstance(x, (torch.Tensor, tga.Tensor)) else []


def _array(t: Any) -> np.ndarray:
    if t.is_sparse:  # (a sparse gradient, Embedding(sparse=True)'s: its values, written out)
        t = t.to_dense()
    return t.detach().numpy()


# ---------------------------------------------------------------------------------------------
# One sample
# ---------------------------------------------------------------------------------------------
class _Skip(Exception):
    """PyTorch itself refuses the sample."""


@dataclass
class Tally:
    run: int = 0
    equal: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)


def _compare(what: str, ours: Any, theirs: Any) -> str | None:
    """Why ``ours`` differs from ``theirs`` (tensors or None), or None."""
    if theirs is None or ours is None:
        return None if (ours is None) == (theirs is None) else f"{what}: ours {ours!r}, PyTorch's {theirs!r}"
    a, b = _array(ours), _array(theirs)
    if a.shape != b.shape:
        return f"{what}: shape {a.shape}, PyTorch's {b.shape}"
    if a.dtype != b.dtype:
        return f"{what}: dtype {a.dtype}, PyTorch's {b.dtype}"
    if not np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True):
        bad = np.argwhere(~np.isclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))[0]
        return f"{what}: values differ at {tuple(int(i) for i in bad)}: {a[tuple(bad)]!r} vs {b[tuple(bad)]!r}"
    return None


def _run_sample(info: Any, sample: Any, training: bool) -> str | None:
    """Build, load, run and differentiate one sample; the first difference, or None."""
    name = info.module_cls.__name__
    cargs, ckw = sample.constructor_input.args, sample.constructor_input.kwargs
    fargs, fkw = sample.forward_input.args, sample.forward_input.kwargs
    try:
        theirs = info.module_cls(*cargs, **ckw)
    except Exception as e:  # noqa: BLE001
        raise _Skip from e
    try:
        ours = getattr(nn, name)(*_ours(cargs), **_ours(ckw))
    except Exception as e:  # noqa: BLE001 - the sample is the report
        return f"constructor raises {type(e).__name__}: {e}"
    theirs.to(torch.float64)
    ours.double()
    theirs.train(training)
    ours.train(training)
    if info.is_lazy:  # materialise both with the first input, without a graph
        try:
            with torch.no_grad():
                theirs(*fargs, **fkw)
        except Exception as e:  # noqa: BLE001
            raise _Skip from e
        try:
            with tga.no_grad():
                ours(*_ours(fargs), **_ours(fkw))
        except Exception as e:  # noqa: BLE001
            return f"first forward raises {type(e).__name__}: {e}"
    keys_t = [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    keys_o = [(k, tuple(v.shape)) for k, v in ours.state_dict().items()]
    if keys_o != keys_t:
        return f"state_dict {keys_o}, PyTorch's {keys_t}"
    params_t = [n for n, _ in theirs.named_parameters()]
    if [n for n, _ in ours.named_parameters()] != params_t:
        return f"parameters {[n for n, _ in ours.named_parameters()]}, PyTorch's {params_t}"
    try:
        ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    except Exception as e:  # noqa: BLE001
        return f"load_state_dict raises {type(e).__name__}: {e}"

    seen: dict[int, Any] = {}  # (the same tensor in args and kwargs: one of ours)
    args_o, kw_o = _ours(fargs, seen), _ours(fkw, seen)
    torch.manual_seed(0)
    tga.manual_seed(0)
    try:
        out_t = theirs(*fargs, **fkw)
    except Exception as e:  # noqa: BLE001
        raise _Skip from e
    try:
        out_o = ours(*args_o, **kw_o)
    except Exception as e:  # noqa: BLE001
        return f"forward raises {type(e).__name__}: {e}"
    leaves_t, leaves_o = _leaves(out_t), _leaves(out_o)
    if len(leaves_o) != len(leaves_t):
        return f"{len(leaves_o)} outputs, PyTorch's {len(leaves_t)}"
    for i, (o, t) in enumerate(zip(leaves_o, leaves_t)):
        if (why := _compare(f"output {i}", o, t)) is not None:
            return why

    # gradients of a fixed random weighting of every floating output
    rng = np.random.default_rng(0)
    loss_t, loss_o = 0.0, 0.0
    for o, t in zip(leaves_o, leaves_t):
        if t is not None and t.requires_grad and t.dtype.is_floating_point:
            w = rng.standard_normal(tuple(t.shape))
            loss_t = loss_t + (t * torch.tensor(w)).sum()
            loss_o = loss_o + (o * tga.tensor(w)).sum()
    if isinstance(loss_t, float):
        return None
    wrt_t = [x for x in _leaves(fargs) + _leaves(fkw) if x is not None and x.requires_grad]
    wrt_t += [p for p in theirs.parameters() if p.requires_grad]
    wrt_o = [x for x in _leaves(args_o) + _leaves(kw_o) if x is not None and x.requires_grad]
    wrt_o += [p for p in ours.parameters() if p.requires_grad]
    if len(wrt_o) != len(wrt_t):
        return f"{len(wrt_o)} tensors require grad, PyTorch's {len(wrt_t)}"
    grads_t = torch.autograd.grad(loss_t, wrt_t, allow_unused=True)
    try:
        grads_o = tga.autograd.grad(loss_o, wrt_o, allow_unused=True)
    except Exception as e:  # noqa: BLE001
        return f"backward raises {type(e).__name__}: {e}"
    names = [f"input {i}" for i in range(len(wrt_t) - len(params_t))] + params_t
    for what, o, t in zip(names, grads_o, grads_t):
        if t is None:  # unused: ours may give None or zeros
            if o is not None and np.any(_array(o)):
                return f"gradient of {what}: nonzero where PyTorch's is unused"
            continue
        if o is None:
            o = tga.zeros(tuple(t.shape), dtype=tga.float64)
        if (why := _compare(f"gradient of {what}", o, t)) is not None:
            return why
    return None


def _samples(info: Any, training: bool, limit: int) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        samples = list(info.module_inputs_func(info, device="cpu", dtype=torch.float64, requires_grad=True,
                                               training=training))  # fmt: skip
    if len(samples) > limit:  # spread over the list: its variants come in blocks
        samples = [samples[i] for i in np.linspace(0, len(samples) - 1, limit).round().astype(int)]
    return samples


def run(info: Any, training: bool, limit: int = FAST_SAMPLES) -> Tally:
    tally = Tally()
    for sample in _samples(info, training, limit):
        tally.run += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                why = _run_sample(info, sample, training)
            except _Skip:  # PyTorch refused the sample itself
                tally.skipped += 1
                continue
        if why is None:
            tally.equal += 1
        else:
            desc = f" ({sample.desc})" if sample.desc else ""
            tally.failures.append(f"sample {tally.run - 1}{desc}: {why}")
    return tally


# ---------------------------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------------------------
INFOS = {info.name: info for info in module_db if hasattr(nn, info.module_cls.__name__)}
MODES = {"train": True, "eval": False}


def _params(slow: bool) -> list[Any]:
    out = []
    for name, info in INFOS.items():
        modes = MODES if info.train_and_eval_differ else {"eval": False}
        for mode in modes:
            key = f"{name}@{mode}"
            reason = KNOWN.get(key, KNOWN.get(name))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            if slow:
                marks.append(pytest.mark.slow)
            out.append(pytest.param(name, mode, id=key, marks=marks))
    return out


def _check(tally: Tally) -> None:
    assert tally.equal, f"no sample ran ({tally.skipped} skipped)"
    assert not tally.failures, f"{len(tally.failures)} of {tally.run} differ; first: {tally.failures[0]}"


@pytest.mark.parametrize("name,mode", _params(slow=False))
def test_moduleinfo_samples(name, mode):
    _check(run(INFOS[name], MODES[mode], FAST_SAMPLES))


@pytest.mark.parametrize("name,mode", _params(slow=True))
def test_moduleinfo_all_samples(name, mode):
    _check(run(INFOS[name], MODES[mode], SLOW_SAMPLES))


# -- PyTorch's error inputs: ours refuses each with PyTorch's exception class -------------------------
#: module -> why some of its error inputs are not refused as PyTorch refuses them; strict xfails
KNOWN_ERRORS: dict[str, str] = {}


def _error_inputs(info: Any) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(info.module_error_inputs_func(info, device="cpu", dtype=torch.float64, requires_grad=False,
                                                  training=True))  # fmt: skip


def refusals(info: Any) -> list[str]:
    """Each error input of ``info`` that ours does not refuse with PyTorch's exception class."""
    from torch.testing._internal.common_modules import ModuleErrorEnum  # noqa: PLC0415

    out = []
    for i, err in enumerate(_error_inputs(info)):
        sample = err.module_error_input
        cargs, ckw = sample.constructor_input.args, sample.constructor_input.kwargs
        cls = getattr(nn, info.module_cls.__name__)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = cls(*_ours(cargs), **_ours(ckw))
                if err.error_on == ModuleErrorEnum.FORWARD_ERROR:
                    module.double()
                    module(*_ours(sample.forward_input.args), **_ours(sample.forward_input.kwargs))
        except err.error_type:
            continue
        except Exception as e:  # noqa: BLE001
            out.append(f"error input {i}: {type(e).__name__}: {e} (PyTorch's {err.error_type.__name__}: "
                       f"{err.error_regex})")  # fmt: skip
            continue
        out.append(f"error input {i}: no error (PyTorch's {err.error_type.__name__}: {err.error_regex})")
    return out


def _error_params() -> list[Any]:
    out = []
    for name, info in INFOS.items():
        if info.module_error_inputs_func is None:
            continue
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_ERRORS[name])] if name in KNOWN_ERRORS else []
        out.append(pytest.param(name, id=name, marks=marks))
    return out


@pytest.mark.parametrize("name", _error_params())
def test_moduleinfo_error_inputs_refused_as_pytorch(name):
    bad = refusals(INFOS[name])
    assert not bad, f"{len(bad)} refused otherwise; first: {bad[0]}"


def test_every_moduleinfo_class_is_ours():
    """PyTorch's ModuleInfo classes that nn lacks: none (a class added to PyTorch's list shows here)."""
    missing = sorted({info.module_cls.__name__ for info in module_db} - {i.module_cls.__name__ for i in INFOS.values()})
    assert not missing, f"module_db classes missing from tinygrad_attn.nn: {missing}"


if __name__ == "__main__":
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else FAST_SAMPLES
    totals = Tally()
    for name, info in INFOS.items():
        for mode, training in MODES.items():
            if mode == "train" and not info.train_and_eval_differ:
                continue
            t = run(info, training, limit)
            totals.run, totals.equal, totals.skipped = (
                totals.run + t.run,
                totals.equal + t.equal,
                totals.skipped + t.skipped,
            )
            status = "ok" if not t.failures and t.equal else "FAIL"
            print(f"{name + '@' + mode:45s} {t.equal:3d}/{t.run:3d} equal, {t.skipped} skipped  {status}")
            if t.failures:
                print(f"    {t.failures[0][:300]}")
    print(f"total: {totals.equal} of {totals.run} samples equal, {totals.skipped} skipped")
    for name, info in INFOS.items():
        if info.module_error_inputs_func is not None:
            bad = refusals(info)
            print(
                f"{name:45s} error inputs: {len(_error_inputs(info)) - len(bad)}/{len(_error_inputs(info))} refused"
                f" as PyTorch" + (f"\n    {bad[0][:300]}" if bad else "")
            )
