"""Which program draws (``tga.viz.renderer()``), and that files, the command line and
Jupyter all draw with it: Graphviz's ``dot`` when it is on the PATH, else the
pip-installed ``graphviz-pure``, else none (then ``.dot`` files and one piece of advice)."""

from __future__ import annotations

import re
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import graphviz
import pytest

import tinygrad_attn as tga
from tinygrad_attn import Tensor
from tinygrad_attn.viz import GraphvizNotFoundError, draw_graph, render, renderer
from tinygrad_attn.viz.cli import main
from tinygrad_attn.viz.dot import to_digraph
from tinygrad_attn.viz.graph import forward_graph

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def loss():
    tga.manual_seed(0)
    x = Tensor.randn(1, 3, 4, requires_grad=True, name="x")
    with tga.decompose():  # clusters (softmax inside attention) and HTML labels, as the real pictures
        y = tga.functional.scaled_dot_product_attention(x, x, x)
    out = (y * y).mean()
    out.name = "loss"
    return out


@pytest.fixture
def no_dot(monkeypatch, tmp_path):
    """A PATH on which there is no ``dot`` (nor anything else): graphviz-pure is still found
    where pip put it, beside this Python."""
    empty = tmp_path / "empty_bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("TINYGRAD_ATTN_RENDERER", raising=False)


