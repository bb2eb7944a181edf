"""A real tmpfs for the tests that need a full disk or a read-only mount: root mounts it; elsewhere the test is
skipped, and in CI (where root runs the suite) failed."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import IN_CI


@contextmanager
def tmpfs(mount: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` (mount's own syntax: 192k, 4M) at the new folder `mount`; writes past it fail with
    ENOSPC. Unmounted when the block ends."""
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        if IN_CI:
            pytest.fail(f"cannot mount a tmpfs at {mount}: {done.stderr}")
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)
