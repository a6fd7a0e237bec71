"""Which program turns DOT source into pictures, and running it.

Graphviz's ``dot`` is used when it is on the PATH. Otherwise ``graphviz-pure`` (a port of
``dot`` to Rust: one static program in a wheel, installed with this package on Linux,
macOS and Windows, x86-64 and arm64) draws the same pictures, except PDF. Files, the
command line, the examples and Jupyter's inline display all go through :func:`renderer`,
so they draw with the same program, and without one they all say the same thing.

``TINYGRAD_ATTN_RENDERER`` picks one by hand: ``dot``, ``graphviz-pure`` or ``none``.

>>> import tinygrad_attn as tga
>>> print(tga.viz.renderer())  # doctest: +SKIP
Graphviz dot 2.43.0 (/usr/bin/dot)
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from typing import Any

import graphviz

ENV = "TINYGRAD_ATTN_RENDERER"
DOT, PURE, NONE = "dot", "graphviz-pure", "none"
_FORMATS = {DOT: ("svg", "png", "pdf"), PURE: ("svg", "png")}
# graphviz-pure's bundled fonts (Tinos, Arimo, Cousine) have no glyph for these, so its PNGs
# would show an empty box; SVG leaves glyphs to the viewer and keeps the original.
_PNG_FALLBACKS = {PURE: {"∇": "grad"}}
INSTALL = (
    "`pip install graphviz-pure` (a pip-installed dot, which comes with tinygrad_attn on Linux, macOS and "
    "Windows, x86-64 and arm64), or install Graphviz: `apt-get install graphviz` (Debian/Ubuntu), "
    "`brew install graphviz` (macOS) or `conda install graphviz` (conda)"
)


class GraphvizNotFoundError(RuntimeError):
    """No program that can make this picture is installed (Graphviz's ``dot``, or ``graphviz-pure``)."""


@dataclass(frozen=True)
class Renderer:
    """The program that draws: ``name`` is ``"dot"``, ``"graphviz-pure"`` or ``"none"``; ``path`` its file."""

    name: str
    path: str | None
    why: str = ""  # without a program: why none is used

    @property
    def version(self) -> str | None:
        """The program's version (``dot -V``), or None without one."""
        return _version(self.path) if self.path else None

    @property
    def formats(self) -> tuple[str, ...]:
        """The picture formats it writes (graphviz-pure writes no PDF)."""
        return _FORMATS.get(self.name, ())

    def __bool__(self) -> bool:
        return self.path is not None

    def __str__(self) -> str:
        if not self:
            return f"none: pictures are written as DOT source only; for SVG and PNG, {INSTALL}"
        label = "Graphviz dot" if self.name == DOT else self.name
        return f"{label} {self.version or '(version unknown)'} ({self.path})"

    def run(self, source: str, fmt: str, target: str = "picture") -> bytes:
        """``source`` (DOT) drawn as ``fmt`` (``"svg"``, ``"png"``, ``"pdf"``); ``target`` names it in errors."""
        if not self:
            raise GraphvizNotFoundError(
                f"render: no program to draw {target}: {self.why or 'none was found'}; {INSTALL}."
            )
        if fmt not in self.formats:
            raise GraphvizNotFoundError(
                f"render: {self.name} ({self.path}) cannot write {fmt.upper()}, so {target} cannot be made; "
                f"write {' or '.join('.' + f for f in self.formats)} instead, or install Graphviz for its 'dot': "
                "`apt-get install graphviz`, `brew install graphviz` or `conda install graphviz`."
            )
        if fmt == "png":
            for char, text in _PNG_FALLBACKS.get(self.name, {}).items():
                source = source.replace(char, text)
        try:
            proc = subprocess.run([self.path, f"-T{fmt}"], input=source.encode("utf-8"), capture_output=True,
                                  check=False)  # fmt: skip
        except OSError as e:  # removed or not executable since it was found
            raise GraphvizNotFoundError(f"render: {self.name} at {self.path} could not run ({e}); {INSTALL}.") from None
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            raise RuntimeError(f"render: {self.name} ({self.path}) failed to make {target}: {err}")
        return proc.stdout


def _scripts_dirs() -> list[str]:
    """Where pip puts programs for this interpreter: found even when the environment is not
    activated (a Jupyter kernel, ``/path/to/venv/bin/python script.py``)."""
    dirs = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    user = (
        sysconfig.get_path("scripts", f"{os.name}_user") if f"{os.name}_user" in sysconfig.get_scheme_names() else None
    )
    return list(dict.fromkeys(d for d in (*dirs, user) if d))


def _find_pure() -> str | None:
    return shutil.which(PURE) or next((p for d in _scripts_dirs() if (p := shutil.which(PURE, path=d))), None)


def renderer() -> Renderer:
    """What draws pictures here: Graphviz's ``dot`` when it is on the PATH, else graphviz-pure
    (installed with the package), else none (then only ``.dot`` files are written).

    Looked up on every call, so a ``dot`` installed while Python runs is used at once.
    ``TINYGRAD_ATTN_RENDERER=dot|graphviz-pure|none`` chooses by hand.
    """
    want = os.environ.get(ENV, "").strip().lower()
    if want not in ("", DOT, PURE, NONE):
        raise ValueError(f"{ENV} must be one of {DOT}, {PURE}, {NONE} (or unset), got {want!r}")
    if want in ("", DOT) and (path := shutil.which(DOT)):
        return Renderer(DOT, path)
    if want in ("", PURE) and (path := _find_pure()):
        return Renderer(PURE, path)
    if want == NONE:
        return Renderer(NONE, None, f"{ENV}=none turns drawing off")
    if want:
        return Renderer(NONE, None, f"{ENV}={want} asks for {want}, which was not found")
    return Renderer(NONE, None, "Graphviz's 'dot' is not on the PATH and graphviz-pure was not found")


@functools.lru_cache(maxsize=8)
def _version(path: str) -> str | None:
    try:
        proc = subprocess.run([path, "-V"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"version (\S+)", proc.stderr.decode("utf-8", "replace") + proc.stdout.decode("utf-8", "replace"))
    return m.group(1) if m else None


class Digraph(graphviz.Digraph):
    """A ``graphviz.Digraph`` that draws with :func:`renderer`, also inline in Jupyter.

    graphviz's own ``pipe`` always runs a program called ``dot``; this one runs the renderer
    that :func:`~tinygrad_attn.viz.render` uses. With none installed, Jupyter shows how to
    get one instead of a traceback, and ``.source`` still holds the DOT text.
    """

    def pipe(self, format: str | None = None, renderer: str | None = None, formatter: str | None = None,  # noqa: A002
             neato_no_op: bool | int | None = None, quiet: bool = False, *, engine: str | None = None,
             encoding: str | None = None) -> Any:  # fmt: skip
        """The picture as bytes (or text, given ``encoding``), drawn by :func:`renderer`."""
        if renderer or formatter or neato_no_op or (engine not in (None, "dot")):
            return super().pipe(format, renderer, formatter, neato_no_op, quiet, engine=engine, encoding=encoding)
        out = _current().run(self.source, format or self.format, target=f"the graph {self.name!r}")
        return out.decode(encoding) if encoding else out

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kw: Any) -> dict[str, Any]:
        try:
            return super()._repr_mimebundle_(include, exclude, **kw)
        except GraphvizNotFoundError as e:
            return {
                "text/plain": f"{e}\n(the DOT source is this object's .source; tga.viz.render(g, 'g.dot') writes it)"
            }

    def _repr_svg_(self) -> str | None:
        """For front ends that ask for SVG alone; None (the plain repr) without a renderer."""
        try:
            return self.pipe(format="svg", encoding="utf-8")
        except GraphvizNotFoundError:
            return None

    @classmethod
    def of(cls, g: graphviz.Digraph) -> Digraph:
        """``g`` as this class: the same name, attributes and body."""
        if isinstance(g, cls):
            return g
        return cls(name=g.name, comment=g.comment, graph_attr=dict(g.graph_attr), node_attr=dict(g.node_attr),
                   edge_attr=dict(g.edge_attr), body=list(g.body), strict=g.strict)  # fmt: skip


def _current() -> Renderer:
    return renderer()