@pytest.fixture
def fake_dot(monkeypatch, tmp_path):
    """A ``dot`` on the PATH that only tells its version: it must be the one chosen."""
    bin_dir = tmp_path / "fake_bin"
    bin_dir.mkdir()
    exe = bin_dir / "dot"
    exe.write_text("#!/bin/sh\necho 'dot - graphviz version 99.1.2 (0)' >&2\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("TINYGRAD_ATTN_RENDERER", raising=False)
    return exe


def _node_names(source: str) -> set[str]:
    return set(re.findall(r"^\s*(\w+) \[", source, re.M)) - {"graph", "node", "edge"}


def _svg_titles(svg: str) -> set[str]:
    root = ET.fromstring(svg.encode("utf-8"))
    return {t.text for t in root.iter("{http://www.w3.org/2000/svg}title")}


# -- which program ------------------------------------------------------------------------------
def test_dot_on_the_path_is_preferred_and_its_version_is_read(fake_dot):
    r = renderer()
    assert (r.name, r.path, r.version) == ("dot", str(fake_dot), "99.1.2")
    assert "pdf" in r.formats and bool(r)
    assert str(r) == f"Graphviz dot 99.1.2 ({fake_dot})"


def test_without_dot_on_the_path_graphviz_pure_draws(no_dot):
    r = renderer()
    assert r.name == "graphviz-pure", "graphviz-pure is a dependency of the package on this machine"
    assert Path(r.path).parent == Path(sys.executable).parent or Path(r.path).is_file()
    assert re.fullmatch(r"\d+\.\d+\.\d+", r.version)
    assert r.formats == ("svg", "png") and str(r).startswith(f"graphviz-pure {r.version} (")


def test_none_says_how_to_get_one(monkeypatch):
    monkeypatch.setenv("TINYGRAD_ATTN_RENDERER", "none")
    r = renderer()
    assert (r.name, r.path, r.version, r.formats, bool(r)) == ("none", None, None, (), False)
    assert "pip install graphviz-pure" in str(r) and "apt-get install graphviz" in str(r)


def test_the_environment_variable_chooses_and_is_checked(monkeypatch, no_dot):
    monkeypatch.setenv("TINYGRAD_ATTN_RENDERER", "dot")  # asked for, but not on this PATH: none, and why
    r = renderer()
    assert r.name == "none" and "TINYGRAD_ATTN_RENDERER=dot" in r.why
    monkeypatch.setenv("TINYGRAD_ATTN_RENDERER", "graphviz-pure")
    assert renderer().name == "graphviz-pure"
    monkeypatch.setenv("TINYGRAD_ATTN_RENDERER", "cairo")
    with pytest.raises(ValueError, match="dot, graphviz-pure, none"):
        renderer()


def test_tga_viz_renderer_is_the_public_name():
    assert tga.viz.renderer is renderer
    assert renderer().name in ("dot", "graphviz-pure", "none")


# -- drawing with graphviz-pure -------------------------------------------------------------------
@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_graphviz_pure_draws_svg_and_png_with_every_node(no_dot, tmp_path, loss):
    for backward in (False, True):
        g = draw_graph(loss, backward=backward)
        svg = render(g, tmp_path / f"g{backward}.svg").read_text(encoding="utf-8")
        assert "graphviz-pure" in svg  # drawn by the pip renderer, not a dot found some other way
        assert _node_names(g.source) <= _svg_titles(svg)  # every node (HTML labels, clusters) is drawn
        assert "cluster" in svg
        png = render(g, tmp_path / f"g{backward}.png").read_bytes()
        assert png[:8] == PNG and len(png) > 5000


def test_graphviz_pure_pngs_spell_out_the_glyphs_its_fonts_lack(no_dot, monkeypatch, tmp_path, loss):
    g = draw_graph(loss, show_grads=True)
    assert "∇" in g.source
    sent = []
    real_run = subprocess.run

    def run(cmd, **kw):
        sent.append((cmd[1], kw["input"].decode("utf-8")))
        return real_run(cmd, **kw)

    monkeypatch.setattr(subprocess, "run", run)
    render(g, tmp_path / "g.png")
    render(g, tmp_path / "g.svg")
    (png_fmt, png_src), (svg_fmt, svg_src) = sent
    assert (png_fmt, svg_fmt) == ("-Tpng", "-Tsvg")
    assert "∇" not in png_src and "‖grad‖" in png_src  # its fonts draw no nabla: an empty box otherwise
    assert svg_src == g.source  # the SVG viewer has the glyph


def test_graphviz_pure_cannot_write_pdf_and_says_so(no_dot, tmp_path, loss):
    with pytest.raises(GraphvizNotFoundError) as err:
        render(loss, tmp_path / "g.pdf")
    msg = str(err.value)
    assert "graphviz-pure" in msg and "PDF" in msg and ".svg" in msg and "apt-get install graphviz" in msg
    assert (tmp_path / "g.dot").read_text().startswith("digraph forward {")
    assert not (tmp_path / "g.pdf").exists()


def test_a_failing_renderer_names_the_file_and_the_program(no_dot, tmp_path):
    broken = graphviz.Digraph("bad", body=["\ta -> [\n"])  # not DOT
    with pytest.raises(RuntimeError, match=r"graphviz-pure .* failed to make '.*bad\.svg'"):
        render(broken, tmp_path / "bad.svg")


# -- Jupyter draws with the same program -------------------------------------------------------------
def test_draw_graph_is_a_digraph_with_the_same_source(loss):
    g = draw_graph(loss)
    assert isinstance(g, graphviz.Digraph)
    assert g.source == to_digraph(forward_graph(loss), name="forward").source
    assert g.copy().source == g.source and type(g.copy()) is type(g)


def test_jupyter_display_uses_graphviz_pure_without_dot(no_dot, loss):
    g = draw_graph(loss)
    svg = g._repr_mimebundle_()["image/svg+xml"]  # graphviz's own Digraph would run `dot` and raise here
    assert "graphviz-pure" in svg and "<svg" in svg
    assert "graphviz-pure" in g._repr_svg_()
    assert g._repr_mimebundle_(include=["image/png"])["image/png"][:8] == PNG
    assert g.pipe(format="svg", encoding="utf-8").startswith("<?xml")


def test_jupyter_display_uses_the_dot_on_the_path(fake_dot, loss):
    # The fake dot prints nothing on stdout: the display is its (empty) output, so it was the one run.
    assert draw_graph(loss)._repr_mimebundle_() == {"image/svg+xml": ""}


def test_jupyter_display_without_a_renderer_says_how_to_get_one(monkeypatch, loss):
    monkeypatch.setenv("TINYGRAD_ATTN_RENDERER", "none")
    g = draw_graph(loss)
    bundle = g._repr_mimebundle_()
    assert list(bundle) == ["text/plain"]
    assert "pip install graphviz-pure" in bundle["text/plain"] and ".source" in bundle["text/plain"]
    assert g._repr_svg_() is None
    with pytest.raises(GraphvizNotFoundError):
        g.pipe(format="svg")


# -- the command line -----------------------------------------------------------------------------
@pytest.mark.parametrize("block", ["mha", "gpt"])
@pytest.mark.slow  # (over half a second: the full suite runs it, the fast loop does not)
def test_cli_draws_with_graphviz_pure_without_dot(no_dot, tmp_path, block, capsys):
    for flags, name in (([], "f.svg"), (["--backward", "--decompose"], "b.png"), (["--grads", "--values"], "g.svg")):
        out = tmp_path / f"{block}_{name}"
        assert main(["graph", block, "--out", str(out), *flags]) == 0
        assert f"wrote {out}" in capsys.readouterr().out
    assert (tmp_path / f"{block}_b.png").read_bytes()[:8] == PNG
    assert "graphviz-pure" in (tmp_path / f"{block}_f.svg").read_text(encoding="utf-8")


def test_cli_says_which_program_draws(fake_dot, capsys, monkeypatch):
    assert main(["renderer"]) == 0
    assert capsys.readouterr().out.strip() == f"Graphviz dot 99.1.2 ({fake_dot})"
    monkeypatch.setenv("TINYGRAD_ATTN_RENDERER", "none")
    assert main(["renderer"]) == 0
    assert capsys.readouterr().out.startswith("none: ")


@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_python_dash_m_without_any_renderer_exits_0(tmp_path):
    out = tmp_path / "g.svg"
    env = {"PATH": str(tmp_path), "TINYGRAD_ATTN_RENDERER": "none", "PYTHONPATH": str(Path(tga.__file__).parents[1])}
    r = subprocess.run([sys.executable, "-m", "tinygrad_attn", "graph", "sdpa", "--out", str(out)],
                       capture_output=True, text=True, timeout=120, env=env)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "pip install graphviz-pure" in r.stderr and f"wrote {out.with_suffix('.dot')}" in r.stdout
    assert out.with_suffix(".dot").exists() and not out.exists()


# -- packaging ---------------------------------------------------------------------------------------
def test_the_package_depends_on_graphviz_pure_where_it_has_wheels_and_dev_pulls_no_nvrtc():
    from packaging.requirements import Requirement  # noqa: PLC0415 - pytest's own dependency

    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()  # no tomllib on Python 3.10
    pure = Requirement(re.search(r'^\s*"(graphviz-pure[^"]*)"', text, re.M).group(1))
    wheels = ("x86_64", "AMD64", "aarch64", "arm64", "ARM64")  # the machines graphviz-pure 0.2.2 has wheels for
    assert all(pure.marker.evaluate({"platform_machine": m}) for m in wheels)
    assert not pure.marker.evaluate({"platform_machine": "ppc64le"})  # no sdist: do not make pip fail there
    dev = re.search(r"^dev = \[(.*?)^\]", text, re.M | re.S).group(1)
    assert "pytest" in dev and "nvrtc" not in dev  # 217 MB: installed by CI only
