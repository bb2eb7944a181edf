"""tools/claude_code_e2e.sh, the fresh-machine walk-through: installed hooks, then the plugin with no store,
each hook under `env -i` with PATH=/usr/bin:/bin; it exits 0 only when every hook exited 0 and every
episode has its outcome (shipped, reverted, accepted)."""

from __future__ import annotations

import subprocess
import sys

from .conftest import ROOT


def test_the_fresh_machine_script_passes() -> None:
    done = subprocess.run(["/bin/sh", str(ROOT / "tools" / "claude_code_e2e.sh"), sys.executable],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert sum(line.startswith("ok ") for line in lines) == 22 and not any(line.startswith("FAIL") for line in lines)
    assert sum("outcomes ['shipped', 'reverted', 'accepted']" in line for line in lines) == 2
    assert lines[-1] == "PASS"
