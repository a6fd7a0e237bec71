"""Turn a :class:`~.graph.Graph` into a Graphviz ``Digraph``: styles, clusters, legend.

Ops are grouped in nested clusters by the scopes they were made in: the module that
made them (``encoder.layers.0.self_attn : BatchFirstAttention``) and the composite op
they belong to (``softmax``, ``layer_norm``, ``attention · 4 heads``). With ``depth=N``
every module nested deeper than N becomes one node, with its input and output shapes,
and everything made inside it (ops, parameters, saved arrays) is counted, not drawn.

Colours (the legend on each picture says the same):

- blue: inputs; green: parameters; orange: outputs and the seed gradient; grey: constants
- white: ops; lavender: fused ops (one node for a whole composite); teal: a collapsed module
- pink: backward steps; yellow notes: arrays saved for backward; purple circle: the sum of
  the gradients of a tensor used more than once; red arrows: gradients
"""

from __future__ import annotations

import math
from typing import Any

import graphviz

from .. import ops
from ..engine.switches import Scope
from . import text
from .graph import Edge, Graph, ModulePaths, Node
from .renderer import renderer

_BOX = {"shape": "box", "style": "rounded,filled"}
STYLES: dict[str, dict[str, str]] = {
    "input": {**_BOX, "fillcolor": "#d6e9ff", "color": "#2f6db5"},
    "param": {**_BOX, "fillcolor": "#d9f2d9", "color": "#2e8b3e"},
    "output": {**_BOX, "style": "rounded,filled,bold", "fillcolor": "#ffe2b8", "color": "#d9822b"},
    "const": {**_BOX, "fillcolor": "#eeeeee", "color": "#9a9a9a"},
    "op": {**_BOX, "fillcolor": "#ffffff", "color": "#4d4d4d"},
    "fused": {**_BOX, "fillcolor": "#ece4fb", "color": "#6f4fb0"},
    "module": {"shape": "box3d", "style": "filled", "fillcolor": "#d4efed", "color": "#26857b"},
    "seed": {**_BOX, "style": "rounded,filled,bold", "fillcolor": "#ffe2b8", "color": "#d9822b"},
    "backward": {**_BOX, "fillcolor": "#fde2e0", "color": "#b8352a"},
    "saved": {
        "shape": "note",
        "style": "filled",
        "fillcolor": "#fff4c2",
        "color": "#b48a00",
        "fontsize": "9",
        "margin": "0.06,0.02",
    },  # fmt: skip
    "accumulate": {"shape": "circle", "style": "filled", "fillcolor": "#f1dcf7", "color": "#8e44ad", "margin": "0"},
    "grad_param": {**_BOX, "style": "rounded,filled,bold", "fillcolor": "#d9f2d9", "color": "#2e8b3e"},
    "grad_input": {**_BOX, "style": "rounded,filled,bold", "fillcolor": "#d6e9ff", "color": "#2f6db5"},
}
LEGEND: dict[str, str] = {
    "input": "input",
    "param": "parameter",
    "const": "constant (no gradient)",
    "op": "op, with its output's shape",
    "fused": "fused op (a whole composite)",
    "module": "module, collapsed",
    "output": "output",
    "seed": "seed gradient",
    "backward": "backward step",
    "saved": "array saved for backward (an input, the output or an intermediate of its op)",
    "accumulate": "sum of a reused tensor's gradients (one share per use)",
    "grad_param": "gradient of a parameter",
    "grad_input": "gradient of an input",
}
EDGES: dict[str, dict[str, str]] = {
    "data": {"color": "#4d4d4d"},
    "grad": {"color": "#b8352a"},
    "saved": {"color": "#b48a00", "style": "dashed", "arrowhead": "odot"},
}
FONT = "Helvetica"
_MODULE_FILLS = ("#f2f5fa", "#e4ebf4")


class _Cluster:
    __slots__ = ("scope", "cid", "level", "parent", "nodes", "children", "entering")

    def __init__(self, scope: Scope | None, cid: int, parent: _Cluster | None) -> None:
        self.scope = scope
        self.cid = cid
        self.parent = parent
        self.level = 0 if parent is None else parent.level + 1
        self.nodes: list[Node] = []
        self.children: dict[int, _Cluster] = {}
        self.entering: list[tuple] = []  # shapes of the data entering from outside

    def contains(self, other: _Cluster) -> bool:
        while other is not None:
            if other is self:
                return True
            other = other.parent
        return False


