"""Read the recorded graph behind some tensors into plain nodes and edges.

Nothing here knows an op by name: every word on a node comes from the graph generically
(a :class:`~tinygrad_attn.autograd.Function`'s ``op_name``, ``inputs``, ``args`` and
``scope``; a tensor's ``name``, shape, dtype and device), so a new op draws with no line
changed here. :mod:`.dot` turns the result into Graphviz; :mod:`.backward` reads the
same walk as the gradient computation.

>>> import tinygrad_attn as tga
>>> x = tga.Tensor([1.0, 2.0], requires_grad=True, name="x")
>>> g = forward_graph((x * x).sum())
>>> [n.title for n in g.nodes]
['x', 'mul', 'sum', 'output']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine.backward import run_backward
from ..engine.composite import FusedFunction
from ..engine.function import FreedArray
from ..engine.switches import Scope
from ..engine.versions import as_seen_by
from ..engine.warn import warn as _user_warn
from ..ops.alias import InPlace
from ..tensors._tensor import Tensor
from . import text


@dataclass(eq=False)
class Node:
    """One box of the picture. ``kind`` picks its colour (see :data:`.dot.STYLES`)."""

    id: str
    kind: str
    title: str
    lines: list[str] = field(default_factory=list)
    scope: Scope | None = None
    numel: int = 0  # a parameter's elements, counted when its module collapses
    tooltip: list[str] = field(default_factory=list)  # the full record, shown on hover in SVG


@dataclass(eq=False)
class Edge:
    """``kind``: ``"data"`` (a tensor flows forward), ``"grad"`` (a gradient flows back)
    or ``"saved"`` (a backward step reads an array kept from the forward pass)."""

    src: str
    dst: str
    kind: str = "data"
    shape: tuple | None = None
    norm: float | None = None  # the norm of the gradient of the tensor carried
    label: str | None = None  # which input of a non-commutative op this edge feeds (``a`` of ``a - b``)


@dataclass(eq=False)
class Graph:
    title: str
    nodes: list[Node]
    edges: list[Edge]
    show_grads: bool = False
    # A forward graph: the nodes go to Graphviz's dot newest first, since its crossing
    # minimisation then lays parallel branches (q, k, v) left to right, in the order the
    # backward picture has them; graphviz-pure keeps creation order that way (see dot.py).
    emit_newest_first: bool = False


def as_roots(roots: Tensor | Iterable[Tensor]) -> list[Tensor]:
    """One tensor or several, each once, in the order given."""
    items = [roots] if isinstance(roots, Tensor) else list(roots)
    if not items:
        raise ValueError("draw_graph: needs at least one tensor to draw")
    seen: dict[int, Tensor] = {}
    for t in items:
        if not isinstance(t, Tensor):
            raise TypeError(f"draw_graph: roots must be Tensors, got {type(t).__name__}")
        seen.setdefault(id(t), t)
    return list(seen.values())


class Walk:
    """The graph behind ``roots`` in topological order: every tensor after its inputs.

    Iterative, so a chain of 100,000 ops walks without touching the recursion limit.
    ``ops[i]`` is the tensor the i-th op made (``ops[i]._ctx`` is the op); ``consumers``
    maps a tensor's id to the index of each op that reads it, once per use.

    In-place changes: a tensor changed in place after an op read it now holds a later
    node; the op read its earlier version (another tensor object, ``InPlace.previous``),
    and :meth:`inputs_of` gives that one, as the backward pass maps it
    (``engine.versions.as_seen_by``). The node an in-place change leaves (``InPlace``) only
    passes the write's result on: the walk goes straight to the write (``x[t] = v`` is
    one ``setitem``, ``x.add_(y)`` one ``add``), so each write draws once, forward and
    backward.
    """

    def __init__(self, roots: Tensor | Iterable[Tensor]) -> None:
        self.roots = list({id(r): r for r in map(_through_inplace, as_roots(roots))}.values())
        self.tensors: list[Tensor] = []
        self._inputs: dict[int, list[Any]] = {}  # id(tensor made by an op) -> its op's inputs as it read them
        stack: list[tuple[Tensor, bool]] = [(t, False) for t in reversed(self.roots)]
        seen: set[int] = set()
        while stack:
            t, done = stack.pop()
            if done:
                self.tensors.append(t)
                continue
            if id(t) in seen:
                continue
            seen.add(id(t))
            stack.append((t, True))
            if t._ctx is not None:
                ins = self._inputs[id(t)] = [_through_inplace(_seen_by(x, t._ctx.seq)) for x in t._ctx.inputs]
                for x in reversed(ins):
                    if isinstance(x, Tensor) and id(x) not in seen:
                        stack.append((x, False))
        self.tensors = _creation_order(self.tensors, self._inputs)
        self.ops = [t for t in self.tensors if t._ctx is not None]
        self.leaves = [t for t in self.tensors if t._ctx is None]
        self.op_index = {id(t): i for i, t in enumerate(self.ops)}
        self.leaf_index = {id(t): i for i, t in enumerate(self.leaves)}
        self.consumers: dict[int, list[int]] = {id(t): [] for t in self.tensors}
        for i, t in enumerate(self.ops):
            for x in self._inputs[id(t)]:
                if isinstance(x, Tensor):
                    self.consumers[id(x)].append(i)

    def inputs_of(self, t: Tensor) -> list[Any]:
        """The inputs of the op that made ``t``, as that op read them (see above)."""
        return self._inputs[id(t)]

    def consumer_scope(self, t: Tensor) -> Scope | None:
        """The innermost scope holding every op that reads ``t``: where a parameter lives."""
        return common_scope(self.ops[i]._ctx.scope for i in self.consumers[id(t)])


def _seen_by(x: Any, seq: int) -> Any:
    if isinstance(x, Tensor) and x._ctx is not None and x._ctx.seq > seq:
        return as_seen_by(x, seq)
    return x


def _through_inplace(x: Any) -> Any:
    """The result of the write behind an in-place change's node (``x`` itself otherwise)."""
    while isinstance(x, Tensor) and isinstance(x._ctx, InPlace):  # (a Restride is one too)
        x = x._ctx.inputs[0]
    return x


