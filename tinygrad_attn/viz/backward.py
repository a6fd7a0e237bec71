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

from ..engine.function import FreedArray
from ..tensors._tensor import Tensor
from . import text
from .graph import (
    LEAF_WORDS,
    Edge,
    Gradients,
    Graph,
    Node,
    Walk,
    common_scope,
    leaf_kind,
    nothing_recorded,
    op_lines,
    operand_labels,
    param_names,
    tooltip,
)
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
    word = {"inputs": "input", "ctx": "intermediate", "args": "arg"}
    kept = [(places[k][i], f"{fn.op_name} {word[k]}") for k in places for i in sorted(read.get(k, ()))]
    kept = [(a, what) for a, what in kept if hasattr(a, "shape") and hasattr(a, "dtype")]
    return kept + ([(t._data, "output")] if read.get("output") else [])


class _Saved:
    """Saved-array nodes, one per array however many steps read it."""

    def __init__(self, w: Walk, names: Mapping[int, str], show_values: bool) -> None:
        self.show_values = show_values
        self.nodes: dict[int, Node] = {}
        self.users: dict[int, list[Any]] = {}
        self.what: dict[int, str] = {}  # array id -> what it is: a leaf's name, or whose output
        self.numbers = op_numbers(w)
        for t in w.tensors:
            if t._ctx is None:
                self.what[id(t._data)] = leaf_kind(t, names)[1]
            else:  # the tensor's own name, else the op that made it, numbered among its kind
                self.what[id(t._data)] = t.name or f"{t._ctx.op_name}{self.numbers[id(t)]} output"

    def node(self, a: Any, fallback: str, like: Tensor, step: Node) -> str:
        k = id(a)
        if k not in self.nodes:
            dev = like._dev
            lines = [text.shape_str(a.shape), str(dev.np_dtype(a.dtype))]
            if self.show_values and not isinstance(a, FreedArray):
                lines += text.values_lines(dev.to_host(a))
            title = self.what.get(k, fallback)
            self.nodes[k] = Node(f"sv{len(self.nodes)}", "saved", title, lines)
            self.nodes[k].tooltip = [f"saved for backward: {title}", *lines]
            self.users[k] = []
        self.users[k].append(step.scope)
        return self.nodes[k].id

    def finish(self) -> list[Node]:
        for k, n in self.nodes.items():
            n.scope = common_scope(self.users[k])
        return list(self.nodes.values())


def op_numbers(w: Walk) -> dict[int, str]:
    """`` #k`` for the k-th op of a kind that occurs more than once (by tensor id), else ``""``:
    several ``div`` steps and their saved outputs can then be told apart."""
    kinds: dict[str, int] = {}
    for t in w.ops:
        kinds[t._ctx.op_name] = kinds.get(t._ctx.op_name, 0) + 1
    seen: dict[str, int] = {}
    out: dict[int, str] = {}
    for t in w.ops:
        name = t._ctx.op_name
        seen[name] = seen.get(name, 0) + 1
        out[id(t)] = f" #{seen[name]}" if kinds[name] > 1 else ""
    return out


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
        title = title.replace(fn.op_name, f"{fn.op_name}{saved.numbers[id(t)]} backward", 1)
        step = Node(f"bw{i}", "backward", title, lines + grads.lines(t), fn.scope)
        where = f"in {fn.scope.path}" if fn.scope is not None and fn.scope.path else "at the top level"
        step.tooltip = [f"backward of {fn.op_name}{saved.numbers[id(t)]} {where}",
                        f"receives ∂{t.name or 'out'} of shape {text.shape_str(t.shape)} · {t.dtype.name} · {t.device}",
                        "sends a gradient to each input that requires one"] + grads.lines(t)  # fmt: skip
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
    roles: dict[tuple[int, int], list[str | None]] = {}  # (op, input tensor) -> its labels, one per use
    for i, u in enumerate(w.ops):
        for x, label in zip(w.inputs_of(u), operand_labels(u._ctx)):
            if isinstance(x, Tensor):
                roles.setdefault((i, id(x)), []).append(label)
    for t in w.tensors:
        if not t.requires_grad:
            continue
        uses = w.consumers[id(t)]
        labels = [roles[(i, id(t))].pop(0) for i in uses]
        sources = [f"bw{i}" for i in uses] + ([seeds[id(t)].id] if id(t) in seeds else [])
        labels += [None] * (len(sources) - len(labels))
        if t._ctx is not None:
            target = f"bw{w.op_index[id(t)]}"
        else:
            kind, title = leaf_kind(t, names)
            scope = None if kind == "input" else w.consumer_scope(t)
            lines = [text.shape_str(t.shape), f"{t.dtype.name} · {t.device}"] + grads.lines(t)
            target = f"g{w.leaf_index[id(t)]}"
            end = Node(target, f"grad_{kind}", f"{title}.grad", lines, scope, t.numel())
            end.tooltip = tooltip(f"gradient of {LEAF_WORDS[kind]} {title}", t, scope, grads.grads)
            ends.append(end)
        norm = grads.norm(t)
        if len(sources) > 1:  # used more than once: the gradient is the sum of one share per use
            scope = None if id(t) in seeds else w.consumer_scope(t)
            acc = Node(f"acc{n_acc}", "accumulate", "+", [f"{len(sources)} shares"], scope)
            acc.tooltip = [f"{t.name or 'a tensor'} of shape {text.shape_str(t.shape)} was used {len(sources)} times:",
                           "its gradient is the sum of one share from each use"]  # fmt: skip
            n_acc += 1
            ends.append(acc)
            edges += [Edge(s, acc.id, "grad", t.shape, norm, _partial(lb)) for s, lb in zip(sources, labels)]
            sources, labels = [acc.id], [None]
        edges += [Edge(s, target, "grad", t.shape, norm, _partial(lb)) for s, lb in zip(sources, labels)]
    return list(seeds.values()), ends


def _partial(label: str | None) -> str | None:
    """``∂a``: the gradient a step sends to its input ``a``."""
    return None if label is None else f"∂{label}"


def backward_graph(
    roots: Tensor | Iterable[Tensor],
    *,
    show_values: bool = False,
    show_grads: bool = False,
    params: Mapping[str, Tensor] | None = None,
) -> Graph:
    """The backward pass of ``roots`` (a non-scalar root is seeded with ones)."""
    w = Walk(roots)
    if not w.ops:
        graph = Graph("backward: 0 steps. " + nothing_recorded("backward_graph"), [], [], show_grads)
        return graph
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
