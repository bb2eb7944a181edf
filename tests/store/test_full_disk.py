"""A store on a disk with no room left: read whole, every write refused saying so, and once there
is room again, opened and written as before with everything it held."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, Lamar
from tests.store.test_odd_paths import _written

# Run in a process whose files may grow to `LIMIT` bytes at most (`ulimit -f`): a write past it
# fails as a write to a full disk does, here SQLite's making of the `-shm` beside a closed store.
_NO_ROOM = """
import json, resource, sys
sys.dont_write_bytecode = True  # a capped write would leave a cut .pyc in the shared cache
resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
from lamar import Experience, Lamar, LamarError
lam = Lamar(sys.argv[1])
seen = {"lessons": len(lam.experiences()), "reports": lam.stats()["reports"]}
try:
    lam.add(Experience("one more", "write it"))
except LamarError as exc:
    seen["add"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(seen))
"""


@pytest.mark.parametrize("suffix", ["db", "json"])
def test_a_store_on_a_full_disk_is_read_whole_and_a_write_says_the_disk_is_full(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"experience.{suffix}"
    _written(path, reports=5)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _NO_ROOM, str(path)], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert (seen["lessons"], seen["reports"]) == (3, 5)
    assert seen["add"].startswith("StoreError") and str(path) in seen["add"]
    assert "disk is full" in seen["add"] or "No space" in seen["add"] or "too large" in seen["add"]
    with Lamar(str(path)) as lam:  # room again: everything is there, and a write goes through
        lam.add(Experience("one more", "write it"))
        assert (len(lam.experiences()), lam.stats()["reports"]) == (4, 5)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []
