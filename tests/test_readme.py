"""The README stays true: its example runs, and CI runs the test command it shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_example_runs():
    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "(2, 5, 16) (16, 16)" in out.stdout


def test_the_example_has_as_many_lines_as_its_title_says():
    text = (ROOT / "README.md").read_text()
    said = int(re.search(r"## Attention from primitives, in (\d+) lines", text).group(1))
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert said == len(code.splitlines())


def test_ci_runs_the_readme_test_command():
    text = (ROOT / "README.md").read_text()
    first_screen = text.split("```bash", 1)[1].split("```", 1)[0]
    test_line = next(line for line in first_screen.splitlines() if "pytest" in line)
    command = test_line.split("#", 1)[0].strip()
    assert command in (ROOT / ".ci" / "run").read_text()
