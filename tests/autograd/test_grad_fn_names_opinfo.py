"""The backward graph as PyTorch's, over PyTorch's OpInfo samples of every name we share.

For each OpInfo we have (``tests/ops/test_torch_opinfo.py``'s ``TARGETS``), its first float64
samples with inputs that require grad run through PyTorch and through ours; for each output that
has a ``grad_fn`` the two graphs must match: ``type(out.grad_fn).__name__``, ``grad_fn.name()``
and the shape of ``next_functions`` (each edge's node name or ``None``, recursively to
:data:`DEPTH`), and the ``grad_fn=<...>`` a printed tensor shows. A user who walks ``grad_fn``
(as torchviz does) sees the same graph.

Each op that differs today is in ``KNOWN`` with its reason, ``xfail(strict=True)``: a fix shows as
XPASS and must remove its entry. ``python tests/autograd/test_grad_fn_names_opinfo.py`` prints the
first difference of every op that differs.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # PyTorch's test internals import it
pytestmark = pytest.mark.slow  # (a generator over every shared OpInfo: the full suite's)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "ops"))
import test_torch_opinfo as _opinfo  # noqa: E402

import tinygrad_attn as tga  # noqa: E402

SAMPLES = 2
DEPTH = 3


def graph_shape(fn: Any, depth: int = DEPTH) -> Any:
    """The names of ``fn`` and of its ``next_functions``, recursively: what a graph walker sees."""
    if fn is None:
        return None
    if depth == 0:
        return type(fn).__name__
    return (type(fn).__name__, fn.name(), tuple((graph_shape(n, depth - 1), k) for n, k in fn.next_functions))


def _outputs(x: Any) -> list:
    return [t for t in _opinfo._flat(x) if hasattr(t, "grad_fn")]


def difference(op_id: str) -> str | None:
    """The first sample of ``op_id`` whose graph differs from PyTorch's (None: all match)."""
    target = _opinfo.TARGETS[op_id]
    if target.function is None or not target.op.supports_autograd:
        return None
    tga.manual_seed(0)
    for sample in _opinfo._samples(target.op, torch.float64, SAMPLES, reference=False, requires_grad=True):
        try:
            inp, args, kwargs = (
                _opinfo.to_ours(sample.input),
                _opinfo.to_ours(sample.args),
                _opinfo.to_ours(sample.kwargs),
            )
        except _opinfo.Unsupported:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = _opinfo._call_theirs(target, "function", sample.input, sample.args, sample.kwargs)
        except Exception:
            continue  # PyTorch rejects the sample: nothing to compare
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                ours = _opinfo._call_ours(target, "function", inp, args, kwargs)
        except Exception as e:
            return f"{_opinfo._describe(sample)}: raises {type(e).__name__}: {str(e)[:120]}"
        want, got = _outputs(theirs), _outputs(ours)
        if len(want) != len(got):
            return f"{_opinfo._describe(sample)}: {len(want)} tensor outputs in PyTorch, {len(got)} here"
        for k, (w, g) in enumerate(zip(want, got)):
            ws, gs = graph_shape(w.grad_fn), graph_shape(g.grad_fn)
            if ws != gs:
                return f"{_opinfo._describe(sample)} output {k}: PyTorch {ws}, ours {gs}"
            if w.grad_fn is not None and f"grad_fn=<{w.grad_fn.name()}>" not in repr(g):
                return (
                    f"{_opinfo._describe(sample)} output {k}: repr {repr(g)[-60:]!r} lacks grad_fn=<{w.grad_fn.name()}>"
                )
    return None


def _steps(theirs: str, ours: str) -> str:
    return (f"PyTorch records one node {theirs}; here the op is written from others (or is another overload's "
            f"kernel) and its last step, {ours}, shows with the steps before it")  # fmt: skip


def _edges(name: str) -> str:
    return (f"the node is PyTorch's {name}, its edges differ: an input read as a constant, the steps of an op "
            "written from others, or the inputs in another order")  # fmt: skip


def _no_node_here(theirs: str) -> str:
    return f"PyTorch records {theirs}; here the output is its input or a tensor without history (grad_fn None)"


def _raises(kind: str) -> str:
    return f"raises {kind} on a sample PyTorch takes (the op's own parity list has it)"