def _creation_order(tensors: list[Tensor], inputs: Mapping[int, list[Any]]) -> list[Tensor]:
    """Ops in the order they were made, each leaf just before its first reader.

    Still an order in which every tensor follows its inputs (an op is made after its
    inputs), and the one the user wrote: ``q``, ``k``, ``v`` left to right in the forward
    and the backward pictures alike, whatever path the walk from the roots took.
    """
    ops = sorted((t for t in tensors if t._ctx is not None), key=lambda t: t._ctx.seq)
    leaves = [t for t in tensors if t._ctx is None]
    if len(leaves) == len(tensors):
        return leaves
    placed: set[int] = set()
    out: list[Tensor] = []
    for t in ops:
        for x in inputs[id(t)]:
            if isinstance(x, Tensor) and x._ctx is None and id(x) not in placed:
                placed.add(id(x))
                out.append(x)
        out.append(t)
    return [t for t in leaves if id(t) not in placed] + out


def operand_labels(fn: Any) -> list[str | None]:
    """A label per input of ``fn`` saying which is which, where the order matters.

    An op says its inputs' roles (``operands = ("a", "b")`` for ``a - b``); one that
    says nothing and is not ``commutative`` gets positions (``0``, ``1``, ... of a
    ``cat``). Ops of one input, and commutative ones, need no labels.
    """
    n = len(fn.inputs)
    if n < 2 or getattr(fn, "commutative", False):
        return [None] * n
    names = getattr(fn, "operands", None)
    if names is None or len(names) != n:
        return [str(i) for i in range(n)]
    return list(names)


def common_scope(scopes: Iterable[Scope | None]) -> Scope | None:
    """The innermost scope that contains all of ``scopes`` (``None``: the top level)."""
    common: list[Scope] | None = None
    for s in scopes:
        chain = s.chain() if s is not None else []
        if common is None:
            common = chain
            continue
        n = 0
        while n < min(len(common), len(chain)) and common[n] is chain[n]:
            n += 1
        common = common[:n]
    return common[-1] if common else None


class ModulePaths:
    """Dotted module paths read off the module objects, as ``named_modules`` names them.

    A scope knows only the name its module was first assigned under; a layer called
    while iterating a ``ModuleList`` is ``0`` there, but ``layers.0`` to its parent.
    """

    def __init__(self) -> None:
        self._names: dict[int, dict[int, str]] = {}

    def _relative(self, parent: Any, child: Any) -> str | None:
        names = self._names.get(id(parent))
        if names is None:
            named = getattr(parent, "named_modules", None)
            names = self._names[id(parent)] = {id(m): n for n, m in named()} if callable(named) else {}
        return names.get(id(child)) or None

    def path(self, chain: Iterable[Scope]) -> str:
        """``encoder.layers.0.self_attn`` for a chain of scopes (composites are skipped)."""
        parts: list[str] = []
        prev: Scope | None = None
        for s in chain:
            if s.kind != "module":
                continue
            name = s.name
            if prev is not None and prev.module is not None and s.module is not None:
                name = self._relative(prev.module, s.module) or name
            if name:
                parts.append(name)
            prev = s
        return ".".join(parts)


