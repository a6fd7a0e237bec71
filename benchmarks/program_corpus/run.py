"""Run the corpus of real PyTorch programs with PyTorch and with tinygrad_attn, side by side.

Each program of ``manifest.toml`` is read at its commit from a fetched copy of its repository
(``--mirror``, or ``$PROGRAM_CORPUS_MIRROR``: a folder holding ``owner+name/repo`` git
directories, as the project's fetch tool leaves them, or ``owner+name`` checkouts). Its folder is
exported twice into a scratch directory; in one copy the program's ``import torch...`` lines
become ``import tinygrad_attn...`` lines and nothing else changes. Both copies run in fresh
processes with the same seeds (``torch.manual_seed(0)``, ``random.seed(0)``,
``np.random.seed(0)`` before the program starts), and the numbers they print are compared.

    python benchmarks/program_corpus/run.py --mirror /work/.mirror [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
LIBRARY = ROOT  # the checkout whose tinygrad_attn runs the programs (--library)

# `import torch`, `import torch.nn as nn`, `import torch, numpy as np` (one name of a list).
_IMPORT = re.compile(r"^(?P<indent>\s*)import\s+(?P<names>[^#\n]+?)(?P<tail>\s*(#.*)?)$")
_FROM = re.compile(r"^(?P<indent>\s*)from\s+torch(?P<sub>(\.\w+)*)\s+import\s")
# A number; not one glued to letters (`MulBackward0`), nor a timing with its unit after a space (`12.50 ms`).
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])(?!\s?(?:ms|s|sec|secs|seconds|it/s)\b)"
)

# Seeds the program's process, then runs the program as ``python PROGRAM ARGS`` would.
_BOOT = """\
import random, runpy, sys
import numpy as np
import {lib} as _lib
random.seed(0)
np.random.seed(0)
_lib.manual_seed(0)
sys.argv = sys.argv[1:]
sys.path.insert(0, '.')
try:
    runpy.run_path(sys.argv[0], run_name='__main__')
except BaseException as e:  # the classes it is an instance of: one of ours may be PyTorch's and a ValueError
    open('_exception.txt', 'w').write(' '.join(c.__name__ for c in type(e).__mro__))
    raise
"""


def _swap_one(name: str) -> str:
    """One imported name of an ``import`` statement, with torch's package renamed."""
    parts = name.split()
    module = parts[0]
    if module != "torch" and not module.startswith("torch."):
        return name
    ours = "tinygrad_attn" + module[len("torch") :]
    if len(parts) == 3 and parts[1] == "as":
        return f"{ours} as {parts[2]}"
    if module == "torch":
        return "tinygrad_attn as torch"
    # `import torch.nn` binds `torch` with its submodule loaded: the same for ours
    return f"{ours}, tinygrad_attn as torch"


def swap_imports(text: str) -> str:
    """The program's text with every import of ``torch`` or a submodule made one of tinygrad_attn."""
    out = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        end = line[len(body) :]
        m = _FROM.match(body)
        if m:
            body = body.replace("from torch", "from tinygrad_attn", 1)
        else:
            m = _IMPORT.match(body)
            if m and re.search(r"\btorch\b", m["names"]) and ";" not in m["names"]:
                names = ", ".join(_swap_one(n.strip()) for n in m["names"].split(","))
                body = f"{m['indent']}import {names}{m['tail']}"
        out.append(body + end)
    return "".join(out)


def _git_dir(mirror: Path, repo: str) -> Path:
    base = mirror / repo.replace("/", "+")
    for cand in (base / "repo", base):
        if cand.exists():
            return cand
    raise FileNotFoundError(f"no copy of {repo} under {mirror} (fetch github:{repo} first)")


