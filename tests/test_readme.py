"""The README's example runs as written and prints what the README says it prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_twenty_line_example_runs_and_proves_the_helpful_lesson(tmp_path: Path) -> None:
    example = ROOT / "examples" / "quickstart.py"
    assert len(example.read_text().splitlines()) <= 22
    done = subprocess.run([sys.executable, str(example)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.split()[0] == "helps" and first.endswith("clear DerivedData before rebuilding")
    readme = (ROOT / "README.md").read_text()
    assert example.read_text() in readme
    assert done.stdout.strip().splitlines()[0] in readme
    assert (tmp_path / "quickstart.json").exists()


def test_the_readme_shows_the_two_setup_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert 'python -m pip install -e . && python -m lamar.gym' in readme
    assert 'python -m pip install -e ".[test]" && python -m pytest' in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install --quiet -e ".[test]"' in ci and "python -m pytest" in ci
