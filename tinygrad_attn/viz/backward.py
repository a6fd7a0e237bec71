"""The gradient computation as the engine runs it, read into plain nodes and edges.

One step per forward op (its backward formula), the arrays each step saved in the
forward pass, a seed gradient at each root, an accumulation wherever a tensor was used
more than once (its gradient is the sum of one share per use), and a ``.grad`` at every
leaf that requires a gradient.

>>> import tinygrad_attn as tga
>>> x = tga.Tensor([1.0, 2.0], requires_grad=True, name="x")
>>> g = backward_graph((x * x).sum())
>>> [n.title for n in g.nodes if n.kind in ("backward", "accumulate")]
['mul backward', 'sum backward', '+']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .._tensor import Tensor
from ..autograd import FreedArray
from . import text
from .graph import Edge, Gradients, Graph, Node, Walk, common_scope, leaf_kind, op_lines, param_names
from .probe import arrays_read


def _listed(x: Any) -> list[Any]:
    return list(x) if isinstance(x, (tuple, list)) else [x]


def _kept(t: Tensor) -> list[tuple[Any, str]]:
    """The arrays the step of ``t``'s op reads (probed), else all it kept; each with a fallback title."""
    fn = t._ctx
    places = {"inputs": _listed(fn.saved), "ctx": _listed(getattr(fn, "ctx", None)), "args": _listed(fn.args)}
    read = arrays_read(t)
    if read is None:
        read = {k: range(len(v)) for k, v in places.items() if k != "args"}
    word = {"inputs": "input", "ctx": "ctx", "args": "arg"}
    kept = [(places[k][i], f"{fn.op_name} {word[k]}") for k in places for i in sorted(read.get(k, ()))]
    kept = [(a, what) for a, what in kept if hasattr(a, "shape") and hasattr(a, "dtype")]
    return kept + ([(t.data, "output")] if read.get("output") else [])


class _Saved:
    """Saved-array nodes, one per array however many steps read it."""

    def __init__(self, w: Walk, names: Mapping[int, str], show_values: bool) -> None:
        self.show_values = show_values
        self.nodes: dict[int, Node] = {}
        self.users: dict[int, list[Any]] = {}
        self.what: dict[int, str] = {}  # array id -> what it is: a leaf's name, or whose output
        for t in w.tensors:
            self.what[id(t.data)] = leaf_kind(t, names)[1] if t._ctx is None else f"{t._ctx.op_name} output"

    def node(self, a: Any, fallback: str, like: Tensor, step: Node) -> str:
        k = id(a)
        if k not in self.nodes:
            dev = like._dev
            lines = [text.shape_str(a.shape), str(dev.np_dtype(a.dtype))]
            if self.show_values and not isinstance(a, FreedArray):
                lines += text.values_lines(dev.to_host(a))
            self.nodes[k] = Node(f"sv{len(self.nodes)}", "saved", self.what.get(k, fallback), lines)
            self.users[k] = []
        self.users[k].append(step.scope)
        return self.nodes[k].id

    def finish(self) -> list[Node]:
        for k, n in self.nodes.items():
            n.scope = common_scope(self.users[k])
        return list(self.nodes.values())


class _Grads:
    """Detail lines about a tensor's gradient: its values and its norm, when asked for."""

    def __init__(self, w: Walk, show_values: bool, show_grads: bool) -> None:
        self.grads = Gradients(w) if show_values or show_grads else None
        self.show_values, self.show_grads = show_values, show_grads

    def norm(self, t: Tensor) -> float | None:
        return self.grads.norm(t) if self.show_grads else None

    def lines(self, t: Tensor) -> list[str]:
        h = self.grads.host(t) if self.show_values else None
        out = text.values_lines(h) if h is not None else []
        return out + ([text.norm_line(self.norm(t))] if self.show_grads else [])


def _steps(w: Walk, saved: _Saved, grads: _Grads, edges: list[Edge]) -> list[Node]:
    """One step per op, wired to the arrays it reads."""
    steps = []
    for i, t in enumerate(w.ops):
        fn = t._ctx
        title, lines = op_lines(t)
        lines[0] = f"∂{t.name or 'out'} {lines[0]}"  # the gradient arriving: the output's shape
        if t.name:
            lines.remove(f"= {t.name}")
        if fn.freed:
            lines.append("saved arrays freed")
        title = title.replace(fn.op_name, f"{fn.op_name} backward", 1)
        step = Node(f"bw{i}", "backward", title, lines + grads.lines(t), fn.scope)
        steps.append(step)
        if not fn.freed:
            like = next(x for x in fn.inputs if isinstance(x, Tensor))
            for sid in dict.fromkeys(saved.node(a, what, like, step) for a, what in _kept(t)):
                edges.append(Edge(sid, step.id, "saved"))
    return steps


def _flow(w: Walk, names: Mapping[int, str], grads: _Grads, edges: list[Edge]) -> tuple[list[Node], list[Node]]:
    """Seeds at the roots; each tensor's gradient from its consumers' steps (summed where
    there are several) into the step of the op that made it, or into a leaf's ``.grad``."""
    seeds, ends, n_acc = {}, [], 0
    for j, r in enumerate(w.roots):
        if r.requires_grad:
            val = "= 1" if r.ndim == 0 else f"= ones {text.shape_str(r.shape)}"
            seeds[id(r)] = Node(f"seed{j}", "seed", f"∂{r.name or 'output'}", [val])
    for t in w.tensors:
        if not t.requires_grad:
            continue
        sources = [f"bw{i}" for i in w.consumers[id(t)]] + ([seeds[id(t)].id] if id(t) in seeds else [])
        if t._ctx is not None:
            target = f"bw{w.op_index[id(t)]}"
        else:
            kind, title = leaf_kind(t, names)
            scope = None if kind == "input" else w.consumer_scope(t)
            lines = [text.shape_str(t.shape), f"{t.dtype} · {t.device}"] + grads.lines(t)
            target = f"g{w.leaf_index[id(t)]}"
            ends.append(Node(target, f"grad_{kind}", f"{title}.grad", lines, scope, t.numel()))
        norm = grads.norm(t)
        if len(sources) > 1:  # used more than once: the gradient is the sum of one share per use
            scope = None if id(t) in seeds else w.consumer_scope(t)
            acc = Node(f"acc{n_acc}", "accumulate", "+", [f"{len(sources)} shares"], scope)
            n_acc += 1
            ends.append(acc)
            edges += [Edge(s, acc.id, "grad", t.shape, norm) for s in sources]
            sources = [acc.id]
        edges += [Edge(s, target, "grad", t.shape, norm) for s in sources]
    return list(seeds.values()), ends


def backward_graph(
    roots: Tensor | Iterable[Tensor],
    *,
    show_values: bool = False,
    show_grads: bool = False,
    params: Mapping[str, Tensor] | None = None,
) -> Graph:
    """The backward pass of ``roots`` (a non-scalar root is seeded with ones)."""
    w = Walk(roots)
    names = param_names(w, params)
    grads = _Grads(w, show_values, show_grads)
    saved = _Saved(w, names, show_values)
    edges: list[Edge] = []
    steps = _steps(w, saved, grads, edges)
    seeds, ends = _flow(w, names, grads, edges)
    saved_nodes = saved.finish()
    n_acc = sum(n.kind == "accumulate" for n in ends)
    counts = (text.plural(len(steps), "step"), text.plural(len(saved_nodes), "saved array"),
              text.plural(n_acc, "accumulation"))  # fmt: skip
    return Graph("backward: " + ", ".join(counts), seeds + steps + saved_nodes + ends, edges, show_grads)