def export(mirror: Path, repo: str, commit: str, folder: str, dest: Path) -> None:
    """The files of ``folder`` at ``commit`` of ``repo``'s fetched copy, written under ``dest``.

    A fetched copy may lack its largest files (pictures, mostly): those are left out."""
    git = ["git", "--git-dir" if (_git_dir(mirror, repo) / "HEAD").exists() else "-C", str(_git_dir(mirror, repo))]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-z", commit, "--", folder or "."], capture_output=True, check=True
    )
    for item in filter(None, listing.stdout.decode().split("\0")):
        meta, path = item.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob":
            continue
        blob = subprocess.run([*git, "cat-file", "blob", sha], capture_output=True)
        if blob.returncode != 0:
            continue  # absent from the fetched copy
        target = dest / Path(path).relative_to(folder or ".")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob.stdout)


@dataclass
class Run:
    rc: int | None
    seconds: float
    stdout: str
    error: str
    classes: str = ""  # the names of the classes the exception it ended with is an instance of


@dataclass
class Result:
    name: str
    torch: str  # "ok", or PyTorch's own first error
    ours: str  # "ok", or our first error
    numbers: int  # how many printed numbers were compared
    match: bool  # every number within the tolerance, and as many as PyTorch printed
    drift: bool = False  # not equal, but the first line equal and all within --drift of PyTorch's (float32 rounding)
    first_difference: str = ""
    max_rel: float = 0.0
    seconds: dict = field(default_factory=dict)
    text_difference: str = ""  # the first line whose words differ (numbers and timings aside), or ""


def _first_error(stderr: str, program: str) -> str:
    """The exception a run ended with, and the program's line that raised it."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln) for ln in stderr.splitlines() if ln.strip()]  # no terminal colours
    where = ""
    for i, ln in enumerate(lines):
        if ln.strip().startswith("File ") and Path(program).name in ln and i + 1 < len(lines):
            where = f" (at `{lines[i + 1].strip()}`)"
    for ln in reversed(lines):
        if re.match(r"^[\w.]+(Error|Exception|Interrupt|Warning)\b|^[\w.]+: ", ln):
            return ln.strip()[:300] + where
    return (lines[-1].strip()[:300] if lines else "no output") + where


def run_once(workdir: Path, lib: str, program: str, argvs: list[list[str]], before: list[str], timeout: float) -> Run:
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONHASHSEED="0", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(LIBRARY), env.get("PYTHONPATH", "")]))
    boot = workdir / "_corpus_boot.py"
    boot.write_text(_BOOT.format(lib=lib))
    out, t0 = [], time.perf_counter()
    for prog, argv in [(b, []) for b in before] + [(program, a) for a in argvs]:
        cwd = workdir / Path(prog).parent
        left = timeout - (time.perf_counter() - t0)
        try:
            p = subprocess.run([sys.executable, str(boot), Path(prog).name, *argv], cwd=cwd, env=env,
                               capture_output=True, text=True, timeout=max(left, 1))  # fmt: skip
        except subprocess.TimeoutExpired as e:
            so = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            out.append(so)
            return Run(None, time.perf_counter() - t0, "".join(out), f"timed out after {timeout:.0f} s")
        out.append(p.stdout)
        (workdir / "_stdout.txt").write_text("".join(out))
        (workdir / "_stderr.txt").write_text(p.stderr)
        if p.returncode != 0:
            raised = cwd / "_exception.txt"
            classes = raised.read_text() if raised.exists() else ""
            return Run(p.returncode, time.perf_counter() - t0, "".join(out), _first_error(p.stderr, prog), classes)
    return Run(0, time.perf_counter() - t0, "".join(out), "")


def _words(out: str) -> list[str]:
    """The printed lines with every compared number as ``#``: what is left to read as text."""
    unit = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?=\s?[A-Za-z])")  # a timing with its unit, 12.5ms, 12.5 ms
    return [re.sub(r"\s+", " ", unit.sub("#", _NUMBER.sub("#", ln))).strip() for ln in out.splitlines() if ln.strip()]


