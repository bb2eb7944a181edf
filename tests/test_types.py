"""The package type-checks: `mypy` in strict mode over lamar/, as pyproject.toml configures it.

Six errors had crept in unseen while nothing ran it; this keeps the count at zero.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_lamar_type_checks_in_strict_mode() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental"], cwd=REPO, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout
