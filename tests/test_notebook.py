"""notebooks/walkthrough.ipynb runs clean with a kernel from this environment (so it cannot rot)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT

NOTEBOOK = ROOT / "notebooks" / "walkthrough.ipynb"


@pytest.mark.slow
def test_walkthrough_notebook_runs_clean(tmp_path, monkeypatch):
    """Every cell runs without an error, shows its plots, and writes the HTML report; the kernel's
    temporary folder is the test's (the report's folder is not left in /tmp after each run)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # (the kernel process inherits it)
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",  # ipykernel's own spec: the Python running the tests
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors
    images = [
        output
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {})
    ]
    assert len(images) >= 3
    assert len(list(tmp_path.glob("jobdedup-report-*/index.html"))) == 1
