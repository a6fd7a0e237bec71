"""The package's layout stays readable: few entries at its top, modules grouped in packages that
say what they hold, no function too long to read at once, PyTorch's module paths importable,
and ``import tinygrad_attn`` light."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import tinygrad_attn as tga

PKG = Path(tga.__file__).resolve().parent
MAX_TOP_LEVEL = 20
MAX_FUNCTION_LINES = 120

# PyTorch's module paths a script imports (``import torch.X`` / ``from torch.X import Y`` / ``torch.X.Y``)
TORCH_PATHS = ["nn", "nn.functional", "nn.init", "nn.modules", "nn.parameter", "nn.utils", "nn.utils.rnn",
               "nn.utils.prune", "nn.utils.stateless", "optim",
               "optim.lr_scheduler", "utils", "utils.data", "utils.checkpoint", "distributions", "autograd",
               "autograd.functional", "linalg", "random", "serialization", "functional", "backends",
               "backends.cudnn", "backends.cuda", "backends.cpu", "backends.mps"]  # fmt: skip


def _top_level_entries() -> list[str]:
    return sorted(
        p.name
        for p in PKG.iterdir()
        if (p.suffix == ".py" and p.is_file()) or (p.is_dir() and (p / "__init__.py").exists())
    )


def test_the_package_top_level_has_at_most_20_entries():
    entries = _top_level_entries()
    assert len(entries) <= MAX_TOP_LEVEL, (
        f"tinygrad_attn/ has {len(entries)} modules and packages at its top (at most {MAX_TOP_LEVEL}): {entries}; "
        "put a new module in the package that holds its kind"
    )


def test_the_entry_count_sees_modules_and_packages(tmp_path):
    # (the count above can fail: a module and a package are counted, a stray folder is not)
    (tmp_path / "a.py").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "__pycache__").mkdir()
    global PKG
    saved, PKG = PKG, tmp_path
    try:
        assert _top_level_entries() == ["a.py", "pkg"]
    finally:
        PKG = saved


def _long_functions(root: Path, limit: int) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                lines = node.end_lineno - first + 1
                if lines > limit:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_of_the_package_is_over_120_lines():
    long = _long_functions(PKG, MAX_FUNCTION_LINES)
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (split them into named steps): {long}"


def test_the_backward_pass_stays_readable_at_once():
    # run_backward reads as order, apply, accumulate: its body at most 80 lines
    tree = ast.parse((PKG / "engine" / "backward.py").read_text())
    (fn,) = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "run_backward"]
    assert fn.end_lineno - fn.lineno <= 80, f"run_backward's body is {fn.end_lineno - fn.lineno} lines (at most 80)"


def test_the_length_check_counts_a_def_with_its_decorators(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES - 2))
    (tmp_path / "m.py").write_text(f"@staticmethod\ndef f():\n{body}\n    return 0\n")
    assert _long_functions(tmp_path, MAX_FUNCTION_LINES) == [f"m.py:2 f ({MAX_FUNCTION_LINES + 1} lines)"]
    assert _long_functions(tmp_path, MAX_FUNCTION_LINES + 1) == []


def test_every_package_says_what_it_holds():
    missing = [
        str(init.relative_to(PKG))
        for init in sorted(PKG.rglob("__init__.py"))
        if not ast.get_docstring(ast.parse(init.read_text()))
    ]
    assert not missing, f"packages without a docstring saying what they hold: {missing}"


@pytest.mark.parametrize("path", sorted(tga._MODULE_PATHS))
def test_each_registered_module_path_imports_as_the_module_it_names(path):
    mod = importlib.import_module(f"tinygrad_attn.{path}")
    assert mod is importlib.import_module(f"tinygrad_attn.{tga._MODULE_PATHS[path]}")
    top, _, rest = path.partition(".")
    attr = getattr(tga, top)
    for part in rest.split(".") if rest else ():
        attr = getattr(attr, part)
    assert attr is mod, f"tga.{path} is not the module tinygrad_attn.{path}"


@pytest.mark.parametrize("path", sorted(set(TORCH_PATHS) | set(tga._MODULE_PATHS)))
def test_pytorch_module_paths_import_and_are_attributes(path):
    mod = importlib.import_module(f"tinygrad_attn.{path}")
    attr = tga
    for part in path.split("."):
        attr = getattr(attr, part)
    assert attr is mod, f"tga.{path} is not the module tinygrad_attn.{path}"


@pytest.mark.slow  # (a new interpreter for each path)
@pytest.mark.parametrize("path", sorted(set(TORCH_PATHS) | set(tga._MODULE_PATHS)))
def test_pytorch_module_paths_import_in_a_fresh_interpreter(path):
    # ``import tinygrad_attn.X`` first thing in a script (nothing imported before it), then
    # ``from tinygrad_attn.X import name`` for a public name, and ``tga.X.name``
    code = (
        f"import tinygrad_attn.{path} as m, tinygrad_attn as tga, functools\n"
        "names = [n for n in getattr(m, '__all__', dir(m)) if not n.startswith('_')][:1]\n"
        f"for n in names: exec(f'from tinygrad_attn.{path} import {{n}}')\n"
        f"assert functools.reduce(getattr, {path.split('.')!r}, tga) is m\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


@pytest.mark.slow  # (a new interpreter)
def test_import_stays_light():
    # the heavy subpackages load on first use, and never with the package
    heavy = ["nn", "models", "viz", "optim", "utils", "distributions", "symbolic", "backends"]
    code = (
        "import sys, tinygrad_attn\n"
        f"print([m for m in {heavy!r} if 'tinygrad_attn.' + m in sys.modules])\n"
        "print('graphviz' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "False"], out.stdout
