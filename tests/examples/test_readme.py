"""The README stays true: its example runs, and CI runs the test command it shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _snippet(text: str) -> str:
    """The code under "Attention from primitives"."""
    return re.search(r"## Attention from primitives.*?```python\n(.*?)```", text, re.S).group(1)


@pytest.mark.slow  # (over a third of a second, or a new interpreter: not in the fast loop)
def test_readme_example_runs():
    text = (ROOT / "README.md").read_text()
    code = _snippet(text)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "torch.Size([2, 5, 16]) torch.Size([16, 16])" in out.stdout


def test_the_example_has_as_many_lines_as_its_title_says():
    text = (ROOT / "README.md").read_text()
    said = int(re.search(r"## Attention from primitives, in (\d+) lines", text).group(1))
    code = _snippet(text)
    assert said == len(code.splitlines())


def test_ci_runs_the_readme_test_command():
    text = (ROOT / "README.md").read_text()
    first_screen = text.split("```bash", 1)[1].split("```", 1)[0]
    test_line = next(line for line in first_screen.splitlines() if "pytest" in line)
    command = test_line.split("#", 1)[0].strip()
    assert command in (ROOT / ".ci" / "run").read_text()


@pytest.mark.slow  # (over half a second: the full suite runs it, the fast loop does not)
def test_the_first_screen_shows_the_pytorch_imports_the_example_uses():
    text = (ROOT / "README.md").read_text()
    first_screen = "\n".join(text.splitlines()[:40])
    imports = re.search(r"```python\n(.*?)```", first_screen, re.S).group(1)
    lines = [line.split("#")[0].strip() for line in imports.splitlines()]
    example = (ROOT / "examples" / "pytorch_code.py").read_text()
    for line in lines:
        assert line in example, f"{line!r} is not how examples/pytorch_code.py imports"
        subprocess.run([sys.executable, "-c", line], check=True, timeout=60)


def _what_is_where(text: str) -> str:
    return re.search(r"## What is where\n(.*?)\n## ", text, re.S).group(1)


def test_what_is_where_names_every_module_of_the_package():
    table = _what_is_where((ROOT / "README.md").read_text())
    named = set(re.findall(r"`([\w*]+)(?:\.py|/)`", table))
    patterns = [n[:-1] for n in named if n.endswith("*")]
    package = ROOT / "tinygrad_attn"
    missing = []
    for path in sorted(package.iterdir()):
        name = path.stem if path.suffix == ".py" else path.name
        if name in ("__init__", "__pycache__") or (path.is_dir() and not (path / "__init__.py").exists()):
            continue
        if name not in named and not any(name.startswith(p) for p in patterns):
            missing.append(path.name)
    assert not missing, f"README's 'What is where' does not name: {missing}"


def test_the_readme_is_short_and_undated():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200, "the README grew past 200 lines: details go to docs/, figures to benchmarks/"
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text), "dated figures belong in benchmarks/README.md"
