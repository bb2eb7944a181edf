"""The package type-checks: `mypy` in strict mode over lamar/, as pyproject.toml configures it.

Six errors had crept in unseen while nothing ran it; this keeps the count at zero.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.background import Background, starts

REPO = Path(__file__).resolve().parents[1]
MYPY = Background([sys.executable, "-m", "mypy", "--no-incremental"], cwd=REPO)


@starts(MYPY)
def test_lamar_type_checks_in_strict_mode() -> None:
    done = MYPY.result(timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout
