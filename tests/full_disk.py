"""`capped`: Python code run in a process whose files may grow to a few kilobytes (`ulimit -f`), as
on a full disk: a write past the limit fails with EFBIG."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LIMIT = 16384
_CAPPED = """
import resource, signal, sys
sys.dont_write_bytecode = True  # a capped write would leave a cut .pyc in the shared cache
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing the process
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
{body}
"""


def capped(body: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run `body` (which may use `sys`) in a new interpreter whose files may grow to LIMIT bytes."""
    return subprocess.run([sys.executable, "-c", _CAPPED.format(limit=LIMIT, body=body)], capture_output=True,
                          text=True, cwd=cwd, timeout=120, check=False)