# Today's differences, reviewed by class: op id -> reason (a fix shows as XPASS: delete its entry).
# The classes: ops written from other ops (their steps show, PyTorch's one node does not), edges of
# such ops, views that return their input.
KNOWN: dict[str, str] = {
    "special.ndtr": "PyTorch's ndtr is a composite of erf (MulBackward1 over its steps); ours one op with its gradient",
    "bernoulli": _no_node_here("BernoulliBackward0"),
    "as_strided_copy": "a copy of as_strided here: CloneBackward0 over AsStridedBackward0, where PyTorch's one node is "
    "AsStridedBackward0_copy",
    "as_strided_scatter": "written from a clone and an in-place put here (ViewBackward0 over CopySlices), where "
    "PyTorch's one node is AsStridedScatterBackward0",
    "cartesian_prod": _edges("StackBackward0"),
    "combinations": _steps("StackBackward0", "SavedBackward0"),
    "cumulative_trapezoid": _steps("DivBackward1", "CumsumBackward0"),
    "diag": _steps("DiagEmbedBackward0", "WhereBackward0"),
    "diff": _steps("CopyBackwards", "CloneBackward0"),
    "einsum": _edges("SumBackward1"),
    "gradient": _no_node_here("CatBackward0"),
    "index_put": _steps("IndexPutBackward0", "CopySlices"),
    "inner": _edges("ViewBackward0"),
    "kron": _steps("UnsafeViewBackward0", "ViewBackward0"),
    "linalg.matrix_power": _steps("CopyBackwards", "WhereBackward0"),
    "linalg.multi_dot": _steps("ViewBackward0", "MmBackward0"),
    "linalg.tensorinv": _steps("ReshapeAliasBackward0", "ViewBackward0"),
    "linalg.tensorsolve": _edges("ViewBackward0"),
    "linalg.vander": _steps("CatBackward0", "StackBackward0"),
    "meshgrid.list_of_tensors": _steps("ExpandBackward0", "ViewBackward0"),
    "meshgrid.variadic_tensors": _steps("ExpandBackward0", "ViewBackward0"),
    "nanmean": _steps("DivBackward0", "SavedBackward0"),
    "nanquantile": _steps("SqueezeBackward4", "SelectBackward0"),
    "nn.functional.bilinear": _steps("AddBackward0", "BilinearBackward0"),
    "nn.functional.cosine_embedding_loss": _no_node_here("AddBackward0"),
    "nn.functional.cosine_similarity": _edges("SumBackward1"),
    "nn.functional.cross_entropy": _edges("NllLossBackward0"),
    "nn.functional.ctc_loss": _no_node_here("WhereBackward0"),
    "nn.functional.feature_alpha_dropout.with_train": _edges("AddBackward0"),
    "nn.functional.gaussian_nll_loss": _edges("MulBackward0"),
    "nn.functional.hinge_embedding_loss": _edges("AddBackward0"),
    "nn.functional.instance_norm": _no_node_here("ViewBackward0"),
    "nn.functional.layer_norm": _steps("NativeLayerNormBackward0", "ViewBackward0"),
    "nn.functional.linear": _edges("ViewBackward0"),
    "nn.functional.linear_cross_entropy": _edges("NllLossBackward0"),
    "nn.functional.linear_cross_entropy.chunked": _no_node_here("SqueezeBackward1"),
    "nn.functional.linear_cross_entropy.chunked_none": _no_node_here("SqueezeBackward1"),
    "nn.functional.local_response_norm": _steps("DivBackward0", "LocalResponseNormBackward0"),
    "nn.functional.margin_ranking_loss": _edges("SumBackward0"),
    "nn.functional.multi_head_attention_forward": _no_node_here("ViewBackward0"),
    "nn.functional.multilabel_soft_margin_loss": _steps("MeanBackward0", "MultilabelSoftMarginLossBackward0"),
    "nn.functional.normalize": _edges("DivBackward0"),
    "nn.functional.pad.circular": _no_node_here("CopySlices"),
    "nn.functional.pairwise_distance": _steps("NormBackward1", "LinalgVectorNormBackward0"),
    "nn.functional.poisson_nll_loss": _no_node_here("AddBackward0"),
    "nn.functional.rms_norm": _steps("MulBackward0", "RmsNormBackward0"),
    "nn.functional.scaled_dot_product_attention": _steps("UnsafeViewBackward0", "AttentionBackward0"),
    "nn.functional.triplet_margin_loss": _edges("MeanBackward0"),
    "nn.functional.unfold": _steps("Im2ColBackward0", "ViewBackward0"),
    "normal": _no_node_here("NormalBackward3"),
    "outer": _edges("MulBackward0"),
    "quantile": _steps("SqueezeBackward4", "SelectBackward0"),
    "repeat_interleave": _steps("ViewBackward0", "GatherAlongBackward0"),
    "take_along_dim": _steps("GatherBackward0", "SavedBackward0"),
    "trapezoid": _steps("DivBackward1", "DivBackward0"),
    "trapz": _steps("DivBackward1", "DivBackward0"),
    "unfold_copy": _steps("UnfoldBackward0_copy", "CloneBackward0"),
}


def _params() -> list:
    out = []
    for op_id in sorted(_opinfo.TARGETS):
        marks = [pytest.mark.xfail(reason=KNOWN[op_id], strict=True)] if op_id in KNOWN else []
        out.append(pytest.param(op_id, marks=marks, id=op_id))
    return out


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("op_id", _params())
def test_grad_fn_graph_as_torch(op_id: str) -> None:
    why = difference(op_id)
    assert why is None, why


if __name__ == "__main__":
    bad = 0
    for op_id in sys.argv[1:] or sorted(_opinfo.TARGETS):
        print(op_id, file=sys.stderr, flush=True)
        why = difference(op_id)
        if why is not None:
            bad += 1
            print(f"{op_id}: {why[:400]}")
    print(f"{bad} of {len(sys.argv[1:] or _opinfo.TARGETS)} ops differ")