class _Layout:
    """Where each node goes: a cluster path, or into a collapsed module's node."""

    def __init__(self, graph: Graph, depth: int | None, group_modules: bool) -> None:
        self.depth = depth
        self.group_modules = group_modules
        self.chains: dict[int, tuple[Scope, ...]] = {}
        self.paths = ModulePaths()
        self.root = _Cluster(None, 0, None)
        self.n_clusters = 1
        self.groups: dict[int, Node] = {}  # id(module scope) -> its collapsed node
        self.members: dict[int, list[Node]] = {}
        self.rep: dict[str, str] = {}  # node id -> the collapsed node drawing it
        self.where: dict[str, _Cluster] = {}
        # Layout engines differ here: dot lays a forward graph's sibling branches left to right
        # in creation order when given the nodes newest first, graphviz-pure when given them
        # oldest first (the test renders with both and compares q, k, v positions).
        newest = graph.emit_newest_first and renderer().name == "dot"
        for n in reversed(graph.nodes) if newest else graph.nodes:
            self.place(n)

    def chain(self, s: Scope | None) -> tuple[Scope, ...]:
        if s is None:
            return ()
        c = self.chains.get(id(s))
        if c is None:
            c = self.chains[id(s)] = tuple(s.chain())
        return c

    def cluster(self, chain: tuple[Scope, ...]) -> _Cluster:
        c = self.root
        for s in chain:
            if s.kind == "module" and not self.group_modules:
                continue
            child = c.children.get(id(s))
            if child is None:
                child = c.children[id(s)] = _Cluster(s, self.n_clusters, c)
                self.n_clusters += 1
            c = child
        return c

    def place(self, n: Node) -> None:
        chain = self.chain(n.scope)
        cut = self._cut(chain)
        if cut is None:
            c = self.cluster(chain)
            c.nodes.append(n)
            self.where[n.id] = c
            return
        s = chain[cut]
        g = self.groups.get(id(s))
        if g is None:
            g = self.groups[id(s)] = Node(
                f"m{len(self.groups)}", "module", module_label(chain[: cut + 1], self.paths), [], s
            )
            self.members[id(s)] = []
            c = self.cluster(chain[:cut])
            c.nodes.append(g)
            self.where[g.id] = c
        self.members[id(s)].append(n)
        self.rep[n.id] = g.id

    def _cut(self, chain: tuple[Scope, ...]) -> int | None:
        """The index of the first module nested deeper than ``depth``, if any."""
        if self.depth is None:
            return None
        d = 0
        for i, s in enumerate(chain):
            if s.kind == "module":
                d += 1
                if d > self.depth:
                    return i
        return None


#: Above this many nodes, a picture drawn with no ``depth`` collapses its deepest modules.
MAX_NODES = 150


def _fitting_depth(graph: Graph, max_nodes: int) -> int | None:
    """The largest module depth whose collapsed picture has at most ``max_nodes`` nodes
    (the smallest one tried if none does); None where collapsing modules changes nothing."""
    depths = [sum(s.kind == "module" for s in n.scope.chain()) for n in graph.nodes if n.scope is not None]
    deepest = max(depths, default=0)
    if deepest == 0:
        return None
    for d in range(deepest - 1, -1, -1):
        lay = _Layout(graph, d, True)
        drawn = len(graph.nodes) - len(lay.rep) + len(lay.groups)
        if drawn <= max_nodes:
            return d
    return 0


def module_label(chain: tuple[Scope, ...], paths: ModulePaths) -> str:
    """``encoder.layers.0 : EncoderBlock`` for the last scope of ``chain``."""
    s = chain[-1]
    path = paths.path(chain)
    cls = type(s.module).__name__ if s.module is not None else None
    label = f"{path} : {cls}" if path and cls else (path or cls or s.name or "module")
    heads = getattr(s.module, "n_heads", None) if s.module is not None else None
    if isinstance(heads, int) and not isinstance(heads, bool):
        label += f" · {heads} heads"
    return label


def _shapes(shapes: list[tuple], limit: int = 3) -> str:
    uniq = list(dict.fromkeys(shapes))
    out = ", ".join(text.shape_str(s) for s in uniq[:limit])
    return out + (", …" if len(uniq) > limit else "")