def text_difference(ours: str, theirs: str) -> str:
    """The first line whose text (not its numbers) differs from PyTorch's: predicted words, reprs, ..."""
    a, b = _words(ours), _words(theirs)
    for x, y in zip(a, b):
        if x != y:
            return f"ours: {x[:100]!r} / PyTorch: {y[:100]!r}"
    return "" if len(a) == len(b) else f"{len(a)} lines here, {len(b)} in PyTorch"


def _printed_step(token: str) -> float:
    """Half a unit in the last printed place of a number (0 for an integer or an exponent form)."""
    mantissa = token.lower().split("e")[0]
    if "." not in mantissa or "e" in token.lower():
        return 0.0
    return 0.5 * 10.0 ** -len(mantissa.split(".")[1])


def compare(ours: str, theirs: str, rtol: float, atol: float, lines: int | None = None) -> tuple[int, bool, str, float]:
    """How many printed numbers agree, whether all do, the first line that differs, the worst relative error.

    The numbers are compared in the order printed, whatever the line breaks (a tensor's rows wrap
    differently); a number printed with fewer digits is compared to within its rounding. ``lines``:
    only the numbers of PyTorch's first ``lines`` lines that print any."""
    a = [(tok, ln) for ln in ours.splitlines() for tok in _NUMBER.findall(ln)]
    b_lines = [ln for ln in theirs.splitlines() if _NUMBER.search(ln)][:lines]
    b = [(tok, ln) for ln in b_lines for tok in _NUMBER.findall(ln)]
    if lines is not None:
        a = a[: len(b)]
    n, worst = 0, 0.0
    for (ta, la), (tb, lb) in zip(a, b):
        x, y = float(ta), float(tb)
        if not (math.isfinite(x) and math.isfinite(y)):
            ok = (x == y) or (math.isnan(x) and math.isnan(y))
        else:
            ok = abs(x - y) <= atol + rtol * abs(y) + _printed_step(ta) + _printed_step(tb)  # each rounded
            worst = max(worst, abs(x - y) / max(abs(y), 1e-12))
        if not ok:
            return n, False, f"ours: {la.strip()[:120]!r} / PyTorch: {lb.strip()[:120]!r}", worst
        n += 1
    if len(a) != len(b):
        return n, False, f"{len(a)} numbers printed here, {len(b)} in PyTorch", worst
    return n, True, "", worst


def run_program(entry: dict, mirror: Path, scratch: Path, timeout: float, rtol: float, atol: float,
                cache: Path | None = None, drift_rtol: float = 2e-2) -> Result:  # fmt: skip
    parent = Path(entry["path"]).parent
    folder = "" if parent == Path(".") else str(parent)
    runs = {}
    key = json.dumps([entry.get(k) for k in ("repo", "commit", "path", "args", "before")])
    cached = cache / f"{entry['name']}.json" if cache else None
    for lib in ("torch", "tinygrad_attn"):
        if lib == "torch" and cached and cached.exists() and json.loads(cached.read_text())["key"] == key:
            runs[lib] = Run(**json.loads(cached.read_text())["run"])  # PyTorch's run does not change
            continue
        work = scratch / entry["name"] / lib
        shutil.rmtree(work, ignore_errors=True)
        export(mirror, entry["repo"], entry["commit"], folder, work / folder if folder else work)
        if lib == "tinygrad_attn":  # the program and its own modules beside it (`from model import ...`)
            for f in sorted((work / folder if folder else work).rglob("*.py")):
                try:
                    text = f.read_text()
                except UnicodeDecodeError:
                    continue
                if swap_imports(text) != text:
                    f.write_text(swap_imports(text))
        runs[lib] = run_once(work, lib, entry["path"], entry.get("args", [[]]), entry.get("before", []), timeout)
        if lib == "torch" and cached and runs[lib].rc is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            cached.write_text(json.dumps({"key": key, "run": asdict(runs[lib])}))
    t, o = runs["torch"], runs["tinygrad_attn"]
    n, same, diff, worst = compare(o.stdout, t.stdout, rtol, atol)
    first = compare(o.stdout, t.stdout, rtol, atol, lines=1)[1]
    loose = compare(o.stdout, t.stdout, drift_rtol, drift_rtol)
    drift = not same and first and loose[1]
    theirs = t.error.split(":")[0].split(".")[-1]  # PyTorch's exception class; ours may subclass it
    same_class = t.error.split(":")[0] == o.error.split(":")[0] or theirs in o.classes.split()
    both_fail_alike = t.rc != 0 and o.rc != 0 and same_class
    result = Result(
        entry["name"],
        "ok" if t.rc == 0 else t.error,
        "ok" if o.rc == 0 else o.error,
        n,
        same and (o.rc == 0 or both_fail_alike),
        first_difference=diff,
        max_rel=worst,
        seconds={"torch": round(t.seconds, 1), "ours": round(o.seconds, 1)},
    )
    result.drift = bool(drift) and o.rc == 0
    result.text_difference = text_difference(o.stdout, t.stdout)
    if result.drift:
        result.max_rel = loose[3]
    return result


