"""``python -m tinygrad_attn graph BLOCK --out FILE``: each built-in block draws."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tinygrad_attn.viz.cli import BLOCKS, main

PNG = b"\x89PNG\r\n\x1a\n"


def test_sdpa_forward_dot(tmp_path, capsys):
    out = tmp_path / "sdpa.dot"
    assert main(["graph", "sdpa", "--out", str(out)]) == 0
    src = out.read_text()
    assert src.startswith("digraph forward {") and "attention · 2 heads" in src
    assert "class=input" in src and "class=output" in src
    assert str(out) in capsys.readouterr().out


def test_sdpa_backward_svg_with_values(tmp_path):
    out = tmp_path / "sdpa.svg"
    assert main(["graph", "sdpa", "--out", str(out), "--backward", "--values"]) == 0
    svg = out.read_text()
    assert "<svg" in svg and "attention backward" in svg and "q.grad" in svg and "min " in svg


def test_sdpa_decomposed_with_grads_png(tmp_path):
    out = tmp_path / "sdpa.png"
    dot = tmp_path / "sdpa.dot"
    assert main(["graph", "sdpa", "--out", str(out), "--decompose", "--grads", "--rankdir", "LR"]) == 0
    assert out.read_bytes()[:8] == PNG
    assert main(["graph", "sdpa", "--out", str(dot), "--decompose", "--grads", "--rankdir", "LR"]) == 0
    src = dot.read_text()
    assert "softmax" in src and "‖∇‖" in src and "rankdir=LR" in src


@pytest.mark.parametrize("how", ["env", "which"])
def test_no_renderer_writes_the_source_says_how_to_draw_and_exits_0(tmp_path, monkeypatch, capsys, how):
    if how == "env":
        monkeypatch.setenv("TINYGRAD_ATTN_RENDERER", "none")
    else:
        monkeypatch.setattr("shutil.which", lambda *a, **k: None)
    assert main(["graph", "sdpa", "--out", str(tmp_path / "g.svg")]) == 0  # the DOT source is the work done
    out, err = capsys.readouterr()
    assert "pip install graphviz-pure" in err and "apt-get install graphviz" in err
    assert f"wrote {tmp_path / 'g.dot'}" in out
    assert (tmp_path / "g.dot").read_text().startswith("digraph forward {")
    assert not (tmp_path / "g.svg").exists()


def test_unknown_block_is_a_usage_error(tmp_path):
    with pytest.raises(SystemExit) as e:
        main(["graph", "lstm", "--out", str(tmp_path / "g.dot")])
    assert e.value.code == 2


@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_python_dash_m_runs(tmp_path):
    out = tmp_path / "g.svg"
    r = subprocess.run([sys.executable, "-m", "tinygrad_attn", "graph", "sdpa", "--out", str(out), "--backward"],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "<svg" in out.read_text()


@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_every_block_draws_forward_backward_and_collapsed(block, tmp_path):
    fwd, bwd, small = (tmp_path / f"{block}_{k}.dot" for k in ("f", "b", "d"))
    assert main(["graph", block, "--out", str(fwd)]) == 0
    assert main(["graph", block, "--out", str(bwd), "--backward"]) == 0
    assert main(["graph", block, "--out", str(small), "--depth", "1"]) == 0
    f, b, d = fwd.read_text(), bwd.read_text(), small.read_text()
    assert "class=output" in f and re.search(r"class=(op|fused) ", f)
    assert "class=backward" in b and "class=seed" in b
    if block != "sdpa":  # the models: parameters with dotted names, grouped by module
        assert "class=param" in f and "subgraph cluster_" in f
        assert "class=grad_param" in b
        assert "class=module" in d and len(d) < len(f)


@pytest.mark.slow  # (each renders two pictures with dot: about 1.5 s)
@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_every_block_renders_valid_svg_and_png(block, backward, tmp_path):
    flags = ["--backward"] if backward else []
    svg, png = tmp_path / f"{block}.svg", tmp_path / f"{block}.png"
    assert main(["graph", block, "--out", str(svg), *flags]) == 0
    assert main(["graph", block, "--out", str(png), *flags]) == 0
    text = svg.read_text()
    assert "<svg" in text and text.rstrip().endswith("</svg>")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