def _edges(graph: Graph, lay: _Layout) -> list[Edge]:
    """Edges between drawn nodes: rerouted to collapsed modules, without duplicates there."""
    out: list[Edge] = []
    merged: dict[tuple[str, str, str], Edge] = {}
    ins: dict[str, list[tuple]] = {}
    outs: dict[str, list[tuple]] = {}
    for e in graph.edges:
        s, d = lay.rep.get(e.src, e.src), lay.rep.get(e.dst, e.dst)
        if s == d:
            continue
        if s == e.src and d == e.dst:
            out.append(e)
            continue
        if e.kind != "saved" and e.shape is not None:
            if s != e.src:
                outs.setdefault(s, []).append(e.shape)
            if d != e.dst:
                ins.setdefault(d, []).append(e.shape)
        key = (s, d, e.kind)
        m = merged.get(key)
        if m is None:
            merged[key] = m = Edge(s, d, e.kind, e.shape, e.norm)
            out.append(m)
        elif e.norm is not None and (m.norm is None or e.norm > m.norm):
            m.norm = e.norm
    _describe_groups(lay, ins, outs)
    return out


def _describe_groups(lay: _Layout, ins: dict[str, list[tuple]], outs: dict[str, list[tuple]]) -> None:
    """A collapsed module's lines: the shapes entering and leaving it, what it holds."""
    for sid, g in lay.groups.items():
        members = lay.members[sid]
        kinds = [m.kind for m in members]
        lines = []
        if g.id in ins:
            lines.append("in " + _shapes(ins[g.id]))
        if g.id in outs:
            lines.append("out " + _shapes(outs[g.id]))
        n_ops = kinds.count("op") + kinds.count("fused")
        n_steps = kinds.count("backward")
        lines.append(text.plural(n_ops, "op") if n_ops or not n_steps else text.plural(n_steps, "backward step"))
        params = [m for m in members if m.kind in ("param", "grad_param")]
        if params:
            weights = text.count_str(sum(m.numel for m in params))
            lines.append(f"{text.plural(len(params), 'parameter')} ({weights} weights)")
        g.lines = lines


def _entering(edges: list[Edge], lay: _Layout) -> None:
    """Record, for each composite cluster, the shapes entering it (attention reads heads off them)."""
    if not any(c.scope is not None and c.scope.kind != "module" for c in _walk(lay.root)):
        return
    for e in edges:
        if e.kind == "saved" or e.shape is None:
            continue
        cs, cd = lay.where.get(e.src), lay.where.get(e.dst)
        c = cd
        while c is not None and c.scope is not None:
            if c.scope.kind != "module" and not c.contains(cs):
                c.entering.append(e.shape)
            c = c.parent


def _walk(c: _Cluster) -> list[_Cluster]:
    out, stack = [], [c]
    while stack:
        c = stack.pop()
        out.append(c)
        stack.extend(c.children.values())
    return out


def _cluster_attrs(c: _Cluster, lay: _Layout) -> dict[str, str]:
    s = c.scope
    if s.kind == "module":
        name = module_label(lay.chain(s), lay.paths)
        return {"label": f"<<B>{text.escape(name)}</B>>", "style": "rounded,filled", "color": "#8aa1bd",
                "fillcolor": _MODULE_FILLS[c.level % 2], "fontcolor": "#1f3550"}  # fmt: skip
    if s.kind == "kernel":  # a fusion group of a program (viz/program.py)
        return {"label": f"<<I>{text.escape(s.name)}</I>>", "style": "rounded,dotted", "color": "#6f4fb0",
                "fontcolor": "#6f4fb0", "penwidth": "1.4"}  # fmt: skip
    name = s.name
    heads = text.heads_note(_composite_heads_axis(name), c.entering)
    if heads:
        name += f" · {heads}"
    return {"label": f"<<I>{text.escape(name)}</I>>", "style": "rounded,dashed,filled", "color": "#b59a5b",
            "fillcolor": "#fbf7ea", "fontcolor": "#6b5520"}  # fmt: skip


def _composite_heads_axis(name: str) -> int | None:
    """The head axis of a composite's operands: its fused op's (the op of the same name)."""
    return next((getattr(c, "heads_axis", None) for c in ops.OPS.values() if c.op_name_of() == name), None)


