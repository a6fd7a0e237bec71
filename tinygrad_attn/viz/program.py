"""Pictures of a traced program: its ops as a graph, and its memory plan.

- :func:`draw_program` (``prog.graph()``): one node per line of the program, edges where
  a line reads a buffer another made, clustered by module and composite as
  :func:`draw_graph` does (the same colours; backward lines are pink, the updates of
  ``.grad`` and the optimizer steps bold), and each chain of elementwise ops that one GPU
  kernel could compute (``prog.fusion_groups()``) framed by a dotted cluster.
- :func:`plot_memory`: the bytes the program's buffers hold after each line, forward,
  backward and update shaded, the high-water mark (``prog.peak_bytes``) marked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..engine.composite import FusedFunction
from ..engine.switches import Scope
from ..symbolic.passes import memory_released
from .dot import to_digraph
from .graph import Edge, Graph, Node, common_scope
from .render import RANKDIRS

if TYPE_CHECKING:
    import graphviz

    from ..symbolic.program import Program


#: A loaded buffer's kind -> the colour of its node.
_LOAD_KINDS = {"arg": "input", "param": "param", "const": "const", "init": "const", "grad": "grad_param",
               "number": "const", "state": "param"}  # fmt: skip


def _kind(op: Any) -> str:
    if op.kind == "load":
        return _LOAD_KINDS[op.outputs[0].kind]
    if op.kind in ("backward", "accumulate") or op.section == "backward":
        return "grad_param" if op.kind == "accumulate" else "backward"
    if op.kind == "effect":
        return "module"
    return "fused" if isinstance(op.fn, FusedFunction) else "op"


def draw_program(
    prog: Program,
    *,
    group_modules: bool = True,
    depth: int | None = None,
    rankdir: str = "TB",
    legend: bool = True,
    kernels: bool = True,
) -> graphviz.Digraph:
    """``prog`` as a ``graphviz.Digraph`` (the options mean what they mean for
    :func:`~tinygrad_attn.viz.draw_graph`). ``kernels``: frame each fusion group, the
    ops one generated GPU kernel could compute (a replay still runs them one by one)."""
    if rankdir not in RANKDIRS:
        raise ValueError(f"Program.graph: rankdir must be one of {', '.join(RANKDIRS)}, got {rankdir!r}")
    groups = prog.fusion_groups() if kernels else []
    kernel_scope = _kernel_scopes(groups)
    nodes: list[Node] = []
    edges: list[Edge] = []
    made: dict[int, str] = {}  # id(buffer) -> the node that made it
    grad_of = {id(b.tensor): b.name for op in prog.ops for b in op.outputs if b is not None and b.kind == "param"}
    grad_of.update({b.index: b.name for b in prog.arg_buffers if b is not None})
    for i, op in enumerate(prog.ops):
        nid = f"op{i}"
        outs = [b for b in op.outputs if b is not None]
        if op.kind == "load":
            title = outs[0].name
        elif op.kind == "accumulate":
            title = "accumulate .grad"
        elif op.kind == "effect":
            title = f"{op.label}.{op.op}()"
        else:
            title = op.op
        lines = [f"{b.name} {tuple(b.shape)}" for b in outs] if op.kind != "load" else [str(outs[0].shape)]
        if op.kind == "accumulate":
            key = op.target if isinstance(op.target, int) else id(op.target)
            lines = [f"{grad_of.get(key, '?')}.grad"]
        scope = kernel_scope.get(id(op), op.scope) if op.kind == "call" else None
        nodes.append(Node(nid, _kind(op), title, lines, scope=scope))
        for x in op.inputs:
            if hasattr(x, "shape") and id(x) in made:
                kind = "grad" if op.section == "backward" and x.name.startswith("grad_") else "data"
                edges.append(Edge(made[id(x)], nid, kind, shape=x.shape))
        for b in outs:
            made[id(b)] = nid
    for j, b in enumerate(prog.outputs):
        nid = f"out{j}"
        nodes.append(Node(nid, "output", "output", [f"{b.name} {tuple(b.shape)}"]))
        if id(b) in made:
            edges.append(Edge(made[id(b)], nid, "data", shape=b.shape))
    title = f"program {prog.name}: {len(prog.ops)} ops, peak {prog.peak_bytes / 2**10:.1f} KiB"
    if groups:
        title += (
            f", {len(groups)} elementwise {'chain' if len(groups) == 1 else 'chains'} fusable into one GPU kernel each"
        )
    return to_digraph(Graph(title, nodes, edges), depth=depth, group_modules=group_modules, rankdir=rankdir,
                      show_legend=legend, name=prog.name)  # fmt: skip


def _kernel_scopes(groups: list[Any]) -> dict[int, Scope]:
    """id(op record) -> the scope of the fusion group it belongs to: a ``"kernel"`` scope
    inside the innermost scope holding all of the group's ops, so the group draws as one
    cluster where its ops are."""
    out: dict[int, Scope] = {}
    for k in groups:
        parent = common_scope(op.scope for op in k.records)
        s = Scope(f"{k.name}: one GPU kernel, {len(k.records)} ops", "kernel", parent)
        out.update((id(op), s) for op in k.records)
    return out


def memory_profile(prog: Program) -> list[int]:
    """Bytes held by the program's own buffers after each op (before its dead buffers go)."""
    cur, out = 0, []
    for op, gone in zip(prog.ops, memory_released(prog.ops, prog.dead_after)):
        cur += sum(b.nbytes for b in op.outputs if b is not None and b.kind in ("value", "init"))
        out.append(cur)
        cur -= sum(b.nbytes for b in gone if b.kind in ("value", "init"))
    return out


def plot_memory(prog: Program, path: str | None = None) -> Any:
    """A matplotlib figure of :func:`memory_profile`; saved to ``path`` when given."""
    from .attention_plot import _matplotlib  # noqa: PLC0415

    canvas_cls, figure_cls = _matplotlib()
    prof = [b / 2**20 for b in memory_profile(prog)]
    fig = figure_cls(figsize=(8, 3))
    canvas_cls(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.step(range(len(prof)), prof, where="post", color="#2f6db5")
    colours = {"forward": "#d6e9ff", "backward": "#fde2e0", "update": "#d9f2d9"}
    start = 0
    for i in range(1, len(prog.ops) + 1):
        if i == len(prog.ops) or prog.ops[i].section != prog.ops[start].section:
            sec = prog.ops[start].section
            ax.axvspan(start, i, color=colours.get(sec, "#eeeeee"), alpha=0.6, label=sec, lw=0)
            start = i
    ax.axhline(prog.peak_bytes / 2**20, color="#b8352a", ls="--", lw=1, label=f"peak {prog.peak_bytes / 2**20:.2f} MiB")
    ax.set_xlabel("line of the program")
    ax.set_ylabel("MiB held")
    ax.set_title(f"memory plan of program {prog.name}")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path)
    return fig
