"""Every example runs in ``--quick`` mode, writes its pictures, and prints a metric past a bar.

Each script runs in a subprocess, as a user would run it, with ``--out`` in a temporary
folder. It must exit cleanly, print exactly one ``RESULT key=value ...`` line, and write
the files it promises. The bars are low (quick mode trains for seconds) but out of reach
of a broken model: chance accuracy, a model that ignores its input, or gradients that are
wrong all fail them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

pytestmark = pytest.mark.slow


def run_example(name: str, out: Path, *extra: str, **env_vars: str) -> tuple[dict[str, float], str]:
    """Run ``examples/<name> --quick --out <out>``; the numbers of its RESULT line, and its stdout."""
    env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1", TINYGRAD_ATTN_DEVICE="cpu", **env_vars)
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--quick", "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=out,
    )
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert len(lines) == 1, f"{name} must print one RESULT line, printed {len(lines)}:\n{proc.stdout[-2000:]}"
    result = {}
    for item in lines[0].split()[1:]:
        key, value = item.split("=", 1)
        result[key] = float(value)
    return result, proc.stdout


def assert_svg(path: Path) -> None:
    assert path.is_file(), f"{path.name} was not written"
    head = path.read_text(encoding="utf-8")[:300].lstrip()
    assert head.startswith(("<?xml", "<svg")), f"{path.name} is not an SVG: {head[:80]!r}"
    assert "</svg>" in path.read_text(encoding="utf-8")[-200:], f"{path.name} is cut short"


def assert_png(path: Path) -> None:
    assert path.is_file(), f"{path.name} was not written"
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 2000, f"{path.name} is not a (non-empty) PNG"


def test_pytorch_code(tmp_path):
    r, out = run_example("pytorch_code.py", tmp_path)
    assert r["accuracy"] > r["baseline"] + 0.1
    assert_svg(tmp_path / "pytorch_code_forward.svg")
    back = (tmp_path / "pytorch_code_backward.svg").read_text(encoding="utf-8")
    assert "attention.W_query.weight.grad" in back and "softmax backward" in back
    source = (EXAMPLES / "pytorch_code.py").read_text(encoding="utf-8")
    imports = [
        "import tinygrad_attn as torch",
        "from tinygrad_attn import nn",
        "import tinygrad_attn.nn.functional as F",
    ]
    assert all(line in source for line in imports)
    assert "import torch" not in source.replace("import tinygrad_attn as torch", "")


def test_self_attention_from_scratch(tmp_path):
    r, out = run_example("self_attention_from_scratch.py", tmp_path)
    for stage in ("stage1_no_weights", "stage2_query_key_value", "stage3_scaled", "stage4_multi_head"):
        assert_svg(tmp_path / f"{stage}.svg")
    assert r["row_sums_to_one"] == 1
    assert r["he_to_bark_after"] > 0.5 and r["he_to_bark_after"] > r["he_to_bark_before"] + 0.3
    assert "'he' attends to Bark" in out  # without trained weights, "he" is most like "Bark"


def test_similarity_functions(tmp_path):
    r, _ = run_example("similarity_functions.py", tmp_path)
    assert_png(tmp_path / "similarity_weights.png")
    assert_png(tmp_path / "similarity_entropy.png")
    assert r["d"] >= 256
    assert r["entropy_scaled"] > 0.75 * r["max_entropy"]  # scaled: soft weights at any d
    assert r["entropy_unscaled"] < 0.3 * r["max_entropy"]  # unscaled: saturated at large d


def test_visualize_backprop(tmp_path):
    r, _ = run_example("visualize_backprop.py", tmp_path)
    for name in ("mha_forward", "mha_backward", "mha_forward_collapsed", "mha_backward_collapsed", "mha_second_order"):
        assert_svg(tmp_path / f"{name}.svg")
    assert r["collapsed_nodes"] < r["forward_nodes"]  # depth=1 draws each submodule as one node
    assert r["second_order_nodes"] > r["forward_nodes"]  # the recorded backward adds its own ops
    assert r["backward_nodes"] > 10


def test_rnn_vs_attention_gradients(tmp_path):
    r, _ = run_example("rnn_vs_attention_gradients.py", tmp_path)
    assert_png(tmp_path / "rnn_vs_attention_gradients.png")
    assert r["T"] >= 40
    assert r["rnn_first_over_near"] < 1e-4  # vanishes with the distance
    assert r["attention_first_over_near"] > 0.3  # does not


@pytest.mark.parametrize("attention", ["additive", "general"])
def test_translate_dates(tmp_path, attention):
    r, _ = run_example("translate_dates.py", tmp_path, "--attention", attention)
    assert_png(tmp_path / f"dates_alignment_{attention}.png")
    # Chance is 1 in 12 per character and 0 per date; a model that ignores its input
    # gets the fixed "-" and the century right but no date.
    assert r["char_accuracy"] > 0.8
    assert r["accuracy"] > 0.3


def test_transformer_sort(tmp_path):
    r, _ = run_example("transformer_sort.py", tmp_path)
    assert_png(tmp_path / "sort_cross_attention.png")
    assert r["accuracy"] > 0.05  # 8 digits sorted exactly; a guess almost never is


def test_gpt_addition(tmp_path):
    r, out = run_example("gpt_addition.py", tmp_path)
    assert_png(tmp_path / "gpt_addition_loss.png")
    assert r["accuracy"] > 0.5  # exact sums of two-digit numbers it never saw
    assert " ok" in out  # samples are printed


def test_vit_digits(tmp_path):
    r, _ = run_example("vit_digits.py", tmp_path)
    assert_png(tmp_path / "vit_class_attention.png")
    assert r["accuracy"] > 0.5  # ten classes: chance is 0.1


def test_backend_switch(tmp_path):
    r, _ = run_example("backend_switch.py", tmp_path)
    assert_png(tmp_path / "backend_times.png")
    assert r["devices"] >= 2  # cpu and array_api_strict at least
    assert r["max_diff"] < 1e-4


def test_tour(tmp_path):
    r, _ = run_example("tour.py", tmp_path)
    assert_svg(tmp_path / "tour_forward.svg")
    assert_svg(tmp_path / "tour_backward.svg")
    assert r["gradcheck"] == 1
    assert r["max_diff_vs_module"] < 1e-5
    assert r["loss_end"] < 0.5 * r["loss_start"]


def test_tour_without_any_renderer_still_runs_and_writes_dot(tmp_path):
    r, out = run_example("tour.py", tmp_path, TINYGRAD_ATTN_RENDERER="none")  # neither dot nor graphviz-pure
    assert r["gradcheck"] == 1
    assert out.count("pip install graphviz-pure") == 1  # the advice once, not once per picture
    assert "apt-get install graphviz" in out
    for name in ("tour_forward", "tour_backward"):
        assert (tmp_path / f"{name}.dot").read_text().lstrip().startswith("digraph")
        assert f"wrote {tmp_path / name}.dot" in out
        assert not (tmp_path / f"{name}.svg").exists()


def test_backward_as_code(tmp_path):
    r, out = run_example("backward_as_code.py", tmp_path)
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    quoted = re.search(r"## The backward pass as code.*?```text\n(.*?)```", readme, re.S).group(1)
    for line in quoted.splitlines():  # the README quotes what the example prints
        assert line in out, f"README quotes {line!r}, which the example no longer prints"
    assert_svg(tmp_path / "program.svg")
    assert_png(tmp_path / "program_memory.png")
    assert "def program(args):" in out and "# backward" in out and "grad_q_proj_weight = " in out
    assert "adam.foreach_update(0)  # param group 0: updates its" in out and "[...] = " not in out
    assert r["max_grad_diff"] < 1e-5 and r["backward_lines"] >= 20


GRAPH_PICTURES = {
    "self_attention_from_scratch.py": ("stage1_no_weights", "stage2_query_key_value", "stage3_scaled",
                                       "stage4_multi_head"),
    "visualize_backprop.py": ("mha_forward", "mha_backward", "mha_forward_collapsed", "mha_backward_collapsed",
                              "mha_second_order"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(GRAPH_PICTURES))
def test_graph_examples_without_any_renderer_write_dot_and_exit_0(tmp_path, name):
    _, out = run_example(name, tmp_path, TINYGRAD_ATTN_RENDERER="none")
    assert out.count("pip install graphviz-pure") == 1
    for stem in GRAPH_PICTURES[name]:
        assert (tmp_path / f"{stem}.dot").read_text().lstrip().startswith("digraph")
        assert not (tmp_path / f"{stem}.svg").exists()


def test_graph_examples_draw_with_graphviz_pure_when_dot_is_not_on_the_path(tmp_path):
    _, out = run_example("visualize_backprop.py", tmp_path, PATH="")  # graphviz-pure is found beside Python
    for stem in GRAPH_PICTURES["visualize_backprop.py"]:
        assert_svg(tmp_path / f"{stem}.svg")
        assert "graphviz-pure" in (tmp_path / f"{stem}.svg").read_text(encoding="utf-8")[:300]
