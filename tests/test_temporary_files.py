"""What the docs' examples make with `tempfile` goes where it is cleaned up, not into the machine's /tmp."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.docblocks import ROOT, Block, run


def test_a_docs_block_leaves_no_temporary_folder(tmp_path: Path) -> None:
    code = "import os, tempfile\nfolder = tempfile.mkdtemp()\nprint(folder, os.path.isdir(folder))\n"
    done = run(Block(ROOT / "docs" / "rules.md", 1, "python", code), tmp_path)
    folder, made = done.stdout.split()
    assert (done.returncode, made) == (0, "True"), done.stderr
    assert not Path(folder).exists()


def test_a_doctest_leaves_no_temporary_folder(tmp_path: Path) -> None:
    machine = tmp_path / "machine-tmp"  # the /tmp of this run of pytest
    machine.mkdir()
    env = {**os.environ, "TMPDIR": str(machine)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:randomly",
                           "lamar/sleep/traces.py", "lamar/_errors.py"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:]
    assert [p.name for p in machine.iterdir() if not p.name.startswith("pytest-of-")] == []
