"""One self-contained HTML page to explore a computation: :func:`explore`.

The page holds the forward and backward graphs (the same Graphviz pictures as
:func:`~tinygrad_attn.viz.draw_graph`, inlined as SVG), the values and gradients of every
tensor as small heat maps, the backward pass as the engine ran it, step by step, the
program :func:`tinygrad_attn.trace` records (when a function is explored), and the
weights of every attention the computation made, as head, model and neuron views (the
query and key vectors behind each weight). A graph of more than ``MAX_NODES`` nodes opens
as an overview with its modules collapsed; a page over ``PACK_OVER`` bytes holds its data
and pictures gzipped (a 12-layer GPT of 64 tokens: under 2 MB). Its script
and style are package files (``explorer/explorer.js``, ``explorer.css``) copied into the
page: it needs no server and no network, and opens from a ``file://`` URL or inline in
Jupyter.

How the pieces are found, generically:

- The **order of the backward steps** is recorded while the engine runs: the backward
  pass behind the page is ``engine.backward.run_backward`` itself, observed through the
  thread's hook (``engine.switches.Hook``), which sees every step as it happens.
- **Attention weights** are read off the recorded graph: the output of each softmax (a
  fused ``softmax`` op, or the last op of a ``softmax`` scope) made inside an attention
  (a module whose class name says ``Attention``, or an ``attention`` scope), and, for a
  fused attention op, its weights recomputed from its inputs and arguments; the
  gradient of the loss with respect to them comes from the same backward pass.

>>> import tinygrad_attn as tga
>>> x = tga.Tensor.randn(2, 3, requires_grad=True, name="x")
>>> page = tga.viz.explore(lambda x: (x.softmax(-1) * x).sum(), x)
>>> page.save("softmax.html")  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.backward import SliceGradient, run_backward, unbroadcast
from ..engine.function import FreedArray
from ..engine.switches import Hook, observing
from ..engine.warn import warn as _user_warn
from ..ops.fused import Attention, SoftmaxAlongDim
from ..ops.linalg import Matmul
from ..tensors._tensor import Tensor
from . import text
from .backward import _kept, backward_graph
from .dot import MAX_NODES, _fitting_depth, _Layout, to_digraph
from .graph import ModulePaths, Walk, forward_graph, leaf_kind, param_names
from .renderer import GraphvizNotFoundError, renderer

#: Cells of a heat map (all its slices together) kept by default; ``full_values=True`` keeps all.
MAX_CELLS = 384
#: Slices kept along each leading axis of a heat map by default.
MAX_LEAD = 4
#: A graph of more than ``MAX_NODES`` nodes opens as an overview: its modules collapsed until at
#: most this many nodes are left, few enough to read at once.
OVERVIEW_NODES = 40
#: A gradient whose norm is at most this fraction of its tensor's is ~0 (see the page's warning).
NEGLIGIBLE = 1e-6


# -- arrays as heat maps ----------------------------------------------------------------
def _pool(a: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Block means of the last two axes of ``a`` down to at most ``rows`` x ``cols``."""
    r, c = a.shape[-2:]
    sr, sc = -(-r // rows), -(-c // cols)
    if sr == 1 and sc == 1:
        return a
    pr, pc = -r % sr, -c % sc
    if pr or pc:  # pad with NaN and average what is there
        a = np.pad(a, [(0, 0)] * (a.ndim - 2) + [(0, pr), (0, pc)], constant_values=np.nan)
    shp = a.shape[:-2] + (a.shape[-2] // sr, sr, a.shape[-1] // sc, sc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(a.reshape(shp), axis=(-3, -1))


def _fit(r: int, c: int, per: int) -> tuple[int, int]:
    """Rows and columns of an ``r`` x ``c`` heat map shown in at most about ``per`` cells: all of
    them when they fit; else every row (a row is usually a token) while 16 columns each still
    fit, or every column of a narrow map, else both sides shrunk by the same factor."""
    if r * c <= per:
        return r, c
    if r * min(c, 16) <= per:
        return r, per // r
    if c * min(r, 16) <= per:  # a few wide columns: all of them
        return per // c, c
    s = (per / (r * c)) ** 0.5
    rows = min(r, max(1, int(r * s)))
    return rows, min(c, max(1, per // rows))


def heat_map(host: Any, full: bool = False, max_cells: int = MAX_CELLS) -> dict[str, Any] | None:
    """An array as a heat map record: its leading axes cut to a few slices, its last two
    block-averaged to fit ``max_cells``, the cells quantised to bytes between ``min`` and
    ``max`` (``full``: every cell, as float32). ``None`` for an array with no numbers."""
    if host is None or isinstance(host, FreedArray):
        return None
    a = np.asarray(host)
    if a.dtype.kind == "c":
        a = np.abs(a)
    if a.dtype.kind not in "biuf" or a.size == 0:
        return None
    a = a.astype(np.float64).reshape((1, 1) if a.ndim == 0 else (1,) * (2 - min(a.ndim, 2)) + a.shape)
    shape = list(np.shape(host))
    lead = a.shape[:-2]
    if not full:
        a = a[tuple(slice(0, MAX_LEAD) for _ in lead)]
        lead = a.shape[:-2]
        n_slices = int(np.prod(lead)) if lead else 1
        per = max(max_cells // n_slices, 16)
        a = _pool(a, *_fit(*a.shape[-2:], per))
    finite = a[np.isfinite(a)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    rec: dict[str, Any] = {"shape": shape, "lead": list(lead), "rows": a.shape[-2], "cols": a.shape[-1],
                           "min": lo, "max": hi}  # fmt: skip
    if full:
        rec["f32"] = base64.b64encode(a.astype("<f4").tobytes()).decode()  # (NaN and inf kept as they are)
    else:
        span = hi - lo if hi > lo else 1.0
        a = np.where(np.isfinite(a), a, np.where(a > 0, hi, lo))  # -inf (a masked score) and NaN: the low end
        q = np.clip(np.round((a - lo) / span * 255), 0, 255).astype(np.uint8)
        rec["u8"] = base64.b64encode(q.tobytes()).decode()
    return rec


def _host(t: Tensor) -> np.ndarray | None:
    return None if isinstance(t._data, FreedArray) else t._dev.to_host(t._data)


def _dense(g: Any, shape: tuple, ns: Any) -> Any:
    """A gradient as a step sends it, as the array its input receives."""
    if g is None:
        return None
    if g.__class__ is SliceGradient:
        g = g.dense()
    if tuple(g.shape) != shape:
        g = unbroadcast(g, shape, ns)
    return g


# -- recording the engine's backward pass -------------------------------------------------
class _StepLog(Hook):
    """The hook (see ``engine.switches.Hook``) that logs every backward step the engine runs
    as ``(op, gradients it returns, namespace, (count() before, count() after))``, in the
    order it runs them; nothing about any op class changes."""

    def __init__(self, log: list, count: Callable[[], int] = lambda: 0) -> None:
        self.log, self.count, self.start = log, count, 0

    def before_step(self, t: Any, g: Any) -> None:
        self.start = self.count()
        super().before_step(t, g)

    def after_step(self, fn: Any, grads: Any, ns: Any) -> None:
        self.log.append((fn, grads, ns, (self.start, self.count())))
        super().after_step(fn, grads, ns)


# -- the data behind the page ------------------------------------------------------------
@dataclass
class _Program:
    """A traced program's text and, per eager op, the lines that compute its value and its step."""

    code: str
    forward: dict[int, list[str]] = field(default_factory=dict)  # id(op instance) -> lines
    backward: dict[int, list[str]] = field(default_factory=dict)


def _lines_by_name(code: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in code.splitlines():
        s = line.strip()
        if " = " in s and not s.startswith("#"):
            for name in s.split(" = ", 1)[0].split(","):
                out.setdefault(name.strip(), s)
    return out


def _trace(fn: Callable[..., Any], args: Sequence[Any]) -> tuple[Any, _Program | None]:
    """Run ``fn(*args)`` under the tracer; the eager result and the program with its lines
    by op. The backward of a returned scalar is recorded too, with each step's records."""
    from ..symbolic.program import Program  # noqa: PLC0415 - the tracer loads only when a function is explored
    from ..symbolic.trace import Tracer  # noqa: PLC0415

    tracer = Tracer(fn, args)
    ranges: dict[int, tuple[int, int]] = {}
    with tracer.installed():
        result = fn(*args)
        outputs, template = tracer.outputs_of(result)
        if not tracer.did_backward and isinstance(result, Tensor) and result.requires_grad and result.shape == ():
            tracer.auto = True
            # each step's records: the ops appended while its backward (or a fused one's) ran
            log: list = []
            ones = Tensor._wrap(result._dev.ops.ones_like(result._data), result._dev)
            with observing(_StepLog(log, lambda: len(tracer.ops))):
                tracer.backward_pass([result], [ones._data], False, False, None)
            for op, _, _, span in log:
                ranges.setdefault(id(op), span)
    prog = Program(tracer.name, tracer.ops, tracer.arg_buffers, outputs, template, tracer.arg_specs)
    by_name = _lines_by_name(prog.code)
    p = _Program(prog.code)
    for rec in tracer.ops:
        eager = getattr(rec, "trace_fn", None)
        if rec.section == "forward" and eager is not None:
            p.forward[id(eager)] = [by_name[b.name] for b in rec.outputs if b is not None and b.name in by_name]
    for key, (a, b) in ranges.items():
        names = [o.name for rec in tracer.ops[a:b] for o in rec.outputs if o is not None]
        p.backward[key] = list(dict.fromkeys(by_name[n] for n in names if n in by_name))
    return result, p


_COMMENT = re.compile(r"<!--.*?-->\n?", re.S)


def _svg(graph: Any, **kw: Any) -> str:
    """The SVG of a graph, drawn by the renderer the pictures use; a note without one."""
    dot = to_digraph(graph, **kw)
    try:
        svg = renderer().run(dot.source, "svg").decode("utf-8")
    except GraphvizNotFoundError as e:
        return f'<p class="tga-note">{html.escape(str(e))}</p>'
    # (Graphviz's comments name each node again: bytes a page does not need)
    return _COMMENT.sub("", svg[svg.index("<svg") :])


def _module_path(scope: Any, paths: ModulePaths) -> str:
    if scope is None:
        return ""
    chain = scope.chain()
    mods = paths.path(chain)
    comps = [s.name for s in chain if s.kind != "module"]
    return mods + ("/" + "/".join(comps) if comps else "")


def _is_attention(scope: Any) -> Any:
    """The innermost attention around ``scope``: a module whose class says ``Attention``, or an ``attention`` scope."""
    found = None
    for s in scope.chain() if scope is not None else []:
        if s.kind == "module" and s.module is not None and "attention" in type(s.module).__name__.lower():
            found = s
        elif s.kind != "module" and s.name == Attention.name:  # the composite its fused op implements
            found = found or s
    return found


def _softmax_output(t: Tensor, w: Walk) -> bool:
    """Whether ``t`` is a softmax's output: a fused softmax op, or the last op of a softmax scope."""
    fn = t._ctx
    if isinstance(fn, SoftmaxAlongDim):
        return True
    s = fn.scope
    if s is None or s.kind == "module" or s.name != SoftmaxAlongDim.name:
        return False
    return not any(w.ops[i]._ctx.scope is s for i in w.consumers[id(t)])


class _Data:
    """Everything the page shows, as JSON-ready records."""

    def __init__(self, roots: list[Tensor], program: _Program | None, params: Any, tokens: Any,
                 key_tokens: Any, full: bool, max_cells: int, rankdir: str, depth: int | None) -> None:  # fmt: skip
        self.full, self.max_cells = full, max_cells
        w = self.w = Walk(roots)
        names = param_names(w, params)
        paths = ModulePaths()
        self.grads: dict[int, Any] = {}  # id(tensor) -> host gradient
        self.steps = self._run_backward(w)
        for t in w.tensors:
            if id(t) not in self.grads and t._grad is not None:
                self.grads[id(t)] = t._grad.detach().numpy()
        tensors: dict[str, dict] = {}
        key: dict[int, str] = {}
        for i, t in enumerate(w.tensors):
            key[id(t)] = f"T{i}"
            rec = self._tensor(t, names, paths, program)
            tensors[f"T{i}"] = rec
        nodes: dict[str, str] = {}  # graph node id -> tensor key
        for i, t in enumerate(w.leaves):
            nodes[f"t{i}"] = nodes[f"g{i}"] = key[id(t)]
        for i, t in enumerate(w.ops):
            nodes[f"op{i}"] = nodes[f"bw{i}"] = key[id(t)]
        for j, r in enumerate(w.roots):
            nodes[f"out{j}"] = nodes[f"seed{j}"] = key[id(r)]
        self.acc: dict[int, str] = {}  # id(tensor) -> its accumulation node
        seeds = {id(r) for r in w.roots if r.requires_grad}
        for t in w.tensors:
            if t.requires_grad and len(w.consumers[id(t)]) + (id(t) in seeds) > 1:
                self.acc[id(t)] = f"acc{len(self.acc)}"
                nodes[self.acc[id(t)]] = key[id(t)]
        self.warning = self._negligible_gradients(tensors, key)
        self._saved_arrays(tensors, nodes, key)
        self.tensors, self.nodes, self.key = tensors, nodes, key
        self.step_records = self._step_records(program)
        self.attention = self._attention(tokens, key_tokens, paths)
        kw = {"rankdir": rankdir, "depth": depth, "max_nodes": None}
        self.svgs: dict[str, str] = {}
        self.overview: dict[str, dict[str, list[str]]] = {}
        for name, make in (("forward", forward_graph), ("backward", backward_graph)):
            if name == "backward" and not w.ops:
                self.svgs["tga-backward"] = ""
                continue
            graph = make(roots, params=params)
            self.svgs[f"tga-{name}"] = _svg(graph, **kw)
            if depth is None and len(graph.nodes) > MAX_NODES:  # too many to read at once: modules collapsed
                fit = _fitting_depth(graph, OVERVIEW_NODES)
                if fit is not None:
                    lay = _Layout(graph, fit, True)
                    self.svgs[f"tga-{name}-overview"] = _svg(graph, rankdir=rankdir, depth=fit, max_nodes=None)
                    self.overview[name] = {g.id: [n.id for n in lay.members[sid]] for sid, g in lay.groups.items()}

    def _negligible_gradients(self, tensors: dict, key: dict) -> str | None:
        """Mark each gradient that is ~0 next to its tensor's values (rounding noise, as after a
        LayerNorm whose output is only summed); a warning when they are most of the gradients."""
        tiny, total = [], 0
        roots = {id(r) for r in self.w.roots}
        for t in self.w.tensors:
            g = self.grads.get(id(t))
            h = _host(t)
            if g is None or h is None or id(t) in roots or h.dtype.kind not in "fc":
                continue
            total += 1
            v = float(np.linalg.norm(np.asarray(h, np.float64)))
            if v > 0 and float(np.linalg.norm(np.asarray(g, np.float64))) <= NEGLIGIBLE * v:
                tensors[key[id(t)]]["grad_negligible"] = True
                tiny.append(tensors[key[id(t)]]["title"])
        if total < 2 or 2 * len(tiny) < total:
            return None
        return (f"the gradients of {len(tiny)} of {total} tensors are ~0 next to their values (under {NEGLIGIBLE:g} "
                f"of them: rounding noise), so the loss hardly depends on them, as out.sum() after a LayerNorm: "
                f"explore a loss that does, such as the mean squared error against a target")  # fmt: skip

    def _saved_arrays(self, tensors: dict, nodes: dict, key: dict) -> None:
        """The backward picture's saved-array nodes (numbered as :mod:`.backward` numbers them):
        the tensor whose values they are, or a record of their own (an op's intermediate)."""
        by_array = {id(t._data): t for t in self.w.tensors}
        seen: dict[int, str] = {}
        for t in self.w.ops:
            if t._ctx.freed:
                continue
            for a, what in _kept(t):
                if id(a) in seen:
                    continue
                sid = seen[id(a)] = f"sv{len(seen)}"
                owner = by_array.get(id(a))
                if owner is not None:
                    nodes[sid] = key[id(owner)]
                    continue
                host = None if isinstance(a, FreedArray) else t._dev.to_host(a)
                tensors[sid] = {"title": f"saved: {what}", "op": "saved for backward", "module": "",
                                "shape": text.shape_str(a.shape), "dtype": str(t._dev.np_dtype(a.dtype)),
                                "device": str(t.device), "values": text.values_lines(host) if host is not None else [],
                                "value": heat_map(host, self.full, self.max_cells), "grad": None, "grad_values": []}  # fmt: skip
                nodes[sid] = sid

    # -- per tensor ----------------------------------------------------------------------
    def _tensor(self, t: Tensor, names: Mapping[int, str], paths: ModulePaths, program: _Program | None) -> dict:
        if t._ctx is None:
            kind, title = leaf_kind(t, names)
            op, scope = kind, self.w.consumer_scope(t) if kind != "input" else None
        else:
            title = op = t._ctx.op_name
            scope = t._ctx.scope
        host = _host(t)
        g = self.grads.get(id(t))
        rec = {"title": t.name or title, "op": op, "module": _module_path(scope, paths),
               "shape": text.shape_str(t.shape), "dtype": t.dtype.name, "device": str(t.device),
               "values": text.values_lines(host) if host is not None else [f"values freed {t._data.when}"],
               "value": heat_map(host, self.full, self.max_cells),
               "grad": heat_map(g, self.full, self.max_cells),
               "grad_values": text.values_lines(g) if g is not None else []}  # fmt: skip
        if program is not None and t._ctx is not None:
            rec["line"] = program.forward.get(id(t._ctx), [])
            rec["step_lines"] = program.backward.get(id(t._ctx), [])
        return rec

    # -- the backward pass, as the engine runs it -----------------------------------------
    def _run_backward(self, w: Walk) -> list[tuple[Tensor, list]]:
        """Run the engine's backward of the roots (seeded with ones), logging each step; the
        gradient of every tensor lands in ``self.grads``. Returns ``(tensor, shares)`` per step,
        where each share is ``(input tensor, norm of what the step sent it)``."""
        roots = [r for r in w.roots if r.requires_grad]
        if not roots or not w.ops:
            return []
        if any(t._ctx.freed for t in w.ops):
            _user_warn("explore: the graph's saved arrays were freed by an earlier backward(); call "
                          "explore before backward(), or backward(retain_graph=True), to step through it")  # fmt: skip
            return []
        by_fn = {id(t._ctx): t for t in w.ops}
        targets = [t for t in w.tensors if t.requires_grad]
        log: list = []
        seeds = [r._dev.ops.ones_like(r._data) for r in roots]
        steps: list[tuple[Tensor, list]] = []
        with observing(_StepLog(log)):
            found = run_backward(roots, seeds, retain_graph=True, create_graph=False, targets=targets)
        for fn, gs, ns, _ in log:
            t = by_fn.get(id(fn))
            if t is None:  # (an op outside this graph that happened to run meanwhile)
                continue
            shares = []
            for x, gi in zip(w.inputs_of(t), gs):
                if isinstance(x, Tensor) and x.requires_grad and gi is not None:
                    d = _dense(gi, tuple(x._data.shape), ns)
                    shares.append((x, text.norm_of(x._dev.to_host(d))))
            steps.append((t, shares))
        for t, g in zip(targets, found):
            if g is not None:
                self.grads[id(t)] = t._dev.to_host(g)
        return steps

    def _target(self, x: Tensor) -> str:
        """The node a gradient sent to ``x`` arrives at: its sum, its op's step, or its ``.grad``."""
        if id(x) in self.acc:
            return self.acc[id(x)]
        if x._ctx is not None:
            return f"bw{self.w.op_index[id(x)]}"
        return f"g{self.w.leaf_index[id(x)]}"

    def _step_records(self, program: _Program | None) -> list[dict]:
        w = self.w
        out = []
        filled: dict[int, int] = {}
        seeds = {id(r) for r in w.roots if r.requires_grad}
        for t, shares in self.steps:
            i = w.op_index[id(t)]
            sends = []
            for x, norm in shares:
                dst = self._target(x)
                rec = {"to": dst, "edge": f"bw{i}->{dst}", "tensor": self.key[id(x)], "norm": norm}
                if id(x) in self.acc:
                    filled[id(x)] = filled.get(id(x), 0) + 1
                    rec["share"] = filled[id(x)] + (id(x) in seeds)
                    rec["shares"] = len(w.consumers[id(x)]) + (id(x) in seeds)
                sends.append(rec)
            lines = program.backward.get(id(t._ctx), []) if program is not None else []
            out.append({"node": f"bw{i}", "op": t._ctx.op_name, "tensor": self.key[id(t)], "sends": sends,
                        "lines": lines})  # fmt: skip
        return out

    # -- attention ----------------------------------------------------------------------
    def _attention(self, tokens: Any, key_tokens: Any, paths: ModulePaths) -> list[dict]:
        """One record per attention (a layer): weights (batch 0) ``(H, Tq, Tk)``, their gradient."""
        w = self.w
        found: list[tuple[Any, Tensor, np.ndarray, np.ndarray | None]] = []
        for t in w.ops:
            fn = t._ctx
            att = _is_attention(fn.scope)
            if isinstance(fn, Attention):
                ww, gw = self._fused_weights(t)
                if ww is not None:
                    found.append((att or fn.scope, t, ww, gw))
            elif att is not None and _softmax_output(t, w) and t.ndim >= 2:
                h = _host(t)
                if h is not None:
                    found.append((att, t, h, self.grads.get(id(t))))
        if not found:  # attention written by hand, in no module: every softmax over the last axis of 3+ dims
            for t in w.ops:
                if _softmax_output(t, w) and t.ndim >= 3 and (h := _host(t)) is not None:
                    found.append((None, t, h, self.grads.get(id(t))))
        layers = []
        for scope, t, ww, gw in found:
            qk = self._queries_and_keys(t)
            ww = _heads(ww)
            # (where a mask holds a weight at 0, its gradient moves nothing: shown, and stored, as 0)
            gw = np.where(ww > 0, _heads(gw), 0.0) if gw is not None else None
            tq, tk = ww.shape[-2:]
            name = _module_path(scope, paths) if scope is not None else ""
            if scope is not None and scope.module is not None and not paths.path(scope.chain()):
                name = type(scope.module).__name__  # the model itself: its class names it
            where = name or t.name or "an attention"
            q_tok = _labels(tokens, tq, "tokens", where, "queries")
            if key_tokens is None and tokens is not None and len(tokens) != tk:
                k_tok = _labels(None, tk, "", where, "keys")  # (keys of another sequence: cross-attention)
            else:
                k_tok = _labels(key_tokens if key_tokens is not None else tokens, tk, "key_tokens", where, "keys")
            layers.append({"name": name or t.name or f"softmax {len(layers)} (top level)", "node": self.key[id(t)],
                           "heads": ww.shape[0], "q": q_tok, "k": k_tok, "w": f16(ww), "g": f16(gw)})  # fmt: skip
            if qk is not None and qk[0].shape[:2] == ww.shape[:2] and qk[1].shape[:2] == (ww.shape[0], tk):
                scale = t._ctx.args[0] if isinstance(t._ctx, Attention) else _fit_scale(qk[0], qk[1], ww)
                layers[-1].update(qv=i8(qk[0]), kv=i8(qk[1]), qk_scale=scale)
        return layers

    def _queries_and_keys(self, t: Tensor) -> tuple[np.ndarray, np.ndarray] | None:
        """The query and key vectors behind attention weights ``t`` (batch 0, ``(H, T, d)`` each),
        for the neuron view: a fused attention's inputs, or the operands of the matmul that makes
        the scores under a softmax (``q @ k^T``, a few ops up: a scale, a mask)."""
        if isinstance(t._ctx, Attention):
            q, k = self.w.inputs_of(t)[:2]
            hq, hk = (_host(x) if isinstance(x, Tensor) else None for x in (q, k))
        else:
            hq = hk = None
            todo, seen = [(t, 0)], set()
            while todo and hq is None:
                x, depth = todo.pop(0)
                for y in self.w.inputs_of(x):
                    if not isinstance(y, Tensor) or y._ctx is None or id(y) in seen or depth > 5:
                        continue
                    seen.add(id(y))
                    ab = self.w.inputs_of(y)[:2] if isinstance(y._ctx, Matmul) else []
                    if len(ab) == 2 and all(isinstance(z, Tensor) and z.ndim >= 2 for z in ab):
                        hq, hkt = _host(ab[0]), _host(ab[1])
                        hk = None if hkt is None else np.swapaxes(hkt, -1, -2)
                        break
                    todo.append((y, depth + 1))
        if hq is None or hk is None:
            return None
        return _heads(hq), _heads(hk)

    def _fused_weights(self, t: Tensor) -> tuple[np.ndarray | None, np.ndarray | None]:
        """A fused attention op's weights from its inputs (``softmax(q k^T scale + bias)``),
        and their gradient ``dL/dout @ v^T``."""
        fn = t._ctx
        q, k, v = (x for x in self.w.inputs_of(t)[:3])
        if not all(isinstance(x, Tensor) and not isinstance(x._data, FreedArray) for x in (q, k, v)):
            return None, None
        scale, bias, row_any = fn.args[0], fn.args[1], fn.args[2]
        hq, hk, hv = (x._dev.to_host(x._data).astype(np.float64) for x in (q, k, v))
        s = hq @ np.swapaxes(hk, -1, -2) * scale
        if bias is not None:
            s = s + t._dev.to_host(bias)
        s = s - np.max(np.where(np.isfinite(s), s, -np.inf), axis=-1, keepdims=True)
        e = np.exp(s)
        ww = e / np.sum(e, axis=-1, keepdims=True)
        if row_any is not None:
            ww = np.where(t._dev.to_host(row_any), ww, 0.0)
        ww = np.nan_to_num(ww)
        g = self.grads.get(id(t))
        gw = None if g is None else g.astype(np.float64) @ np.swapaxes(hv, -1, -2)
        return ww, gw


def f16(a: np.ndarray | None) -> dict[str, Any] | None:
    """An array as compact page data: its shape, a scale, and ``a / scale`` as little-endian
    float16 bytes in base64 (the scale, the largest magnitude, keeps tiny gradients out of
    float16's subnormals). :func:`from_f16` reads it back."""
    if a is None:
        return None
    a = np.nan_to_num(np.asarray(a, dtype=np.float64))
    m = float(np.max(np.abs(a))) if a.size else 0.0
    scale = m if m > 0 else 1.0
    return {
        "shape": list(a.shape),
        "scale": scale,
        "b64": base64.b64encode((a / scale).astype("<f2").tobytes()).decode(),
    }


def i8(a: np.ndarray) -> dict[str, Any]:
    """An array as int8 bytes in base64 times a scale (its largest magnitude over 127): vectors
    shown only as colours (the neuron view's queries and keys) at a quarter of float32's bytes."""
    a = np.nan_to_num(np.asarray(a, dtype=np.float64))
    m = float(np.max(np.abs(a))) if a.size else 0.0
    scale = m / 127 if m > 0 else 1.0
    q = np.clip(np.round(a / scale), -127, 127).astype(np.int8)
    return {"shape": list(a.shape), "scale": scale, "b64": base64.b64encode(q.tobytes()).decode()}


def from_i8(rec: dict[str, Any]) -> np.ndarray:
    """The array an :func:`i8` record holds (to 1/127 of its largest magnitude)."""
    return (
        np.frombuffer(base64.b64decode(rec["b64"]), dtype=np.int8).astype(np.float64).reshape(rec["shape"])
        * rec["scale"]
    )


def from_f16(rec: dict[str, Any] | None) -> np.ndarray | None:
    """The array an :func:`f16` record holds (to float16's precision)."""
    if rec is None:
        return None
    a = np.frombuffer(base64.b64decode(rec["b64"]), dtype="<f2").astype(np.float64)
    return a.reshape(rec["shape"]) * rec["scale"]


def _fit_scale(q: np.ndarray, k: np.ndarray, w: np.ndarray) -> float | None:
    """The factor ``s`` with ``w = softmax(s * q @ k^T + a per-row constant)`` where ``w > 0`` (a
    scale applied somewhere between the matmul and the softmax), fitted by least squares."""
    dots = q @ np.swapaxes(k, -1, -2)
    keep = w > 1e-12
    with np.errstate(divide="ignore"):
        lw = np.where(keep, np.log(np.where(keep, w, 1.0)), 0.0)
    n = np.maximum(keep.sum(-1, keepdims=True), 1)
    dc = np.where(keep, dots - (dots * keep).sum(-1, keepdims=True) / n, 0.0)
    lc = np.where(keep, lw - (lw * keep).sum(-1, keepdims=True) / n, 0.0)
    den = float((dc * dc).sum())
    return float((dc * lc).sum()) / den if den > 0 else None


def _heads(a: np.ndarray) -> np.ndarray:
    """Weights as ``(heads, Tq, Tk)``: batch 0, heads from axis -3 (one head for 2-D and 3-D)."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 1:
        return a[None, None, :]
    if a.ndim == 2:  # (B, Tk): one query per example
        return a[:1][None]
    if a.ndim == 3:  # (B, Tq, Tk)
        return a[:1]
    return a.reshape((-1,) + a.shape[-3:])[0]


def _labels(tokens: Any, n: int, arg: str, where: str, what: str) -> list[str]:
    """``n`` labels: the tokens, or positions; a list of another length is numbered, with a warning."""
    if tokens is None:
        return [str(i) for i in range(n)]
    toks = [str(s) for s in tokens]
    if len(toks) != n:
        _user_warn(f"explore: {arg} has {len(toks)} labels but {where} has {n} {what}; they are numbered "
                      f"0..{n - 1} instead")  # fmt: skip
        return [str(i) for i in range(n)]
    return toks


# -- the page ----------------------------------------------------------------------------
def _asset(name: str) -> str:
    return resources.files("tinygrad_attn.viz").joinpath("explorer", name).read_text(encoding="utf-8")


def _finite(obj: Any) -> Any:
    """``obj`` with NaN and infinities as ``None``: JSON has no word for them."""
    if isinstance(obj, float):
        return obj if np.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _json_for_script(obj: Any) -> str:
    """JSON that is safe inside ``<script>``: no ``</`` can end the element early."""
    return (
        json.dumps(_finite(obj), separators=(",", ":"), allow_nan=False).replace("</", "<\\/").replace("<!--", "<\\!--")
    )


class Explorer:
    """An explorer page: ``.html`` is the whole self-contained page; it shows inline in
    Jupyter (in a sandbox-free ``iframe``, so its script and style touch nothing else) and
    :meth:`save` writes it."""

    def __init__(self, html_text: str, data: dict[str, Any]) -> None:
        self.html = html_text
        self.data = data

    def save(self, path: str | Path) -> Path:
        """Write the page to ``path``; open it in any browser, from disk."""
        path = Path(path)
        path.write_text(self.html, encoding="utf-8")
        return path

    def weights(self, layer: int, grad: bool = False) -> np.ndarray:
        """The attention weights of ``layer`` (an index into ``data["attention"]``), batch 0, as
        ``(heads, queries, keys)`` (to float16's precision, as the page holds them); with
        ``grad=True`` the gradient of the loss with respect to them."""
        rec = self.data["attention"][layer]["g" if grad else "w"]
        if rec is None:
            raise ValueError(f"Explorer.weights: layer {layer} has no gradient (no backward pass reached it)")
        return from_f16(rec)

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" style="width:100%;height:720px;'
                'border:1px solid #ccc" title="tinygrad_attn explorer"></iframe>')  # fmt: skip

    def __repr__(self) -> str:
        return (
            f"<Explorer: {len(self.data['tensors'])} tensors, {len(self.data['steps'])} backward steps, "
            f"{len(self.data['attention'])} attention layers, {len(self.html)} bytes>"
        )


def explore(
    target: Tensor | Iterable[Tensor] | Callable[..., Any],
    *args: Any,
    path: str | Path | None = None,
    tokens: Sequence[Any] | None = None,
    key_tokens: Sequence[Any] | None = None,
    params: Mapping[str, Tensor] | None = None,
    full_values: bool = False,
    max_cells: int = MAX_CELLS,
    rankdir: str = "TB",
    depth: int | None = None,
    title: str | None = None,
) -> Explorer:
    """An interactive page about a computation: graphs, values, the backward pass, attention.

    ``target`` is a tensor (a loss, or any output: a non-scalar one is seeded with ones),
    several tensors, or a function: ``explore(loss_fn, x)`` runs ``loss_fn(x)`` under
    :func:`tinygrad_attn.trace`, so each node also shows the line of the traced program
    that computes it and each backward step its lines. The page steps through the backward
    pass in the order the engine runs it, and shows the attention weights of every
    attention the computation made (head view and model view, labelled with ``tokens``
    for the queries and ``key_tokens``, default ``tokens``, for the keys).

    Values and gradients are summarised and their heat maps downsampled to about
    ``max_cells`` cells (every row kept while it fits); ``full_values=True`` keeps every
    number. A loss whose gradients are mostly ~0 next to their values (``out.sum()`` after a
    LayerNorm) warns, here and on the page. :meth:`Explorer.weights` gives a layer's
    attention weights back as an array. ``params`` names
    parameters (``dict(model.named_parameters())``); ``rankdir`` and ``depth`` are as in
    :func:`~tinygrad_attn.viz.draw_graph`. With ``path`` the page is also written there.

    >>> page = explore(lambda x: model(x).sum(), x, tokens=["the", "cat", "sat"])  # doctest: +SKIP
    >>> page.save("model.html")                                                  # doctest: +SKIP
    """
    if isinstance(max_cells, bool) or not isinstance(max_cells, int) or max_cells < 16:
        raise ValueError(f"explore: max_cells must be an integer >= 16, got {max_cells!r}")
    program = None
    if callable(target) and not isinstance(target, Tensor):
        name = getattr(target, "__name__", "function")
        try:
            result, program = _trace(target, args)
        except Exception as e:  # noqa: BLE001 - whatever the tracer cannot record (a TraceError: a value
            # read, a random draw), the page is still made from an eager run, only without program lines
            _user_warn(f"explore: {name} could not be traced ({e}); exploring it without its program")  # fmt: skip
            result = target(*args)
        roots = [x for x in (result if isinstance(result, (tuple, list)) else [result]) if isinstance(x, Tensor)]
        if not roots:
            raise TypeError(f"explore: {name} returned {type(result).__name__}, not a Tensor")
    else:
        if args:
            raise TypeError("explore: positional arguments after the first are for a function target")
        roots = [target] if isinstance(target, Tensor) else list(target) if isinstance(target, (tuple, list)) else []
        if not roots or not all(isinstance(r, Tensor) for r in roots):
            raise TypeError(f"explore: target must be a Tensor, Tensors or a function, got {type(target).__name__}")
    d = _Data(roots, program, params, tokens, key_tokens, full_values, max_cells, rankdir, depth)
    if d.warning:
        _user_warn(f"explore: {d.warning}")
    page_title = title or f"tinygrad_attn explorer: {text.plural(len(d.w.ops), 'op')}"
    data = {"title": page_title, "tensors": d.tensors, "nodes": d.nodes, "steps": d.step_records,
            "attention": d.attention, "program": program.code if program is not None else None,
            "renderer": renderer().name, "full": full_values, "warning": d.warning}  # fmt: skip
    data["overview"] = d.overview
    page = _page(page_title, data, d.svgs)
    ex = Explorer(page, data)
    if path is not None:
        ex.save(path)
    return ex


#: A page larger than this many bytes is packed: its data and pictures gzipped (the page's script
#: unpacks them with the browser's DecompressionStream), about a third of the size.
PACK_OVER = 1_000_000


def _page(title: str, data: dict, svgs: dict[str, str]) -> str:
    page = _html(title, _json_for_script(data), svgs, "tga-data", "application/json")
    if len(page) <= PACK_OVER:
        return page
    raw = json.dumps({"data": _finite(data), "svg": svgs}, separators=(",", ":"), allow_nan=False).encode()
    packed = base64.b64encode(gzip.compress(raw, 9, mtime=0)).decode()
    return _html(title, packed, dict.fromkeys(svgs, ""), "tga-packed", "application/octet-stream")


def _html(title: str, data: str, svgs: dict[str, str], data_id: str, data_type: str) -> str:
    boxes = "".join(f'<div class="tga-graph" id="{k}">{v}</div>' for k, v in svgs.items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{_asset("explorer.css")}</style></head>
<body><div id="tga-app">
<header><h1>{html.escape(title)}</h1>
<nav id="tga-tabs"><button data-view="forward" class="on">forward</button><button data-view="backward">backward</button><button data-view="both">side by side</button><button data-view="attention">attention</button><button data-view="program">program</button></nav>
<button id="tga-overview" title="back to the picture with modules collapsed">overview</button><input id="tga-search" type="search" placeholder="search nodes by name"><span id="tga-found"></span></header>
<div id="tga-stepbar"><button id="tga-reset" title="start over">reset</button><button id="tga-prev" title="step back">◀</button><button id="tga-next" title="next backward step">▶</button><button id="tga-play" title="play">▶▶</button><span id="tga-step-status">backward pass: not started</span><code id="tga-step-line"></code></div>
<div id="tga-warning"></div>
<main><section id="tga-graphs">{boxes}
<div id="tga-attention"></div><pre id="tga-program"></pre></section>
<aside id="tga-panel"><p class="tga-note">Click a node for its values and gradient. Drag to pan, wheel to zoom; click a module's title to fold it.</p></aside></main>
</div>
<script type="{data_type}" id="{data_id}">{data}</script>
<script>{_asset("explorer.js")}</script>
</body></html>
"""