def table(results: list[Result]) -> str:
    rows = ["| program | PyTorch | ours | numbers equal | text equal |", "| --- | --- | --- | --- | --- |"]
    for r in results:
        eq = f"yes ({r.numbers}, max rel {r.max_rel:.1e})" if r.match else f"no: {r.first_difference or '-'}"
        if r.drift:
            eq = f"drift: {r.first_difference} (first line equal, all within {r.max_rel:.1e})"
        text = f"no: {r.text_difference}" if r.text_difference else "yes"
        cells = [c.replace("|", "\\|").replace("\n", " ") for c in (r.torch[:160], r.ours[:160], eq[:200], text[:200])]
        rows.append(f"| {r.name} | " + " | ".join(cells) + " |")
    runs = sum(r.ours == "ok" for r in results)
    match = sum(r.match and r.ours == "ok" for r in results)
    drift = sum(r.drift for r in results)
    ok_torch = sum(r.torch == "ok" for r in results)
    rows.append(f"\n**{runs} of {len(results)} run ({ok_torch} run in PyTorch 2.13); {match} of {len(results)} "
                f"({100 * match / len(results):.0f}%) print PyTorch's numbers, {drift} more within float32 drift "
                f"({100 * (match + drift) / len(results):.0f}% together).**")  # fmt: skip
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", default=os.environ.get("PROGRAM_CORPUS_MIRROR"), help="folder of fetched repositories")
    ap.add_argument("--only", nargs="*", help="names of programs to run (default: all)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per program and library")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--drift", type=float, default=2e-2, help="relative bound of float32 drift")
    ap.add_argument("--scratch", default=None, help="where the programs run (default: a temporary folder)")
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument(
        "--torch-cache", default=None, help="folder keeping PyTorch's runs, reused while the entry is unchanged"
    )
    ap.add_argument("--library", default=str(ROOT), help="checkout whose tinygrad_attn runs (default: this one)")
    args = ap.parse_args(argv)
    global LIBRARY
    LIBRARY = Path(args.library).resolve()
    if not args.mirror:
        ap.error("give --mirror or set PROGRAM_CORPUS_MIRROR")
    entries = tomllib.loads((HERE / "manifest.toml").read_text())["program"]
    if args.only:
        entries = [e for e in entries if e["name"] in args.only]
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="program_corpus_"))
    results = []
    for e in entries:
        cache = Path(args.torch_cache) if args.torch_cache else None
        r = run_program(e, Path(args.mirror), scratch, args.timeout, args.rtol, args.atol, cache, args.drift)
        print(f"{r.name}: PyTorch {r.torch[:80]} | ours {r.ours[:200]} | match {r.match} {r.first_difference[:200]}"
              f" | {r.seconds}", flush=True)  # fmt: skip
        results.append(r)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in results], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
