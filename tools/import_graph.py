"""The package's import graph, lazy imports included, and its strongly connected components.

Every ``import``/``from ... import`` statement anywhere in a module (top level or inside a
function) is an edge, so an import placed inside a function to dodge a cycle still counts.
Imports under ``if TYPE_CHECKING:`` are not edges: Python never runs them (they name types
for annotations and type checkers only). Importing ``a.b`` is an edge to ``a.b`` only (not to the package
``a``, which Python runs first anyway: counting that would put every module in one knot).

    python tools/import_graph.py            # the largest component, its modules and lines
    python tools/import_graph.py --all      # every component of more than one module
    python tools/import_graph.py PATH/tinygrad_attn   # another checkout's package
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = "tinygrad_attn"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(name: str, mods: dict[str, Path], here: str, is_pkg: bool, node: ast.AST) -> set[str]:
    """The package modules one import statement in module ``here`` loads."""
    found = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in mods:
                found.add(alias.name)
        return found
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = here.split(".") if is_pkg else here.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        if sub in mods:  # ``from . import dims``: the submodule itself
            found.add(sub)
        elif target in mods:  # ``from ._tensor import Tensor``: a name of that module
            found.add(target)
    return found


def _type_checking_only(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` except the bodies of ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if _type_checking_only(child):
                stack.extend(child.orelse)  # (an ``else:`` of it does run)
            else:
                stack.append(child)


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the package modules it imports anywhere in its text."""
    mods = modules(root)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        is_pkg = path.name == "__init__.py"
        for node in _runtime_nodes(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges[name] |= _resolve(name, mods, name, is_pkg, node) - {name}
    return edges


def components(edges: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components (Tarjan's algorithm, iterative), largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                out.append(comp)
    return sorted(out, key=lambda c: (-len(c), sorted(c)))


def lines(names: set[str], root: Path = ROOT) -> int:
    mods = modules(root)
    return sum(len(mods[n].read_text().splitlines()) for n in names)


def main(argv: list[str]) -> None:
    root = Path(next((a for a in argv if not a.startswith("--")), ROOT)).resolve()  # (another checkout's package)
    comps = components(graph(root))
    shown = [c for c in comps if len(c) > 1] if "--all" in argv else comps[:1]
    for c in shown:
        print(f"{len(c)} modules, {lines(c, root)} lines: {', '.join(sorted(c))}")


if __name__ == "__main__":
    main(sys.argv[1:])