def param_names(walk: Walk, params: Mapping[str, Tensor] | Iterable[tuple[str, Tensor]] | None) -> dict[int, str]:
    """Dotted parameter names by tensor id.

    The outermost module each op was made in names its parameters (``named_parameters``);
    an explicit ``params`` mapping (``dict(model.named_parameters())``) wins.
    """
    names: dict[int, str] = {}
    outer: dict[int, Scope | None] = {}
    modules: dict[int, Scope] = {}
    for t in walk.ops:
        s = t._ctx.scope
        if s is None:
            continue
        if id(s) not in outer:
            outer[id(s)] = next((c for c in s.chain() if c.kind == "module" and c.module is not None), None)
        root = outer[id(s)]
        if root is not None:
            modules.setdefault(id(root.module), root)
    for root in modules.values():
        named = getattr(root.module, "named_parameters", None)
        if callable(named):
            for name, p in named():
                names.setdefault(id(p), f"{root.name}.{name}" if root.name else name)
    if params is not None:
        items = params.items() if isinstance(params, Mapping) else params
        for name, p in items:
            names[id(p)] = name
    return names


def leaf_kind(t: Tensor, names: Mapping[int, str]) -> tuple[str, str]:
    """``(kind, title)`` of a leaf: a parameter, an input, or a constant."""
    name = names.get(id(t))
    if name is not None or type(t).__name__ == "Parameter":
        return "param", name or t.name or "parameter"
    if t.requires_grad or t.name:
        return "input", t.name or "input"
    return "const", "constant"


class Gradients:
    """d(sum of the roots)/d t for the tensors of a walk.

    A fresh pass computes every tensor's gradient while the graph still holds its saved
    arrays; ``.grad`` left by ``backward`` (leaves, ``retain_grad``) is used where it
    exists. Nothing is written to any tensor.
    """

    def __init__(self, walk: Walk) -> None:
        self.arrays: dict[int, Any] = {}
        self._norms: dict[int, float | None] = {}
        targets = [t for t in walk.tensors if t.requires_grad]
        roots = [r for r in walk.roots if r.requires_grad]
        if roots and targets and not any(t._ctx.freed for t in walk.ops):
            seeds = [r._dev.ops.ones_like(r._data) for r in roots]
            try:
                found = run_backward(roots, seeds, retain_graph=True, create_graph=False, targets=targets)
            except (NotImplementedError, RuntimeError):  # an op with no gradient: keep what .grad has
                found = [None] * len(targets)
            self.arrays.update((id(t), g) for t, g in zip(targets, found) if g is not None)
        self.arrays.update((id(t), t._grad._data) for t in walk.tensors if t._grad is not None)

    def host(self, t: Tensor) -> Any:
        g = self.arrays.get(id(t))
        return None if g is None else t._dev.to_host(g)

    def norm(self, t: Tensor) -> float | None:
        k = id(t)
        if k not in self._norms:
            h = self.host(t)
            self._norms[k] = None if h is None else text.norm_of(h)
        return self._norms[k]


def values_of(t: Tensor) -> list[str]:
    """The tensor's numbers, or a note that they were freed, and when."""
    if isinstance(t._data, FreedArray):
        return [f"values freed {t._data.when}"]
    return text.values_lines(t.detach().numpy())


def tooltip(what: str, t: Tensor, scope: Scope | None, grads: Gradients | None = None) -> list[str]:
    """The full record of a tensor's node, shown on hover: what it is, where it was made,
    its shape, dtype and device, and summaries of its values and gradient."""
    lines = [what]
    if scope is not None and scope.path:
        lines.append(f"in {scope.path}")
    lines.append(f"shape {text.shape_str(t.shape)} · {t.dtype.name} · {t.device}")
    lines += ["values " + v for v in values_of(t)]
    g = grads.host(t) if grads is not None else None
    if g is None and t._grad is not None:
        g = t._grad.detach().numpy()
    if g is not None:
        lines += ["grad " + v for v in text.values_lines(g)] + [text.norm_line(text.norm_of(g))]
    return lines


LEAF_WORDS = {"param": "parameter", "input": "input", "const": "constant"}


