"""`python -m lamar`, the spelling a user tries when the `lamar` script is not on PATH."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import lamar

ROOT = Path(__file__).resolve().parents[1]


def test_python_m_lamar_runs_the_lamar_command(tmp_path: Path) -> None:
    # It failed with "No module named lamar.__main__; 'lamar' is a package and cannot be directly executed".
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "integrations")])}
    done = subprocess.run([sys.executable, "-m", "lamar", "--version"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert lamar.__version__ in done.stdout
    usage = subprocess.run([sys.executable, "-m", "lamar", "no-such-command"], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=60, check=False)
    assert usage.returncode == 1 and usage.stderr.startswith("lamar: error: "), usage.stderr
