"""The example notebooks run top to bottom through a real Jupyter kernel (nbclient + ipykernel),
and their explorer pages show inline: an offline ``iframe``, no network."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))


def test_notebooks_are_stored_without_outputs():
    nbformat = pytest.importorskip("nbformat")
    assert len(NOTEBOOKS) >= 2
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(not c.outputs and c.execution_count is None for c in code), f"{path.name} has outputs"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_in_a_kernel(path, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the kernel imports the package from this checkout
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    html = [o["data"]["text/html"] for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if "data" in o and "text/html" in o["data"]]  # fmt: skip
    frames = [h for h in html if h.startswith("<iframe srcdoc=")]
    assert frames, "the explorer shows inline"
    assert all("https://" not in h and "<script src" not in h.replace("&lt;", "<") for h in frames)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.get("output_type") == "error"]
    assert not errors