def nothing_recorded(who: str) -> str:
    """Say why a picture is empty and what draws one, as a warning and in its title."""
    msg = ("No op was recorded: ops are recorded only when an input requires grad. Set "
           "requires_grad=True on an input or parameter, or draw the program: tga.jit.trace(fn, x).graph()")  # fmt: skip
    _user_warn(f"{who}: {msg}")
    return msg


def tensor_lines(t: Tensor, show_values: bool, grads: Gradients | None) -> list[str]:
    lines = [text.shape_str(t.shape), f"{t.dtype.name} · {t.device}"]
    if show_values:
        lines += values_of(t)
    if grads is not None:
        lines.append(text.norm_line(grads.norm(t)))
    return lines


def op_lines(t: Tensor) -> tuple[str, list[str]]:
    """An op's title and its detail lines: output shape, constants, arguments."""
    fn = t._ctx
    ins = [x for x in fn.inputs if isinstance(x, Tensor)]
    title = fn.op_name
    heads = text.heads_note(getattr(fn, "heads_axis", None), (x.shape for x in ins))
    if heads:
        title += f" · {heads}"
    first = ins[0] if ins else None
    shape = text.shape_str(t.shape)
    if first is not None and first.dtype != t.dtype:
        shape += f" {t.dtype.name}"
    if first is not None and first.device != t.device:
        shape += f" {t.device}"
    lines = [shape]
    consts = [text.const_str(c) for c in fn.inputs if not isinstance(c, Tensor) and c is not None]
    if consts:
        lines.append("const " + ", ".join(consts))
    describe = getattr(fn, "describe_args", None)
    args = describe(fn.args) if describe is not None else text.args_str(fn.args)
    if args and args != text.shape_str(t.shape):  # a reshape's argument is its output's shape
        label = getattr(fn, "args_label", None)
        lines.append(f"{label} {args}" if label and describe is None else args)
    if t.name:
        lines.append(f"= {t.name}")
    return title, lines


def forward_graph(
    roots: Tensor | Iterable[Tensor],
    *,
    show_values: bool = False,
    show_grads: bool = False,
    params: Mapping[str, Tensor] | None = None,
) -> Graph:
    """Tensor nodes for leaves and outputs, one op node per recorded op (showing its output)."""
    w = Walk(roots)
    names = param_names(w, params)
    grads = Gradients(w) if show_grads else None
    norm = grads.norm if grads is not None else (lambda t: None)
    nodes: list[Node] = []
    edges: list[Edge] = []
    drawn: dict[int, str] = {}  # tensor id -> the node that draws it: its leaf or the op that made it
    n_params = n_weights = 0
    for t in w.tensors:
        if t._ctx is None:
            kind, title = leaf_kind(t, names)
            scope = None if kind == "input" else w.consumer_scope(t)
            size = t.numel() if kind == "param" else 0
            n_params, n_weights = n_params + (kind == "param"), n_weights + size
            node = Node(f"t{w.leaf_index[id(t)]}", kind, title, tensor_lines(t, show_values, grads), scope, size)
            node.tooltip = tooltip(f"{LEAF_WORDS[kind]} {title}", t, scope, grads)
        else:
            fn = t._ctx
            title, lines = op_lines(t)
            if show_values:
                lines += values_of(t)
            if grads is not None:
                lines.append(text.norm_line(norm(t)))
            kind = "fused" if isinstance(fn, FusedFunction) else "op"
            node = Node(f"op{w.op_index[id(t)]}", kind, title, lines, fn.scope)
            node.tooltip = tooltip(f"{'fused op' if kind == 'fused' else 'op'} {fn.op_name}" +
                                   (f" = {t.name}" if t.name else ""), t, fn.scope, grads)  # fmt: skip
            edges += [Edge(drawn[id(x)], node.id, "data", x.shape, norm(x), label)
                      for x, label in zip(w.inputs_of(t), operand_labels(fn)) if isinstance(x, Tensor)]  # fmt: skip
        nodes.append(node)
        drawn[id(t)] = node.id
    for j, r in enumerate(w.roots):
        out = Node(f"out{j}", "output", r.name or "output", tensor_lines(r, show_values, grads))
        out.tooltip = tooltip(f"output {r.name or j}", r, None, grads)
        nodes.append(out)
        edges.append(Edge(drawn[id(r)], f"out{j}", "data", r.shape, norm(r)))
    title = f"forward: {text.plural(len(w.ops), 'op')}"
    if not w.ops:
        title += " recorded. " + nothing_recorded("forward_graph")
    if n_params:
        title += f", {text.plural(n_params, 'parameter')} ({text.count_str(n_weights)} weights)"
    return Graph(title, nodes, edges, show_grads, emit_newest_first=True)