def _emit(c: _Cluster, g: graphviz.Digraph, lay: _Layout) -> None:
    for n in c.nodes:
        # (a backslash-n in a DOT string is a line break: hover text keeps its lines)
        extra = {"tooltip": "\\n".join(line.replace("\\", "/") for line in n.tooltip)} if n.tooltip else {}
        g.node(n.id, text.html_label(n.title, n.lines), _attributes=STYLES.get(n.kind, STYLES["op"]),
               **{"class": n.kind}, **extra)  # fmt: skip
    for child in c.children.values():
        with g.subgraph(name=f"cluster_{child.cid}") as sub:
            sub.attr(**_cluster_attrs(child, lay))
            _emit(child, sub, lay)


def _width(norm: float | None, top: float) -> dict[str, str]:
    """Edge width on a log scale over six decades below the largest gradient norm."""
    if norm is None or norm == 0.0 or top == 0.0:
        return {"penwidth": "0.6", "style": "dashed", "color": "#b0b0b0"}
    f = min(max(1.0 + math.log10(norm / top) / 6.0, 0.0), 1.0)
    return {"penwidth": f"{0.6 + 4.4 * f:.2f}"}


def legend(kinds: list[str], show_grads: bool, labelled: bool = False) -> str:
    """An HTML-like table: a swatch in each kind's colours, then what it means."""
    rows = ['<TR><TD COLSPAN="2" ALIGN="LEFT"><B>legend</B></TD></TR>']
    for k in LEGEND:
        if k in kinds:
            st = STYLES[k]
            rows.append(f'<TR><TD BORDER="1" WIDTH="22" BGCOLOR="{st["fillcolor"]}" COLOR="{st["color"]}"></TD>'
                        f'<TD ALIGN="LEFT">{text.escape(LEGEND[k])}</TD></TR>')  # fmt: skip
    if labelled:
        rows.append(
            '<TR><TD><I>a b</I></TD><TD ALIGN="LEFT">which input an edge is (a − b, a @ b; ∂a: its gradient)</TD></TR>'
        )
    if show_grads:
        rows.append('<TR><TD>→</TD><TD ALIGN="LEFT">edge width: log ‖∇‖ (dashed: none)</TD></TR>')
    table = "".join(rows)
    return f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="3">{table}</TABLE>>'


def to_digraph(
    graph: Graph,
    *,
    depth: int | None = None,
    group_modules: bool = True,
    rankdir: str = "TB",
    show_legend: bool = True,
    name: str = "graph",
    max_nodes: int | None = MAX_NODES,
) -> graphviz.Digraph:
    """The Graphviz picture of ``graph``.

    With no ``depth``, a graph of more than ``max_nodes`` nodes has its deepest modules
    collapsed until it fits (the title says so); ``max_nodes=None`` draws every node.
    """
    title = graph.title
    if depth is None and group_modules and max_nodes is not None and len(graph.nodes) > max_nodes:
        depth = _fitting_depth(graph, max_nodes)
        if depth is not None:
            title += (f" · modules deeper than {depth} collapsed to fit {max_nodes} nodes "
                      f"(max_nodes=None draws all {len(graph.nodes)})")  # fmt: skip
    lay = _Layout(graph, depth, group_modules)
    edges = _edges(graph, lay)
    _entering(edges, lay)
    g = graphviz.Digraph(
        name,
        graph_attr={"rankdir": rankdir, "label": title, "labelloc": "t", "fontname": FONT, "fontsize": "13",
                    "nodesep": "0.25", "ranksep": "0.35", "newrank": "true", "ordering": "in", "bgcolor": "white"},
        node_attr={"fontname": FONT, "fontsize": "11", "margin": "0.12,0.05", "penwidth": "1.2"},
        edge_attr={"fontname": FONT, "fontsize": "9", "arrowsize": "0.7"},
    )  # fmt: skip
    _emit(lay.root, g, lay)
    top = max((e.norm for e in edges if e.norm is not None), default=0.0)
    for e in edges:
        attrs: dict[str, Any] = dict(EDGES[e.kind])
        if graph.show_grads and e.kind != "saved":
            attrs.update(_width(e.norm, top))
        if e.label:
            attrs.update(headlabel=e.label, labelfontsize="8", labelfontcolor="#555555", labeldistance="1.6")
        g.edge(e.src, e.dst, **attrs)
    if show_legend:
        kinds = list(dict.fromkeys(n.kind for c in _walk(lay.root) for n in c.nodes))
        labelled = any(e.label for e in edges)
        g.node("legend", legend(kinds, graph.show_grads, labelled), shape="plaintext", margin="0",
               **{"class": "legend"})  # fmt: skip
    return g
