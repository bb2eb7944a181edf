"""Every notebook under notebooks/ runs top to bottom on this interpreter, and the committed
copies carry the outputs it prints now (so what a code host shows is what a run gives) with no error in them."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
KERNEL = "lamar-notebook-tests"
CELL_TIMEOUT = 300  # seconds for one cell; a notebook is meant to take well under two minutes
NOTEBOOK_TIMEOUT = 600  # seconds for a whole notebook, on a slow shared CI machine


@pytest.fixture
def kernel(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> str:
    """A kernelspec that starts ipykernel on the interpreter running the tests (the CI venv),
    whatever `python` on PATH or an installed "python3" kernelspec would point to, with its
    temporary folder (where a notebook writes its files) among pytest's, which pytest cleans up."""
    spec_dir = tmp_path / "jupyter" / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python (tests)", "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("TMPDIR", str(tmp_path_factory.mktemp("kernel-tmp")))
    return KERNEL


def execute(nb: nbformat.NotebookNode, kernel: str, workdir: Path) -> nbformat.NotebookNode:
    client = NotebookClient(nb, kernel_name=kernel, timeout=CELL_TIMEOUT,
                            resources={"metadata": {"path": str(workdir)}})
    return client.execute()


# What differs from run to run by design: random ids (lessons, episodes, proposals, run uuids),
# clock times and durations, temporary folders, and token counts of prompts that quote those ids.
_VARYING = re.compile(r"\b[a-z]+_[0-9a-f]{12,16}\b|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
                      r"|\b\d{10}\.\d+|\d+(\.\d+)? (s|CPU-seconds)\b|on \d+ workers|/tmp/[\w./-]+"
                      r"|\"prompt_tokens\": \d+")


def printed(nb: nbformat.NotebookNode) -> list[str]:
    """What each code cell printed, with what varies by design masked."""
    return [_VARYING.sub("#", "".join(out.get("text", "") for out in cell.get("outputs", [])
                                      if out.get("output_type") == "stream"))
            for cell in nb.cells if cell.cell_type == "code"]


def errors(nb: nbformat.NotebookNode) -> list[str]:
    return [f"cell {i}: {out.get('ename')}: {out.get('evalue')}"
            for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for out in cell.get("outputs", []) if out.get("output_type") == "error"]


def test_the_five_notebooks_are_there() -> None:
    assert [p.name for p in PATHS] == [
        "01_quickstart.ipynb", "02_memory_gym.ipynb", "03_langchain.ipynb",
        "04_langgraph.ipynb", "05_llamaindex.ipynb",
    ]


def test_kernel_runs_this_interpreter(kernel: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    code = "import sys, tempfile; print(sys.executable); print(tempfile.gettempdir())"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    out = execute(nb, kernel, tmp_path)
    executable, temporary = out.cells[0].outputs[0]["text"].splitlines()
    assert executable == sys.executable
    assert Path(temporary).is_relative_to(tmp_path_factory.getbasetemp())  # what a notebook writes is cleaned up


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
@pytest.mark.timeout(NOTEBOOK_TIMEOUT)
def test_notebook_runs_top_to_bottom(path: Path, kernel: str, tmp_path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    committed = printed(nb)
    started = time.perf_counter()
    out = execute(nb, kernel, tmp_path)  # raises CellExecutionError naming the cell that failed
    elapsed = time.perf_counter() - started
    assert errors(out) == []
    code = [cell for cell in out.cells if cell.cell_type == "code"]
    assert all(cell.get("execution_count") for cell in code)
    assert elapsed < NOTEBOOK_TIMEOUT
    # Seeded: the run prints what the committed copy shows, else that copy describes older code.
    stale = [i for i, (was, now) in enumerate(zip(committed, printed(out), strict=True)) if was != now]
    assert stale == [], f"code cells {stale} print something else now: execute the notebook again and save it"
    # The notebook wrote nothing next to itself, nor in its working directory (only in a temporary
    # folder of its own), so a second run starts as clean as the first.
    assert not any(p.suffix in {".db", ".jsonl", ".json"} for p in NOTEBOOKS.iterdir())
    assert [p.name for p in tmp_path.iterdir()] == ["jupyter"]  # the kernel fixture's own folder


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_committed_copy_has_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code and all(cell.get("execution_count") for cell in code), "execute it and save the outputs"
    assert errors(nb) == []
    printed = sum(1 for cell in code for out in cell.outputs if out.get("output_type") == "stream")
    assert printed >= 3
    uses_plots = any("matplotlib" in cell.source for cell in code)
    pngs = [out for cell in code for out in cell.outputs if "image/png" in out.get("data", {})]
    assert bool(pngs) == uses_plots
    assert path.stat().st_size < 400_000  # small enough to review and diff
